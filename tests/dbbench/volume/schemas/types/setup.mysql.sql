-- MySQL's enums (ENUM, SET) and the types a starter spec has no plain generator for.
CREATE TABLE person (
    id            int NOT NULL AUTO_INCREMENT PRIMARY KEY,
    current_mood  ENUM('sad', 'ok', 'happy') NOT NULL,
    features      SET('Trailers', 'Commentaries', 'Deleted Scenes', 'Behind the Scenes') NOT NULL,
    extras        SET('a', 'b') DEFAULT NULL,
    props         JSON NOT NULL,
    at_time       TIME NOT NULL,
    bits          BIT(8) NOT NULL,
    flag          BIT(1),
    born          YEAR NOT NULL,
    ratio         FLOAT NOT NULL,
    weight        DOUBLE,
    big           BIGINT UNSIGNED NOT NULL,
    small         TINYINT NOT NULL,
    usmall        TINYINT UNSIGNED NOT NULL,
    medium        MEDIUMINT UNSIGNED,
    code          varchar(8) NOT NULL UNIQUE,
    note          tinytext,
    body          mediumtext NOT NULL,
    letter        char(1) NOT NULL
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4;
