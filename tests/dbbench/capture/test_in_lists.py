"""A folded IN-list is checked with every value it had: capture folds ``IN ('open', 'pending')``
to ``IN (:status)``, and the plan of a list of two statuses is not the plan of its first one (the
(status, opened_at) index gives one status in date order; two need a sort). On the ticket
example's data (examples/tickets), through the pytest plugin."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.conftest import run_cli, run_program
from tests.db import drop_namespaces

pytestmark = pytest.mark.servers
EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "tickets"
NS = "dbbench_t_in_lists"
QUEUE = """
-- name: queue_of_statuses
-- The agents' queue of several statuses, oldest first.
-- dbbench: expect tickets.ix_tickets_status_opened
-- dbbench: forbid full_scan, sort
-- dbbench: param status = "open"
SELECT id, account_id, opened_at FROM tickets WHERE status IN (:status) ORDER BY opened_at LIMIT 50;
"""
TESTS = """\
def test_the_queue_of_two_statuses(dbbench_conn):
    with dbbench_conn.cursor() as cur:
        cur.execute(
            "SELECT id, account_id, opened_at FROM tickets WHERE status IN ('open', 'pending') "
            "ORDER BY opened_at LIMIT 50"
        )
        assert len(cur.fetchall()) == 50


def test_comments_of_three_tickets(dbbench_conn):
    with dbbench_conn.cursor() as cur:
        cur.execute("SELECT id, ticket_id FROM comments WHERE ticket_id IN (7, 8, 9) ORDER BY ticket_id")
        assert cur.fetchall()
"""


@pytest.fixture
def app(local_servers, tmp_path) -> Path:
    """A copy of the example with a catalog shape of an IN-list and the tests that run two lists."""
    copy = tmp_path / "tickets"
    shutil.copytree(EXAMPLE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    with (copy / "db" / "queries.sql").open("a") as f:
        f.write(QUEUE)
    (copy / "test_lists.py").write_text(TESTS)
    yield copy
    drop_namespaces(NS)


def test_a_captured_in_list_is_checked_and_written_with_every_value(app, tmp_path):
    out = tmp_path / "new.sql"
    run = run_program(
        "pytest", str(app / "test_lists.py"), "-q", "-p", "no:cacheprovider",
        "--dbbench-namespace", NS, "--dbbench-capture", str(out),
    )  # fmt: skip
    assert run.code == 1, run.output
    assert "4 passed" in run.stdout  # the rows are right; the plan of the whole list is not
    # the catalog's shape holds for 'open' alone; the list the application sends needs a sort
    assert f"FAIL queue_of_statuses (catalog {app / 'db' / 'queries.sql'}:" in run.stdout, run.stdout
    for dialect in ("PostgreSQL", "MySQL"):
        assert (
            f"[{dialect}] actual: index_range on tickets using ix_tickets_status_opened; forbidden sort"
            in (run.stdout)
        ), run.stdout
    # a new shape is written with its list, and what is written is checked with the list again
    text = out.read_text()
    assert "WHERE ticket_id IN (:ticket_id) ORDER BY ticket_id;" in text, text
    assert "-- dbbench: param ticket_id = [7, 8, 9]\n" in text, text
    shutil.copy(out, app / "db" / "new.sql")
    (app / "db" / "queries.sql").write_text((EXAMPLE / "db" / "queries.sql").read_text())
    check = run_cli(
        "explain", "--catalog", str(app / "db"), "--namespace", NS, "--runs", "1", "--warmups", "0"
    )
    assert check.code == 0, check.output
    assert "ok: comments using ix_comments_ticket_created" in check.stdout, check.stdout
