-- Shapes captured by dbbench (dbbench capture, or the pytest plugin's --dbbench-capture):
-- the expectations are proposed from the plans observed on the loaded data; review them.

-- name: pending_tickets
-- Probe values off: [PostgreSQL] hottest value status = 'closed' (37,866 of 40,000 rows): index_range on tickets using ix_tickets_account_opened (estimated 3,787 rows, 20 actual): expected index ix_tickets_account_status_opened on tickets is not used.
-- dbbench: source tickets_app/dao.py:77, test test_tickets_dao.py::test_the_biggest_account_has_pending_tickets[postgresql]
-- dbbench: expect tickets.ix_tickets_account_status_opened
-- dbbench: forbid full_scan, sort
-- dbbench: param account_id = 1
-- dbbench: param status = "pending"
-- dbbench: param limit = 20
-- dbbench: probe generic
SELECT tickets.id, tickets.subject FROM tickets WHERE tickets.account_id = :account_id AND tickets.status = :status ORDER BY tickets.opened_at DESC LIMIT :limit;
