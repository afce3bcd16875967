-- CHECK constraints a starter spec must respect: IN-lists, ranges, lengths, two columns.
CREATE TABLE film (
    film_id          integer NOT NULL PRIMARY KEY,
    rating           varchar(5) NOT NULL DEFAULT 'G' CHECK (rating IN ('G', 'PG', 'PG-13', 'R', 'NC-17')),
    length           smallint CHECK (length > 0),
    rental_duration  smallint NOT NULL DEFAULT 3 CHECK (rental_duration BETWEEN 1 AND 14),
    rental_rate      numeric(4, 2) NOT NULL CHECK (rental_rate >= 0.99 AND rental_rate <= 9.99),
    discount         numeric(3, 2) CHECK (discount >= 0 AND discount < 1),
    code             char(3) NOT NULL CHECK (char_length(code) = 3),
    name             varchar(40) NOT NULL CHECK (char_length(name) >= 5),
    start_date       date NOT NULL,
    end_date         date NOT NULL,
    priority         integer NOT NULL CHECK (priority IN (1, 2, 3)),
    temperature      numeric(5, 1) CHECK (temperature >= -50 AND temperature <= 60),
    score            integer NOT NULL CHECK (score >= 0) CHECK (score <= 100),
    opened_at        timestamp NOT NULL CHECK (opened_at >= '2020-01-01 00:00:00'),
    closed_at        timestamp NULL,
    CHECK (end_date >= start_date),
    CHECK (closed_at > opened_at)
);
