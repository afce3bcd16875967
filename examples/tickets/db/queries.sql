-- The ticket desk's queries, in the `-- name:` blocks aiosql, PugSQL and yesql read (and sqlc, with
-- $1 parameters). tickets_app/dao.py loads them; dbbench reads the same file as its catalog.

-- name: account_by_email^
-- Sign-in: one account by e-mail address, through the unique index.
-- dbbench: expect accounts.uq_accounts_email
-- dbbench: forbid full_scan
-- dbbench: param email = "account42@example.com"
SELECT id, name FROM accounts WHERE email = :email;

-- name: recent_tickets
-- An account's ten most recent tickets: the (account, opened) index walked backwards, no sort.
-- The values probe checks account 1 too, which holds a tenth of all tickets.
-- dbbench: expect tickets.ix_tickets_account_opened
-- dbbench: forbid full_scan, sort
-- dbbench: rows 10
SELECT id, status, subject, opened_at FROM tickets
 WHERE account_id = :account_id
 ORDER BY opened_at DESC LIMIT 10;

-- name: ticket_queue
-- The agents' queue: the 50 oldest tickets of a status, in index order.
-- dbbench: expect tickets.ix_tickets_status_opened
-- dbbench: forbid full_scan, sort
-- dbbench: param status = "open"
SELECT id, account_id, opened_at FROM tickets
 WHERE status = :status
 ORDER BY opened_at LIMIT 50;

-- name: ticket_comments
-- A ticket's comments, oldest first.
-- dbbench: expect comments.ix_comments_ticket_created
-- dbbench: forbid full_scan, sort
SELECT id, body, created_at FROM comments
 WHERE ticket_id = :ticket_id
 ORDER BY created_at;
