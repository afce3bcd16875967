"""What one shape does on one dialect, every plan of it: the sample measured as ``dbbench explain``
measures it (its check with it), then every parameter probe (the hottest and rarest value of each
equality parameter, the generic plan), whether the shape asks for them or not. :func:`effect`
sets two profiles side by side, one made with an index hidden: whether the shape needs it.

A shape *needs* an index when, without it, the shape's check newly fails, a plan times out, a
full scan, sort or temporary table appears, or the rows examined (PostgreSQL: the shared buffers
too) rise past ``dbbench diff``'s thresholds at a node or in total, on the sample or on any probe.
Another index read instead with no more work is no need: the index is *taken over*.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from dbbench import dialects
from dbbench.access.targets import Target
from dbbench.catalog.entries import Shape
from dbbench.catalog.params import to_pyformat
from dbbench.dialects.plan import PlanNode, accesses, describe_access
from dbbench.diff.judge import compare_plans
from dbbench.diff.work import work_diff, work_findings
from dbbench.document.diff import Thresholds
from dbbench.measure import probes
from dbbench.measure.explain import MeasureOptions, run_shape
from dbbench.measure.grow import work
from dbbench.measure.values import resolve_params

SAMPLE = "sample"
ALL_PROBES = ("values", "generic")
# what hiding an index always changes: the access it served; judged by the work instead
_TAKEN_OVER = frozenset({"index_lost", "access_changed", "access_gone", "scan_kind", "misestimate"})


@dataclass(frozen=True)
class Plan:
    """One plan of a shape: the sample's or a probe's (``label`` names the value or the generic
    plan); ``tree`` None when it timed out (``timeout`` says after what)."""

    label: str
    tree: PlanNode | None
    timeout: str | None = None

    def reads(self) -> set[tuple[str, str]]:
        """(table, index) of every access through an index."""
        if self.tree is None:
            return set()
        return {(n.table, n.index) for n in accesses(self.tree) if n.table and n.index}

    def tables(self) -> set[str]:
        return set() if self.tree is None else {n.table for n in accesses(self.tree) if n.table}

    def access(self, table: str) -> str:
        """How the plan reads ``table``, in words (``timeout`` without a plan)."""
        if self.tree is None:
            return "timeout"
        found = [n for n in accesses(self.tree) if n.table == table]
        return "; ".join(describe_access(n) for n in found) or f"{table} not read"


@dataclass(frozen=True)
class Profile:
    """Every plan of one shape on one dialect, and its check: ``ok`` and the ``problems`` of the
    sample and of the probes the shape itself asks for (as ``dbbench explain`` reports them)."""

    shape: str
    dialect: str
    ok: bool
    problems: tuple[str, ...]
    plans: tuple[Plan, ...]

    def plan(self, label: str) -> Plan | None:
        return next((p for p in self.plans if p.label == label), None)

    def reads(self) -> set[tuple[str, str]]:
        return set().union(*(p.reads() for p in self.plans)) if self.plans else set()

    def tables(self) -> set[str]:
        return set().union(*(p.tables() for p in self.plans)) if self.plans else set()

    @property
    def work(self) -> float | None:
        sample = self.plan(SAMPLE)
        return None if sample is None else work(sample.tree)


def profile(target: Target, conn, shape: Shape, options: MeasureOptions, base: dict | None = None) -> Profile:
    """``shape``'s remediated spelling on ``conn``: the sample measured as ``explain`` measures it
    (``options``' warm-ups and runs), then every parameter probe, each one ``EXPLAIN ANALYZE``."""
    d = dialects.get(target.dialect)
    m = run_shape(target, conn, shape, replace(options, natural=False), base_params=base)
    conn.rollback()
    plans = [Plan(SAMPLE, m.remediated._tree, m.remediated.timeout)]
    v = shape.variants[target.dialect]
    params = probes.fill(conn, d, shape, v.sql, resolve_params(conn, d, shape, base))
    stmt = to_pyformat(v.sql)
    for probe in probes.probes(conn, d, replace(shape, probes=ALL_PROBES), v.sql, params):
        explain = d.run_explain_generic if probe.generic else d.run_explain
        try:
            _, tree, _ = explain(conn, stmt, probe.params, options.timeout_ms, v.settings)
        except TimeoutError as exc:
            plans.append(Plan(probe.label, None, str(exc)))
        else:
            plans.append(Plan(probe.label, tree))
        conn.rollback()
    verdict = m.verdict
    ok = verdict is None or verdict.ok
    return Profile(shape.name, target.dialect, ok, tuple(verdict.problems if verdict else ()), tuple(plans))


@dataclass(frozen=True)
class Effect:
    """One shape with one index hidden, against the shape with every index present.

    ``read``: a plan of it read the index; ``reasons``: why it needs the index (empty: it does
    not); ``work``: the sample's rows examined before → after; ``instead``: how the plans that
    read the index read its table now (the index that took over)."""

    shape: str
    read: bool
    reasons: tuple[str, ...]
    work: tuple[float | None, float | None]
    instead: tuple[str, ...]
    error: str = ""  # the statement failed without the index (an index hint naming it)
    by: tuple[str, ...] = ()  # the indexes of the table those plans read instead

    @property
    def needs(self) -> bool:
        return bool(self.reasons)

    def work_text(self) -> str:
        before, after = self.work
        now = "an error" if self.error else _rows(after)
        return f"rows examined {_rows(before)} → {now}"


def _rows(value: float | None) -> str:
    return "timeout" if value is None else f"{value:,.0f}"


def effect(
    before: Profile, after: Profile, table: str, index: str, thresholds: Thresholds | None = None
) -> Effect:
    """What hiding ``index`` of ``table`` did to one shape (``after``: profiled with it hidden)."""
    thresholds = thresholds or Thresholds()
    reasons: list[str] = []
    if before.ok and not after.ok:
        reasons.append("its check fails: " + (after.problems[0] if after.problems else "check failed"))
    instead: list[str] = []
    by: list[str] = []
    for b in before.plans:
        a = after.plan(b.label)
        if a is None or b.tree is None:
            continue
        if (table, index) in b.reads():
            instead.append(a.access(table))
            by += [i for t, i in sorted(a.reads()) if t == table]
        where = "" if b.label == SAMPLE else f"{b.label}: "
        if a.tree is None:
            reasons.append(f"{where}times out ({a.timeout})")
            continue
        found = [
            f for f in compare_plans(b.tree, a.tree, thresholds) if f.regression and f.kind not in _TAKEN_OVER
        ]
        found += [f for f in work_findings(work_diff(b.tree, a.tree), thresholds) if f.regression]
        reasons += [where + f.message for f in found]
    return Effect(
        before.shape,
        read=(table, index) in before.reads(),
        reasons=tuple(dict.fromkeys(reasons)),
        work=(before.work, after.work),
        instead=tuple(dict.fromkeys(instead)),
        by=tuple(dict.fromkeys(by)),
    )
