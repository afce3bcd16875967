"""`dbbench grow`: work measured at several sizes, its slope, and the declared growth asserted."""

from __future__ import annotations

import json
import math

import pytest

from dbbench.measure import grow
from dbbench.measure.grow import Growth, Point
from dbbench.units import size_label
from tests.conftest import run_cli


def test_sizes_parse_as_a_ladder():
    assert grow.parse_sizes("10k,100k,1m") == [10_000, 100_000, 1_000_000]
    assert grow.parse_sizes("1m, 10k") == [10_000, 1_000_000]
    for bad in ("10k", "10k,10k", "ten,100k", "1.5,10k"):
        with pytest.raises(grow.GrowError):
            grow.parse_sizes(bad)
    assert [size_label(n) for n in (10_000, 1_000_000, 2_500)] == ["10k", "1m", "2500"]


def test_slope_and_verdict():
    assert grow.exponent((10_000, 600), (1_000_000, 600)) == 0
    assert math.isclose(grow.exponent((10_000, 10_000), (1_000_000, 1_000_000)), 1.0)
    assert grow.classify(0.0) == "bounded" and grow.classify(0.09) == "bounded"
    assert grow.classify(0.2) == "logarithmic" and grow.classify(0.9) == "linear"
    flat = Growth(
        "s", "mysql", "remediated", "bounded", [Point(n, 5, None, 1.0, 1, "x") for n in (1, 10, 100)]
    )
    assert flat.ok and flat.verdict == "bounded" and flat.problem() is None
    steep = Growth(
        "s",
        "mysql",
        "remediated",
        "bounded",
        [Point(n, n, None, 1.0, 1, "full_scan t") for n in (1_000, 10_000)],
    )
    assert not steep.ok and steep.verdict == "linear"
    assert (
        "work grows linear (k = 1.00; 1k: 1,000 rows, 10k: 10,000 rows), declared bounded" in steep.problem()
    )
    assert "plan at 10k: full_scan t" in steep.problem()


def test_postgresql_work_counts_the_rows_a_scan_filtered_away():
    plan = [
        {
            "Plan": {
                "Node Type": "Limit",
                "Actual Rows": 1,
                "Actual Loops": 1,
                "Plans": [
                    {
                        "Node Type": "Seq Scan",
                        "Actual Rows": 1,
                        "Actual Loops": 1,
                        "Rows Removed by Filter": 9999,
                    }
                ],
            }
        }
    ]
    assert grow.pg_work(plan) == 1 + 10_000


SETUP = {
    "postgresql": "CREATE TABLE t (id int PRIMARY KEY, k int NOT NULL, pad text);\n"
    "INSERT INTO t SELECT g, g, 'x' FROM generate_series(1, :scale) g;\n",
    "mysql": "SET SESSION cte_max_recursion_depth = 1000000;\n"
    "CREATE TABLE t (id int PRIMARY KEY, k int NOT NULL, pad text);\n"
    "INSERT INTO t WITH RECURSIVE s (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < :scale) "
    "SELECT n, n, 'x' FROM s;\n",
}
INDEX = "CREATE INDEX t_k ON t (k);\n"


def _catalog(tmp_path, indexed: bool):
    cat = tmp_path / ("indexed" if indexed else "unindexed")
    cat.mkdir()
    for dialect, sql in SETUP.items():
        (cat / f"setup.{dialect}.sql").write_text(sql + (INDEX if indexed else ""))
    (cat / "point.toml").write_text(
        'name = "point lookup"\ncardinality = "1 of :scale"\ngrowth = "bounded"\n'
        '[query]\nsql = "SELECT id FROM t WHERE k = 777"\n'
        '[postgresql]\nexpect = { table = "t", index = "t_k" }\n'
        '[mysql]\nexpect = { table = "t", index = "t_k" }\n'
    )
    return cat


@pytest.mark.servers
def test_a_bounded_shape_passes_and_loses_its_bound_when_its_index_is_removed(local_servers, tmp_path):
    out = tmp_path / "grow.json"
    args = ["grow", "--sizes", "1k,20k", "--runs", "1", "--warmups", "0", "--namespace", "dbbench_t_grow"]
    ok = run_cli(*args, "--catalog", str(_catalog(tmp_path, True)), "--output", str(out))
    assert ok.code == 0, ok.output
    doc = json.loads(out.read_text())
    assert doc["schema"] == "dbbench.grow/1" and doc["sizes"] == [1_000, 20_000] and doc["problems"] == []
    assert {(g["dialect"], g["verdict"]) for g in doc["growth"]} == {
        ("postgresql", "bounded"),
        ("mysql", "bounded"),
    }
    bad = run_cli(*args, "--catalog", str(_catalog(tmp_path, False)), "--output", str(out))
    assert bad.code == 1, bad.output
    doc = json.loads(out.read_text())
    assert {(g["dialect"], g["verdict"]) for g in doc["growth"]} == {
        ("postgresql", "linear"),
        ("mysql", "linear"),
    }
    for dialect in ("postgresql", "mysql"):
        line = next(ln for ln in bad.stderr.splitlines() if f"growth: {dialect} point lookup" in ln)
        assert "work grows linear" in line and "declared bounded" in line and "full_scan t" in line, line
    assert "LINEAR (worse than declared)" in bad.stdout
