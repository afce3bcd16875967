"""``dbbench catalog propose`` / ``accept``: a block without an expectation gets the one its plan
proposes on the loaded data, written into the file; the catalog then passes ``dbbench check``."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.conftest import run_cli
from tests.db import drop_namespaces

pytestmark = pytest.mark.servers
EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "tickets" / "db"
NS = "dbbench_t_accept"


@pytest.fixture
def catalog(local_servers, tmp_path) -> Path:
    for f in EXAMPLE.glob("setup.*.sql"):
        shutil.copy(f, tmp_path / f.name)
    (tmp_path / "queries.sql").write_text(
        "-- name: comments_of_ticket\nSELECT id FROM comments WHERE ticket_id = $1 ORDER BY created_at;\n"
    )
    yield tmp_path
    drop_namespaces(NS)


def test_propose_then_accept_writes_the_expectation_and_check_passes(catalog):
    assert run_cli("seed", "--catalog", str(catalog), "--namespace", NS).code == 0
    failing = run_cli("check", "--catalog", str(catalog), "--namespace", NS, "--only", "postgresql")
    assert failing.code == 1 and "no expectation in" in failing.output
    said = run_cli("catalog", "propose", "--catalog", str(catalog), "--namespace", NS)
    assert said.code == 0, said.output
    assert (
        f"comments_of_ticket ({catalog / 'queries.sql'}:1): PostgreSQL: expect "
        "comments.ix_comments_ticket_created; forbid full_scan, sort; MySQL: expect "
        "comments.ix_comments_ticket_created; forbid full_scan, sort"
    ) in said.stdout
    done = run_cli("catalog", "accept", "--catalog", str(catalog), "--namespace", NS)
    assert done.code == 0 and "wrote the expectations of 1 block" in done.stdout
    assert (catalog / "queries.sql").read_text().splitlines()[1:3] == [
        "-- dbbench: expect comments.ix_comments_ticket_created",
        "-- dbbench: forbid full_scan, sort",
    ]
    assert run_cli("check", "--catalog", str(catalog), "--namespace", NS).code == 0
    again = run_cli("catalog", "propose", "--catalog", str(catalog), "--namespace", NS)
    assert "every block has an expectation" in again.stdout
