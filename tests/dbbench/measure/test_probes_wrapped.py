"""A DAO change that wraps the column (``lower(email) = lower(:email)``, ``account_id + 0 =
:account_id``) is what an index check exists to catch: it is measured and fails naming the lost
index (exit 1), in an annotated SQL catalog and in ``dbbench diff`` against a baseline, never
refused as a parameter without a value (exit 2). On the ticket example's data (examples/tickets/db)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.conftest import run_cli
from tests.db import drop_namespaces

pytestmark = pytest.mark.servers
EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "tickets" / "db"
NS = "dbbench_t_wrapped"


@pytest.fixture
def tickets(local_servers, tmp_path) -> Path:
    """A copy of the example catalog: its schema, data and queries."""
    cat = tmp_path / "db"
    cat.mkdir()
    for f in [*EXAMPLE.glob("setup.*.sql"), EXAMPLE / "queries.sql"]:
        shutil.copy(f, cat / f.name)
    yield cat
    drop_namespaces(NS)


def _change(queries: Path, old: str, new: str) -> None:
    text = queries.read_text()
    assert old in text, old
    queries.write_text(text.replace(old, new))


def test_a_wrapped_column_in_a_sql_catalog_is_measured_and_fails_naming_the_index(tickets):
    queries = tickets / "queries.sql"
    _change(queries, "WHERE account_id = :account_id", "WHERE account_id + 0 = :account_id")
    # the e-mail lookup loses its sample line too: its value now comes from the column, through lower()
    _change(queries, '-- dbbench: param email = "account42@example.com"\n', "")
    _change(queries, "WHERE email = :email", "WHERE lower(email) = lower(:email)")
    run = run_cli("check", "--catalog", str(tickets), "--namespace", NS)
    assert run.code == 1, run.output
    assert "has no value" not in run.output and "Traceback" not in run.output
    for dialect in ("PostgreSQL", "MySQL"):
        assert (
            f"FAIL recent_tickets [{dialect}]: expected tickets using ix_tickets_account_opened; "
            "actual: full_scan on tickets; expected index ix_tickets_account_opened on tickets is not used"
        ) in run.output, run.output
        assert (
            f"FAIL account_by_email [{dialect}]: expected accounts using uq_accounts_email; "
            "actual: full_scan on accounts; expected index uq_accounts_email on accounts is not used"
        ) in run.output, run.output
    # the shapes left as they were still hold
    assert "ok: comments using ix_comments_ticket_created" in run.stdout


def test_diff_measures_a_changed_shape_with_the_baselines_values_and_names_the_regression(tickets, tmp_path):
    run = run_cli("seed", "--catalog", str(tickets), "--namespace", NS)
    assert run.code == 0, run.output
    baseline = tmp_path / "baseline.json"
    options = ("--runs", "3", "--warmups", "1")
    run = run_cli("baseline", "save", str(baseline), "--catalog", str(tickets), "--namespace", NS, *options)
    assert run.code == 0, run.output
    saved = {(r["shape"], r["dialect"]): r["params"] for r in json.loads(baseline.read_text())["results"]}
    queries = tickets / "queries.sql"
    # the change the check exists for: the column wrapped, the index no longer usable
    _change(queries, "WHERE account_id = :account_id", "WHERE account_id + 0 = :account_id")
    # a change whose column no text reading finds (a row comparison): measured with the baseline's value
    _change(queries, "WHERE ticket_id = :ticket_id", "WHERE (ticket_id, 0) = (:ticket_id, 0)")
    after = tmp_path / "after.json"
    run = run_cli("diff", str(baseline), "--save-result", str(after))
    assert run.code == 1, run.output
    assert "has no value" not in run.output and "Traceback" not in run.output
    out = run.stdout
    assert "dbbench diff: fail: 2 regressions: recent_tickets (MySQL, PostgreSQL); 6 of 8 unchanged" in out
    assert "index lost: ix_tickets_account_opened on tickets; now full_scan on tickets" in out
    measured = {(r["shape"], r["dialect"]): r["params"] for r in json.loads(after.read_text())["results"]}
    for dialect in ("postgresql", "mysql"):
        for shape in ("recent_tickets", "ticket_comments"):
            assert measured[shape, dialect] == saved[shape, dialect], (shape, dialect)
    # not among the regressions (an advisory timing note may list it under "Other changes")
    regressions = out.split("Regressions:")[1].split("Other changes:")[0].split("Work by plan node")[0]
    assert "ticket_comments" not in regressions, out
