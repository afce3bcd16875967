"""Every parameter: a shape checked with values drawn from the loaded data and under the plan a
prepared statement gets, on the ticket example's data (examples/tickets/db)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.conftest import run_cli
from tests.db import drop_namespaces

pytestmark = pytest.mark.servers
EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "tickets" / "db"
NS = "dbbench_t_probes"

TRAPS = """\
-- name: latest_tickets_of_account
-- dbbench: mysql expect tickets.ix_tickets_account_opened
-- dbbench: postgresql expect tickets.ix_tickets_account_status_opened
-- dbbench: forbid full_scan
-- dbbench: param account_id = 42
SELECT id, subject FROM tickets WHERE account_id = :account_id ORDER BY id DESC LIMIT 10;

-- name: open_tickets_by_age
-- dbbench: only postgresql
-- dbbench: expect tickets.ix_tickets_open_opened
-- dbbench: forbid full_scan, sort
-- dbbench: param status = "open"
-- dbbench: probe generic
SELECT id, account_id, opened_at FROM tickets WHERE status = :status ORDER BY opened_at LIMIT 50;
"""
PARTIAL = "\nCREATE INDEX ix_tickets_open_opened ON tickets (opened_at) WHERE status = 'open';\n"


@pytest.fixture(scope="module")
def traps(local_servers, tmp_path_factory) -> Path:
    """The example's schema and data plus a partial index (PostgreSQL), and two shapes whose
    index holds for their sample value only."""
    cat = tmp_path_factory.mktemp("traps")
    for f in EXAMPLE.glob("setup.*.sql"):
        shutil.copy(f, cat / f.name)
    with (cat / "setup.postgresql.sql").open("a") as fh:
        fh.write(PARTIAL)
    (cat / "traps.sql").write_text(TRAPS)
    yield cat
    drop_namespaces(NS)


def test_the_example_catalog_passes_with_every_parameter(local_servers):
    run = run_cli("check", "--catalog", str(EXAMPLE), "--namespace", NS)
    assert run.code == 0, run.output
    assert "ok: tickets using ix_tickets_account_opened" in run.stdout


def test_a_hottest_value_and_a_generic_plan_that_lose_the_index_fail_naming_them(traps):
    run = run_cli("check", "--catalog", str(traps), "--namespace", NS)
    assert run.code == 1, run.output
    out = run.output
    # the sample value uses the index on both servers; account 1 (a tenth of the rows) does not
    assert "MySQL FAIL: index_lookup on tickets using ix_tickets_account_opened" in out
    assert "PostgreSQL FAIL: index_range on tickets using ix_tickets_account_status_opened" in out
    assert "hottest value account_id = 1 (4,000 of 40,000 rows): index_scan on tickets using PRIMARY" in out
    assert (
        "hottest value account_id = 1 (4,000 of 40,000 rows): index_scan on tickets using tickets_pkey" in out
    )
    # a partial index: the literal 'open' proves its predicate, the generic plan cannot
    assert (
        "generic plan (PREPARE / EXECUTE under plan_cache_mode = force_generic_plan): index_range on "
        "tickets using ix_tickets_status_opened (estimated 13,333 rows, 50 actual): expected index "
        "ix_tickets_open_opened on tickets is not used"
    ) in out
    assert f"shape at {traps / 'traps.sql'}:8" in out and f"shape at {traps / 'traps.sql'}:1" in out
    assert "Traceback" not in out


def test_a_parameter_without_a_value_gets_a_typical_one_from_the_data(traps, tmp_path):
    for f in traps.glob("setup.*.sql"):
        shutil.copy(f, tmp_path / f.name)
    (tmp_path / "q.sql").write_text(
        "-- name: comments\n-- dbbench: expect comments.ix_comments_ticket_created\n"
        "-- dbbench: probe none\nSELECT id FROM comments WHERE ticket_id = ? ORDER BY created_at;\n"
        "-- name: nothing_to_draw\n-- dbbench: expect comments.ix_comments_ticket_created\n"
        "SELECT id, ? AS tag FROM comments WHERE ticket_id = 1;\n"
    )
    run = run_cli("check", "--catalog", str(tmp_path), "--namespace", NS, "--only", "postgresql")
    assert run.code == 2, run.output
    assert run.stderr.strip().splitlines()[-1] == (
        f"dbbench: error: {tmp_path / 'q.sql'}:5: shape 'nothing_to_draw': parameter :p has no value "
        "and is compared with no column holding data; add `-- dbbench: param p = …`"
    )
    run = run_cli(
        "check", "--catalog", str(tmp_path), "--namespace", NS, "--only", "postgresql", "--shape", "comments"
    )
    assert run.code == 0, run.output
