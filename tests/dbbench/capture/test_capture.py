"""Capture, both routes, on the ticket example (examples/tickets): the DAO's pytest run recorded
by the plugin, and ``dbbench capture`` after the psql / mysql command-line clients ran a script."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from sqlalchemy.engine import make_url

from dbbench import servers
from dbbench.servers.mysql import client
from tests.conftest import run_cli, run_program
from tests.db import drop_namespaces

pytestmark = pytest.mark.servers
EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "tickets"
NS = "dbbench_t_capture"
PSQL = shutil.which("psql") or "/usr/bin/psql"
SCRIPT = [
    "SELECT id, name FROM accounts WHERE email = 'account7@example.com';",
    "SELECT id, subject FROM tickets WHERE account_id = 42 AND status = 'closed' ORDER BY opened_at DESC LIMIT 5;",
    "SELECT count(*) FROM comments WHERE ticket_id IN (1, 2, 3);",
]


@pytest.fixture(scope="module")
def app(local_servers, tmp_path_factory) -> Path:
    """A copy of the example (its DAO changes in some tests), the captured file as committed."""
    copy = tmp_path_factory.mktemp("tickets") / "tickets"
    shutil.copytree(EXAMPLE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    yield copy
    drop_namespaces(NS)


def pytest_run(app: Path, *args: str):
    return run_program("pytest", str(app), "-q", "-p", "no:cacheprovider", "--dbbench-namespace", NS, *args)


def test_the_dao_run_is_captured_and_every_shape_holds(app):
    before = (app / "db" / "captured.sql").read_text()
    run = pytest_run(app)
    assert run.code == 0, run.output
    assert "10 passed" in run.stdout
    assert "dbbench capture: 5 shapes captured: 5 hold, 0 failed, 0 new" in run.stdout
    assert re.search(
        r"ok   recent_tickets \[PostgreSQL, MySQL\] \(tickets_app/dao.py:\d+, test test_tickets_dao.py::",
        run.stdout,
    )
    assert "ok   pending_tickets [PostgreSQL, MySQL]" in run.stdout  # the SQLAlchemy Core query
    assert (app / "db" / "captured.sql").read_text() == before  # nothing new to write
    # the catalog both routes make passes dbbench check too
    check = run_cli("check", "--catalog", str(app / "db"), "--namespace", NS)
    assert check.code == 0, check.output


def test_a_new_query_is_written_with_its_proposed_expectation(app, tmp_path):
    (app / "test_new_query.py").write_text(
        "def test_accounts_by_name(dbbench_conn):\n"
        "    with dbbench_conn.cursor() as cur:\n"
        "        cur.execute('SELECT id FROM accounts WHERE name = %s', ('Account 9',))\n"
        "        assert [tuple(r) for r in cur.fetchall()] == [(9,)]\n"
    )
    (app / "test_new_index.py").write_text(
        "def test_tickets_by_status(dbbench_conn):\n"
        "    with dbbench_conn.cursor() as cur:\n"
        "        cur.execute('SELECT id FROM tickets WHERE status = %s ORDER BY opened_at LIMIT 3', ('open',))\n"
        "        assert len(cur.fetchall()) == 3\n"
    )
    out = tmp_path / "new.sql"
    try:
        run = pytest_run(app, "--dbbench-capture", str(out), "-k", "accounts_by_name or tickets_by_status")
    finally:
        (app / "test_new_query.py").unlink()
        (app / "test_new_index.py").unlink()
    # a shape whose plan uses no index has nothing to expect: not written, and the run fails
    assert run.code == 1, run.output
    assert "1 new, 1 without an index (written to" in run.stdout
    assert (
        "SCAN test_accounts_by_name [PostgreSQL, MySQL]: no index used (PostgreSQL: full_scan on accounts; "
        "MySQL: full_scan on accounts), so there is nothing to expect there: not written"
    ) in run.stdout
    assert "--dbbench-accept-scans" in run.stdout
    text = out.read_text()
    assert "-- name: test_tickets_by_status\n" in text and "accounts" not in text
    assert (
        "-- dbbench: source test_new_index.py:3, test test_new_index.py::test_tickets_by_status[postgresql]"
        in text
    )
    assert (
        "SELECT id FROM tickets WHERE status = :status ORDER BY opened_at LIMIT :limit;" in text
        and '-- dbbench: param status = "open"' in text
    )


def test_a_dao_change_that_loses_the_index_fails_naming_shape_source_and_test(app):
    dao = app / "tickets_app" / "dao.py"
    original = dao.read_text()
    changed = original.replace(
        ".where(tickets.c.account_id == account_id,",
        ".where(sa.func.coalesce(tickets.c.account_id, 0) == account_id,",
    )
    assert changed != original
    dao.write_text(changed)
    try:
        run = pytest_run(app)
    finally:
        dao.write_text(original)
    assert run.code == 1, run.output
    assert "10 passed" in run.stdout  # the tests themselves pass: the rows are still right
    line = next(n for n, text in enumerate(original.splitlines(), 1) if "with engine.connect()" in text) + 1
    assert (
        f"FAIL pending_tickets (catalog {app / 'db' / 'captured.sql'}:4), captured from "
        f"tickets_app/dao.py:{line}, test test_tickets_dao.py::test_the_biggest_account_has_pending_tickets[postgresql]:"
    ) in run.stdout
    assert "expected index ix_tickets_account_status_opened on tickets is not used" in run.stdout
    assert (app / "db" / "captured.sql").read_text() == (EXAMPLE / "db" / "captured.sql").read_text()


def test_a_queries_file_change_fails_dbbench_check_naming_the_file_and_line(app):
    queries = app / "db" / "queries.sql"
    original = queries.read_text()
    queries.write_text(original.replace("WHERE email = :email", "WHERE lower(email) = lower(:email)"))
    try:
        run = run_cli("check", "--catalog", str(app / "db"), "--namespace", NS, "--only", "postgresql")
    finally:
        queries.write_text(original)
    assert run.code == 1, run.output
    assert "FAIL account_by_email [PostgreSQL]" in run.output
    assert f"shape at {queries}:4" in run.output


def _psql(script: str) -> None:
    url = make_url(servers.local_url("postgresql"))
    subprocess.run(
        [
            PSQL,
            "-h",
            url.host,
            "-p",
            str(url.port),
            "-U",
            url.username,
            "-d",
            url.database,
            "-q",
            "-v",
            "ON_ERROR_STOP=1",
            "-c",
            script,
        ],
        env={"PGPASSWORD": url.password or "", "PATH": "/usr/bin:/bin"},
        check=True,
        capture_output=True,
    )


def test_capture_after_the_psql_and_mysql_clients_ran_a_script(app, tmp_path):
    assert pytest_run(app, "-k", "sign_in").code == 0  # the namespace is built
    assert run_cli("capture", "--reset").code == 0
    _psql(f"SET search_path TO {NS}; " + " ".join(SCRIPT))
    mysql_url = servers.local_url("mysql").replace("mysql+pymysql", "mysql")
    done = client("mysql", mysql_url, [NS, "-e", " ".join(SCRIPT)])
    assert done.returncode == 0, done.stderr
    out = tmp_path / "captured.sql"
    run = run_cli("capture", "--catalog", str(app / "db"), "--namespace", NS, "--output", str(out))
    assert run.code == 0, run.output
    assert "ok   account_by_email [PostgreSQL, MySQL] (pg_stat_statements, 1 call" in run.stdout
    assert (
        "NEW  tickets_by_account_id_status [PostgreSQL, MySQL]: PostgreSQL: expect "
        "tickets.ix_tickets_account_status_opened; forbid full_scan, sort; MySQL: expect "
        "tickets.ix_tickets_account_status_opened; forbid full_scan, sort"
    ) in run.stdout
    text = out.read_text()
    assert "SELECT count(*) FROM comments WHERE ticket_id IN (:ticket_id);" in text
    assert "SHA2(" not in text and "dbbench_meta" not in text and "EXPLAIN" not in text  # dbbench's own
    # the written catalog is one: with the example's setup SQL next to it, it passes
    for f in (app / "db").glob("setup.*.sql"):
        shutil.copy(f, tmp_path / f.name)
    check = run_cli("check", "--catalog", str(tmp_path), "--namespace", NS)
    assert check.code == 0, check.output
