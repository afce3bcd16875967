"""The work of a shape, baseline against result, node by node: evidence that does not move with
machine noise.

A node's work is the rows it produced or read and discarded, times its loops
(:attr:`dbbench.dialects.plan.PlanNode.examined`, what ``dbbench grow`` counts too); the plan's is
the sum. On PostgreSQL the shared buffers (hit + read) come beside it: a node's own are its count
less its children's (PostgreSQL counts a node's children in it). Nodes are aligned as the plan
findings align them (:func:`dbbench.diff.judge.keyed_nodes`); a node only one plan has did no work
in the other. Each node's estimate error is its q-error: max(estimated / actual, actual /
estimated), both at least one row (reported, not judged here: ``misestimate`` judges it).

Work up by more than ``Thresholds.work_factor`` **and** by at least ``Thresholds.work_min`` rows,
at a node or in total, is a regression, named at the nodes where it happened; so are PostgreSQL's
shared buffers up by more than the same factor and by at least ``Thresholds.buffers_min`` pages
(the same rows read from more pages: wider rows, a heap visited where an index sufficed).
"""

from __future__ import annotations

from collections.abc import Callable

from dbbench.dialects.plan import PlanNode
from dbbench.document.diff import Finding, NodeWork, Thresholds, WorkDiff, keyed_nodes, ratio


def q_error(n: PlanNode) -> float | None:
    """The node's estimate error (1.0: exact); None when it has no estimate or never ran."""
    if n.est_rows is None or n.actual_rows is None or not n.loops:
        return None
    est, act = max(float(n.est_rows), 1.0), max(float(n.actual_rows), 1.0)
    return max(est, act) / min(est, act)


def own_buffers(n: PlanNode) -> float | None:
    """PostgreSQL: the shared buffers this node itself hit or read (its children's taken out)."""
    if n.buffers is None:
        return None
    return max(n.buffers - sum(c.buffers or 0.0 for c in n.children), 0.0)


def work_diff(base: PlanNode, new: PlanNode) -> WorkDiff:
    """Both plans' work, aligned node by node (the result's nodes in plan order, then those only
    the baseline has)."""
    b_nodes, n_nodes = keyed_nodes(base), keyed_nodes(new)
    rows = []
    for key, (n, _) in n_nodes.items():
        b = b_nodes.get(key, (None, False))[0]
        rows.append(
            NodeWork(
                n.label,
                0.0 if b is None else b.examined,
                n.examined,
                None if b is None else own_buffers(b),
                own_buffers(n),
                None if b is None else q_error(b),
                q_error(n),
                in_baseline=b is not None,
            )
        )
    for key, (b, _) in b_nodes.items():
        if key not in n_nodes:
            rows.append(
                NodeWork(b.label, b.examined, 0.0, own_buffers(b), None, q_error(b), None, in_result=False)
            )
    return WorkDiff(
        sum(n.examined for n in base.walk()),
        sum(n.examined for n in new.walk()),
        base.buffers,
        new.buffers,
        tuple(rows),
    )


def _rose(before: float, after: float, factor: float, least: float) -> bool:
    return ratio(before, after) > factor and after - before >= least


def work_findings(w: WorkDiff, t: Thresholds) -> list[Finding]:
    """Rows examined or shared buffers up past the thresholds at a node or in total (a
    regression, named at the nodes where they rose most), or down past them in total, neither up
    (an improvement)."""
    rows = [(n.before, n.after, n) for n in w.nodes]
    parts = _risen(rows, (w.before, w.after), t.work_factor, t.work_min, "work up at ", NodeWork.describe)
    down = _rose(w.after, w.before, t.work_factor, t.work_min)
    if w.buffers_before is not None and w.buffers_after is not None:
        pages = [(n.buffers_before or 0.0, n.buffers_after or 0.0, n) for n in w.nodes]
        total = (w.buffers_before, w.buffers_after)
        parts += _risen(
            pages, total, t.work_factor, t.buffers_min, "shared buffers up at ", NodeWork.describe_buffers
        )
        down = down or _rose(w.buffers_after, w.buffers_before, t.work_factor, t.buffers_min)
    if parts:
        return [Finding("work", True, "; ".join([*parts, w.describe()]))]
    if down:
        return [Finding("work", False, f"work down: {w.describe()}", improvement=True)]
    return []


def _risen(
    counts: list[tuple[float, float, NodeWork]],
    total: tuple[float, float],
    factor: float,
    least: float,
    head: str,
    describe: Callable[[NodeWork], str],
) -> list[str]:
    """``head`` and the nodes whose count (before, after) rose past ``factor`` and ``least``, most
    first, up to three ``describe``d and how many more; the node that rose most when only the
    ``total`` did; nothing when neither did."""
    by_rise = sorted(counts, key=lambda c: c[0] - c[1])
    up = [n for b, a, n in by_rise if _rose(b, a, factor, least)]
    if not up and not _rose(*total, factor, least):
        return []
    where = up or [n for *_, n in by_rise[:1]]
    more = f"; {len(where) - 3} more" if len(where) > 3 else ""
    return [head + "; ".join(describe(n) for n in where[:3]) + more]
