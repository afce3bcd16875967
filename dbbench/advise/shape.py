"""One shape on one target, advised: its candidate indexes (:mod:`dbbench.advise.candidates`)
each built for real (:func:`dbbench.advise.trial.present`), measured against the shape without it
(:mod:`dbbench.advise.verify`) and costed (build time, size on disk, writes with and without it),
then judged: *verified* when the plan and every parameter probe read the table through it and
the rows examined fall; else *rejected*, with the reason.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from dbbench import dialects
from dbbench.access.targets import Target
from dbbench.advise import candidates, trial, verify
from dbbench.catalog.entries import Shape
from dbbench.measure.explain import MeasureOptions
from dbbench.volume import schema

Say = Callable[[str], None]


@dataclass(frozen=True)
class Trial:
    """One candidate index held against one shape on one target, and what it costs."""

    candidate: candidates.Candidate
    ddl: str
    evidence: verify.Evidence
    build_seconds: float
    size_bytes: int
    write_without: trial.WriteCost | None
    write_with: trial.WriteCost | None
    verdict: str  # verified | rejected
    reason: str  # why rejected ("" when verified)


@dataclass(frozen=True)
class ShapeAdvice:
    """A shape's candidates on one target, each tried (at most ``most`` of them, best first), and
    what no index can bound (the reasons of :attr:`dbbench.advise.candidates.Advice.unbounded`)."""

    shape: str
    dialect: str
    trials: tuple[Trial, ...]
    unbounded: tuple[str, ...]
    untried: int  # candidates past ``most``

    @property
    def verified(self) -> tuple[Trial, ...]:
        return tuple(t for t in self.trials if t.verdict == "verified")


MAX_WRITE_RATIO = 5.0  # a write batch this many times slower with the index: too costly on writes


def judge(
    evidence: verify.Evidence,
    without: trial.WriteCost | None = None,
    with_index: trial.WriteCost | None = None,
    *,
    max_write_ratio: float = MAX_WRITE_RATIO,
) -> tuple[str, str]:
    """verified, or rejected with the first reason: unused by the planner, loses on the hottest
    value (or not used on another probe), no less work, too costly on writes (the write batch
    more than ``max_write_ratio`` times slower with the index)."""
    if not evidence.used:
        return "rejected", f"unused by the planner (it reads {evidence.table} by {evidence.plan})"
    if evidence.probes:
        hottest = [p for p in evidence.probes if p.startswith("hottest ")]
        if hottest:
            return "rejected", f"loses on the hottest value: {hottest[0]}"
        return "rejected", f"not used on {evidence.probes[0]}"
    before, after = evidence.work
    if before is not None and after is not None and after >= before:
        return "rejected", f"no less work: {before:,.0f} → {after:,.0f} rows examined"
    ratio = write_ratio(without, with_index)
    if ratio is not None and ratio > max_write_ratio:
        return "rejected", (
            f"too costly on writes: a {with_index.rows:,}-row write batch is {ratio:.1f}x slower "  # type: ignore[union-attr]
            f"with it (limit {max_write_ratio:g}x)"
        )
    return "verified", ""


def write_ratio(without: trial.WriteCost | None, with_index: trial.WriteCost | None) -> float | None:
    """How many times slower the write batch ran with the index (None: not measured)."""
    if without is None or with_index is None or without.seconds <= 0:
        return None
    return with_index.seconds / without.seconds


def advise(
    target: Target,
    namespace: str,
    shape: Shape,
    options: MeasureOptions,
    base: dict | None = None,
    *,
    most: int = 3,
    write_rows: int = trial.DEFAULT_WRITE_ROWS,
    say: Say | None = None,
) -> ShapeAdvice:
    """Try the best ``most`` candidates of ``shape`` on ``target`` in ``namespace`` (a complete
    dbbench seed); nothing is left behind (see :func:`dbbench.advise.trial.present`)."""
    d = dialects.get(target.dialect)
    v = shape.variants[target.dialect]
    report = say or (lambda _: None)
    with target.all_or_nothing() as conn:
        d.use(conn, namespace)
        tables = schema.read(conn, target.dialect, namespace)
        conn.rollback()
        before = verify.measure(target, conn, shape, options, base)
        conn.rollback()
    columns = {t.name: [c.name for c in t.columns.values()] for t in tables.values()}
    lengths = {t.name: {c.name: c.max_length for c in t.columns.values()} for t in tables.values()}
    found = candidates.derive(v.sql, columns, target.dialect, params=before.params, lengths=lengths)
    trials = []
    for cand in found.candidates[:most]:
        report(f"{target.dialect}: {shape.name}: trying {cand}")
        trials.append(_try(target, namespace, shape, cand, before, options, base, write_rows))
    return ShapeAdvice(
        shape.name,
        target.dialect,
        tuple(trials),
        tuple(found.unbounded),
        max(0, len(found.candidates) - most),
    )


def _try(
    target: Target,
    namespace: str,
    shape: Shape,
    cand: candidates.Candidate,
    before,
    options: MeasureOptions,
    base: dict | None,
    write_rows: int,
) -> Trial:
    ddl, drop = cand.ddl(target.dialect), cand.drop_ddl(target.dialect)
    keyed = [p.name for p in cand.columns if not p.expression]
    with trial.present(target, namespace, ddl, drop, cand.name) as conn:
        built = trial.build_seconds(conn)
        size = trial.size_bytes(conn, namespace, cand.table, cand.name)
        evidence = verify.compare(target, conn, shape, cand.table, cand.name, before, options, base)
        with_index = _cost(target, namespace, cand.table, keyed, write_rows, conn)
    without = _cost(target, namespace, cand.table, keyed, write_rows, None)
    verdict, reason = judge(evidence, without, with_index)
    return Trial(cand, ddl, evidence, built, size, without, with_index, verdict, reason)


def _cost(target: Target, namespace: str, table: str, columns: list[str], rows: int, conn):
    if not columns or rows <= 0:
        return None
    return trial.write_cost(target, namespace, table, columns, rows=rows, repeat=1, conn=conn)
