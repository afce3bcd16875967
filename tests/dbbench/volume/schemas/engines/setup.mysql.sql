-- Tables of other storage engines beside InnoDB ones, as friendica's schema has: MySQL 9 warns on
-- every statement of a transaction that writes a MEMORY table and an InnoDB one (6414, a
-- deprecation), which says nothing of the rows loaded.
CREATE TABLE account (
  id int unsigned NOT NULL AUTO_INCREMENT PRIMARY KEY,
  name varchar(64) NOT NULL,
  created datetime NOT NULL DEFAULT CURRENT_TIMESTAMP
) ENGINE=InnoDB;

CREATE TABLE arrived_activity (
  `object-id` varbinary(255) NOT NULL PRIMARY KEY,
  received datetime DEFAULT NULL
) ENGINE=MEMORY;

CREATE TABLE session_cache (
  sid varchar(64) NOT NULL PRIMARY KEY,
  account_id int unsigned NOT NULL,
  data varchar(1024) NOT NULL DEFAULT '',
  KEY account_id (account_id)
) ENGINE=MEMORY;

CREATE TABLE post (
  id int unsigned NOT NULL AUTO_INCREMENT PRIMARY KEY,
  account_id int unsigned NOT NULL,
  body text,
  KEY account_id (account_id),
  CONSTRAINT post_account FOREIGN KEY (account_id) REFERENCES account (id)
) ENGINE=InnoDB;
