-- CHECK constraints the starter cannot read (a job queue's, as Rails' que gem writes them): the
-- columns they name get their default, else NULL (a CHECK that is NULL passes); a JSON column whose
-- check asks for an array or an object gets one.
CREATE FUNCTION tags_ok(tags jsonb) RETURNS boolean LANGUAGE sql IMMUTABLE
    AS $$ SELECT jsonb_array_length(tags) <= 5 $$;
CREATE TABLE jobs (
    id         bigserial PRIMARY KEY,
    job_class  text NOT NULL,
    queue      text NOT NULL DEFAULT 'default',
    args       jsonb NOT NULL DEFAULT '[]'::jsonb,
    data       jsonb NOT NULL DEFAULT '{}'::jsonb,
    kwargs     jsonb NOT NULL,
    meta       jsonb,
    tier       text NOT NULL DEFAULT 'abc',
    level      integer NOT NULL DEFAULT 5,
    note       text,
    body       text,
    CONSTRAINT valid_args CHECK (jsonb_typeof(args) = 'array'),
    CONSTRAINT valid_data CHECK (jsonb_typeof(data) = 'object'
        AND (NOT (data ? 'tags') OR (jsonb_typeof(data -> 'tags') = 'array' AND tags_ok(data -> 'tags')))),
    CONSTRAINT valid_kwargs CHECK (jsonb_typeof(kwargs) = 'array'),
    CONSTRAINT valid_meta CHECK (jsonb_typeof(meta) = 'object'),
    CONSTRAINT job_class_length CHECK (char_length(
        CASE job_class WHEN 'Wrapper' THEN (args -> 0) ->> 'job_class' ELSE job_class END) <= 200),
    CONSTRAINT queue_length CHECK (char_length(queue) <= 100),
    CONSTRAINT tier_letters CHECK (tier ~ '^[a-c]+$'),
    CONSTRAINT level_step CHECK (level % 5 = 0),
    CONSTRAINT note_code CHECK (note ~ '^[A-Z]{3}$'),
    CONSTRAINT error_length CHECK (char_length(body) <= 20)
);
