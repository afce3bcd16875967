-- Composite keys of two foreign keys, a composite foreign key, unique constraints over several
-- columns, tables without a primary key, unique and plain functional indexes.
CREATE TABLE actor (
    actor_id    smallint unsigned NOT NULL AUTO_INCREMENT PRIMARY KEY,
    first_name  varchar(45) NOT NULL,
    last_name   varchar(45) NOT NULL
) ENGINE = InnoDB;
CREATE TABLE film (
    film_id  smallint unsigned NOT NULL AUTO_INCREMENT PRIMARY KEY,
    title    varchar(255) NOT NULL
) ENGINE = InnoDB;
CREATE TABLE film_actor (
    actor_id  smallint unsigned NOT NULL,
    film_id   smallint unsigned NOT NULL,
    PRIMARY KEY (actor_id, film_id),
    KEY idx_fk_film_id (film_id),
    CONSTRAINT fk_film_actor_actor FOREIGN KEY (actor_id) REFERENCES actor (actor_id),
    CONSTRAINT fk_film_actor_film FOREIGN KEY (film_id) REFERENCES film (film_id)
) ENGINE = InnoDB;
CREATE TABLE film_actor_role (
    actor_id  smallint unsigned NOT NULL,
    film_id   smallint unsigned NOT NULL,
    role      varchar(40) NOT NULL,
    PRIMARY KEY (actor_id, film_id, role),
    FOREIGN KEY (actor_id, film_id) REFERENCES film_actor (actor_id, film_id)
) ENGINE = InnoDB;
CREATE TABLE enrollment (
    student_id   smallint unsigned NOT NULL,
    course_code  varchar(10) NOT NULL,
    term         smallint NOT NULL,
    grade        char(1),
    UNIQUE KEY (student_id, course_code, term),
    FOREIGN KEY (student_id) REFERENCES actor (actor_id)
) ENGINE = InnoDB;
CREATE TABLE slot (
    room  varchar(10) NOT NULL,
    day   date NOT NULL,
    hour  smallint NOT NULL CHECK (hour BETWEEN 0 AND 23),
    UNIQUE KEY (room, day, hour)
) ENGINE = InnoDB;
CREATE TABLE event_log (
    at        datetime NOT NULL,
    actor_id  smallint unsigned,
    message   text,
    FOREIGN KEY (actor_id) REFERENCES actor (actor_id)
) ENGINE = InnoDB;
CREATE TABLE account (
    id        int NOT NULL AUTO_INCREMENT PRIMARY KEY,
    email     varchar(100) NOT NULL,
    username  varchar(30) NOT NULL,
    nickname  varchar(30) NOT NULL,
    UNIQUE KEY account_email_lower ((lower(email))),
    UNIQUE KEY account_username_lower ((lower(username))),
    KEY account_nick_upper ((upper(nickname)))
) ENGINE = InnoDB;
