-- The shop's schema and a deterministic data set, MySQL 8.0.18+.
-- dbbench runs this inside a database it owns (USE is done for you): leave names unqualified.
-- Same rows as setup.postgresql.sql, so both dialects answer the same questions.

CREATE TABLE customers (
    id          integer      PRIMARY KEY,
    email       varchar(200) NOT NULL,
    name        varchar(200) NOT NULL,
    created_at  datetime     NOT NULL
);

CREATE TABLE products (
    id           integer      PRIMARY KEY,
    sku          varchar(32)  NOT NULL,
    name         varchar(200) NOT NULL,
    price_cents  integer      NOT NULL
);

-- No foreign key on customer_id: MySQL would then refuse to drop its index, and the worked
-- example drops exactly that index.
CREATE TABLE orders (
    id           bigint       PRIMARY KEY,
    customer_id  integer      NOT NULL,
    status       varchar(16)  NOT NULL,
    placed_at    datetime     NOT NULL,
    total_cents  integer      NOT NULL
);

CREATE TABLE order_items (
    order_id     bigint   NOT NULL,
    line_no      smallint NOT NULL,
    product_id   integer  NOT NULL,
    quantity     integer  NOT NULL,
    price_cents  integer  NOT NULL,
    PRIMARY KEY (order_id, line_no),
    FOREIGN KEY (order_id) REFERENCES orders (id) ON DELETE CASCADE,
    FOREIGN KEY (product_id) REFERENCES products (id)
);

-- Row generators need deeper recursion than the default 1,000.
SET SESSION cte_max_recursion_depth = 100000;

-- 2,000 customers, 5,000 products, 30,000 orders (15 per customer, 600 open), 60,000 order lines.
INSERT INTO customers
WITH RECURSIVE g (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < 2000)
SELECT n, CONCAT('customer', n, '@example.com'), CONCAT('Customer ', n), TIMESTAMP '2025-01-01 00:00:00' + INTERVAL n HOUR
  FROM g;

INSERT INTO products
WITH RECURSIVE g (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < 5000)
SELECT n, CONCAT('SKU-', LPAD(n, 5, '0')), CONCAT('Product ', n), 100 + (n * 37) % 9900
  FROM g;

INSERT INTO orders
WITH RECURSIVE g (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < 30000)
SELECT n, 1 + (n * 7919) % 2000,
       CASE WHEN n % 50 = 0 THEN 'open' WHEN n % 7 = 0 THEN 'shipped' ELSE 'delivered' END,
       TIMESTAMP '2026-01-01 00:00:00' + INTERVAL (n * 10) MINUTE, 500 + (n * 131) % 20000
  FROM g;

INSERT INTO order_items
WITH RECURSIVE g (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < 30000)
SELECT n, line, 1 + (n * 13 + line * 101) % 5000, 1 + (n + line) % 3, 100 + (n * 37 + line) % 9900
  FROM g CROSS JOIN (SELECT 1 AS line UNION ALL SELECT 2) AS l;

-- The indexes the DAO's queries were designed for (the catalog asserts them).
CREATE UNIQUE INDEX uq_customers_email ON customers (email);
CREATE INDEX ix_orders_customer_placed ON orders (customer_id, placed_at);
CREATE INDEX ix_orders_status_placed ON orders (status, placed_at);
CREATE INDEX ix_order_items_product ON order_items (product_id, order_id);
