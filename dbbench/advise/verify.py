"""What executing a shape shows about one index, measured on the connection that sees it.

An index under trial may exist only inside an open transaction (PostgreSQL builds it there and
rolls it back), so everything here runs on the caller's connection: the shape's remediated
spelling measured as ``dbbench explain`` measures it (:func:`dbbench.measure.explain.run_shape`),
then every parameter probe (sample, hottest and rarest value, generic plan) held against the
index instead of the shape's own expectation. :func:`compare` sets the two measurements side by
side: whether the plan reads the table through the index, the rows examined and PostgreSQL's
buffers before and after, and the advisory time.

Beside it, what the planner's estimate alone says (:func:`estimate`: plain ``EXPLAIN``, nothing
executed) and what an advisor that trusts it would conclude (:func:`estimate_only`: Dexter's rule,
the planner uses the index and the estimated cost falls by half): the evidence that executing
matters where the two disagree.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from dbbench import dialects
from dbbench.access.targets import Target
from dbbench.catalog.entries import Shape
from dbbench.catalog.params import to_pyformat
from dbbench.dialects.plan import PlanNode, accesses
from dbbench.measure import probes
from dbbench.measure.explain import MeasureOptions, ShapeMeasurement, run_shape
from dbbench.measure.grow import buffers, work
from dbbench.measure.values import resolve_params


@dataclass(frozen=True)
class Evidence:
    """One index held against one shape on one dialect.

    ``used``: the remediated spelling's plan reads ``table`` through ``index``; ``probes``: each
    parameter probe whose plan does not (empty: every probe uses it); ``work`` and ``buffers``:
    before → after (rows examined, PostgreSQL's shared buffers; None where the plan timed out or
    the server reports none); ``ms``: the p50 before → after (advisory, never a verdict)."""

    shape: str
    dialect: str
    table: str
    index: str
    used: bool
    probes: tuple[str, ...]
    work: tuple[float | None, float | None]
    buffers: tuple[int | None, int | None]
    ms: tuple[float | None, float | None]
    plan: str  # how the plan reads the table with the index present
    # a write's or a locking read's rows locked, before → after (None: a read, or not recorded)
    locks: tuple[int | None, int | None] = (None, None)

    @property
    def serves(self) -> bool:
        """The plan and every probe read the table through the index."""
        return self.used and not self.probes


ALL_PROBES = ("values", "generic")


def measure(
    target: Target, conn, shape: Shape, options: MeasureOptions, base: dict | None = None
) -> ShapeMeasurement:
    """The shape's remediated spelling on ``conn`` (no natural spelling: advice is about the
    spelling a team ships), measured as ``dbbench explain`` measures it; ``base``: the seeded
    dataset's values (:func:`dbbench.measure.explain.dataset_params`)."""
    return run_shape(target, conn, shape, replace(options, natural=False), base_params=base)


def compare(
    target: Target,
    conn,
    shape: Shape,
    table: str,
    index: str,
    before: ShapeMeasurement,
    options: MeasureOptions,
    base: dict | None = None,
) -> Evidence:
    """``shape`` measured again on ``conn``, where ``index`` on ``table`` is present, against
    ``before`` (measured without it)."""
    after = measure(target, conn, shape, options, base)
    tree = after.remediated._tree
    return Evidence(
        shape.name,
        target.dialect,
        table,
        index,
        used=_reads_through(tree, table, index),
        probes=tuple(probe_problems(target, conn, shape, table, index, options, base)),
        work=(work(before.remediated._tree), work(tree)),
        buffers=(buffers(before.remediated._tree), buffers(tree)),
        ms=(before.remediated.p50, after.remediated.p50),
        plan=_access(tree, table),
        locks=(_locked(before), _locked(after)),
    )


def _locked(m: ShapeMeasurement) -> int | None:
    """The rows the remediated spelling locked (its lock footprint), None for a read."""
    locks = m.remediated.locks
    return None if not locks else int(locks.get("rows") or 0)


def probe_problems(
    target: Target,
    conn,
    shape: Shape,
    table: str,
    index: str,
    options: MeasureOptions,
    base: dict | None = None,
) -> list[str]:
    """Each parameter probe of ``shape`` (every kind, whether the shape asks for it or not) whose
    plan does not read ``table`` through ``index``: the shape's own expectation replaced by the
    index under trial, no feature forbidden."""
    d = dialects.get(target.dialect)
    v = replace(shape.variants[target.dialect], expect_table=table, expect_index=index, forbid=[])
    params = _params(conn, d, shape, base)
    trial = replace(shape, probes=ALL_PROBES)
    return probes.run(conn, d, trial, v, params, options.timeout_ms, access_only=False)


@dataclass(frozen=True)
class Estimate:
    """What the planner alone says of one spelling of a shape on one dialect (plain ``EXPLAIN``,
    nothing executed): ``plan``, how it reads ``table`` (as :attr:`Evidence.plan`); ``used``:
    through ``index``; ``cost``: its estimated total cost in the planner's own units
    (PostgreSQL's top node's Total Cost, MySQL's query_cost: comparable on one server only),
    None where it gives none."""

    shape: str
    dialect: str
    spelling: str  # remediated | natural
    table: str
    index: str
    used: bool
    cost: float | None
    plan: str


def estimate(
    target: Target,
    conn,
    shape: Shape,
    table: str,
    index: str,
    base: dict | None = None,
    *,
    natural: bool = False,
    timeout_ms: int = MeasureOptions.timeout_ms,
) -> Estimate:
    """The planner's estimate for ``shape``'s remediated spelling (``natural``: its natural one)
    on ``conn``, with the parameters :func:`measure` binds; an index under trial on ``conn``
    stays (the EXPLAIN is undone to a savepoint inside its transaction)."""
    d = dialects.get(target.dialect)
    v = shape.variants[target.dialect]
    sql = v.natural if natural else v.sql
    if sql is None:
        raise ValueError(f"shape {shape.name!r} has no natural spelling on {target.dialect}")
    tree, cost = d.estimate_plan(
        conn, to_pyformat(sql), _params(conn, d, shape, base), timeout_ms, v.settings
    )
    return Estimate(
        shape.name,
        target.dialect,
        "natural" if natural else "remediated",
        table,
        index,
        used=_reads_through(tree, table, index),
        cost=cost,
        plan=_access(tree, table),
    )


DEXTER_SAVING = 0.5  # Dexter suggests an index its hypothetical plan uses at half the cost or less


@dataclass(frozen=True)
class EstimateOnly:
    """What an advisor that reads estimates alone concludes of an index: ``verdict`` suggest or
    skip, ``reason`` in words with the numbers; ``cost`` without → with it; ``saving``: the
    fraction the cost falls by (negative: it rises; None: a cost is missing)."""

    verdict: str
    reason: str
    cost: tuple[float | None, float | None]
    saving: float | None


def estimate_only(without: Estimate, with_index: Estimate, min_saving: float = DEXTER_SAVING) -> EstimateOnly:
    """Dexter's rule on two estimates of one spelling, without and with the index: suggest it when
    the planner uses it and the estimated cost falls by ``min_saving`` or more, else skip."""
    before, after = cost = (without.cost, with_index.cost)
    saving = None if before is None or after is None or before <= 0 else 1 - after / before
    if not with_index.used:
        why = f"the planner does not use it (it reads {with_index.table} by {with_index.plan})"
        return EstimateOnly("skip", why, cost, saving)
    if saving is None:
        return EstimateOnly("skip", "the planner gives no estimated cost to compare", cost, saving)
    numbers = f"estimated cost {before:,.1f} → {after:,.1f} ({-saving:+.0%})"
    if saving >= min_saving:
        return EstimateOnly("suggest", f"the planner uses it: {numbers}", cost, saving)
    return EstimateOnly("skip", f"{numbers}, less than the {min_saving:.0%} saving asked", cost, saving)


def _params(conn, d, shape: Shape, base: dict | None) -> dict:
    """The shape's parameters as :func:`dbbench.measure.explain.run_shape` binds them."""
    return probes.fill(conn, d, shape, shape.variants[d.NAME].sql, resolve_params(conn, d, shape, base))


def _reads_through(tree: PlanNode | None, table: str, index: str) -> bool:
    return tree is not None and any(n.table == table and n.index == index for n in accesses(tree))


def _access(tree: PlanNode | None, table: str) -> str:
    """How the plan reads ``table``: ``index NAME``, ``full_scan`` … (``timeout`` without a plan)."""
    if tree is None:
        return "timeout"
    found = [n for n in accesses(tree) if n.table == table]
    if not found:
        return f"no access to {table}"
    return ", ".join(f"{n.kind} {n.index}" if n.index else n.kind for n in found)
