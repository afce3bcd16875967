"""The ticket desk's DAO tests. They assert what the application needs (the rows); dbbench's
plugin, enabled in pytest.ini, records every statement they execute and checks each one's plan
at the end of the session (--dbbench-capture): the catalog's expectation for the queries of
db/queries.sql, the proposed one written to db/captured.sql for the others."""

from tickets_app import dao


def test_sign_in_finds_the_account(dbbench_conn):
    assert dao.account_by_email(dbbench_conn, "account42@example.com")[0] == 42


def test_recent_tickets_are_newest_first(dbbench_conn):
    rows = dao.recent_tickets(dbbench_conn, 42)
    assert len(rows) == 10
    assert [r[3] for r in rows] == sorted((r[3] for r in rows), reverse=True)


def test_the_queue_is_oldest_first(dbbench_conn):
    rows = dao.ticket_queue(dbbench_conn, "open")
    assert len(rows) == 50 and rows[0][0] == 97


def test_a_ticket_has_its_two_comments(dbbench_conn):
    assert len(dao.ticket_comments(dbbench_conn, 1234)) == 2


def test_the_biggest_account_has_pending_tickets(dbbench_engine):
    rows = dao.pending_tickets(dbbench_engine, 1)
    assert len(rows) == 20
