"""`dbbench diff` rules on hand-made result documents, and result-file validation. No server needed."""

from __future__ import annotations

import copy
import json
import xml.etree.ElementTree as ET

import pytest

from dbbench import diff
from dbbench.dialects.plan import PlanNode
from dbbench.document import store
from dbbench.document.store import ResultFileError
from dbbench.errors import DbbenchError
from dbbench.output.diff import junit_xml, to_markdown, to_text
from verdict.stats import Interval


def node(kind, label, *children, table=None, index=None, est=None, rows=None, loops=1.0):
    return PlanNode(
        kind=kind,
        label=label,
        table=table,
        alias=table,
        index=index,
        est_rows=est,
        actual_rows=rows,
        loops=loops,
        children=list(children),
    )


def indexed():
    return node(
        "limit",
        "Limit",
        node("index_range", "Index Scan on orders using ix_c", table="orders", index="ix_c", est=15, rows=10),
    )


def scanned():
    return node(
        "limit",
        "Limit",
        node("sort", "Sort", node("full_scan", "Seq Scan on orders", table="orders", est=15, rows=15)),
    )


def entry(shape, dialect, tree, p50, ok=True, problems=()):
    samples = [p50 * f for f in (0.9, 0.95, 0.98, 1.0, 1.02, 1.05, 1.1)]
    return {
        "shape": shape,
        "dialect": dialect,
        "cardinality": "10 of 30,000",
        "ok": ok,
        "verdict": {"expected": "orders using ix_c", "actual": "…", "problems": list(problems)},
        "remediated": {
            "sql": "SELECT …",
            "samples_ms": samples,
            "p50_ms": p50,
            "p95_ms": samples[-1],
            "rows": 10,
            "timeout": None,
            "plan": tree.to_dict(),
        },
    }


def doc(*entries, version="12.22", schema="dbbench.explain/2"):
    return {
        "schema": schema,
        "generated_at": "2026-12-03T00:00:00+00:00",
        "servers": [{"dialect": "postgresql", "version": version}, {"dialect": "mysql", "version": "8.0.46"}],
        "config": {"runs": 7},
        "results": list(entries),
    }


def kinds(report, shape="recent orders", dialect="postgresql"):
    s = next(s for s in report.shapes if (s.shape, s.dialect) == (shape, dialect))
    return {f.kind: f.regression for f in s.findings}


def test_identical_runs_have_no_findings():
    base = doc(entry("recent orders", "postgresql", indexed(), 0.02))
    report = diff.compare(base, copy.deepcopy(base))
    assert report.ok and report.shapes[0].status == "unchanged"
    assert "no regressions; 1 of 1 unchanged" in to_markdown(report)


def test_lost_index_is_named_with_the_new_access_path():
    base = doc(entry("recent orders", "postgresql", indexed(), 0.02))
    new = doc(
        entry(
            "recent orders",
            "postgresql",
            scanned(),
            2.6,
            ok=False,
            problems=["expected index ix_c on orders is not used"],
        )
    )
    report = diff.compare(base, new)
    assert not report.ok
    assert kinds(report) == {
        "index_lost": True,
        "scan_kind": True,
        "sort_added": True,
        "assertion": True,
        "slower": False,  # advisory: timing does not decide without --gate-timing
    }
    md = to_markdown(report)
    assert "- **recent orders** [PostgreSQL]" in md
    assert "index lost: ix_c on orders; now full_scan on orders" in md
    assert "scan kind changed on orders: index_range → full_scan" in md
    assert "advisory: slower: p50 0.020 → 2.600 ms, typical ratio 130.00x" in md
    assert "<details><summary>Plans: recent orders [PostgreSQL]</summary>" in md
    suite = ET.fromstring(junit_xml(report)).find("testsuite")
    assert (suite.get("tests"), suite.get("failures")) == ("1", "1")


def test_a_better_path_is_an_improvement_not_a_regression():
    base = doc(entry("recent orders", "postgresql", scanned(), 2.6))
    new = doc(entry("recent orders", "postgresql", indexed(), 0.02))
    report = diff.compare(base, new)
    assert report.ok
    assert kinds(report) == {"scan_kind": False, "sort_removed": False, "faster": False}
    assert report.shapes[0].status == "improved"


def test_another_index_on_the_same_table_is_a_changed_access_path():
    other = indexed()
    other.children[0].index = "ix_other"
    report = diff.compare(
        doc(entry("recent orders", "postgresql", indexed(), 0.02)),
        doc(entry("recent orders", "postgresql", other, 0.02)),
    )
    assert kinds(report) == {"index_lost": True}
    both = node(
        "join",
        "Nested Loop",
        indexed().children[0],
        node("unique_lookup", "x", table="orders", index="ix_other"),
    )
    report = diff.compare(
        doc(entry("recent orders", "postgresql", both, 0.02)),
        doc(
            entry(
                "recent orders",
                "postgresql",
                node("join", "Nested Loop", both.children[1], both.children[0]),
                0.02,
            )
        ),
    )
    assert kinds(report) == {"access_changed": True, "scan_kind": True, "join_order": False}  # inputs swapped


def test_timing_is_advisory_unless_gated_and_then_needs_both_thresholds():
    base = doc(entry("recent orders", "postgresql", indexed(), 0.02))
    slow = doc(entry("recent orders", "postgresql", indexed(), 10.0))
    thirty = doc(entry("recent orders", "postgresql", indexed(), 30.0))
    # by default timing is reported, never decides: equal work passes whatever the clock says
    report = diff.compare(slow, thirty)
    assert report.verdict == "pass" and report.shapes[0].status == "unchanged"
    (f,) = report.shapes[0].findings
    assert (
        f.advisory and not f.regression and f.message.startswith("advisory: slower: p50 10.000 → 30.000 ms")
    )
    # gated, with the run-to-run spread of an A/A now (here: none), the interval decides
    gate, key = diff.Thresholds(gate_timing=True), ("recent orders", "postgresql")
    exact = {key: Interval(1.0, 1.0, 1.0, 7, 0.96, "mann-whitney")}

    def verdict(b, n, t=gate, floors=exact):
        return diff.compare(b, n, t, floors=floors).verdict

    assert verdict(base, doc(entry("recent orders", "postgresql", indexed(), 0.3))) == "pass"  # 15x, 0.28 ms
    assert verdict(base, doc(entry("recent orders", "postgresql", indexed(), 1.0))) == "fail"
    no_noise = diff.Thresholds(noise_ms=2, gate_timing=True)
    assert verdict(base, doc(entry("recent orders", "postgresql", indexed(), 1.0)), no_noise) == "pass"
    # 1.9x: not past 2x, but within the noise of 2x
    assert verdict(slow, doc(entry("recent orders", "postgresql", indexed(), 19.0))) == "inconclusive"
    # 2.1x with +-10 % noise in 7 samples cannot be told from 2x: inconclusive, not a coin toss
    assert verdict(slow, doc(entry("recent orders", "postgresql", indexed(), 21.0))) == "inconclusive"
    assert verdict(slow, thirty) == "fail"
    half = diff.Thresholds(slower=0.5, gate_timing=True)
    assert verdict(slow, doc(entry("recent orders", "postgresql", indexed(), 18.0)), half) == "fail"
    # the A/A's run-to-run spread widens the interval: 3x against a machine whose two runs differ
    # by up to 2x is not past 2x
    spread = {key: Interval(1.2, 0.5, 2.0, 7, 0.96, "mann-whitney")}
    widened = diff.compare(slow, thirty, gate, floors=spread)
    assert widened.verdict == "inconclusive"
    assert "widened by the run-to-run spread 2.00x" in widened.shapes[0].findings[0].message
    # gated without an A/A: the run-to-run variance is unknown, so a slower time is at most inconclusive
    unmeasured = diff.compare(slow, thirty, gate)
    assert unmeasured.verdict == "inconclusive" and "not measured" in unmeasured.shapes[0].findings[0].message


def test_new_misestimates_count_and_limits_are_not_misestimates():
    def tree(est):
        return node("join", "Hash Join", node("full_scan", "Seq Scan on c", table="c", est=est, rows=5000))

    base = doc(entry("join", "postgresql", tree(4800), 1.0))
    report = diff.compare(base, doc(entry("join", "postgresql", tree(12), 1.0)))
    assert kinds(report, "join") == {"misestimate": True}
    assert "rows misestimated 417x on Seq Scan on c: estimated 12, actual 5,000" in to_text(report)
    assert diff.compare(
        doc(entry("join", "postgresql", tree(12), 1.0)), doc(entry("join", "postgresql", tree(12), 1.0))
    ).ok  # not new: not a regression
    limited = node(
        "limit", "Limit", node("index_range", "Index Scan", table="orders", index="ix_c", est=9000, rows=10)
    )
    assert diff.compare(
        doc(entry("x", "postgresql", indexed(), 1.0)), doc(entry("x", "postgresql", limited, 1.0))
    ).ok


def test_missing_and_new_shapes():
    base = doc(
        entry("a", "postgresql", indexed(), 0.02),
        entry("b", "postgresql", indexed(), 0.02),
        entry("a", "mysql", indexed(), 0.02),
    )
    new = doc(
        entry("a", "postgresql", indexed(), 0.02), entry("c", "postgresql", indexed(), 0.02), version="13.1"
    )
    report = diff.compare(base, new)
    status = {(s.shape, s.dialect): s.status for s in report.shapes}
    assert status == {
        ("a", "postgresql"): "unchanged",
        ("b", "postgresql"): "missing",
        ("a", "mysql"): "not compared",
        ("c", "postgresql"): "new",
    }
    assert not report.ok
    assert any("PostgreSQL server differs: baseline 12.22, result 13.1" in n for n in report.notes)


def test_result_files_are_validated_naming_the_field(tmp_path):
    f = tmp_path / "r.json"
    with pytest.raises(ResultFileError, match="no such file"):
        store.load(f)
    f.write_text("{not json")
    with pytest.raises(ResultFileError, match=r"not valid JSON \(line 1"):
        store.load(f)
    f.write_text(json.dumps({"schema": "dbbench.seed/1", "targets": []}))
    with pytest.raises(ResultFileError, match="is not a dbbench.explain result"):
        store.load(f)
    bad = doc(entry("a", "postgresql", indexed(), 0.02))
    bad["results"][0]["remediated"]["samples_ms"] = ["fast"]
    f.write_text(json.dumps(bad))
    with pytest.raises(
        ResultFileError, match=r"results\[0\]\.remediated\.samples_ms: must be a list of numbers"
    ):
        store.load(f)
    bad["schema"] = "dbbench.explain/99"
    f.write_text(json.dumps(bad))
    with pytest.raises(ResultFileError, match="newer than this dbbench understands"):
        store.load(f)


@pytest.mark.parametrize(
    "corrupt, where",
    [
        (
            lambda d: d["results"][0]["remediated"].update(plan={"kind": "limit"}),
            r"results\[0\]\.remediated\.plan\.label: must be text",
        ),
        (
            lambda d: d["results"][0]["remediated"]["plan"]["children"][0].update(kind=1),
            r"results\[0\]\.remediated\.plan\.children\[0\]\.kind: must be text",
        ),
        (
            lambda d: d["results"][0]["remediated"]["plan"].update(est_rows="many"),
            r"results\[0\]\.remediated\.plan\.est_rows: must be a number or null",
        ),
        (
            lambda d: d["results"][0]["remediated"]["plan"].update(children={}),
            r"results\[0\]\.remediated\.plan\.children: must be a list",
        ),
        (
            lambda d: d["results"][0].update(verdict="failed"),
            r"results\[0\]\.verdict: must be an object or null",
        ),
        (lambda d: d.update(config="x"), r"config: must be an object"),
        (lambda d: d.update(servers="x"), r"servers: must be a list of objects with a dialect"),
        (lambda d: d.update(datasets=[]), r"datasets: must be an object"),
        (lambda d: d.update(remediation=[{"x": 1}]), r"remediation\[0\]\.dialect"),
        (lambda d: d.update(failures="x"), r"failures: must be a list"),
    ],
)
def test_corrupt_result_files_are_refused_naming_the_field(tmp_path, corrupt, where):
    good = doc(entry("a", "postgresql", indexed(), 0.02))
    good["remediation"], good["failures"] = [], []
    f = tmp_path / "r.json"
    f.write_text(json.dumps(good))
    store.load(f)
    bad = copy.deepcopy(good)
    corrupt(bad)
    f.write_text(json.dumps(bad))
    with pytest.raises(ResultFileError, match=where):
        store.load(f)


def test_nan_in_a_result_file_is_refused(tmp_path):
    f = tmp_path / "r.json"
    f.write_text(
        json.dumps(doc(entry("a", "postgresql", indexed(), 0.02))).replace('"p50_ms": 0.02', '"p50_ms": NaN')
    )
    with pytest.raises(ResultFileError, match="NaN is not a number"):
        store.load(f)


def test_a_baseline_of_another_catalog_is_refused():
    base = doc(entry("a", "postgresql", indexed(), 0.02))
    new = copy.deepcopy(base)
    base["datasets"] = {"postgresql": {"name": "setup:shop"}}
    new["datasets"] = {"postgresql": {"name": "setup:tickets"}}
    with pytest.raises(
        DbbenchError, match="baseline was measured on 'setup:shop'.*result on 'setup:tickets'"
    ):
        diff.compare(base, new, baseline_name="baseline.json", result_name="after.json")
    new["datasets"] = {"postgresql": {"name": "setup:shop"}}
    assert diff.compare(base, new).ok
