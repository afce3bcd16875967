-- Composite keys of two foreign keys, a composite foreign key, unique constraints over several
-- columns, tables without a primary key, unique and plain expression indexes.
CREATE TABLE actor (
    actor_id    serial PRIMARY KEY,
    first_name  varchar(45) NOT NULL,
    last_name   varchar(45) NOT NULL
);
CREATE TABLE film (
    film_id  serial PRIMARY KEY,
    title    varchar(255) NOT NULL
);
CREATE TABLE film_actor (
    actor_id  integer NOT NULL REFERENCES actor (actor_id),
    film_id   integer NOT NULL REFERENCES film (film_id),
    PRIMARY KEY (actor_id, film_id)
);
CREATE TABLE film_actor_role (
    actor_id  integer NOT NULL,
    film_id   integer NOT NULL,
    role      varchar(40) NOT NULL,
    PRIMARY KEY (actor_id, film_id, role),
    FOREIGN KEY (actor_id, film_id) REFERENCES film_actor (actor_id, film_id)
);
CREATE TABLE enrollment (
    student_id   integer NOT NULL REFERENCES actor (actor_id),
    course_code  varchar(10) NOT NULL,
    term         smallint NOT NULL,
    grade        char(1),
    UNIQUE (student_id, course_code, term)
);
CREATE TABLE slot (
    room  varchar(10) NOT NULL,
    day   date NOT NULL,
    hour  smallint NOT NULL CHECK (hour BETWEEN 0 AND 23),
    UNIQUE (room, day, hour)
);
CREATE TABLE event_log (
    at        timestamp NOT NULL,
    actor_id  integer REFERENCES actor (actor_id),
    message   text
);
CREATE TABLE account (
    id        serial PRIMARY KEY,
    email     varchar(100) NOT NULL,
    username  varchar(30) NOT NULL,
    nickname  varchar(30) NOT NULL
);
CREATE UNIQUE INDEX account_email_lower ON account (lower(email));
CREATE UNIQUE INDEX account_username_lower ON account (lower(username));
CREATE UNIQUE INDEX account_nick_partial ON account (nickname) WHERE id > 0;
CREATE INDEX account_nick_upper ON account (upper(nickname));
-- a unique inet (danbooru's ip_geolocations.ip_addr): addresses, each once
CREATE TABLE ip_geolocation (
    id       serial PRIMARY KEY,
    ip_addr  inet NOT NULL,
    network  cidr
);
CREATE UNIQUE INDEX ip_geolocation_ip_addr ON ip_geolocation (ip_addr);
