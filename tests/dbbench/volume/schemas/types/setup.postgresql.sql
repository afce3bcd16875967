-- Enums, domains (with CHECK), arrays, tsvector and other types a starter spec has no generator
-- for: each column must load as init writes it.
CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy');
CREATE DOMAIN year AS integer CONSTRAINT year_check CHECK (VALUE >= 1901 AND VALUE <= 2155);
CREATE DOMAIN rating AS text CHECK (VALUE IN ('G', 'PG', 'PG-13'));
CREATE DOMAIN positive_amount AS numeric(8, 2) NOT NULL CHECK (VALUE > 0);
CREATE DOMAIN short_code AS varchar(8);
CREATE DOMAIN small_count AS smallint CHECK (VALUE BETWEEN 0 AND 10);

CREATE TABLE person (
    id            serial PRIMARY KEY,
    current_mood  mood NOT NULL,
    moods         mood[],
    born          year NOT NULL,
    rating        rating NOT NULL DEFAULT 'G',
    budget        positive_amount,
    code          short_code NOT NULL UNIQUE,
    children      small_count NOT NULL,
    tags          text[] NOT NULL,
    scores        integer[] NOT NULL DEFAULT '{}',
    matrix        integer[][],
    doc           tsvector NOT NULL,
    search        tsvector,
    props         jsonb NOT NULL,
    ip            inet NOT NULL,
    net           cidr,
    mac           macaddr NOT NULL,
    span          interval NOT NULL,
    at_time       time NOT NULL,
    at_tz         time with time zone,
    price         money NOT NULL,
    bits          bit(8) NOT NULL,
    vbits         bit varying(16),
    during        int4range NOT NULL,
    letter        "char" NOT NULL,
    ratio         real NOT NULL,
    weight        double precision,
    token         uuid NOT NULL UNIQUE,
    note          xml
);
