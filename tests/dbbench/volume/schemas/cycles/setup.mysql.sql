-- Cycles: a store's manager is a staff member of that store (both NOT NULL, as in sakila), a
-- self-reference, a cycle through a nullable foreign key, a self-reference by a char key.
CREATE TABLE staff (
    staff_id    tinyint unsigned NOT NULL AUTO_INCREMENT PRIMARY KEY,
    name        varchar(45) NOT NULL,
    store_id    tinyint unsigned NOT NULL,
    manager_id  tinyint unsigned NULL,
    FOREIGN KEY (manager_id) REFERENCES staff (staff_id)
) ENGINE = InnoDB;
CREATE TABLE store (
    store_id          tinyint unsigned NOT NULL AUTO_INCREMENT PRIMARY KEY,
    manager_staff_id  tinyint unsigned NOT NULL,
    address           varchar(50) NOT NULL,
    UNIQUE KEY idx_unique_manager (manager_staff_id),
    CONSTRAINT fk_store_staff FOREIGN KEY (manager_staff_id) REFERENCES staff (staff_id)
) ENGINE = InnoDB;
ALTER TABLE staff ADD CONSTRAINT fk_staff_store FOREIGN KEY (store_id) REFERENCES store (store_id);

CREATE TABLE customer (
    id                 bigint NOT NULL AUTO_INCREMENT PRIMARY KEY,
    email              varchar(100) NOT NULL UNIQUE,
    referred_by_order  bigint NULL
) ENGINE = InnoDB;
CREATE TABLE orders (
    id           bigint NOT NULL AUTO_INCREMENT PRIMARY KEY,
    customer_id  bigint NOT NULL,
    placed_at    datetime NOT NULL,
    FOREIGN KEY (customer_id) REFERENCES customer (id)
) ENGINE = InnoDB;
ALTER TABLE customer ADD FOREIGN KEY (referred_by_order) REFERENCES orders (id);

CREATE TABLE category (
    id         char(36) NOT NULL PRIMARY KEY,
    parent_id  char(36) NULL,
    name       varchar(50) NOT NULL,
    FOREIGN KEY (parent_id) REFERENCES category (id)
) ENGINE = InnoDB;
