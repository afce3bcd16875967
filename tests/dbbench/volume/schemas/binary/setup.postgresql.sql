-- bytea keys and values, a table without a primary key whose only binary column has no key
-- to hash, a text column with an expression (prefix) index.
CREATE TABLE objectcache (
    keyname  bytea PRIMARY KEY,
    value    bytea,
    exptime  timestamptz NOT NULL
);

CREATE TABLE user_newtalk (
    user_id              integer NOT NULL DEFAULT 0,
    user_ip              bytea NOT NULL,
    user_last_timestamp  bytea
);
CREATE INDEX un_user_ip ON user_newtalk (user_ip);

CREATE TABLE externallinks (
    el_id     serial PRIMARY KEY,
    el_from   integer NOT NULL DEFAULT 0,
    el_to     text NOT NULL,
    el_index  bytea NOT NULL
);
CREATE INDEX el_to ON externallinks (substr(el_to, 1, 60), el_from);

CREATE TABLE film (
    film_id  serial PRIMARY KEY,
    picture  bytea,
    thumb    bytea NOT NULL,
    digest   bytea NOT NULL UNIQUE
);
