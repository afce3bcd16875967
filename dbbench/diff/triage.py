"""Second opinions on a diff: plan changes that re-ANALYZE alone reproduces (``--stability``) and the
A/A self-control of this run against a second run now (``--self-control``)."""

from __future__ import annotations

from dbbench.document.diff import DiffReport, SelfControl, ShapeDiff, entry_tree
from dbbench.document.model import ShapeResult
from verdict import PASS
from verdict.stats import ratio_interval

# the work a plan did: rows examined and buffers, and a write's rows locked
WORK_FINDINGS = ("work", "locks")
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


def self_controls(aa: DiffReport) -> dict[tuple[str, str], SelfControl]:
    """Per shape and dialect, the A/A of two runs now (``aa``: the first run diffed against the
    second): its verdict, whether both runs chose the same plan and did the same work, and its
    timing on the samples (the within-run rank test, whatever ``--gate-timing`` says) with the
    A/A time ratio interval: the run-to-run noise floor."""
    from dbbench.diff.judge import timing_call

    t, out = aa.thresholds, {}
    for s in aa.shapes:
        if s.base is None or s.result is None:
            continue
        a, b = s.base.remediated, s.result.remediated
        call = None
        if a.p50_ms is not None and b.p50_ms is not None:
            call = timing_call(list(a.samples_ms), list(b.samples_ms), a.p50_ms, b.p50_ms, t)
        out[(s.shape, s.dialect)] = SelfControl(
            s.verdict,
            _signature(s.base) == _signature(s.result),
            PASS if call is None else call.verdict,
            ratio_interval(a.samples_ms, b.samples_ms, t.alpha),
            work_agrees=not any(f.kind in WORK_FINDINGS and not f.improvement for f in s.findings),
        )
    return out


def apply_self_control(report: DiffReport, aa: DiffReport) -> None:
    """Beside each shape its A/A (:func:`self_controls`). The rule is per kind of evidence: when
    the A/A plans differ, the shape's plan findings against the baseline are at most inconclusive
    (the plan is not reproducible right now); when the A/A work (rows examined, rows locked)
    differs, its work and locks findings; when the A/A timing is not a pass, its timing finding. A lost index with a reproducible plan stays a
    failure even on a noisy machine: the plan does not depend on the timing noise."""
    report.self_control.update(self_controls(aa))
    for s in report.shapes:
        aa_shape = report.self_control.get((s.shape, s.dialect))
        if aa_shape is None or not s.regressed:
            continue
        for f in s.findings:
            if not f.regression:
                continue
            if (
                (f.kind in PLAN_FINDINGS and not aa_shape.plans_agree)
                or (f.kind in WORK_FINDINGS and not aa_shape.work_agrees)
                or (f.kind == "slower" and aa_shape.timing != PASS)
            ):
                f.regression, f.inconclusive = False, True
                f.message += f" (inconclusive: the A/A self-control of this shape is not a pass: {aa_shape.describe()})"
        _follow_index_dropped(s)


def _follow_index_dropped(s: ShapeDiff) -> None:
    """An ``index_dropped`` regression says the shape needed the index because it regressed
    otherwise (:mod:`dbbench.diff.indexes`): when the self-control left no other regression, it
    is inconclusive with them."""
    dropped = [f for f in s.findings if f.kind == "index_dropped" and f.regression]
    if dropped and not any(f.regression for f in s.findings if f.kind != "index_dropped"):
        for f in dropped:
            f.regression, f.inconclusive = False, True
            f.message += " (inconclusive: the shape's other regressions are)"
