-- The ticket desk's schema and a deterministic data set, MySQL 8.0.18+. dbbench runs this inside
-- a database it owns: leave names unqualified. Same rows as setup.postgresql.sql.

CREATE TABLE accounts (
    id          integer      PRIMARY KEY,
    email       varchar(200) NOT NULL,
    name        varchar(200) NOT NULL,
    UNIQUE KEY uq_accounts_email (email)
);

CREATE TABLE tickets (
    id          bigint       PRIMARY KEY,
    account_id  integer      NOT NULL,
    status      varchar(16)  NOT NULL,
    subject     varchar(200) NOT NULL,
    opened_at   datetime     NOT NULL,
    KEY ix_tickets_account_opened (account_id, opened_at),
    KEY ix_tickets_status_opened (status, opened_at),
    KEY ix_tickets_account_status_opened (account_id, status, opened_at)
);

CREATE TABLE comments (
    id          bigint       PRIMARY KEY,
    ticket_id   bigint       NOT NULL,
    body        varchar(400) NOT NULL,
    created_at  datetime     NOT NULL,
    KEY ix_comments_ticket_created (ticket_id, created_at)
);

-- Row generators need deeper recursion than the default 1,000.
SET SESSION cte_max_recursion_depth = 100000;

INSERT INTO accounts
WITH RECURSIVE g (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < 2000)
SELECT n, CONCAT('account', n, '@example.com'), CONCAT('Account ', n) FROM g;

INSERT INTO tickets
WITH RECURSIVE g (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < 40000)
SELECT n,
       CASE WHEN n % 10 = 0 THEN 1 ELSE 1 + (n * 7919) % 2000 END,
       CASE WHEN n % 97 = 0 THEN 'open' WHEN n % 23 = 0 THEN 'pending' ELSE 'closed' END,
       CONCAT('Ticket ', n),
       TIMESTAMP '2025-01-01 00:00:00' + INTERVAL (n * 10) MINUTE
  FROM g;

INSERT INTO comments
WITH RECURSIVE g (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < 80000)
SELECT n, 1 + (n - 1) % 40000, CONCAT('Comment ', n),
       TIMESTAMP '2025-01-01 00:00:00' + INTERVAL (n * 7) MINUTE
  FROM g;
