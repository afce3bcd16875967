-- A tsvector column kept by a trigger, a table filled by another table's insert trigger (as
-- sakila's film_text), a log table filled by a trigger, and an update-only trigger.
CREATE TABLE film (
    film_id      serial PRIMARY KEY,
    title        varchar(255) NOT NULL,
    description  text,
    fulltext     tsvector NOT NULL,
    last_update  timestamp NOT NULL DEFAULT now()
);
CREATE INDEX film_fulltext_idx ON film USING gist (fulltext);

CREATE TABLE film_text (
    film_id      integer PRIMARY KEY,
    title        varchar(255) NOT NULL,
    description  text
);

CREATE TABLE film_log (
    film_id  integer NOT NULL,
    action   varchar(10) NOT NULL,
    at       timestamp NOT NULL DEFAULT now()
);

CREATE FUNCTION film_copied() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO film_text (film_id, title, description) VALUES (NEW.film_id, NEW.title, NEW.description);
    INSERT INTO film_log (film_id, action) VALUES (NEW.film_id, 'insert');
    RETURN NEW;
END
$$;

CREATE FUNCTION last_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.last_update = CURRENT_TIMESTAMP;
    RETURN NEW;
END
$$;

CREATE TRIGGER film_fulltext_trigger BEFORE INSERT OR UPDATE ON film
    FOR EACH ROW EXECUTE PROCEDURE tsvector_update_trigger(fulltext, 'pg_catalog.english', title, description);
CREATE TRIGGER film_copied AFTER INSERT ON film FOR EACH ROW EXECUTE PROCEDURE film_copied();
CREATE TRIGGER last_updated BEFORE UPDATE ON film FOR EACH ROW EXECUTE PROCEDURE last_updated();
