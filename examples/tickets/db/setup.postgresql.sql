-- The ticket desk's schema and a deterministic data set, PostgreSQL. dbbench runs this inside a
-- schema it owns: leave names unqualified. Same rows as setup.mysql.sql.

CREATE TABLE accounts (
    id          integer      PRIMARY KEY,
    email       varchar(200) NOT NULL,
    name        varchar(200) NOT NULL
);
CREATE UNIQUE INDEX uq_accounts_email ON accounts (email);

CREATE TABLE tickets (
    id          bigint       PRIMARY KEY,
    account_id  integer      NOT NULL,
    status      varchar(16)  NOT NULL,
    subject     varchar(200) NOT NULL,
    opened_at   timestamp    NOT NULL
);
CREATE INDEX ix_tickets_account_opened ON tickets (account_id, opened_at);
CREATE INDEX ix_tickets_status_opened ON tickets (status, opened_at);
CREATE INDEX ix_tickets_account_status_opened ON tickets (account_id, status, opened_at);

CREATE TABLE comments (
    id          bigint       PRIMARY KEY,
    ticket_id   bigint       NOT NULL,
    body        varchar(400) NOT NULL,
    created_at  timestamp    NOT NULL
);
CREATE INDEX ix_comments_ticket_created ON comments (ticket_id, created_at);

-- 2,000 accounts; 40,000 tickets, a tenth of them the biggest account's (account 1: 4,000+), 412
-- open, 1,722 pending, 37,866 closed; 80,000 comments, two per ticket.
INSERT INTO accounts
SELECT n, 'account' || n || '@example.com', 'Account ' || n FROM generate_series(1, 2000) n;

INSERT INTO tickets
SELECT n,
       CASE WHEN n % 10 = 0 THEN 1 ELSE 1 + (n * 7919) % 2000 END,
       CASE WHEN n % 97 = 0 THEN 'open' WHEN n % 23 = 0 THEN 'pending' ELSE 'closed' END,
       'Ticket ' || n,
       TIMESTAMP '2025-01-01 00:00:00' + n * INTERVAL '10 minutes'
  FROM generate_series(1, 40000) n;

INSERT INTO comments
SELECT n, 1 + (n - 1) % 40000, 'Comment ' || n,
       TIMESTAMP '2025-01-01 00:00:00' + n * INTERVAL '7 minutes'
  FROM generate_series(1, 80000) n;
