-- A marketplace's schema, PostgreSQL 12+: tables only, no rows. `dbbench fill` loads the volume
-- its data spec (data/spec.toml, written by `dbbench init`) asks for.
-- Seven tables, foreign keys, a cycle (a customer referred by an order, an order placed by a
-- customer: customers.referred_by_order_id is nullable, so it is filled after the load), enums and
-- check constraints.

CREATE TYPE customer_status AS ENUM ('active', 'dormant', 'banned');
CREATE TYPE order_status AS ENUM ('open', 'paid', 'shipped', 'cancelled');

CREATE TABLE regions (
    id    integer      PRIMARY KEY,
    code  varchar(12)  NOT NULL UNIQUE,
    name  varchar(100) NOT NULL
);

CREATE TABLE customers (
    id                    bigint          PRIMARY KEY,
    email                 varchar(200)    NOT NULL UNIQUE,
    name                  varchar(200)    NOT NULL,
    region_id             integer         NOT NULL REFERENCES regions (id),
    status                customer_status NOT NULL,
    referred_by_order_id  bigint          NULL,
    created_at            timestamp       NOT NULL
);

CREATE TABLE sellers (
    id         integer      PRIMARY KEY,
    name       varchar(200) NOT NULL,
    region_id  integer      NOT NULL REFERENCES regions (id),
    rating     numeric(3,2) NOT NULL CHECK (rating BETWEEN 0 AND 5)
);

CREATE TABLE products (
    id          bigint        PRIMARY KEY,
    seller_id   integer       NOT NULL REFERENCES sellers (id),
    sku         varchar(32)   NOT NULL UNIQUE,
    title       varchar(200)  NOT NULL,
    price       numeric(10,2) NOT NULL,
    created_at  timestamp     NOT NULL
);

CREATE TABLE orders (
    id           bigint        PRIMARY KEY,
    customer_id  bigint        NOT NULL REFERENCES customers (id),
    status       order_status  NOT NULL,
    placed_at    timestamp     NOT NULL,
    total        numeric(12,2) NOT NULL
);

ALTER TABLE customers ADD CONSTRAINT fk_customers_referred_by FOREIGN KEY (referred_by_order_id) REFERENCES orders (id);

CREATE TABLE order_items (
    order_id    bigint        NOT NULL REFERENCES orders (id) ON DELETE CASCADE,
    line_no     integer       NOT NULL,
    product_id  bigint        NOT NULL REFERENCES products (id),
    quantity    integer       NOT NULL CHECK (quantity > 0),
    price       numeric(10,2) NOT NULL,
    PRIMARY KEY (order_id, line_no)
);

CREATE TABLE reviews (
    id           bigint    PRIMARY KEY,
    product_id   bigint    NOT NULL REFERENCES products (id),
    customer_id  bigint    NOT NULL REFERENCES customers (id),
    stars        smallint  NOT NULL CHECK (stars IN (1, 2, 3, 4, 5)),
    body         text      NULL,
    created_at   timestamp NOT NULL
);

CREATE INDEX ix_orders_customer_placed ON orders (customer_id, placed_at);
CREATE INDEX ix_orders_status_placed ON orders (status, placed_at);
CREATE INDEX ix_order_items_product ON order_items (product_id, order_id);
CREATE INDEX ix_products_seller ON products (seller_id);
CREATE INDEX ix_reviews_product ON reviews (product_id, created_at);
CREATE INDEX ix_customers_referred_by ON customers (referred_by_order_id);
