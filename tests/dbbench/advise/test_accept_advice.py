"""A query that never had an index, end to end: ``dbbench advise`` on a team's annotated .sql
catalog verifies an expression index for it on both servers and writes the migrations;
``dbbench catalog accept --advice`` writes that index as the block's expectation; with the
migrations added to the schema and loaded again, the catalog passes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.conftest import run_cli
from tests.db import drop_namespaces

pytestmark = pytest.mark.servers
EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "tickets" / "db"
NS = "i34_accept"


@pytest.fixture
def catalog(local_servers, tmp_path) -> Path:
    cat = tmp_path / "db"
    cat.mkdir()
    for f in EXAMPLE.glob("setup.*.sql"):
        shutil.copy(f, cat / f.name)
    (cat / "queries.sql").write_text(
        "-- name: tickets_by_subject\nSELECT id, status FROM tickets WHERE lower(subject) = lower($1) LIMIT 20;\n"
    )
    yield cat
    drop_namespaces(NS)


def test_advise_then_accept_the_verified_index_and_check_passes(catalog, tmp_path):
    assert run_cli("seed", "--catalog", str(catalog), "--namespace", NS).code == 0
    out, migrations = tmp_path / "advice.json", tmp_path / "migrations"
    r = run_cli(
        "advise", "--catalog", str(catalog), "--namespace", NS, "--most", "1", "--write-rows", "100",
        "--runs", "1", "--output", str(out), "--write", str(migrations),
    )  # fmt: skip
    assert r.code == 0, r.stderr
    doc = json.loads(out.read_text())
    for dialect in ("postgresql", "mysql"):
        (a,) = [a for a in doc["shapes"] if a["dialect"] == dialect]
        best = a["candidates"][0]
        assert best["verdict"] == "verified" and best["kind"] == "expression", (
            dialect,
            best.get("reason"),
            best,
        )
        assert "lower(subject)" in best["candidate"] and best["migration_name"] == "ix_tickets_lower_subject"
        assert best["write"]["ratio"] is not None  # the writes that change lower(subject): subject's
        assert best["rows_examined"]["after"] < best["rows_examined"]["before"]
    done = run_cli("catalog", "accept", "--catalog", str(catalog), "--advice", str(out))
    assert done.code == 0 and "wrote the expectations of 1 block" in done.stdout, done.output
    lines = (catalog / "queries.sql").read_text().splitlines()
    assert "-- dbbench: expect tickets.ix_tickets_lower_subject" in lines, lines
    for dialect in ("postgresql", "mysql"):  # the team adds the migrations to its schema, loads it again
        setup = catalog / f"setup.{dialect}.sql"
        setup.write_text(
            setup.read_text() + "\n" + (migrations / f"dbbench-advise-{dialect}.sql").read_text()
        )
    assert run_cli("seed", "--catalog", str(catalog), "--namespace", NS).code == 0
    checked = run_cli(
        "explain", "--catalog", str(catalog), "--namespace", NS, "--runs", "1", "--warmups", "0"
    )
    assert checked.code == 0, checked.output
    inside = run_cli(
        "advise", "--catalog", str(catalog), "--namespace", NS, "--write", str(catalog / "migrations")
    )
    assert (
        inside.code == 2 and "inside the catalog" in inside.stderr and not (catalog / "migrations").exists()
    )
    bad = run_cli("catalog", "accept", "--catalog", str(catalog), "--advice", str(catalog / "queries.sql"))
    assert bad.code == 2 and "not JSON" in bad.stderr and "Traceback" not in bad.stderr
