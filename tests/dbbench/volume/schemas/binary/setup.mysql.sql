-- MediaWiki style: VARBINARY keys, BINARY(14) timestamps, BLOBs, prefix indexes, YEAR, a table
-- without a primary key.
CREATE TABLE page (
    page_id             int unsigned NOT NULL AUTO_INCREMENT,
    page_namespace      int NOT NULL,
    page_title          varbinary(255) NOT NULL,
    page_is_redirect    tinyint unsigned NOT NULL DEFAULT 0,
    page_touched        binary(14) NOT NULL,
    page_links_updated  varbinary(14) DEFAULT NULL,
    page_latest         int unsigned NOT NULL,
    page_len            int unsigned NOT NULL,
    page_content_model  varbinary(32) DEFAULT NULL,
    PRIMARY KEY (page_id),
    UNIQUE KEY page_name_title (page_namespace, page_title),
    KEY page_len (page_len)
) ENGINE = InnoDB DEFAULT CHARSET = binary;

CREATE TABLE externallinks (
    el_id     int unsigned NOT NULL AUTO_INCREMENT,
    el_from   int unsigned NOT NULL DEFAULT 0,
    el_to     blob NOT NULL,
    el_index  blob NOT NULL,
    PRIMARY KEY (el_id),
    KEY el_from (el_from, el_to(40)),
    KEY el_to (el_to(60), el_from),
    KEY el_index (el_index(60))
) ENGINE = InnoDB DEFAULT CHARSET = binary;

CREATE TABLE user_newtalk (
    user_id              int unsigned NOT NULL DEFAULT 0,
    user_ip              varbinary(40) NOT NULL DEFAULT '',
    user_last_timestamp  binary(14) NULL DEFAULT NULL,
    KEY un_user_id (user_id),
    KEY un_user_ip (user_ip)
) ENGINE = InnoDB DEFAULT CHARSET = binary;

CREATE TABLE objectcache (
    keyname  varbinary(255) NOT NULL DEFAULT '',
    value    mediumblob,
    exptime  binary(14) NOT NULL,
    PRIMARY KEY (keyname),
    KEY exptime (exptime)
) ENGINE = InnoDB DEFAULT CHARSET = binary;

CREATE TABLE film (
    film_id       smallint unsigned NOT NULL AUTO_INCREMENT PRIMARY KEY,
    release_year  YEAR NOT NULL,
    remake_year   YEAR,
    picture       blob,
    thumb         tinyblob NOT NULL,
    digest        binary(32) NOT NULL,
    short_hash    binary(8) NOT NULL,
    UNIQUE KEY (digest),
    UNIQUE KEY (short_hash)
) ENGINE = InnoDB;
