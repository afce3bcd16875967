"""Second opinions on a diff: plan changes that re-ANALYZE alone reproduces (``--stability``) and the
A/A self-control of this run against a second run now (``--self-control``)."""

from __future__ import annotations

from dbbench.diff.model import DiffReport, SelfControl, ShapeDiff, entry_tree
from dbbench.document.model import ShapeResult
from verdict import FAIL, INCONCLUSIVE, PASS, combine
from verdict.stats import ratio_interval

PLAN_FINDINGS = ("index_lost", "access_changed", "scan_kind", "new_access", "sort_added", "temp_table_added")


def _signature(entry: ShapeResult | None) -> str | None:
    from dbbench.measure.explain import plan_signature

    tree = entry_tree(entry)
    return plan_signature(tree) if tree is not None else None


def triage_unstable(sd: ShapeDiff, plans: list[str]) -> None:
    """A plan change that re-ANALYZE alone reproduces (both plans were seen while only the
    statistics were re-sampled) is equivalent, not a regression."""
    seen = set(plans)
    if len(seen) < 2 or _signature(sd.base) not in seen or _signature(sd.result) not in seen:
        return
    for f in sd.findings:
        if f.kind in PLAN_FINDINGS and f.regression:
            f.regression = False
            f.message += " (equivalent: re-ANALYZE alone reproduces this plan change)"


def apply_self_control(report: DiffReport, aa: DiffReport) -> None:
    """Beside each shape its A/A (the current run against a second run now): verdict, whether the
    two runs chose the same plan, and the A/A time ratio interval. The rule is per kind of
    evidence: when the A/A plans differ, the shape's plan findings against the baseline are at
    most inconclusive (the plan is not reproducible right now); when the A/A timing is not a pass,
    its timing finding is at most inconclusive. A lost index with a reproducible plan stays a
    failure even on a noisy machine: the plan does not depend on the timing noise."""
    t = report.thresholds
    for s in aa.shapes:
        if s.base is None or s.result is None:
            continue
        timings = [f for f in s.findings if f.kind in ("slower", "faster")]
        timing_verdict = combine(
            FAIL if f.regression else INCONCLUSIVE if f.inconclusive else PASS for f in timings
        )
        iv = ratio_interval(
            s.base.remediated.samples_ms,
            s.result.remediated.samples_ms,
            t.alpha,
        )
        report.self_control[(s.shape, s.dialect)] = SelfControl(
            s.verdict, _signature(s.base) == _signature(s.result), timing_verdict, iv
        )
    for s in report.shapes:
        aa_shape = report.self_control.get((s.shape, s.dialect))
        if aa_shape is None or not s.regressed:
            continue
        for f in s.findings:
            if not f.regression:
                continue
            if (f.kind in PLAN_FINDINGS and not aa_shape.plans_agree) or (
                f.kind == "slower" and aa_shape.timing != PASS
            ):
                f.regression, f.inconclusive = False, True
                f.message += f" (inconclusive: the A/A self-control of this shape is not a pass: {aa_shape.describe()})"
