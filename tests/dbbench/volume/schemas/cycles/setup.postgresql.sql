-- Cycles: a store's manager is a staff member of that store (both NOT NULL, as in sakila), a
-- self-reference, a cycle through a nullable foreign key, a self-reference by uuid.
CREATE TABLE staff (
    staff_id    integer PRIMARY KEY,
    name        varchar(45) NOT NULL,
    store_id    integer NOT NULL,
    manager_id  integer NULL REFERENCES staff (staff_id)
);
CREATE TABLE store (
    store_id          integer PRIMARY KEY,
    manager_staff_id  integer NOT NULL UNIQUE REFERENCES staff (staff_id),
    address           varchar(50) NOT NULL
);
ALTER TABLE staff ADD CONSTRAINT fk_staff_store FOREIGN KEY (store_id) REFERENCES store (store_id);

CREATE TABLE customer (
    id                 bigserial PRIMARY KEY,
    email              varchar(100) NOT NULL UNIQUE,
    referred_by_order  bigint NULL
);
CREATE TABLE orders (
    id           bigserial PRIMARY KEY,
    customer_id  bigint NOT NULL REFERENCES customer (id),
    placed_at    timestamp NOT NULL
);
ALTER TABLE customer ADD FOREIGN KEY (referred_by_order) REFERENCES orders (id);

CREATE TABLE category (
    id         uuid PRIMARY KEY,
    parent_id  uuid NULL REFERENCES category (id),
    name       varchar(50) NOT NULL
);
