"""The alpine dataset's published cardinalities as a data spec (tests/dbbench/volume/alpine.toml)
on the alpine schema (sql/schema/), checked by the same queries `dbbench seed` runs: 100 pending
of 10,000 suite states, 100 lookup matches of 100,000 relations, 32 cleanup candidates with
retain 3, no relation without its package."""

from __future__ import annotations

from pathlib import Path

import pytest

from dbbench.access.targets import open_targets
from dbbench.setup import loader
from dbbench.volume import fill
from tests.conftest import shape_toml

pytestmark = pytest.mark.servers
ROOT = Path(__file__).resolve().parents[3]
SPEC = Path(__file__).with_name("alpine.toml")
ENTRY = shape_toml(
    "pending suites",
    "100 of 10,000",
    sql="SELECT repository_id FROM suite_state WHERE pending ORDER BY desired_at LIMIT 10",
    postgresql='expect = { table = "suite_state", index = "ix_suite_pending" }',
)


def test_the_alpine_cardinalities_hold_on_both_servers_from_a_spec(owned, tmp_path):
    ns = owned("dbbench_t_volume_alpine")
    catalog = tmp_path / "alpine"
    catalog.mkdir()
    for d in ("postgresql", "mysql"):
        (catalog / f"setup.{d}.sql").write_text((ROOT / "sql" / "schema" / f"{d}.sql").read_text())
    (catalog / "01-pending.toml").write_text(ENTRY)
    targets = open_targets({})
    try:
        loader.load(targets, catalog, namespace=ns)
        results = fill(targets, ns, SPEC)
    finally:
        for t in targets:
            t.dispose()
    expected = {
        "relations matching the lookup token": 100,
        "pending suite states": 100,
        "snapshot cleanup candidates (retain 3)": 32,
        "relations without their package (FK)": 0,
        "rows in package_relation": 100_000,
    }
    for r in results:
        assert {c.name: c.actual for c in r.checks} == expected, r.dialect
        assert r.ok
        assert (
            r.rows["suite_state"] == 10_000 and r.rows["snapshot"] == 100_001 and r.rows["package"] == 100_000
        )
    pg, my = results
    assert pg.fingerprints == my.fingerprints  # identical rows, binary SHA-256 columns included
