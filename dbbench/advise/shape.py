"""One shape on one target, advised: its candidate indexes (:mod:`dbbench.advise.candidates`)
each built for real (:func:`dbbench.advise.trial.present`), measured against the shape without it
(:mod:`dbbench.advise.verify`) and costed (build time, size on disk, writes with and without it),
then judged: *verified* when the plan and every parameter probe read the table through it and
the rows examined fall; else *rejected*, with the reason.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from dbbench import dialects
from dbbench.access.targets import Target
from dbbench.advise import candidates, effects, trial, verify
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
    effects: effects.Effects | None = None  # the rest of the catalog with it present (verified only)
    estimate: verify.EstimateOnly | None = None  # what plain EXPLAIN alone would have concluded
    growth: Any = None  # dbbench.advise.growth.Growth: its work at a second size (verified only)


@dataclass(frozen=True)
class ShapeAdvice:
    """A shape's candidates on one target, each tried (at most ``most`` of them, best first), and
    what no index can bound (the reasons of :attr:`dbbench.advise.candidates.Advice.unbounded`)."""

    shape: str
    dialect: str
    trials: tuple[Trial, ...]
    unbounded: tuple[str, ...]
    untried: int  # candidates past ``most``
    spelling: str = "remediated"  # the spelling advised: natural when it is the slower one
    existing: tuple[tuple[str, str], ...] = ()  # (candidate, the index of the namespace it already is)

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


Within = Callable[[Any, candidates.Candidate], "effects.Effects"]


def natural_spelling(shape: Shape, dialect: str) -> Shape:
    """``shape`` with its natural spelling on ``dialect`` as the one measured (advice for the
    spelling a team wrote first, where ``explain`` shows it slower)."""
    v = shape.variants[dialect]
    if not v.natural:
        raise ValueError(f"shape {shape.name!r} has no natural spelling on {dialect}")
    return replace(shape, variants={**shape.variants, dialect: replace(v, sql=v.natural, natural=None)})


def advise(
    target: Target,
    namespace: str,
    shape: Shape,
    options: MeasureOptions,
    base: dict | None = None,
    *,
    most: int = 3,
    write_rows: int = trial.DEFAULT_WRITE_ROWS,
    max_write_ratio: float = MAX_WRITE_RATIO,
    spelling: str = "remediated",
    within: Within | None = None,
    say: Say | None = None,
) -> ShapeAdvice:
    """Try the best ``most`` candidates of ``shape`` on ``target`` in ``namespace`` (a complete
    dbbench seed); nothing is left behind (see :func:`dbbench.advise.trial.present`).
    ``spelling``: natural advises the shape's natural spelling. A candidate the namespace already
    has (the same key) is not built again: :attr:`ShapeAdvice.existing` names it. ``within``:
    called with the connection and the candidate while a verified candidate is present (the rest
    of the catalog measured again, :mod:`dbbench.advise.effects`); a regression rejects it."""
    d = dialects.get(target.dialect)
    measured = natural_spelling(shape, target.dialect) if spelling == "natural" else shape
    v = measured.variants[target.dialect]
    report = say or (lambda _: None)
    with target.all_or_nothing() as conn:
        d.use(conn, namespace)
        conn.commit()  # PostgreSQL's search_path is transactional: a rollback would undo it
        tables = schema.read(conn, target.dialect, namespace)
        have = d.index_definitions(conn, namespace)
        conn.rollback()
        before = verify.measure(target, conn, measured, options, base)
        conn.rollback()
    columns = {t.name: [c.name for c in t.columns.values()] for t in tables.values()}
    lengths = {t.name: {c.name: c.max_length for c in t.columns.values()} for t in tables.values()}
    found = candidates.derive(v.sql, columns, target.dialect, params=before.params, lengths=lengths)
    fresh, existing = [], []
    for cand in found.candidates:
        same = _existing(cand, have, target.dialect)
        if same:
            existing.append((str(cand), same))
        else:
            fresh.append(cand)
    trials = []
    costs: dict[tuple[str, tuple[str, ...]], trial.WriteCost | None] = {}
    for cand in fresh[:most]:
        report(f"{target.dialect}: {shape.name}: trying {cand}")
        trials.append(
            _try(
                target,
                namespace,
                measured,
                cand,
                before,
                options,
                base,
                write_rows,
                max_write_ratio,
                within,
                costs,
                columns.get(cand.table, []),
            )
        )
    return ShapeAdvice(
        shape.name,
        target.dialect,
        tuple(trials),
        tuple(found.unbounded),
        max(0, len(fresh) - most),
        spelling,
        tuple(existing),
    )


def key_text(definition: str) -> str:
    """The key list of an index definition (``CREATE INDEX … (a, b DESC) INCLUDE (…) WHERE …`` or
    MySQL's ``BTREE (`a`, `b`)``), lower case, unquoted, spaces dropped: ``a,bdesc``."""
    m = re.search(r"\((.*)\)", definition)
    if not m:
        return ""
    text = m.group(1)
    depth, end = 0, len(text)
    for i, ch in enumerate(text):  # the first balanced list only (not INCLUDE's or WHERE's)
        depth += ch == "("
        depth -= ch == ")"
        if depth < 0:
            end = i
            break
    return re.sub(r"[\s`\"]", "", text[:end]).lower()


def _existing(cand: candidates.Candidate, have: list[tuple[str, str, str]], dialect: str) -> str | None:
    """The namespace's index with the candidate's key (same parts in the same order, same
    partial predicate), if it has one."""
    if cand.include:
        return None
    mine = key_text(cand.ddl(dialect, "x"))
    for table, name, definition in have:
        if table != cand.table or key_text(definition) != mine:
            continue
        if bool(cand.where) == (" where " in definition.lower()):
            return name
    return None


def _try(
    target: Target,
    namespace: str,
    shape: Shape,
    cand: candidates.Candidate,
    before,
    options: MeasureOptions,
    base: dict | None,
    write_rows: int,
    max_write_ratio: float,
    within: Within | None,
    costs: dict,
    table_columns: list[str],
) -> Trial:
    ddl, drop = cand.ddl(target.dialect), cand.drop_ddl(target.dialect)
    keyed = [p.name for p in cand.columns if not p.expression]
    for p in cand.columns:  # an expression's columns: the writes that change its value
        if p.expression:
            keyed += [
                c for c in table_columns if c not in keyed and re.search(rf"\b{re.escape(c)}\b", p.name)
            ]
    found: effects.Effects | None = None
    with target.all_or_nothing() as plain:
        dialects.get(target.dialect).use(plain, namespace)
        plain.commit()
        guessed = verify.estimate(
            target, plain, shape, cand.table, cand.name, base, timeout_ms=options.timeout_ms
        )
        plain.rollback()
    with trial.present(target, namespace, ddl, drop, cand.name) as conn:
        built = trial.build_seconds(conn)
        size = trial.size_bytes(conn, namespace, cand.table, cand.name)
        estimated = verify.estimate_only(
            guessed,
            verify.estimate(target, conn, shape, cand.table, cand.name, base, timeout_ms=options.timeout_ms),
        )
        evidence = verify.compare(target, conn, shape, cand.table, cand.name, before, options, base)
        with_index = _cost(target, namespace, cand.table, keyed, write_rows, conn)
        if within is not None and evidence.serves:
            found = within(conn, cand)
    key = (cand.table, tuple(keyed))
    if key not in costs:
        costs[key] = _cost(target, namespace, cand.table, keyed, write_rows, None)
    without = costs[key]
    verdict, reason = judge(evidence, without, with_index, max_write_ratio=max_write_ratio)
    if verdict == "verified" and found is not None and found.regresses:
        verdict, reason = "rejected", "regresses " + "; ".join(map(str, found.regresses))
    return Trial(cand, ddl, evidence, built, size, without, with_index, verdict, reason, found, estimated)


def _cost(target: Target, namespace: str, table: str, columns: list[str], rows: int, conn):
    if not columns or rows <= 0:
        return None
    return trial.advise_write_cost(target, namespace, table, columns, rows, conn)
