"""TOML catalog entries get the hottest / rarest / generic probes as annotated SQL blocks do, and
opt out the same way (``probe = "none"``, as ``-- dbbench: probe none``). On the ticket example's
data (examples/tickets/db)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.conftest import run_cli
from tests.db import drop_namespaces

pytestmark = pytest.mark.servers
EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "tickets" / "db"
NS = "dbbench_t_probes_toml"

# account 42 holds 20 tickets: the account index; account 1 holds a tenth of the table: both
# servers then walk the primary key backwards instead
ENTRY = """\
name = "latest tickets of an account"
cardinality = "10 of an account's tickets"
{probe}
[params]
account_id = 42

[query]
sql = "SELECT id, subject FROM tickets WHERE account_id = :account_id ORDER BY id DESC LIMIT 10"

[postgresql]
expect = {{ table = "tickets", index = "ix_tickets_account_status_opened" }}
forbid = ["full_scan"]

[mysql]
expect = {{ table = "tickets", index = "ix_tickets_account_opened" }}
forbid = ["full_scan"]
"""


# Two rows fit one page: PostgreSQL's honest plan is a sequential scan, so the entry declares
# enable_seqscan = off (as the builtin catalog's stage lock does); its probes are planned under it
STAGE_SQL = """
CREATE TABLE stage (id integer PRIMARY KEY, token text NOT NULL);
INSERT INTO stage VALUES (1, 'a'), (2, 'b');
"""
STAGE = """\
name = "stage by id"
cardinality = "one of two stages"

[params]
id = 2

[postgresql]
sql = "SELECT id, token FROM stage WHERE id = :id"
settings = { enable_seqscan = "off" }
expect = { table = "stage", index = "stage_pkey" }
forbid = ["full_scan"]
"""


@pytest.fixture
def catalog(local_servers, tmp_path) -> Path:
    cat = tmp_path / "cat"
    cat.mkdir()
    for f in EXAMPLE.glob("setup.*.sql"):
        shutil.copy(f, cat / f.name)
    with (cat / "setup.postgresql.sql").open("a") as f:
        f.write(STAGE_SQL)
    (cat / "02-stage.toml").write_text(STAGE)
    yield cat
    drop_namespaces(NS)


def test_a_toml_entry_is_checked_with_the_hottest_value_and_opts_out_as_an_sql_block_does(catalog):
    entry = catalog / "01-latest.toml"
    entry.write_text(ENTRY.format(probe=""))
    run = run_cli("check", "--catalog", str(catalog), "--namespace", NS)
    assert run.code == 1, run.output
    for index in ("PRIMARY", "tickets_pkey"):
        assert (
            f"hottest value account_id = 1 (4,000 of 40,000 rows): index_scan on tickets using {index}"
        ) in run.output, run.output
    # the sample value itself holds: only the probe fails
    assert "MySQL FAIL: index_lookup on tickets using ix_tickets_account_opened" in run.stdout
    # the entry's planner settings hold for its probes too (its generic plan is no sequential scan)
    assert "ok: stage using stage_pkey" in run.stdout and "FAIL stage by id" not in run.output, run.output
    for spelled, holds in (
        ('probe = "none"', True),
        ('probe = ["generic"]', True),
        ('probe = "values"', False),
    ):
        entry.write_text(ENTRY.format(probe=spelled))
        run = run_cli("check", "--catalog", str(catalog), "--namespace", NS)
        assert run.code == (0 if holds else 1), (spelled, run.output)
        assert ("hottest value" in run.output) is not holds, (spelled, run.output)


def test_a_probe_field_that_names_no_probe_is_a_catalog_error(catalog):
    (catalog / "01-latest.toml").write_text(ENTRY.format(probe='probe = "hottest"'))
    run = run_cli("validate", "--catalog", str(catalog))
    assert run.code == 2, run.output
    assert run.stderr.strip().splitlines()[-1] == (
        f"dbbench: error: {catalog / '01-latest.toml'}: entry 'latest tickets of an account': probe: "
        "'hottest' is not none, or values, generic"
    ), run.stderr
