"""The bulk-load floor of a data spec (dbbench.bench.volume_floor, what benchmarks/bench_volume.py
compares ``dbbench fill`` with): the recipe's rows written to files once, then loaded by the fill's
own loaders into both real servers — the same rows a fill loads, table by table."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from dbbench import dialects
from dbbench.access.targets import open_targets
from dbbench.bench import volume_floor
from dbbench.setup.loader import load as load_setup
from dbbench.volume import load, schema, spec, starter
from tests.db import connection, drop_namespaces, sql

pytestmark = pytest.mark.servers

ROOT = Path(__file__).resolve().parents[3]
NS = "dbbench_t_volume_floor"
SCALE = 300


def test_the_floor_loads_the_plans_rows_into_every_table_of_both_servers(local_servers, tmp_path):
    targets = open_targets({})
    try:
        load_setup(targets, ROOT / "examples" / "market", namespace=NS)
        with targets[0].all_or_nothing() as conn:
            tables = schema.read(conn, targets[0].dialect, NS)
            conn.rollback()
        file = tmp_path / "spec.toml"
        file.write_text(starter.starter(tables, source="test"))
        recipe = load.prepare(targets, NS, spec.read(file), SCALE)
        files = volume_floor.write_files(recipe, targets, tmp_path)
        assert [len(per_target) for per_target in files] == [len(files[0])] * len(targets) and files[0]
        seconds = volume_floor.floor(recipe, targets, NS, files)
        assert len(seconds) == len(targets) and all(s > 0 for s in seconds)
        for t in targets:
            counts = {
                tp.name: sql(t, f"SELECT COUNT(*) FROM {tp.name}", namespace=NS)[0][0] for tp in recipe.tables
            }
            assert counts == {tp.name: tp.rows for tp in recipe.tables}, t.dialect
        assert sum(tp.rows for tp in recipe.tables) == recipe.rows > 0
    finally:
        for t in targets:
            t.dispose()
        drop_namespaces(NS)


def test_bench_volume_before_prints_both_ways_for_both_servers_and_drops_its_namespace(local_servers):
    """``benchmarks/bench_volume.py --before`` as docs/volume.md shows it, at a tiny scale: the
    former loads and today's, one line per server each, the same fingerprints, nothing left."""
    proc = subprocess.run(
        [sys.executable, "benchmarks/bench_volume.py", "--before", "--scale", "300"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = [line.split() for line in proc.stdout.splitlines()]
    ways = [(cells[0], cells[1]) for cells in lines if cells and cells[0] in ("before", "now")]
    assert ways == [(w, d) for w in ("before", "now") for d in ("postgresql", "mysql")], proc.stdout
    assert "DIFFERENT" not in proc.stdout and "rows made and encoded alone" in proc.stdout
    for dialect in ("postgresql", "mysql"):
        with connection(dialect) as conn:
            assert dialects.get(dialect).namespace_state(conn, "dbbench_bench_volume") == "absent"
