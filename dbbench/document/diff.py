"""The comparison model of ``dbbench diff``: thresholds, findings, one shape's diff, the report
(and its ``dbbench.diff/1`` document), and the accessors of a result entry they read."""

from __future__ import annotations

import functools
from dataclasses import asdict, dataclass, field
from typing import Any

from dbbench.dialects.plan import ACCESS_KINDS, PlanNode
from dbbench.document import plandiff
from dbbench.document.model import Document, ShapeResult
from dbbench.units import fmt_factor
from verdict import FAIL, INCONCLUSIVE, PASS, combine
from verdict.stats import Interval


@dataclass
class Thresholds:
    rows_factor: float = 10.0  # rows misestimated by more than this factor …
    rows_min: float = 100.0  # … where the larger of estimate and actual is at least this
    slower: float = 1.0  # p50 slower by more than this fraction of the baseline p50 (1.0: doubled) …
    noise_ms: float = 0.5  # … and by more than this many milliseconds
    few_rows: float = 100.0  # a scan-kind change on the same index of a table this small is equivalent
    alpha: float = 0.05  # error rate of the timing verdict
    work_factor: float = 2.0  # rows examined up by more than this factor (at a node or in total) …
    work_min: float = 1000.0  # … and by at least this many rows is a regression
    buffers_min: float = 100.0  # PostgreSQL's shared buffers up by more than work_factor and this many
    gate_timing: bool = False  # timing joins the verdict (else it is advisory)


@dataclass
class Finding:
    kind: str
    regression: bool
    message: str
    improvement: bool = False
    inconclusive: bool = False  # the data cannot decide (noise larger than the threshold)
    advisory: bool = False  # reported, never part of the verdict (timing without --gate-timing)


@dataclass
class SelfControl:
    """One shape's A/A (this run against a second run now): the noise floor beside the verdict."""

    verdict: str  # the A/A diff's verdict of the shape
    plans_agree: bool  # both runs chose the same plan (same plan signature)
    timing: str  # pass / fail / inconclusive of the A/A timing alone
    ratio: Interval | None  # second/first run time ratio (Hodges-Lehmann, Mann-Whitney interval)
    work_agrees: bool = True  # no work finding between the two runs

    def describe(self) -> str:
        iv = self.ratio
        ratio = f"{iv.estimate:.2f}x [{iv.low:.2f}, {iv.high:.2f}]" if iv else "too few samples"
        work = "agrees" if self.work_agrees else "DIFFERS"
        return (
            f"{self.verdict}: plans {'agree' if self.plans_agree else 'DIFFER'}; work {work}; "
            f"timing {self.timing}, A/A ratio {ratio}"
        )

    def to_json(self) -> dict:
        return {
            "verdict": self.verdict,
            "plans_agree": self.plans_agree,
            "work_agrees": self.work_agrees,
            "timing": self.timing,
            "ratio": self.ratio.to_json() if self.ratio else None,
        }


@dataclass
class ShapeDiff:
    shape: str
    dialect: str
    base: ShapeResult | None
    result: ShapeResult | None
    findings: list[Finding] = field(default_factory=list)
    work: WorkDiff | None = None  # None when a plan is missing or a document records no work

    @property
    def regressed(self) -> bool:
        return any(f.regression for f in self.findings)

    @functools.cached_property
    def aligned(self) -> plandiff.NodeDiff | None:
        """The baseline's and the result's plans aligned node by node (:func:`plandiff.align`),
        aligned once for every view and ranking that reads them; None when neither has a plan."""
        b, n = entry_tree(self.base), entry_tree(self.result)
        return None if b is None and n is None else plandiff.align(b, n)

    @property
    def verdict(self) -> str:
        """pass / fail / inconclusive (a shape not measured on a dialect that did not run passes)."""
        if self.regressed:
            return FAIL
        return INCONCLUSIVE if any(f.inconclusive for f in self.findings) else PASS

    def locks_json(self) -> dict[str, Any]:
        """``{"locks": {...}}``: the rows and gaps locked in the baseline and the result (null
        where a document records none), for a write or a locking read; ``{}`` for a read, whose
        entry has no ``locks`` key."""
        sides = [None if e is None else e.remediated.locks for e in (self.base, self.result)]
        if all(x is None for x in sides):
            return {}
        rows = [None if x is None else int(x.get("rows") or 0) for x in sides]
        gaps = [None if x is None else int(x.get("gaps") or 0) for x in sides]
        return {
            "locks": {
                "rows_before": rows[0],
                "rows_after": rows[1],
                "gaps_before": gaps[0],
                "gaps_after": gaps[1],
            }
        }

    @property
    def status(self) -> str:
        if self.base is None:
            return "new"
        if self.result is None:
            return "missing" if self.regressed else "not compared"
        if self.regressed:
            return "regressed"
        if any(f.inconclusive for f in self.findings):
            return "inconclusive"
        decided = [f for f in self.findings if not f.advisory]
        if decided and all(f.improvement for f in decided):
            return "improved"
        return "changed" if decided else "unchanged"


@dataclass
class DiffReport:
    baseline: str
    result: str
    thresholds: Thresholds
    shapes: list[ShapeDiff]
    notes: list[str] = field(default_factory=list)
    stability: dict[tuple[str, str], list[str]] = field(default_factory=dict)
    self_control: dict[tuple[str, str], SelfControl] = field(default_factory=dict)  # shape, dialect -> A/A
    base_doc: Document = field(default_factory=Document, repr=False)
    result_doc: Document = field(default_factory=Document, repr=False)

    @property
    def regressions(self) -> list[ShapeDiff]:
        return [s for s in self.shapes if s.regressed]

    @property
    def ok(self) -> bool:
        return not self.regressions

    @property
    def verdict(self) -> str:
        return combine(s.verdict for s in self.shapes)

    @property
    def inconclusive(self) -> list[ShapeDiff]:
        return [s for s in self.shapes if s.verdict == INCONCLUSIVE]

    def ranked(self) -> list[ShapeDiff]:
        """The shapes, biggest differences first: the regressions, then the inconclusive, then the
        other changes, then the unchanged; within each, by :func:`difference` (largest first),
        ties in catalog order."""
        rank = {"regressed": 0, "missing": 0, "inconclusive": 1, "unchanged": 3}
        order = {id(s): i for i, s in enumerate(self.shapes)}
        return sorted(self.shapes, key=lambda s: (rank.get(s.status, 2), -difference(s), order[id(s)]))

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": "dbbench.diff/1",
            "baseline": self.baseline,
            "result": self.result,
            "thresholds": asdict(self.thresholds),
            "ok": self.ok,
            "verdict": self.verdict,
            "notes": self.notes,
            "stability": [
                {
                    "shape": k[0],
                    "dialect": k[1],
                    "stable": len(set(v)) == 1,
                    "plans": sorted(set(v)),
                    "rounds": len(v),
                }
                for k, v in self.stability.items()
            ],
            "self_control": [
                {"shape": k[0], "dialect": k[1], **v.to_json()} for k, v in self.self_control.items()
            ],
            "shapes": [
                {
                    "shape": s.shape,
                    "dialect": s.dialect,
                    "status": s.status,
                    "verdict": s.verdict,
                    "regressed": s.regressed,
                    "baseline_p50_ms": entry_p50(s.base),
                    "result_p50_ms": entry_p50(s.result),
                    "baseline_access": entry_access(s.base),
                    "result_access": entry_access(s.result),
                    "work": None if s.work is None else s.work.to_json(),
                    "difference": round(difference(s), 3),
                    "plan_diff": _plan_diff(s),
                    **s.locks_json(),
                    "findings": [asdict(f) for f in s.findings],
                }
                for s in self.shapes
            ],
        }


def difference(s: ShapeDiff) -> float:
    """How far a shape moved between baseline and result, as a factor (1: not at all): the most of
    its rows examined or PostgreSQL's shared buffers in total, at its most-moved plan node (:meth:`plandiff.NodeDiff.moved`),
    its rows locked; a plan that changed without moving its work counts 1.5 (above one that did
    not change)."""
    sizes = [1.0]
    if s.work is not None:
        sizes.append(max(s.work.ratio, 1 / s.work.ratio))
        if s.work.buffers_before is not None and s.work.buffers_after is not None:
            sizes.append(plandiff.factor(s.work.buffers_before, s.work.buffers_after))
    aligned = s.aligned
    if s.base is not None and s.result is not None and aligned is not None:
        sizes += [d.moved() for _, d in aligned.walk() if d.status != plandiff.SAME]
        if aligned.changed:
            sizes.append(1.5)
    locked = [None if e is None else e.remediated.locked_rows for e in (s.base, s.result)]
    if locked[0] is not None and locked[1] is not None:
        sizes.append(plandiff.factor(float(locked[0]), float(locked[1])))
    return max(sizes)


def _plan_diff(s: ShapeDiff) -> list[dict] | None:
    """The aligned plans (:func:`plandiff.to_json`) where both have a plan and it changed; else None."""
    if entry_tree(s.base) is None or entry_tree(s.result) is None or s.aligned is None:
        return None
    return plandiff.to_json(s.aligned) if s.aligned.changed else None


def ratio(before: float, after: float) -> float:
    """after / before, a plan's work of under one row counting as one row."""
    return max(after, 1.0) / max(before, 1.0)


@dataclass(frozen=True)
class NodeWork:
    """One aligned plan node: rows examined before and after (0 where a plan lacks it), its own
    buffers and its q-error in each plan; ``in_baseline``/``in_result`` say which plans have it."""

    label: str  # the result's node (the baseline's, when the result lacks it)
    before: float
    after: float
    buffers_before: float | None = None
    buffers_after: float | None = None
    q_before: float | None = None
    q_after: float | None = None
    in_baseline: bool = True
    in_result: bool = True

    @property
    def ratio(self) -> float:
        return ratio(self.before, self.after)

    @property
    def change(self) -> str:
        """The ratio, or ``new`` / ``gone`` for a node only one plan has."""
        return "new" if not self.in_baseline else "gone" if not self.in_result else fmt_factor(self.ratio)

    def describe(self) -> str:
        return self._describe(self.before, self.after, " rows examined")

    def describe_buffers(self) -> str:
        return self._describe(self.buffers_before or 0.0, self.buffers_after or 0.0, "")

    def _describe(self, before: float, after: float, unit: str) -> str:
        if not self.in_baseline:
            return f"{self.label} (new): {after:,.0f}{unit}"
        if not self.in_result:
            return f"{self.label} (gone): {before:,.0f}{unit}"
        return f"{self.label}: {before:,.0f} → {after:,.0f}{unit} ({fmt_factor(ratio(before, after))})"

    def to_json(self) -> dict[str, Any]:
        return {
            "node": self.label,
            "rows_before": self.before,
            "rows_after": self.after,
            "ratio": round(self.ratio, 4),
            "buffers_before": self.buffers_before,
            "buffers_after": self.buffers_after,
            "q_error_before": None if self.q_before is None else round(self.q_before, 4),
            "q_error_after": None if self.q_after is None else round(self.q_after, 4),
            "in_baseline": self.in_baseline,
            "in_result": self.in_result,
        }


@dataclass(frozen=True)
class WorkDiff:
    """A shape's work, baseline against result: in total and per aligned node."""

    before: float
    after: float
    buffers_before: float | None
    buffers_after: float | None
    nodes: tuple[NodeWork, ...]

    @property
    def ratio(self) -> float:
        return ratio(self.before, self.after)

    def describe(self) -> str:
        text = f"in total {self.before:,.0f} → {self.after:,.0f} rows examined ({fmt_factor(self.ratio)})"
        if self.buffers_before is not None and self.buffers_after is not None:
            r = ratio(self.buffers_before, self.buffers_after)
            text += (
                f", shared buffers {self.buffers_before:,.0f} → {self.buffers_after:,.0f} ({fmt_factor(r)})"
            )
        return text

    @property
    def worst_q_error(self) -> float | None:
        """The result's largest node q-error."""
        return max((n.q_after for n in self.nodes if n.q_after is not None), default=None)

    def to_json(self) -> dict[str, Any]:
        return {
            "rows_before": self.before,
            "rows_after": self.after,
            "ratio": round(self.ratio, 4),
            "buffers_before": self.buffers_before,
            "buffers_after": self.buffers_after,
            "nodes": [n.to_json() for n in self.nodes],
        }


def keyed_nodes(root: PlanNode) -> dict[tuple, tuple[PlanNode, bool]]:
    """Every node by its alignment key, with whether it sits under a ``limit``: accesses by
    (table, alias, n-th), operators by (kind, n-th)."""
    out: dict[tuple, tuple[PlanNode, bool]] = {}
    counts: dict[tuple, int] = {}

    def visit(n: PlanNode, limited: bool) -> None:
        base = ("access", n.table or n.alias or n.label, n.alias) if _is_access(n) else ("op", n.kind)
        k = counts.get(base, 0)
        counts[base] = k + 1
        out[(*base, k)] = (n, limited)
        for c in n.children:
            visit(c, limited or n.kind == "limit")

    visit(root, False)
    return out


def entry_p50(entry: ShapeResult | None) -> float | None:
    return entry.remediated.p50_ms if entry else None


def entry_tree(entry: ShapeResult | None) -> PlanNode | None:
    return entry.remediated.plan if entry else None


def _is_access(n: PlanNode) -> bool:
    return n.kind in ACCESS_KINDS and bool(n.table or n.kind != "const")


def _describe(n: PlanNode) -> str:
    return f"{n.kind} on {n.table or n.alias or '?'}" + (f" using {n.index}" if n.index else "")


def entry_access(entry: ShapeResult | None) -> str:
    tree = entry_tree(entry)
    if tree is None:
        return "timeout" if entry and entry.remediated.timeout else "—"
    found = [_describe(n) for n in tree.walk() if _is_access(n)]
    return "; ".join(dict.fromkeys(found)) or "no table access"
