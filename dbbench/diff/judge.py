"""Judging one shape and dialect: the plan trees aligned node by node, the rows estimates, the
assertion and the timing samples (the findings are listed in :mod:`dbbench.diff`)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from dbbench.dialects.plan import PlanNode
from dbbench.diff.locks import lock_findings
from dbbench.diff.work import work_findings
from dbbench.document import plandiff
from dbbench.document.diff import (
    Finding,
    Thresholds,
    WorkDiff,
    _describe,
    _is_access,
    entry_tree,
    keyed_nodes,
)
from dbbench.document.model import ShapeResult, Spelling
from dbbench.units import fmt_factor, fmt_ms
from verdict import FAIL, INCONCLUSIVE, PASS
from verdict.stats import Interval, nearest_rank, ratio_interval

# Worse to the right: a change to the right is a regression, to the left an improvement.
KIND_RANK = {
    k: i
    for i, k in enumerate(
        ("const", "unique_lookup", "index_lookup", "index_range", "index_scan", "full_scan")
    )
}


def misestimate(n: PlanNode, limited: bool, t: Thresholds) -> float | None:
    """The factor by which ``n``'s rows were misestimated, if beyond the thresholds."""
    if n.est_rows is None or n.actual_rows is None or not n.loops:
        return None
    est, act = float(n.est_rows), float(n.actual_rows)
    if limited and est >= act:
        return None
    factor = max(est, act) / max(min(est, act), 1.0)
    if factor > t.rows_factor and max(est, act) >= t.rows_min:
        return factor
    return None


def _features(root: PlanNode, kind: str) -> list[PlanNode]:
    return [n for n in root.walk() if n.kind == kind and not n.in_subquery]


Keyed = dict[tuple, tuple[PlanNode, bool]]  # keyed_nodes' result


def compare_plans(base: PlanNode, new: PlanNode, t: Thresholds) -> list[Finding]:
    """What changed from ``base`` to ``new``: accesses lost, changed, gone or new, sorts and
    temporary tables added or removed, joins of another type or order (:mod:`dbbench.document.plandiff`),
    rows newly misestimated (in that order)."""
    b_nodes, n_nodes = keyed_nodes(base), keyed_nodes(new)
    out = _access_findings(b_nodes, n_nodes, t)
    for key, (n, _) in n_nodes.items():
        if key[0] == "access" and key not in b_nodes:
            full = n.kind == "full_scan"
            out.append(Finding("new_access", full, f"new access: {_describe(n)}"))
    for kind in ("sort", "temp_table"):
        out += _feature_findings(kind, _features(base, kind), _features(new, kind))
    # named, not judged: the work and estimate findings decide whether the other join costs more
    out += [Finding(kind, False, words) for kind, words in plandiff.join_changes(plandiff.align(base, new))]
    return out + _misestimate_findings(b_nodes, n_nodes, t)


def _access_findings(b_nodes: Keyed, n_nodes: Keyed, t: Thresholds) -> list[Finding]:
    """Each access of the base plan against the new plan: its index lost, its path or scan kind
    changed, or its table no longer read."""
    out: list[Finding] = []
    new_accesses = [n for n, _ in n_nodes.values() if _is_access(n)]
    for key, (b, _) in b_nodes.items():
        if key[0] != "access":
            continue
        match = n_nodes.get(key)
        same_table = [n for n in new_accesses if n.table == b.table]
        if b.index and not any(n.index == b.index for n in same_table):
            now = "; ".join(_describe(n) for n in same_table) or "the table is not read"
            out.append(Finding("index_lost", True, f"index lost: {b.index} on {b.table}; now {now}"))
        elif match and b.index and match[0].index and match[0].index != b.index:
            out.append(
                Finding(
                    "access_changed", True, f"access path changed: {_describe(b)} → {_describe(match[0])}"
                )
            )
        if match is None:
            if not same_table:
                out.append(
                    Finding("access_gone", False, f"no longer reads {b.table or b.alias}: was {_describe(b)}")
                )
            continue
        n = match[0]
        if n.kind != b.kind and n.kind in KIND_RANK and b.kind in KIND_RANK:
            out.append(_scan_kind_finding(b, n, t))
    return out


def _scan_kind_finding(b: PlanNode, n: PlanNode, t: Thresholds) -> Finding:
    """An access whose scan kind changed: a regression if worse, unless it reads the same index
    of a table of at most ``t.few_rows`` rows (equivalent there)."""
    worse = KIND_RANK[n.kind] > KIND_RANK[b.kind]
    text = f"scan kind changed on {b.table or b.alias}: {b.kind} → {n.kind}"
    rows = max(x for x in (b.est_rows, b.actual_rows, n.est_rows, n.actual_rows, 0.0) if x is not None)
    if worse and b.index and n.index == b.index and rows <= t.few_rows:
        return Finding(
            "scan_kind",
            False,
            f"{text} (equivalent: the same index {b.index} on a table of {rows:,.0f} rows or fewer)",
        )
    return Finding("scan_kind", worse, text, improvement=not worse)


def _feature_findings(kind: str, before: list[PlanNode], after: list[PlanNode]) -> list[Finding]:
    """More (a regression) or fewer (an improvement) nodes of ``kind`` (sort, temp_table)."""
    if len(after) > len(before):
        added = after[len(before) :] if before else after
        return [
            Finding(
                f"{kind}_added",
                True,
                f"{kind.replace('_', ' ')} added: " + "; ".join(n.label for n in added),
            )
        ]
    if len(after) < len(before):
        return [
            Finding(
                f"{kind}_removed",
                False,
                f"{kind.replace('_', ' ')} removed: " + "; ".join(n.label for n in before[len(after) :]),
                improvement=True,
            )
        ]
    return []


def _misestimate_findings(b_nodes: Keyed, n_nodes: Keyed, t: Thresholds) -> list[Finding]:
    """Nodes of the new plan whose rows are misestimated where the base plan's were not."""
    out: list[Finding] = []
    for key, (n, limited) in n_nodes.items():
        factor = misestimate(n, limited, t)
        if factor is None:
            continue
        was = b_nodes.get(key)
        if was is not None and misestimate(was[0], was[1], t) is None:
            out.append(
                Finding(
                    "misestimate",
                    True,
                    f"rows misestimated {fmt_factor(factor)} on {n.label}: estimated "
                    f"{n.est_rows:,.0f}, actual {n.actual_rows:,.0f} (was {was[0].est_rows or 0:,.0f} / "
                    f"{was[0].actual_rows or 0:,.0f})",
                )
            )
    return out


def compare_entry(
    base: ShapeResult,
    new: ShapeResult,
    t: Thresholds,
    *,
    work: WorkDiff | None = None,
    floor: Interval | None = None,
) -> list[Finding]:
    """The findings of one shape and dialect: plan, assertion, ``work`` (when both documents record
    it), the lock footprint of a write or locking read (:mod:`dbbench.diff.locks`) and timing (advisory unless ``t.gate_timing``; ``floor``: the A/A interval of two runs now,
    the run-to-run spread its uncertainty must include)."""
    out: list[Finding] = []
    b_rem, n_rem = base.remediated, new.remediated
    if n_rem.timeout:
        out.append(Finding("timeout", True, f"timed out: {n_rem.timeout}"))
    b_tree, n_tree = entry_tree(base), entry_tree(new)
    if b_tree is not None and n_tree is not None:
        out += compare_plans(b_tree, n_tree, t)
    if base.ok and not new.ok:
        problems = (new.verdict.problems if new.verdict else ()) or ("the catalog assertion fails",)
        out.append(Finding("assertion", True, "assertion fails: " + "; ".join(problems)))
    elif not base.ok and new.ok:
        out.append(Finding("assertion", False, "assertion holds again", improvement=True))
    if work is not None:
        out += work_findings(work, t)
    out += lock_findings(base, new, t)
    b50, n50 = b_rem.p50_ms, n_rem.p50_ms
    if b50 is not None and n50 is not None and not n_rem.timeout:
        out += like_timing(b_rem, n_rem, t, floor)
    return out


def like_timing(b_rem: Spelling, n_rem: Spelling, t: Thresholds, floor: Interval | None) -> list[Finding]:
    """The timing finding of two spellings on the times they share (statement with statement,
    executor with executor: :meth:`dbbench.document.model.Spelling.comparable`); none but an
    advisory ``timing_unlike`` saying why when they share none (a MySQL time resolved while
    planning against a statement time)."""
    like = b_rem.comparable(n_rem)
    if isinstance(like, str):
        return [Finding("timing_unlike", False, f"timing {like}", advisory=True)]
    base, new, note = like
    b50, n50 = (
        (b_rem.p50_ms, n_rem.p50_ms) if note is None else (nearest_rank(base, 0.5), nearest_rank(new, 0.5))
    )
    if not base or not new or b50 is None or n50 is None:
        return []
    finding = timing(base, new, b50, n50, t, floor)
    if finding is None:
        return []
    if note is not None:
        finding.message += f" ({note})"
    return [finding]


@dataclass(frozen=True)
class TimingCall:
    """What the samples say about a time: ``verdict`` FAIL (slower past the limit), INCONCLUSIVE
    (the interval straddles it) or PASS, whether it is ``faster``, and the evidence ``text``."""

    verdict: str
    faster: bool
    text: str


def timing_call(
    base: list[float], new: list[float], b50: float, n50: float, t: Thresholds, spread: float = 1.0
) -> TimingCall | None:
    """A rank test with a minimum effect (see the module doc of :mod:`dbbench.diff`); None when
    nothing is worth saying. ``spread`` (at least 1) widens the interval on both sides: the
    run-to-run variation of this machine, which samples of one run do not see."""
    limit = 1 + t.slower
    change = f"p50 {fmt_ms(b50)} → {fmt_ms(n50)} ms"
    if abs(n50 - b50) <= t.noise_ms:
        return None
    iv = ratio_interval(base, new, t.alpha)
    if iv is None:
        return TimingCall(
            INCONCLUSIVE if n50 > b50 else PASS,
            False,
            f"{change}: {len(base)} and {len(new)} samples are too few to decide (take more with --runs)",
        )
    low, high = iv.low / spread, iv.high * spread
    evidence = (
        f"{change}, typical ratio {iv.estimate:.2f}x [{iv.low:.2f}, {iv.high:.2f}] "
        f"({len(base)} vs {len(new)} samples, {iv.confidence:.1%} interval)"
    )
    if spread > 1:
        evidence += f", widened by the run-to-run spread {spread:.2f}x to [{low:.2f}, {high:.2f}]"
    if low > limit:
        return TimingCall(FAIL, False, f"slower: {evidence} is past {limit:g}x")
    if high < 1 / limit:
        return TimingCall(PASS, True, f"faster: {evidence}")
    if high > limit:
        why = (
            "the run-to-run spread of this machine is larger than the margin (gate on work alone, or measure "
            "on a quieter machine)"
            if spread > 1
            else f"{len(new)} samples are too few to decide: rerun with --runs {max(3 * len(new), 21)}"
        )
        return TimingCall(INCONCLUSIVE, False, f"maybe slower: {evidence} straddles {limit:g}x; {why}")
    return None


def spread_of(floor: Interval) -> float:
    """How far the A/A interval of two runs now reaches from 1, as a factor (at least 1)."""
    return max(floor.high, 1 / floor.low, 1.0) if floor.low > 0 else math.inf


def timing(
    base: list[float],
    new: list[float],
    b50: float,
    n50: float,
    t: Thresholds,
    floor: Interval | None = None,
) -> Finding | None:
    """The timing finding of one shape: advisory unless ``t.gate_timing``; then decided on the
    interval widened by the run-to-run spread of ``floor`` (without one, at most inconclusive)."""
    call = timing_call(base, new, b50, n50, t, 1.0 if floor is None else spread_of(floor))
    if call is None:
        return None
    kind = "faster" if call.faster else "slower"
    if not t.gate_timing:
        return Finding(
            kind, False, f"advisory: {call.text} (timing decides only with --gate-timing)", advisory=True
        )
    if floor is None and call.verdict == FAIL:
        text = f"{call.text}; but the run-to-run variance was not measured (--gate-timing measures a second run now)"
        return Finding(kind, False, text, inconclusive=True)
    return Finding(
        kind,
        call.verdict == FAIL,
        call.text,
        improvement=call.faster,
        inconclusive=call.verdict == INCONCLUSIVE,
    )
