"""The frames both dialects share (:mod:`dbbench.dialects.common`), on the real servers: an
EXPLAIN ANALYZE sample, plain or prepared, is undone and keeps the caller's transaction, a
timeout is a TimeoutError and leaves the session as it was; a capture read or reset that fails
is rolled back before it is raised, on both servers alike (issue 33)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import pymysql
import pytest
from sqlalchemy.engine import make_url

from dbbench import dialects, servers
from dbbench.access.targets import connect
from dbbench.dialects import mysql, postgresql
from dbbench.errors import DbbenchError

NS = "dbbench_t_frames"
USER, PASSWORD = "dbbench_t_frames_reader", "frames-reader-7"  # a login with no privileges
DIALECTS = ("postgresql", "mysql")
# runs far longer than the samples' 100 ms: pg_sleep is cancelled, MySQL's SLEEP would just return
SLOW = {
    "postgresql": "SELECT pg_sleep(5)",
    "mysql": "SELECT COUNT(*) FROM information_schema.columns a, information_schema.columns b, "
    "information_schema.columns c",
}
# a write EXPLAIN ANALYZE executes (MySQL analyzes a multi-table UPDATE, not a single-table one)
WRITE = {
    "postgresql": "UPDATE t SET v = 5",
    "mysql": "UPDATE t AS a JOIN t AS b ON b.id = a.id SET a.v = 5",
}
SETUP = {
    "postgresql": [
        f"DROP SCHEMA IF EXISTS {NS} CASCADE",
        f"CREATE SCHEMA {NS}",
        f"CREATE TABLE {NS}.t (id int PRIMARY KEY, v int NOT NULL)",
        f"DROP ROLE IF EXISTS {USER}",
        f"CREATE ROLE {USER} LOGIN PASSWORD '{PASSWORD}'",
    ],
    "mysql": [
        f"DROP DATABASE IF EXISTS {NS}",
        f"CREATE DATABASE {NS}",
        f"CREATE TABLE {NS}.t (id int PRIMARY KEY, v int NOT NULL)",
        f"DROP USER IF EXISTS '{USER}'@'%'",
        f"CREATE USER '{USER}'@'%' IDENTIFIED BY '{PASSWORD}'",
    ],
}
TEARDOWN = {
    "postgresql": [f"DROP SCHEMA IF EXISTS {NS} CASCADE", f"DROP ROLE IF EXISTS {USER}"],
    "mysql": [f"DROP DATABASE IF EXISTS {NS}", f"DROP USER IF EXISTS '{USER}'@'%'"],
}


@contextlib.contextmanager
def _connection(dialect: str, user: str | None = None) -> Iterator:
    """A raw driver connection of dbbench's own user (``user``: of the login without privileges)."""
    url = make_url(servers.local_url(dialect))
    if user is not None:
        url = url.set(username=user, password=PASSWORD)
    target = connect(url.render_as_string(hide_password=False), dialect=dialect)
    raw = target.engine.raw_connection()
    try:
        yield raw.driver_connection
    finally:
        raw.close()
        target.dispose()


@contextlib.contextmanager
def _in_namespace(dialect: str) -> Iterator:
    """dbbench's own connection, using the scratch namespace."""
    with _connection(dialect) as conn:
        dialects.get(dialect).use(conn, NS)
        conn.commit()
        yield conn


def _run(dialect: str, conn, statements: list[str]) -> None:
    dialects.get(dialect).execute(conn, statements)
    conn.commit()


@pytest.fixture(scope="module", autouse=True)
def scratch(local_servers):
    for dialect in DIALECTS:
        with _connection(dialect) as conn:
            _run(dialect, conn, SETUP[dialect])
    yield
    for dialect in DIALECTS:
        with _connection(dialect) as conn:
            _run(dialect, conn, TEARDOWN[dialect])


def _begin(dialect: str, conn) -> None:
    """A transaction open on ``conn``, as a caller may have one."""
    if dialect == "mysql":
        conn.begin()
    else:
        with conn.cursor() as cur:
            cur.execute("SELECT 1")  # psycopg opens the transaction itself


def _in_transaction(dialect: str, conn) -> bool:
    """Whether ``conn`` has a transaction open; a ``SELECT 1`` must work on it either way."""
    if dialect == "postgresql":
        import psycopg

        found = conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE
    with conn.cursor() as cur:
        cur.execute("SELECT 1")
        assert cur.fetchone()[0] == 1
    if dialect == "mysql":
        found = bool(conn.server_status & 1)  # SERVER_STATUS_IN_TRANS, as SELECT 1 leaves it
    return found


def _values(conn) -> list[tuple]:
    with conn.cursor() as cur:
        cur.execute(f"SELECT id, v FROM {NS}.t ORDER BY id")
        return [tuple(r) for r in cur.fetchall()]


def _prepared_left(dialect: str, conn) -> bool:
    with conn.cursor() as cur:
        if dialect == "postgresql":
            cur.execute("SELECT count(*) FROM pg_prepared_statements")
            return cur.fetchone()[0] > 0
        try:
            cur.execute("EXECUTE dbbench_prepared")
        except pymysql.err.MySQLError as exc:
            assert exc.args[0] == 1243  # unknown prepared statement handler
            return False
        return True


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_sample_inside_the_callers_transaction_is_undone_and_keeps_its_work(dialect):
    d = dialects.get(dialect)
    with _in_namespace(dialect) as conn:
        if dialect == "mysql":
            _run(dialect, conn, ["SET SESSION max_execution_time = 4321"])  # the caller's own setting
        _begin(dialect, conn)
        d.execute(conn, ["INSERT INTO t (id, v) VALUES (1, 0)"])  # the caller's uncommitted row
        d.run_sample(conn, WRITE[dialect], {}, 30_000)
        d.run_explain_generic(conn, WRITE[dialect], {}, 30_000)
        assert _values(conn) == [(1, 0)]  # the samples' writes undone, the caller's row kept
        for explain in (d.run_sample, d.run_explain_generic):
            with pytest.raises(TimeoutError, match=r"of 100 ms reached"):
                explain(conn, SLOW[dialect], {}, 100)
        assert _in_transaction(dialect, conn) and _values(conn) == [(1, 0)]
        assert not _prepared_left(dialect, conn)
        if dialect == "mysql":
            with conn.cursor() as cur:
                cur.execute("SELECT @@SESSION.max_execution_time")
                assert cur.fetchone()[0] == 4321
        conn.rollback()
        assert _values(conn) == []


@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_sample_outside_a_transaction_leaves_none_open(dialect):
    d = dialects.get(dialect)
    with _in_namespace(dialect) as conn:
        d.run_sample(conn, WRITE[dialect], {}, 30_000)
        with pytest.raises(TimeoutError):
            d.run_explain_generic(conn, SLOW[dialect], {}, 100)
        assert not _in_transaction(dialect, conn)
        assert not _prepared_left(dialect, conn)


@pytest.mark.parametrize("operation", ["reset", "read"])
@pytest.mark.parametrize("dialect", DIALECTS)
def test_a_failed_capture_step_is_rolled_back_before_it_is_raised(dialect, operation):
    """A login that may not read the statistics (PostgreSQL: shared_preload_libraries; MySQL:
    the digest table) fails with the server's error; the transaction it ran in is rolled back
    first, so the connection is usable and holds no transaction. Before issue 33 a failed reset
    left PostgreSQL's transaction failed (every next statement refused) and MySQL's open."""
    import psycopg

    d = dialects.get(dialect)
    with _connection(dialect, USER) as conn:
        _begin(dialect, conn)
        assert _in_transaction(dialect, conn)
        with pytest.raises((psycopg.Error, pymysql.err.MySQLError)):
            if operation == "reset":
                d.reset_captured(conn)
            else:
                d.captured_statements(conn, NS)
        assert not _in_transaction(dialect, conn)


@pytest.mark.parametrize("operation", ["reset", "read"])
@pytest.mark.parametrize("module", [postgresql, mysql], ids=DIALECTS)
def test_a_capture_problem_is_one_line_after_a_rollback(module, operation, monkeypatch):
    """Where the statistics are off (pg_stat_statements not loaded, performance_schema off: not
    so on the local servers, so the check is made to report it after it ran): one DbbenchError
    line, raised after the rollback on both servers."""
    problem = "_stat_statements_problem" if module is postgresql else "_performance_schema_problem"
    check = getattr(module, problem)

    def off(cur) -> str:
        assert check(cur) is None
        return "statistics are off here"

    monkeypatch.setattr(module, problem, off)
    with _connection(module.NAME) as conn:
        _begin(module.NAME, conn)
        assert _in_transaction(module.NAME, conn)
        with pytest.raises(DbbenchError, match="^statistics are off here$"):
            if operation == "reset":
                module.reset_captured(conn)
            else:
                module.captured_statements(conn, NS)
        assert not _in_transaction(module.NAME, conn)
