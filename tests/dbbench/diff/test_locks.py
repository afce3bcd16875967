"""The lock footprint as diff evidence, on documents (no server): rows locked up past the work
thresholds fail in one line naming the statement; equal or fewer pass; a baseline without
footprints gives no verdict on locks and says so; a cascade that lost its child's index fails;
a baseline keeps the footprints, and an older one without them still loads."""

from __future__ import annotations

import json
from typing import Any

import pytest

from dbbench import diff
from dbbench.dialects.plan import PlanNode
from dbbench.document import baseline
from dbbench.document.diff import Thresholds
from dbbench.document.model import Document, as_document
from dbbench.output.diff import junit_xml, to_markdown, to_text

UPDATE = (
    "UPDATE package_relation SET token = %(token)s WHERE repository_id = %(repository_id)s "
    "AND relation_kind = %(kind)s AND token_sha256 = %(token_sha256)s"
)


def footprint(rows: int, gaps: int = 0, indexes: tuple[str, ...] = ("PRIMARY",), **extra: Any) -> dict:
    """A MySQL footprint of the relation token rewrite: ``rows`` of package_relation locked."""
    table = {
        "table": "package_relation",
        "rows": rows,
        "gaps": gaps,
        "changed": {"updated": 100},
        "modes": ["IX"],
        "indexes": list(indexes),
    }
    return {
        "rows": rows,
        "gaps": gaps,
        "changed": 100,
        "affected": 100,
        "tables": [table],
        "cascades": [],
    } | extra


def _plan(scan: PlanNode, root_label: str = "Update package_relation") -> dict:
    table = root_label.split()[-1]
    root = PlanNode("modify", root_label, table=table, actual_rows=100, loops=1)
    root.children.append(scan)
    return root.to_dict()


LOOKUP = PlanNode(
    "index_range",
    "Index range scan on package_relation using ix_relation_lookup",
    table="package_relation",
    index="ix_relation_lookup",
    est_rows=100,
    actual_rows=100,
    loops=1,
)


def doc(
    locks: dict | None,
    shape: str = "relation token rewrite",
    sql: str = UPDATE,
    root: str = "Update package_relation",
) -> Document:
    """One MySQL entry whose plan is the same index range in every document (only the locks move)."""
    remediated: dict[str, Any] = {
        "sql": sql,
        "p50_ms": 1.0,
        "samples_ms": [1.0] * 7,
        "plan": _plan(LOOKUP, root),
    }
    if locks is not None:
        remediated["locks"] = locks
    entry = {"shape": shape, "dialect": "mysql", "ok": True, "remediated": remediated}
    return as_document({"schema": "dbbench.explain/2", "results": [entry]})


def test_rows_locked_up_past_the_work_thresholds_fail_in_one_line_naming_the_statement():
    report = diff.compare(
        doc(footprint(100, 101, ("PRIMARY", "ix_relation_lookup"))), doc(footprint(16_044, 16_100))
    )
    assert report.verdict == "fail"
    (s,) = report.shapes
    assert [f.kind for f in s.findings] == ["locks"]  # the plan did not change: the locks alone fail
    assert s.findings[0].regression
    assert s.findings[0].message == (
        "UPDATE package_relation now locks 16,044 rows (was 100), 16,100 gaps (was 101): "
        "package_relation 100 → 16,044 through PRIMARY"
    )
    text = to_text(report)
    assert (
        "relation token rewrite [MySQL]\n    - UPDATE package_relation now locks 16,044 rows (was 100)"
        in text
    )
    assert "100 → 16,044 (160x)" in text  # the Rows locked column
    # the section beside the work's: per table, rows and gaps before → after, the indexes locked through
    assert "Locks: relation token rewrite [MySQL]: UPDATE package_relation" in text
    assert "PRIMARY, ix_relation_lookup" in text
    assert "| relation token rewrite | MySQL |" in to_markdown(report)
    assert "❌ UPDATE package_relation now locks 16,044 rows (was 100)" in to_markdown(report)
    assert 'message="UPDATE package_relation now locks 16,044 rows (was 100)' in junit_xml(report)
    (entry,) = report.to_dict()["shapes"]
    assert entry["locks"] == {
        "rows_before": 100,
        "rows_after": 16_044,
        "gaps_before": 101,
        "gaps_after": 16_100,
    }


@pytest.mark.parametrize(
    "before, after, verdict, kinds",
    [
        (100, 100, "pass", []),  # equal
        (16_044, 100, "pass", ["locks"]),  # fewer: an improvement
        (100, 900, "pass", []),  # 9x, but by fewer than --work-min rows
        (10_000, 19_000, "pass", []),  # by 9,000 rows, but less than --work-factor times
        (100, 1_101, "fail", ["locks"]),  # past both
    ],
)
def test_locks_are_judged_on_the_work_thresholds(before, after, verdict, kinds):
    report = diff.compare(doc(footprint(before)), doc(footprint(after)))
    assert report.verdict == verdict
    assert [f.kind for f in report.shapes[0].findings] == kinds
    if kinds and verdict == "pass":
        assert report.shapes[0].findings[0].improvement and report.shapes[0].status == "improved"


def test_the_thresholds_given_decide_the_locks_as_they_decide_the_work():
    strict = Thresholds(work_factor=1.5, work_min=50)
    assert diff.compare(doc(footprint(100)), doc(footprint(200)), strict).verdict == "fail"
    assert diff.compare(doc(footprint(100)), doc(footprint(200))).verdict == "pass"


def test_a_baseline_without_footprints_gives_no_verdict_on_locks_and_says_so():
    report = diff.compare(doc(None), doc(footprint(16_044)))
    assert report.verdict == "pass"
    assert report.shapes[0].findings == [] and report.shapes[0].status == "unchanged"
    assert report.notes == [
        "locks not recorded in the baseline for relation token rewrite [MySQL]: the rows they lock now "
        "are shown, not judged (save a new baseline with `dbbench baseline save`)"
    ]
    assert "16,044 (not recorded in the baseline)" in to_text(report)
    assert report.to_dict()["shapes"][0]["locks"]["rows_before"] is None


def test_reads_render_and_serialize_as_before():
    select = "SELECT id FROM package_relation WHERE repository_id = 1"
    report = diff.compare(doc(None, sql=select), doc(None, sql=select))
    assert "Rows locked" not in to_text(report) and "Rows locked" not in to_markdown(report)
    assert "locks" not in report.to_dict()["shapes"][0]
    assert report.notes == []


CASCADE = {
    "constraint": "fk_relation_package",
    "parent": "package",
    "child": "package_relation",
    "columns": ["repository_id", "package_id"],
    "calls": 1,
    "ms": 0.31,
    "child_full_scans": 0,
}


def _delete(index: str | None, scans: int = 0, ms: float = 0.31) -> Document:
    cascade = CASCADE | {"index": index, "child_full_scans": scans, "ms": ms}
    locks = footprint(3) | {"cascades": [cascade]}
    return doc(
        locks, shape="package deletion", sql="DELETE FROM package WHERE id = %(id)s", root="Delete package"
    )


def test_a_cascade_whose_child_lost_its_foreign_key_index_fails_naming_the_child():
    report = diff.compare(_delete("ix_relation_package"), _delete(None, scans=1, ms=9.5))
    assert report.verdict == "fail"
    (f,) = report.shapes[0].findings
    assert (f.kind, f.regression) == ("cascade", True)
    assert f.message == (
        "DELETE package: cascade into package_relation (fk_relation_package) WITHOUT AN INDEX: "
        "9.5 ms in 1 call, 1 full scan (was through ix_relation_package)"
    )
    text = to_text(report)
    assert (
        "Cascades before: package_relation (fk_relation_package) through ix_relation_package: 0.31 ms in 1 call"
        in text
    )
    assert "Cascades after: package_relation (fk_relation_package) WITHOUT AN INDEX" in text
    back = diff.compare(_delete(None, scans=1), _delete("ix_relation_package"))
    assert back.verdict == "pass" and back.shapes[0].findings[0].improvement
    # the time of a cascade is shown, never judged
    assert (
        diff.compare(_delete("ix_relation_package"), _delete("ix_relation_package", ms=40.0))
        .shapes[0]
        .findings
        == []
    )


def test_the_self_control_counts_a_locks_change_as_work_that_differs():
    aa = diff.compare(doc(footprint(100)), doc(footprint(16_044)))
    (control,) = diff.self_controls(aa).values()
    assert control.work_agrees is False
    report = diff.compare(doc(footprint(100)), doc(footprint(16_044)))
    diff.apply_self_control(report, aa)
    (f,) = report.shapes[0].findings
    assert f.inconclusive and not f.regression  # a footprint that moves between two runs now decides nothing
    assert report.verdict == "inconclusive"


def test_a_baseline_keeps_each_spellings_footprint_and_an_older_one_without_it_loads(tmp_path):
    result = doc(footprint(100, 101)).to_json()
    result["results"][0] |= {
        "unchanged": {"tables": ["package_relation"], "equal": True, "changed": []},
        "race": {"holder": "h", "ok": True, "checked": True, "problem": None},
    }
    result["results"][0]["remediated"]["raw_plan"] = {"json": "…"}
    path = tmp_path / "baseline.json"
    baseline.save(path, result)
    saved = json.loads(path.read_text())["results"][0]
    assert "raw_plan" not in saved["remediated"]
    assert saved["remediated"]["locks"] == footprint(100, 101)
    assert saved["unchanged"]["equal"] is True and saved["race"]["holder"] == "h"
    assert baseline.load(path).results[0].remediated.locked_rows == 100
    older = json.loads(path.read_text())
    del older["results"][0]["remediated"]["locks"]
    path.write_text(json.dumps(older))
    loaded = baseline.load(path)
    assert loaded.results[0].remediated.locks is None and loaded.results[0].remediated.locked_rows is None
    assert "locks" not in loaded.to_json()["results"][0]["remediated"]  # it round-trips as it was
