-- A column set by a BEFORE INSERT trigger, a table filled by another table's insert trigger (as
-- sakila's film_text), a log table filled by a trigger, and an update-only trigger.
CREATE TABLE film (
    film_id      smallint unsigned NOT NULL AUTO_INCREMENT,
    title        varchar(128) NOT NULL,
    description  text,
    title_upper  varchar(128) NOT NULL,
    last_update  timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP,
    PRIMARY KEY (film_id)
) ENGINE = InnoDB;

CREATE TABLE film_text (
    film_id      smallint NOT NULL,
    title        varchar(255) NOT NULL,
    description  text,
    PRIMARY KEY (film_id),
    FULLTEXT KEY idx_title_description (title, description)
) ENGINE = InnoDB;

CREATE TABLE film_log (
    film_id  int NOT NULL,
    action   varchar(10) NOT NULL,
    at       datetime NOT NULL DEFAULT CURRENT_TIMESTAMP
) ENGINE = InnoDB;

DELIMITER ;;
CREATE TRIGGER `ins_film` AFTER INSERT ON `film` FOR EACH ROW BEGIN
    INSERT INTO film_text (film_id, title, description) VALUES (new.film_id, new.title, new.description);
    INSERT INTO `film_log` (film_id, action) VALUES (new.film_id, 'insert');
END;;
CREATE TRIGGER `film_upper` BEFORE INSERT ON `film` FOR EACH ROW SET NEW.title_upper = UPPER(NEW.title);;
CREATE TRIGGER `upd_film` AFTER UPDATE ON `film` FOR EACH ROW BEGIN
    IF (old.title != new.title) THEN
        UPDATE film_text SET title = new.title WHERE film_id = old.film_id;
    END IF;
END;;
DELIMITER ;
