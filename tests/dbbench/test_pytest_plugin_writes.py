"""The pytest plugin's capture of writes: a separate pytest run whose DAO tests UPDATE, DELETE and
INSERT through SQLAlchemy (Core and ORM, parameters bound), checked at the session's end on both
real servers. Each write runs in a rolled-back transaction; the report shows the index it used and
what it locked; a lost index on the UPDATE's predicate fails the session, naming the statement;
the data is the same afterwards."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from tests import db
from tests.conftest import run_cli, run_program
from tests.db import drop_namespaces
from tests.dbbench.capture.test_capture_writes import UPDATE_BLOCK

pytestmark = pytest.mark.servers
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "tickets" / "db"
NS = "dbbench_t_plugwrites"
INDEX = "ix_tickets_account_status_opened"

PYTEST_INI = f"""\
[pytest]
addopts = -p dbbench.pytest_plugin
dbbench_catalog = db
dbbench_namespace = {NS}
dbbench_capture = db/captured.sql
"""
QUERIES = UPDATE_BLOCK  # the catalog's one shape at first: the UPDATE the tests run
DAO = '''\
"""The ticket desk's writes: SQLAlchemy Core for the UPDATE, the ORM for the DELETE and the INSERT."""

import datetime

import sqlalchemy as sa
from sqlalchemy import orm

tickets = sa.Table(
    "tickets",
    sa.MetaData(),
    sa.Column("id", sa.BigInteger, primary_key=True),
    sa.Column("account_id", sa.Integer),
    sa.Column("status", sa.String(16)),
)


class Base(orm.DeclarativeBase):
    pass


class Comment(Base):
    __tablename__ = "comments"
    id: orm.Mapped[int] = orm.mapped_column(sa.BigInteger, primary_key=True)
    ticket_id: orm.Mapped[int] = orm.mapped_column(sa.BigInteger)
    body: orm.Mapped[str] = orm.mapped_column(sa.String(400))
    created_at: orm.Mapped[datetime.datetime]


def close_pending_tickets(conn: sa.Connection, account_id: int) -> int:
    closing = (
        sa.update(tickets)
        .where(tickets.c.account_id == account_id, tickets.c.status == "pending")
        .values(status="closed")
    )
    return conn.execute(closing).rowcount


def delete_comments_of_ticket(session: orm.Session, ticket_id: int) -> int:
    deleting = sa.delete(Comment).where(Comment.ticket_id == ticket_id)
    return session.execute(deleting, execution_options={"synchronize_session": False}).rowcount


def add_comment(session: orm.Session, comment_id: int, ticket_id: int, body: str) -> None:
    when = datetime.datetime(2026, 1, 1)
    session.add(Comment(id=comment_id, ticket_id=ticket_id, body=body, created_at=when))
    session.flush()
'''
TESTS = """\
from sqlalchemy import orm

import ticket_writes


def test_closing_an_accounts_pending_tickets(dbbench_engine):
    with dbbench_engine.connect() as conn:
        assert ticket_writes.close_pending_tickets(conn, 1) == 172
        conn.rollback()


def test_a_tickets_comments_are_deleted(dbbench_engine):
    with orm.Session(dbbench_engine) as session:
        assert ticket_writes.delete_comments_of_ticket(session, 1234) == 2
        session.rollback()


def test_a_comment_is_added(dbbench_engine):
    with orm.Session(dbbench_engine) as session:
        ticket_writes.add_comment(session, 900001, 1234, "thanks")
        session.rollback()
"""


@pytest.fixture(scope="module")
def app(local_servers, tmp_path_factory) -> Path:
    """A DAO and its tests, the ticket example's schema and data as the catalog's setup SQL."""
    root = tmp_path_factory.mktemp("plugwrites")
    (root / "db").mkdir()
    for f in EXAMPLE.glob("setup.*.sql"):
        shutil.copy(f, root / "db" / f.name)
    (root / "db" / "queries.sql").write_text(QUERIES)
    (root / "pytest.ini").write_text(PYTEST_INI)
    (root / "ticket_writes.py").write_text(DAO)
    (root / "test_ticket_writes.py").write_text(TESTS)
    seeded = run_cli("seed", "--catalog", str(root / "db"), "--namespace", NS)
    assert seeded.code == 0, seeded.output
    yield root
    drop_namespaces(NS)


def pytest_run(app: Path):
    return run_program("pytest", str(app), "-q", "-p", "no:cacheprovider")


def fingerprints() -> dict[tuple[str, str], str]:
    return db.fingerprints(NS, ("accounts", "tickets", "comments"))


def line_of(text: str, needle: str) -> int:
    return next(n for n, line in enumerate(text.splitlines(), 1) if needle in line)


def test_writes_are_captured_checked_rolled_back_and_a_lost_index_fails_the_session(app):
    before = fingerprints()
    first = pytest_run(app)
    assert first.code == 0, first.output
    out = first.stdout
    assert "6 passed" in out
    assert "dbbench capture: 3 shapes captured: 1 hold, 0 failed, 2 new (written to" in out
    update = line_of(DAO, "return conn.execute(closing)")
    assert re.search(
        rf"ok   close_pending_tickets \[PostgreSQL, MySQL\] \(ticket_writes.py:{update}, test "
        r"test_ticket_writes.py::test_closing_an_accounts_pending_tickets\[postgresql\]\)\n"
        rf"  \[PostgreSQL\] UPDATE tickets: expected tickets using {INDEX}; actual: index_range on tickets "
        rf"using {INDEX}; locks 172 rows \(tickets 172\); rolled back: tickets unchanged \(fingerprints "
        r"equal before and after\)\n"
        rf"  \[MySQL\] UPDATE tickets: expected tickets using {INDEX}; actual: index_range on tickets using "
        rf"{INDEX}; locks 172 rows \(tickets 172\), [\d,]+ gaps; rolled back: tickets unchanged",
        out,
    ), out
    assert (
        "NEW  delete_comments_of_ticket [PostgreSQL, MySQL]: PostgreSQL: expect comments.ix_comments_ticket_created"
    ) in out
    assert "  [PostgreSQL] DELETE comments: expect comments.ix_comments_ticket_created" in out
    # the ORM's INSERT: named after the DAO function (not SQLAlchemy's flush), no index to expect
    assert (
        "NEW  add_comment [PostgreSQL, MySQL]: PostgreSQL: no access path (INSERT … VALUES): inserts into "
        "comments, writing 2 indexes: comments_pkey, ix_comments_ticket_created"
    ) in out
    written = (app / "db" / "captured.sql").read_text()
    assert "DELETE FROM comments WHERE comments.ticket_id = :ticket_id;" in written
    assert (
        "INSERT INTO comments (id, ticket_id, body, created_at) VALUES (:id, :ticket_id, :body, :created_at);"
    ) in written  # PostgreSQL's ::TIMESTAMP WITHOUT TIME ZONE cast dropped: one shape for both
    assert fingerprints() == before  # the tests' writes and the checks' were all rolled back

    again = pytest_run(app)
    assert again.code == 0, again.output
    assert "3 shapes captured: 3 hold, 0 failed, 0 new" in again.stdout
    assert "ok   delete_comments_of_ticket [PostgreSQL, MySQL]" in again.stdout
    assert "  [MySQL] DELETE comments: expected comments using ix_comments_ticket_created" in again.stdout
    assert fingerprints() == before

    # the index the UPDATE's predicate needs is gone from the schema: the session fails
    for f in (app / "db").glob("setup.*.sql"):
        text = f.read_text()
        lost = re.sub(rf"CREATE INDEX {INDEX} ON[^;]*;\n", "", text)
        lost = re.sub(rf",\n\s*KEY {INDEX} \([^)]*\)", "", lost)
        assert lost != text
        f.write_text(lost)
    failed = pytest_run(app)
    assert failed.code == 1, failed.output
    said = failed.stdout
    assert "6 passed" in said  # the tests pass: the rows are right
    assert "3 shapes captured: 2 hold, 1 failed, 0 new" in said
    assert (
        f"FAIL close_pending_tickets (catalog {app / 'db' / 'queries.sql'}:1), captured from "
        f"ticket_writes.py:{update}, test test_ticket_writes.py::test_closing_an_accounts_pending_tickets[postgresql]:\n"
        "  statement: UPDATE tickets SET status=:status WHERE tickets.account_id = :account_id AND "
        "tickets.status = :status_2\n"
    ) in said
    assert re.search(
        rf"\[PostgreSQL\] actual: [^;]*; expected index {INDEX} on tickets is not used; UPDATE tickets locked 172 "
        r"rows \(tickets 172\)",
        said,
    ), said
    assert re.search(
        rf"\[MySQL\] actual: [^;]*; expected index {INDEX} on tickets is not used; UPDATE locks [\d,]+ rows, more "
        r"than max_locked_rows 256 \(tickets: [\d,]+ through",
        said,
    ), said
