"""`dbbench diff` on the real servers, alpine-100k: unchanged data passes; a DAO change that keeps
the plan's index but examines 45x the rows fails on work alone, naming the node; the same rows
read from 37x the pages fail on PostgreSQL's shared buffers; a dropped index
still fails; an old baseline falls back to plan shape; --gate-timing measures its noise floor."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from dbbench import dialects
from tests.conftest import run_cli, seeded_targets
from tests.db import sql
from tests.dbbench.diff.regressions import (
    SEEDED_ORDER,
    SHUFFLED_ORDER,
    rewrite_group_binding,
    unbounded_catalog,
)

pytestmark = pytest.mark.servers

NS = "dbbench_t_diffwork"
WORK = re.compile(
    r"work up at Index Scan on package using ix_package_namespace: 2,048 → ([\d,]+) rows examined "
    r"\(([\d.]+)x\); shared buffers up at Index Scan on package using ix_package_namespace: [\d,]+ → "
    r"[\d,]+ \([\d.]+x\); in total 4,096 → [\d,]+ rows examined \([\d.]+x\), shared buffers [\d,]+ → [\d,]+"
)


@pytest.fixture(scope="module")
def baseline(local_servers, tmp_path_factory) -> Path:
    """alpine-100k seeded into the module's namespace, and its baseline (both dialects)."""
    path = tmp_path_factory.mktemp("diffwork") / "baseline.json"
    with seeded_targets("alpine-100k", NS):
        run = run_cli("baseline", "save", str(path), "--namespace", NS, "--no-natural")
        assert run.code == 0, run.output
        yield path


def test_unchanged_data_passes_with_the_work_of_every_shape_equal(baseline, tmp_path):
    out = tmp_path / "diff.json"
    run = run_cli("diff", str(baseline), "--namespace", NS, "--output", str(out))
    assert run.code == 0, run.output
    assert "dbbench diff: pass: no regressions; 24 of 24 unchanged" in run.stdout
    shapes = json.loads(out.read_text())["shapes"]
    assert len(shapes) == 24
    assert all(s["work"]["rows_before"] == s["work"]["rows_after"] for s in shapes), shapes


def test_the_same_index_examining_45x_the_rows_fails_on_work_naming_the_node(baseline, tmp_path):
    out = tmp_path / "diff.json"
    cat = unbounded_catalog(tmp_path / "alpine-unbounded")
    run = run_cli("diff", str(baseline), "--namespace", NS, "--catalog", str(cat), "--output", str(out))
    assert run.code == 1, run.output
    assert "1 regression: namespace late keyset page (PostgreSQL); 23 of 24 unchanged" in run.stdout
    m = WORK.search(run.stdout)
    assert m, run.stdout
    after, ratio = int(m.group(1).replace(",", "")), float(m.group(2))
    assert after >= 10 * 2048 and ratio >= 10
    shape = next(s for s in json.loads(out.read_text())["shapes"] if s["regressed"])
    # the plan shape held: same index, no sort; only the work (and, advisory, the time) changed
    assert (
        shape["baseline_access"]
        == shape["result_access"]
        == "index_range on package using ix_package_namespace"
    )
    # no plan-shape finding: work, and the catalog assertion, whose generic-plan probe (a prepared
    # statement's plan: the unbounded comparison's estimate no longer trusts the index order) sorts
    assert {f["kind"] for f in shape["findings"] if f["regression"]} == {"work", "assertion"}
    (assertion,) = [f["message"] for f in shape["findings"] if f["kind"] == "assertion"]
    assert "generic plan (PREPARE / EXECUTE" in assertion and "forbidden sort" in assertion, assertion
    assert all(f["advisory"] for f in shape["findings"] if f["kind"] in ("slower", "faster"))
    # an old (dbbench.explain/1) baseline cannot see the work: plan shape and the catalog assertion
    # alone decide (here the generic plan's sort), and it says so
    old = json.loads(baseline.read_text()) | {"schema": "dbbench.explain/1"}
    (tmp_path / "old.json").write_text(json.dumps(old))
    run = run_cli(
        "diff", str(tmp_path / "old.json"), "--namespace", NS, "--catalog", str(cat), "--output", str(out)
    )
    assert run.code == 1, run.output
    assert "work unknown: the baseline is a dbbench.explain/1 document" in run.stdout
    shape = next(s for s in json.loads(out.read_text())["shapes"] if s["regressed"])
    assert {f["kind"] for f in shape["findings"] if f["regression"]} == {"assertion"}


def test_gated_timing_measures_a_second_run_and_never_fails_unchanged_data(baseline):
    run = run_cli("diff", str(baseline), "--namespace", NS, "--gate-timing")
    assert run.code in (0, 3), run.output  # an A/A may be undecided on timing; never a failure
    assert "Self-control (this run against a second run now: the noise floor)" in run.stdout
    assert (
        "slower (--gate-timing): the 95% interval of the sample ratio, widened by the run-to-run"
        in run.stdout
    )
    assert "A/A work" in run.stdout and "DIFFERS" not in run.stdout


def test_the_same_rows_from_37x_the_pages_fail_on_shared_buffers(baseline, tmp_path):
    """group_binding's heap no longer in its page index's order (a rewrite, a bulk reload): the
    same plan examines the same 2,048 rows, each from its own page."""
    out = tmp_path / "diff.json"
    rewrite_group_binding(NS, SHUFFLED_ORDER)
    try:
        run = run_cli("diff", str(baseline), "--namespace", NS, "--output", str(out))
    finally:
        rewrite_group_binding(NS, SEEDED_ORDER)
    assert run.code == 1, run.output
    assert "1 regression: group binding late page (PostgreSQL); 23 of 24 unchanged" in run.stdout
    m = re.search(
        r"- shared buffers up at Index Scan on group_binding using ix_binding_page: ([\d,]+) → ([\d,]+) "
        r"\([\d.]+x\); in total 4,096 → 4,096 rows examined \(1\.0x\)",
        run.stdout,
    )
    assert m, run.stdout
    before, after = (int(g.replace(",", "")) for g in m.groups())
    assert before < 100 and after > 1000  # 56 pages as seeded; about one page per row shuffled
    shape = next(s for s in json.loads(out.read_text())["shapes"] if s["regressed"])
    assert {f["kind"] for f in shape["findings"] if f["regression"]} == {"work"}
    assert shape["baseline_access"] == shape["result_access"]
    restored = run_cli("diff", str(baseline), "--namespace", NS)
    assert restored.code == 0, restored.output


def test_a_dropped_index_still_fails(baseline):
    """Last in the module: the index stays dropped (the fixture seeds the namespace afresh)."""
    drop = {
        "postgresql": "DROP INDEX {ns}.ix_stage_cleanup",
        "mysql": "DROP INDEX ix_stage_cleanup ON {ns}.group_snapshot_stage",
    }
    for dialect, statement in drop.items():
        sql(dialect, statement.format(ns=dialects.get(dialect).quote(NS)))
    run = run_cli("diff", str(baseline), "--namespace", NS)
    assert run.code == 1, run.output
    assert "2 regressions: orphan group stage scan (MySQL, PostgreSQL)" in run.stdout
    assert run.stdout.count("index lost: ix_stage_cleanup on group_snapshot_stage") == 2
