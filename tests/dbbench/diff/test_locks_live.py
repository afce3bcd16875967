"""`dbbench diff` on a write, on the real servers (alpine-ci): the baseline of "relation token
rewrite" keeps what each server locked; drop `ix_relation_lookup` (the DAO change) and the diff
exits 1. On MySQL InnoDB's full scan locks every relation row it reads, and the diff names it:
"UPDATE package_relation now locks 2,048 rows (was 100)". On PostgreSQL the footprint stays at the
100 rows changed (row locks are taken on the rows the update changes, not on the rows it reads):
no locks finding, but the lost index, the work and the assertion fail, the last naming the 100
rows locked."""

from __future__ import annotations

import json
import re

import pytest

from tests.conftest import run_cli
from tests.db import drop_index, seeded_without, sql

pytestmark = pytest.mark.servers

NS = "dbbench_t_difflocks"
SHAPE = "relation token rewrite"
LOCKED = re.compile(r"UPDATE package_relation now locks ([\d,]+) rows \(was 100\)")


def test_a_dropped_index_fails_the_diff_of_a_write_naming_the_rows_it_now_locks(local_servers, tmp_path):
    base, out, junit = tmp_path / "baseline.json", tmp_path / "diff.json", tmp_path / "diff.xml"
    with seeded_without(NS) as targets:
        run = run_cli(
            "baseline",
            "save",
            str(base),
            "--namespace",
            NS,
            "--shape",
            SHAPE,
            "--no-natural",
            "--runs",
            "3",
            "--warmups",
            "1",
        )
        assert run.code == 0, run.output
        assert re.search(
            r"relation token rewrite\s+MySQL\s+UPDATE package_relation\s+100\s+100 rows", run.stdout
        ), run.stdout
        saved = {r["dialect"]: r["remediated"]["locks"] for r in json.loads(base.read_text())["results"]}
        assert saved["mysql"]["rows"] == saved["postgresql"]["rows"] == 100, saved
        assert "ix_relation_lookup" in saved["mysql"]["tables"][0]["indexes"]

        same = run_cli("diff", str(base), "--runs", "3", "--warmups", "1")
        assert same.code == 0, same.output  # nothing changed: the same 100 rows on both servers
        assert "dbbench diff: pass: no regressions; 2 of 2 unchanged" in same.stdout

        for dialect, target in targets.items():
            sql(target, drop_index(dialect, "ix_relation_lookup"), namespace=NS)
        relations = sql("mysql", "SELECT COUNT(*) FROM package_relation", namespace=NS)[0][0]
        run = run_cli(
            "diff", str(base), "--runs", "3", "--warmups", "1", "--output", str(out), "--junit", str(junit)
        )
    assert run.code == 1, run.output
    assert "fail: 2 regressions: relation token rewrite (MySQL, PostgreSQL); 0 of 2 unchanged" in run.stdout

    shapes = {s["dialect"]: s for s in json.loads(out.read_text())["shapes"]}
    mysql, pg = shapes["mysql"], shapes["postgresql"]
    (locked,) = [f["message"] for f in mysql["findings"] if f["kind"] == "locks"]
    m = LOCKED.match(locked)
    assert m, locked
    assert int(m.group(1).replace(",", "")) == relations == 2048  # every row the full scan read
    assert f"- {locked}" in run.stdout and locked in junit.read_text()
    assert mysql["locks"]["rows_before"] == 100 and mysql["locks"]["rows_after"] == relations
    assert f"100 → {relations:,}" in run.stdout  # the Rows locked column
    assert "Locks: relation token rewrite [MySQL]: UPDATE package_relation" in run.stdout

    # PostgreSQL locks the rows it changes, with or without the index: no locks finding, and the
    # plan, the work and the assertion fail instead, the assertion naming the rows locked
    assert pg["locks"]["rows_before"] == pg["locks"]["rows_after"] == 100
    kinds = {f["kind"] for f in pg["findings"] if f["regression"]}
    assert "locks" not in kinds and {"index_dropped", "index_lost", "assertion"} <= kinds, pg["findings"]
    (assertion,) = [f["message"] for f in pg["findings"] if f["kind"] == "assertion"]
    assert "UPDATE package_relation locked 100 rows (package_relation 100)" in assertion, assertion
