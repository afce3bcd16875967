"""What executing a shape shows about one index, measured on the connection that sees it.

An index under trial may exist only inside an open transaction (PostgreSQL builds it there and
rolls it back), so everything here runs on the caller's connection: the shape's remediated
spelling measured as ``dbbench explain`` measures it (:func:`dbbench.measure.explain.run_shape`),
then every parameter probe (sample, hottest and rarest value, generic plan) held against the
index instead of the shape's own expectation. :func:`compare` sets the two measurements side by
side: whether the plan reads the table through the index, the rows examined and PostgreSQL's
buffers before and after, and the advisory time.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from dbbench import dialects
from dbbench.access.targets import Target
from dbbench.catalog.entries import Shape
from dbbench.dialects.plan import PlanNode, accesses
from dbbench.measure import probes
from dbbench.measure.explain import MeasureOptions, ShapeMeasurement, resolve_params, run_shape
from dbbench.measure.grow import buffers, work


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
    )


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
    params = probes.fill(conn, d, shape, v.sql, resolve_params(conn, d, shape, base))
    trial = replace(shape, probes=ALL_PROBES)
    return probes.run(conn, d, trial, v, params, options.timeout_ms, access_only=False)


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
