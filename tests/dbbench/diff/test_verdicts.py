"""dbbench diff's three verdicts: rank-test timing with a minimum effect, scan-kind triage."""

from __future__ import annotations

import random
import xml.etree.ElementTree as ET

import pytest

from dbbench import diff
from dbbench.dialects.plan import PlanNode
from dbbench.output.diff import junit_xml, to_markdown, to_text
from verdict.stats import Interval

T = diff.Thresholds()
G = diff.Thresholds(gate_timing=True)  # timing decides (it is advisory by default) …
EXACT = Interval(1.0, 1.0, 1.0, 7, 0.96, "mann-whitney")  # … with no run-to-run spread on top


def _samples(center: float, n: int, rng: random.Random, spread: float = 0.05) -> list[float]:
    return [center * rng.uniform(1 - spread, 1 + spread) for _ in range(n)]


def test_timing_fails_only_when_the_interval_is_past_the_threshold():
    rng = random.Random(3)
    base = _samples(2.0, 7, rng)
    slow = _samples(8.0, 7, rng)  # 4x slower, far beyond noise
    f = diff.timing(base, slow, sorted(base)[3], sorted(slow)[3], G, EXACT)
    assert f.regression and not f.inconclusive and "is past 2x" in f.message
    advisory = diff.timing(base, slow, sorted(base)[3], sorted(slow)[3], T)
    assert advisory.advisory and not advisory.regression and "is past 2x" in advisory.message
    same = _samples(2.0, 7, rng)
    assert diff.timing(base, same, sorted(base)[3], sorted(same)[3], G, EXACT) is None


def test_a_change_below_noise_ms_is_no_finding_even_when_doubled():
    f = diff.timing([0.01] * 7, [0.05] * 7, 0.01, 0.05, G, EXACT)  # 5x, but 0.04 ms
    assert f is None


def test_noisy_samples_straddling_the_threshold_are_inconclusive_and_ask_for_more_runs():
    base = [1.0, 1.1, 0.9, 1.05, 0.95, 1.0, 1.02]
    new = [1.2, 3.5, 1.1, 4.0, 2.2, 1.3, 3.0]  # somewhere between 1x and 4x
    f = diff.timing(base, new, 1.0, 2.2, G, EXACT)
    assert f.inconclusive and not f.regression
    assert "too few to decide" in f.message and "--runs 21" in f.message


def test_too_few_samples_are_inconclusive():
    f = diff.timing([1.0], [3.0], 1.0, 3.0, G, EXACT)
    assert f.inconclusive and "too few to decide" in f.message


def _on_stage(kind: str, label: str, rows: float, index: str | None = None) -> PlanNode:
    return PlanNode(
        kind=kind, label=label, table="stage", index=index, est_rows=rows, actual_rows=rows, loops=1
    )


def _access(kind: str, index: str, rows: float) -> PlanNode:
    return _on_stage(kind, f"{kind} on stage using {index}", rows, index)


def _full_scan(rows: float) -> PlanNode:
    return _on_stage("full_scan", "Table scan on stage", rows)


def _limit(child: PlanNode) -> PlanNode:
    return PlanNode(kind="limit", label="Limit", children=[child])


def test_scan_kind_on_the_same_index_of_a_tiny_table_is_equivalent():
    found = diff.compare_plans(
        _limit(_access("index_range", "ix_stage_cleanup", 2)),
        _limit(_access("index_scan", "ix_stage_cleanup", 2)),
        T,
    )
    assert len(found) == 1 and not found[0].regression and "equivalent" in found[0].message


def test_scan_kind_on_a_large_table_and_a_lost_index_stay_regressions():
    big = diff.compare_plans(
        _limit(_access("index_range", "ix_a", 50_000)), _limit(_access("index_scan", "ix_a", 50_000)), T
    )
    assert [f.regression for f in big] == [True]
    lost = diff.compare_plans(
        _limit(_access("index_range", "ix_stage_cleanup", 2)),
        _limit(_full_scan(2)),
        T,
    )
    assert any(f.kind == "index_lost" and f.regression for f in lost)


def _doc(samples: list[float], plan: PlanNode | None = None) -> dict:
    """A result document of one shape ``s`` on MySQL: its samples, their median as p50, its plan."""
    p50 = sorted(samples)[len(samples) // 2]
    remediated = {"p50_ms": p50, "samples_ms": samples, "plan": None if plan is None else plan.to_dict()}
    return {"results": [{"shape": "s", "dialect": "mysql", "ok": True, "remediated": remediated}]}


def test_the_report_carries_the_verdict_into_json_markdown_and_junit():
    base = _doc([1.0, 1.1, 0.9, 1.05, 0.95, 1.0, 1.02])
    cases = {
        "pass": _doc([1.0, 1.05, 0.97, 1.02, 0.99, 1.01, 1.03]),
        "fail": _doc([9.0, 9.5, 8.8, 9.2, 9.1, 9.3, 8.9]),
        "inconclusive": _doc([1.2, 3.5, 1.1, 4.0, 2.2, 1.3, 3.0]),
    }
    for verdict, new in cases.items():
        report = diff.compare(base, new, G, floors={("s", "mysql"): EXACT})
        assert report.verdict == verdict and report.to_dict()["verdict"] == verdict
        md = to_markdown(report)
        assert md.startswith("### " + {"pass": "✅", "fail": "❌", "inconclusive": "⚠️"}[verdict])
        suite = ET.fromstring(junit_xml(report)).find("testsuite")
        assert suite.get("failures") == ("1" if verdict == "fail" else "0")
        assert suite.get("skipped") == ("1" if verdict == "inconclusive" else "0")
        if verdict == "inconclusive":
            assert suite.find("testcase/skipped").get("message").startswith("inconclusive: ")


def test_a_flip_that_re_analyze_alone_reproduces_is_equivalent():
    from dbbench.measure.explain import plan_signature

    old, new = _limit(_access("index_range", "ix_a", 50_000)), _limit(_access("index_scan", "ix_a", 50_000))
    base = _doc([1.0] * 7, old)
    result = _doc([1.0] * 7, new)
    assert diff.compare(base, result).verdict == "fail"
    flips = {("s", "mysql"): [plan_signature(old), plan_signature(new), plan_signature(old)]}
    report = diff.compare(base, result, stability=flips)
    assert report.verdict == "pass"
    assert "re-ANALYZE alone reproduces" in report.shapes[0].findings[0].message
    stable = {("s", "mysql"): [plan_signature(old)] * 3}
    assert diff.compare(base, result, stability=stable).verdict == "fail"


def test_self_control_downgrades_only_the_evidence_the_a_a_cannot_reproduce():
    rng = random.Random(7)
    good, lost = (
        _limit(_access("index_range", "ix_a", 50_000)),
        _limit(_full_scan(50_000)),
    )
    base, lost_now = _doc(_samples(2.0, 7, rng), good), _doc(_samples(200.0, 7, rng), lost)
    assert diff.compare(base, lost_now).verdict == "fail"
    # A/A with the same plan but noisy timings (1x .. 4x): the lost index stays a failure; the gated
    # timing finding (100x, past 2x even widened by the A/A's spread) becomes inconclusive, with the
    # A/A evidence in its message.
    noisy = _doc([200.0, 660.0, 190.0, 800.0, 440.0, 220.0, 600.0], lost)
    aa = diff.compare(lost_now, noisy)
    floors = {k: v.ratio for k, v in diff.self_controls(aa).items()}
    report = diff.compare(base, lost_now, G, floors=floors)
    assert next(f for f in report.shapes[0].findings if f.kind == "slower").regression
    diff.apply_self_control(report, aa)
    sc = report.self_control[("s", "mysql")]
    assert sc.plans_agree and sc.work_agrees and sc.timing == "inconclusive"
    assert sc.ratio is not None and sc.ratio.high > 2
    s = report.shapes[0]
    assert report.verdict == "fail" and {f.kind for f in s.findings if f.regression} >= {"index_lost"}
    slower = next(f for f in s.findings if f.kind == "slower")
    assert slower.inconclusive and not slower.regression and "A/A self-control" in slower.message
    # A/A whose two runs chose different plans: the plan is not reproducible now, so the plan
    # findings are at most inconclusive (exit 3), never a pass.
    lost_fast = _doc(_samples(2.0, 7, rng), lost)  # the plan changed, the time did not
    report = diff.compare(base, lost_fast)
    assert report.verdict == "fail"
    diff.apply_self_control(report, diff.compare(lost_fast, _doc(_samples(2.0, 7, rng), good)))
    assert not report.self_control[("s", "mysql")].plans_agree
    assert report.verdict == "inconclusive"
    assert "A/A time ratio" in to_text(report) and "DIFFER" in to_text(report)
    assert report.to_dict()["self_control"][0]["plans_agree"] is False


def _scan(rows: float) -> PlanNode:
    """A plan that keeps index ``ix_a`` and examines ``rows`` rows on it."""
    return _limit(_access("index_range", "ix_a", rows))


@pytest.mark.servers
def test_the_command_exits_on_work_not_on_timing_with_the_verdict_in_every_output(tmp_path):
    import json

    from tests.conftest import run_cli

    base = {
        "schema": "dbbench.explain/2",
        "results": _doc([1.0, 1.1, 0.9, 1.05, 0.95, 1.0, 1.02], _scan(2_000))["results"],
    }
    cases = {  # the same plan; (samples, rows examined, exit code)
        "pass": ([8.0, 8.4, 7.9, 8.8, 8.1, 8.3, 8.2], 2_000, 0),  # 8x slower, the same work
        "fail": ([1.0, 1.02, 0.97, 1.04, 0.99, 1.01, 1.03], 40_000, 1),  # as fast, 20x the work
    }
    (tmp_path / "base.json").write_text(json.dumps(base))
    for verdict, (samples, rows, code) in cases.items():
        result = {"schema": "dbbench.explain/2", "results": _doc(samples, _scan(rows))["results"]}
        f, md, xml = tmp_path / f"{verdict}.json", tmp_path / f"{verdict}.md", tmp_path / f"{verdict}.xml"
        f.write_text(json.dumps(result))
        run = run_cli("diff", str(tmp_path / "base.json"), str(f), "--markdown", str(md), "--junit", str(xml))
        assert run.code == code, (verdict, run.output)
        assert (
            run.stdout.startswith(f"dbbench diff: {verdict}: ")
            and f"dbbench diff: {verdict}: " in md.read_text()
        )
        case = ET.parse(xml).getroot().find("testsuite/testcase")
        assert (case.find("failure") is not None) == (verdict == "fail")
    passed = run_cli("diff", str(tmp_path / "base.json"), str(tmp_path / "pass.json"))
    assert "advisory: slower: p50 1.000 → 8.200 ms" in passed.stdout and "1 of 1 unchanged" in passed.stdout
    failed = run_cli("diff", str(tmp_path / "base.json"), str(tmp_path / "fail.json"))
    assert "work up at index_range on stage using ix_a: 2,000 → 40,000 rows examined (20.0x)" in failed.stdout
    assert "2,000 → 40,000 (20.0x)" in failed.stdout  # the table's rows examined, in total
    # a gated timing needs the run-to-run variance, which only a live run measures
    gated = run_cli("diff", str(tmp_path / "base.json"), str(tmp_path / "pass.json"), "--gate-timing")
    assert gated.code == 2 and "give no RESULT file" in gated.stderr and "Traceback" not in gated.output
