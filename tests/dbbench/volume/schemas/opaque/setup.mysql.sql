-- CHECK constraints the starter cannot read (a job queue's): the columns they name get their
-- default, else NULL (a CHECK that is NULL passes); a JSON column whose check asks for an array or
-- an object gets one.
CREATE TABLE jobs (
    id         bigint NOT NULL AUTO_INCREMENT PRIMARY KEY,
    job_class  varchar(200) NOT NULL,
    args       json NOT NULL DEFAULT (json_array()),
    kwargs     json NOT NULL,
    meta       json,
    tier       varchar(10) NOT NULL DEFAULT 'abc',
    level      int NOT NULL DEFAULT 5,
    note       varchar(10),
    body       text,
    CONSTRAINT valid_args CHECK (json_type(args) = 'ARRAY'),
    CONSTRAINT valid_kwargs CHECK (json_type(kwargs) = 'ARRAY'),
    CONSTRAINT valid_meta CHECK (json_type(meta) = 'OBJECT'),
    CONSTRAINT tier_letters CHECK (regexp_like(tier, '^[a-c]+$', 'c')),
    CONSTRAINT level_step CHECK (level % 5 = 0),
    CONSTRAINT note_code CHECK (regexp_like(note, '^[A-Z]{3}$', 'c')),
    CONSTRAINT error_length CHECK (char_length(body) <= 20)
) ENGINE = InnoDB;
