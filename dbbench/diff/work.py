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
at a node or in total, is a regression, named at the nodes where it happened.
"""

from __future__ import annotations

from dbbench.dialects.plan import PlanNode
from dbbench.diff.model import Finding, NodeWork, Thresholds, WorkDiff, keyed_nodes, ratio


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
            )
        )
    for key, (b, _) in b_nodes.items():
        if key not in n_nodes:
            rows.append(NodeWork(b.label, b.examined, 0.0, own_buffers(b), None, q_error(b), None))
    return WorkDiff(
        sum(n.examined for n in base.walk()),
        sum(n.examined for n in new.walk()),
        base.buffers,
        new.buffers,
        tuple(rows),
    )


def _rose(before: float, after: float, t: Thresholds) -> bool:
    return ratio(before, after) > t.work_factor and after - before >= t.work_min


def work_findings(w: WorkDiff, t: Thresholds) -> list[Finding]:
    """Work up past the thresholds at a node or in total (a regression, named at the nodes where
    it rose most), or down past them in total (an improvement)."""
    up = sorted((n for n in w.nodes if _rose(n.before, n.after, t)), key=lambda n: n.before - n.after)
    if up or _rose(w.before, w.after, t):
        where = up or sorted(w.nodes, key=lambda n: n.before - n.after)[:1]
        at = "; ".join(n.describe() for n in where[:3]) + (
            f"; {len(where) - 3} more" if len(where) > 3 else ""
        )
        return [Finding("work", True, f"work up at {at}; {w.describe()}")]
    if _rose(w.after, w.before, t):
        return [Finding("work", False, f"work down: {w.describe()}", improvement=True)]
    return []
