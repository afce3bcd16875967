-- The shop's schema and a deterministic data set, PostgreSQL.
-- dbbench runs this inside a schema it owns (search_path is set for you): leave names unqualified.
-- Same rows as setup.mysql.sql, so both dialects answer the same questions.

CREATE TABLE customers (
    id          integer      PRIMARY KEY,
    email       varchar(200) NOT NULL,
    name        varchar(200) NOT NULL,
    created_at  timestamp    NOT NULL
);

CREATE TABLE products (
    id           integer      PRIMARY KEY,
    sku          varchar(32)  NOT NULL,
    name         varchar(200) NOT NULL,
    price_cents  integer      NOT NULL
);

CREATE TABLE orders (
    id           bigint       PRIMARY KEY,
    customer_id  integer      NOT NULL,
    status       varchar(16)  NOT NULL,
    placed_at    timestamp    NOT NULL,
    total_cents  integer      NOT NULL
);

CREATE TABLE order_items (
    order_id     bigint   NOT NULL REFERENCES orders (id) ON DELETE CASCADE,
    line_no      smallint NOT NULL,
    product_id   integer  NOT NULL REFERENCES products (id),
    quantity     integer  NOT NULL,
    price_cents  integer  NOT NULL,
    PRIMARY KEY (order_id, line_no)
);

-- 2,000 customers, 5,000 products, 30,000 orders (15 per customer, 600 open), 60,000 order lines.
INSERT INTO customers
SELECT n, 'customer' || n || '@example.com', 'Customer ' || n, TIMESTAMP '2025-01-01 00:00:00' + n * INTERVAL '1 hour'
  FROM generate_series(1, 2000) AS g(n);

INSERT INTO products
SELECT n, 'SKU-' || lpad(n::text, 5, '0'), 'Product ' || n, 100 + (n * 37) % 9900
  FROM generate_series(1, 5000) AS g(n);

INSERT INTO orders
SELECT n, 1 + (n * 7919) % 2000,
       CASE WHEN n % 50 = 0 THEN 'open' WHEN n % 7 = 0 THEN 'shipped' ELSE 'delivered' END,
       TIMESTAMP '2026-01-01 00:00:00' + n * INTERVAL '10 minutes', 500 + (n * 131) % 20000
  FROM generate_series(1, 30000) AS g(n);

INSERT INTO order_items
SELECT n, line, 1 + (n * 13 + line * 101) % 5000, 1 + (n + line) % 3, 100 + (n * 37 + line) % 9900
  FROM generate_series(1, 30000) AS g(n) CROSS JOIN (VALUES (1), (2)) AS l(line);

-- The indexes the DAO's queries were designed for (the catalog asserts them).
CREATE UNIQUE INDEX uq_customers_email ON customers (email);
CREATE INDEX ix_orders_customer_placed ON orders (customer_id, placed_at);
CREATE INDEX ix_orders_status_placed ON orders (status, placed_at);
CREATE INDEX ix_order_items_product ON order_items (product_id, order_id);
