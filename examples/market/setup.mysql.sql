-- A marketplace's schema, MySQL 8.0.18+: tables only, no rows (see setup.postgresql.sql).

CREATE TABLE regions (
    id    integer      PRIMARY KEY,
    code  varchar(12)  NOT NULL UNIQUE,
    name  varchar(100) NOT NULL
);

CREATE TABLE customers (
    id                    bigint       PRIMARY KEY,
    email                 varchar(200) NOT NULL UNIQUE,
    name                  varchar(200) NOT NULL,
    region_id             integer      NOT NULL,
    status                enum('active', 'dormant', 'banned') NOT NULL,
    referred_by_order_id  bigint       NULL,
    created_at            datetime     NOT NULL,
    FOREIGN KEY (region_id) REFERENCES regions (id)
);

CREATE TABLE sellers (
    id         integer      PRIMARY KEY,
    name       varchar(200) NOT NULL,
    region_id  integer      NOT NULL,
    rating     decimal(3,2) NOT NULL CHECK (rating BETWEEN 0 AND 5),
    FOREIGN KEY (region_id) REFERENCES regions (id)
);

CREATE TABLE products (
    id          bigint        PRIMARY KEY,
    seller_id   integer       NOT NULL,
    sku         varchar(32)   NOT NULL UNIQUE,
    title       varchar(200)  NOT NULL,
    price       decimal(10,2) NOT NULL,
    created_at  datetime      NOT NULL,
    FOREIGN KEY (seller_id) REFERENCES sellers (id)
);

CREATE TABLE orders (
    id           bigint        PRIMARY KEY,
    customer_id  bigint        NOT NULL,
    status       enum('open', 'paid', 'shipped', 'cancelled') NOT NULL,
    placed_at    datetime      NOT NULL,
    total        decimal(12,2) NOT NULL,
    FOREIGN KEY (customer_id) REFERENCES customers (id)
);

ALTER TABLE customers ADD CONSTRAINT fk_customers_referred_by FOREIGN KEY (referred_by_order_id) REFERENCES orders (id);

CREATE TABLE order_items (
    order_id    bigint        NOT NULL,
    line_no     integer       NOT NULL,
    product_id  bigint        NOT NULL,
    quantity    integer       NOT NULL CHECK (quantity > 0),
    price       decimal(10,2) NOT NULL,
    PRIMARY KEY (order_id, line_no),
    FOREIGN KEY (order_id) REFERENCES orders (id) ON DELETE CASCADE,
    FOREIGN KEY (product_id) REFERENCES products (id)
);

CREATE TABLE reviews (
    id           bigint   PRIMARY KEY,
    product_id   bigint   NOT NULL,
    customer_id  bigint   NOT NULL,
    stars        smallint NOT NULL CHECK (stars IN (1, 2, 3, 4, 5)),
    body         text     NULL,
    created_at   datetime NOT NULL,
    FOREIGN KEY (product_id) REFERENCES products (id),
    FOREIGN KEY (customer_id) REFERENCES customers (id)
);

CREATE INDEX ix_orders_customer_placed ON orders (customer_id, placed_at);
CREATE INDEX ix_orders_status_placed ON orders (status, placed_at);
CREATE INDEX ix_order_items_product ON order_items (product_id, order_id);
CREATE INDEX ix_products_seller ON products (seller_id);
CREATE INDEX ix_reviews_product ON reviews (product_id, created_at);
