"""Work as diff evidence: rows examined per plan node (PostgreSQL's filtered rows and buffers too),
aligned, judged against the thresholds and named at the node; old baselines say work is unknown.
No server needed."""

from __future__ import annotations

import pytest

from dbbench import diff
from dbbench.dialects import postgresql
from dbbench.dialects.plan import PlanNode
from dbbench.document.model import Document, as_document
from dbbench.measure import grow
from dbbench.output.diff import to_markdown, to_text


def _pg_raw(scanned: int, removed: int, hit: int) -> list[dict]:
    """PostgreSQL's EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) of a limit over an index scan that
    returns ``scanned`` rows and filters ``removed`` away, hitting ``hit`` buffers."""
    scan = {
        "Node Type": "Index Scan",
        "Relation Name": "package",
        "Alias": "package",
        "Index Name": "ix_ns",
        "Index Cond": "(repository_id = 1)",
        "Plan Rows": 2000,
        "Actual Rows": scanned,
        "Actual Loops": 1,
        "Rows Removed by Filter": removed,
        "Shared Hit Blocks": hit,
        "Shared Read Blocks": 3,
    }
    top = {
        "Node Type": "Limit",
        "Plan Rows": 2048,
        "Actual Rows": scanned,
        "Actual Loops": 1,
        "Shared Hit Blocks": hit,
        "Shared Read Blocks": 3,
        "Plans": [scan],
    }
    return [{"Plan": top, "Execution Time": 1.0}]


def test_postgresql_plans_carry_the_rows_their_scans_filtered_and_the_buffers():
    tree, _ = postgresql.parse_plan(_pg_raw(2048, 90_000, 2060))
    scan = tree.children[0]
    assert (scan.removed_rows, scan.buffers, scan.examined) == (90_000, 2063, 92_048)
    assert diff.work_diff(tree, tree).nodes[1].buffers_after == 2063  # its own: no children
    assert diff.work_diff(tree, tree).nodes[0].buffers_after == 0  # the limit's are its child's
    # dbbench grow counts the same work from the same nodes
    assert grow.work(tree) == grow.pg_work(_pg_raw(2048, 90_000, 2060)) == 2048 + 92_048
    assert grow.buffers(tree) == 2063
    # the plan's dict keeps them, and a plan without them (MySQL, a /1 document) leaves them out
    assert PlanNode.from_dict(tree.to_dict()) == tree
    assert "removed_rows" not in PlanNode("full_scan", "Table scan on t").to_dict()


def _doc(tree: PlanNode, schema: str = "dbbench.explain/2", shape: str = "page") -> Document:
    remediated = {"p50_ms": 1.0, "samples_ms": [1.0] * 7, "plan": tree.to_dict()}
    entry = {"shape": shape, "dialect": "postgresql", "ok": True, "remediated": remediated}
    return as_document({"schema": schema, "results": [entry]})


def _scan(removed: int) -> PlanNode:
    """The index scan of :func:`_pg_raw` under its limit, 2,048 rows kept and ``removed`` filtered."""
    return postgresql.parse_plan(_pg_raw(2048, removed, 2000 + removed))[0]


def test_work_up_is_a_regression_named_at_the_node_with_before_after_and_ratio():
    report = diff.compare(_doc(_scan(0)), _doc(_scan(90_000)))
    assert report.verdict == "fail"
    (work,) = [f for f in report.shapes[0].findings if f.kind == "work"]
    assert work.regression
    assert work.message == (
        "work up at Index Scan on package using ix_ns: 2,048 → 92,048 rows examined (44.9x); shared "
        "buffers up at Index Scan on package using ix_ns: 2,003 → 92,003 (45.9x); in total "
        "4,096 → 94,096 rows examined (23.0x), shared buffers 2,003 → 92,003 (45.9x)"
    )
    assert {f.kind for f in report.shapes[0].findings} == {"work"}  # the plan shape is unchanged
    text = to_text(report)
    assert "4,096 → 94,096 (23.0x)" in text  # the table's rows examined
    assert "Work by plan node, moved most first: page [PostgreSQL]" in text
    md = to_markdown(report)
    assert (
        "#### Work by plan node, moved most first: page [PostgreSQL]" in md
        and "| Index Scan on package using ix_ns | 2,048 |" in md
    )
    shape = report.to_dict()["shapes"][0]
    assert shape["work"]["rows_before"] == 4096 and shape["work"]["rows_after"] == 94_096
    node = shape["work"]["nodes"][1]
    assert (node["node"], node["rows_before"], node["rows_after"], node["ratio"]) == (
        "Index Scan on package using ix_ns",
        2048,
        92_048,
        44.9453,
    )
    assert node["q_error_before"] == pytest.approx(1.024) and node["q_error_after"] == pytest.approx(1.024)


def test_equal_work_passes_and_the_thresholds_are_both_needed():
    assert diff.compare(_doc(_scan(500)), _doc(_scan(500))).shapes[0].status == "unchanged"
    # 2,048 -> 2,848 on the scan: not past 2x
    assert diff.compare(_doc(_scan(0)), _doc(_scan(800))).verdict == "pass"
    # 2.9x on the scan, but by fewer rows than --work-min (and pages than --buffers-min)
    few = diff.Thresholds(work_min=5000, buffers_min=5000)
    assert diff.compare(_doc(_scan(0)), _doc(_scan(4000)), few).verdict == "pass"
    assert diff.compare(_doc(_scan(0)), _doc(_scan(4000))).verdict == "fail"
    # a wider factor lets 45x through
    assert (
        diff.compare(_doc(_scan(0)), _doc(_scan(90_000)), diff.Thresholds(work_factor=50)).verdict == "pass"
    )
    # work down is an improvement
    better = diff.compare(_doc(_scan(90_000)), _doc(_scan(0)))
    assert better.verdict == "pass" and better.shapes[0].status == "improved"
    assert better.shapes[0].findings[0].message.startswith("work down: in total 94,096 → 4,096 rows examined")


def _pages(hit: int) -> PlanNode:
    """The index scan of :func:`_pg_raw`, the same 2,048 rows and none filtered, from ``hit`` + 3
    shared buffers: the same rows read from more pages (wider rows, the heap visited)."""
    return postgresql.parse_plan(_pg_raw(2048, 0, hit))[0]


def test_shared_buffers_up_with_the_same_rows_is_a_regression_too():
    report = diff.compare(_doc(_pages(40)), _doc(_pages(2_000)))
    assert report.verdict == "fail"
    (work,) = [f for f in report.shapes[0].findings if f.kind == "work"]
    assert work.message == (
        "shared buffers up at Index Scan on package using ix_ns: 43 → 2,003 (46.6x); in total "
        "4,096 → 4,096 rows examined (1.0x), shared buffers 43 → 2,003 (46.6x)"
    )
    # both thresholds are needed: 2x the pages by fewer than --buffers-min, or many pages under 2x
    assert diff.compare(_doc(_pages(40)), _doc(_pages(120))).verdict == "pass"
    few = diff.Thresholds(buffers_min=5_000)
    assert diff.compare(_doc(_pages(40)), _doc(_pages(2_000)), few).verdict == "pass"
    assert diff.compare(_doc(_pages(2_000)), _doc(_pages(3_500))).verdict == "pass"
    # fewer pages is an improvement; equal pages pass whatever the clock says
    assert diff.compare(_doc(_pages(2_000)), _doc(_pages(40))).shapes[0].status == "improved"
    assert diff.compare(_doc(_pages(500)), _doc(_pages(500))).shapes[0].status == "unchanged"


def test_plans_without_buffers_are_judged_on_rows_alone():
    # MySQL records no buffers: a node that has none is not judged on them
    def scan(rows: int) -> PlanNode:
        return PlanNode("index_range", "Index range scan on t", table="t", actual_rows=rows, loops=1)

    assert scan(10).buffers is None
    assert diff.compare(_doc(scan(10)), _doc(scan(10))).verdict == "pass"
    assert diff.compare(_doc(scan(10)), _doc(scan(50_000))).verdict == "fail"


def test_q_error_is_the_estimate_error_either_way_and_unknown_without_a_run():
    assert diff.q_error(PlanNode("x", "x", est_rows=10, actual_rows=1000, loops=1)) == 100
    assert diff.q_error(PlanNode("x", "x", est_rows=1000, actual_rows=10, loops=1)) == 100
    assert diff.q_error(PlanNode("x", "x", est_rows=0, actual_rows=0, loops=1)) == 1
    assert diff.q_error(PlanNode("x", "x", est_rows=5, actual_rows=0, loops=0)) is None  # never executed


def test_an_old_baseline_reads_with_a_note_and_falls_back_to_plan_shape():
    old = Document.from_json(_doc(_scan(0)).to_json() | {"schema": "dbbench.explain/1"})
    assert not old.records_work and _doc(_scan(0)).records_work
    report = diff.compare(old, _doc(_scan(90_000)))
    assert report.verdict == "pass" and report.shapes[0].work is None
    note = (
        "work unknown: the baseline is a dbbench.explain/1 document, which records no work per plan node; "
        "the verdict falls back to plan shape (save a new baseline with `dbbench baseline save`)"
    )
    assert report.notes == [note]
    text = to_text(report)
    row = next(ln for ln in text.splitlines() if ln.startswith("page "))
    assert note in text and " unknown " in row  # its rows examined
    # a lost index still fails on the plan alone
    lost = PlanNode(
        "limit", "Limit", children=[PlanNode("full_scan", "Seq Scan on package", table="package")]
    )
    assert diff.compare(old, _doc(lost)).verdict == "fail"


def test_a_node_only_one_plan_has_is_new_or_gone_not_a_ratio_against_zero():
    base = PlanNode("limit", "Limit", actual_rows=10, loops=1, children=[_scan_on("ix_a", 10)])
    sort = PlanNode("sort", "Sort", actual_rows=10, loops=1, children=[_scan_on(None, 30_000)])
    new = PlanNode("limit", "Limit", actual_rows=10, loops=1, children=[sort])
    w = diff.work_diff(base, new)
    by_label = {n.label: n for n in w.nodes}
    assert (by_label["Sort"].in_baseline, by_label["Sort"].change) == (False, "new")
    assert by_label["Sort"].describe() == "Sort (new): 10 rows examined"
    gone = diff.work_diff(new, base)
    assert {n.label: n.change for n in gone.nodes}["Sort"] == "gone"
    report = diff.compare(_doc(base), _doc(new))
    md = to_markdown(report)
    assert "| Sort | — | 10 | new |" in md, md
    node = next(n for n in report.to_dict()["shapes"][0]["work"]["nodes"] if n["node"] == "Sort")
    assert (node["in_baseline"], node["in_result"]) == (False, True)


def _scan_on(index: str | None, rows: int) -> PlanNode:
    if index is None:
        return PlanNode("full_scan", "Seq Scan on t", table="t", actual_rows=rows, loops=1)
    return PlanNode(
        "index_range", f"Index Scan on t using {index}", table="t", index=index, actual_rows=rows, loops=1
    )
