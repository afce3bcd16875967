"""A catalog advised on each target (``dbbench advise``): which shapes need an index, their
candidates tried one by one (:func:`dbbench.advise.shape.advise`) with the rest of the catalog
measured again while each verified one is present (:mod:`dbbench.advise.effects`), then the
smallest set of verified indexes that serves every shape in need, built whole and the catalog
measured again with the set present (:func:`dbbench.advise.trial.present_all`).

A shape needs advice when its check fails (the expected index is not used, a forbidden scan or
sort, no expectation written yet) or when its natural spelling is slower than the remediated one
by :attr:`AdviseOptions.slower` (then the natural spelling is what is advised); ``--shape``
advises the named shapes whatever their state.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from dbbench import dialects
from dbbench.access.targets import Target
from dbbench.advise import effects, growth, trial
from dbbench.advise.shape import MAX_WRITE_RATIO, ShapeAdvice, Trial, advise, natural_spelling
from dbbench.catalog.entries import Catalog, Shape
from dbbench.measure import explain, writes
from dbbench.measure.explain import MeasureOptions, ShapeMeasurement

Say = Callable[[str], None]


@dataclass(frozen=True)
class AdviseOptions:
    """How many candidates are built per shape (``most``, best first), the write batch
    (``write_rows``), the write cost a verified index may add (``max_write_ratio``), how much slower
    a natural spelling is before it is advised (``slower``), and whether each verified index's
    side effects and the whole-catalog set are measured."""

    most: int = 3
    write_rows: int = trial.DEFAULT_WRITE_ROWS
    max_write_ratio: float = MAX_WRITE_RATIO
    slower: float = 1.5
    side_effects: bool = True
    whole_set: bool = True
    growth_size: int | None = None  # a second, smaller size of the ladder: each verified index's growth


@dataclass(frozen=True)
class Need:
    """Why a shape is advised on a dialect: its failed check, or its slower natural spelling."""

    shape: str
    dialect: str
    spelling: str  # remediated | natural
    why: str


@dataclass(frozen=True)
class IndexSet:
    """The smallest set of verified indexes serving every shape in need on one dialect, verified
    whole: built together and the catalog measured again with all of them present."""

    dialect: str
    trials: tuple[Trial, ...]
    serves: tuple[str, ...]  # shapes a member was verified for, or helps
    unserved: tuple[str, ...]  # shapes in need no verified index serves
    serves_each: tuple[tuple[str, ...], ...] = ()  # per member, in the order of trials
    size_bytes: int = 0  # measured with the whole set present
    write_seconds: tuple[float, float] | None = None  # one write batch per table: without → with the set
    effects: effects.Effects | None = None  # every shape with the set present
    verified: bool = False
    problem: str = ""

    @property
    def ddl(self) -> tuple[str, ...]:
        return tuple(t.ddl for t in self.trials)


@dataclass
class CatalogAdvice:
    """Everything ``dbbench advise`` found, per target."""

    needs: list[Need] = field(default_factory=list)
    shapes: list[ShapeAdvice] = field(default_factory=list)
    sets: list[IndexSet] = field(default_factory=list)
    baseline: list[ShapeMeasurement] = field(default_factory=list)
    seconds: float = 0.0


def needs(results: list[ShapeMeasurement], *, slower: float, only: list[str] | None = None) -> list[Need]:
    """The shapes to advise, from one ``explain`` run (``only``: these, whatever their state)."""
    out = []
    for r in results:
        # a row count other than the catalog's is the data's, not an index's: not a need
        problems = [p for p in (r.verdict.problems if r.verdict else []) if not p.startswith("returned ")]
        if r.verdict is not None and not r.verdict.ok and (problems or not r.verdict.problems):
            more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
            why = (problems[0] + more) if problems else "check failed"
            out.append(Need(r.shape, r.dialect, "remediated", why))
        elif only is not None:
            out.append(Need(r.shape, r.dialect, "remediated", "asked for"))
        nat, rem = r.natural, r.remediated
        if nat is None:
            continue
        if nat._tree is None and nat.timeout:
            out.append(Need(r.shape, r.dialect, "natural", f"the natural spelling timed out ({nat.timeout})"))
        elif nat.p50 and rem.p50 and nat.p50 >= slower * rem.p50:
            out.append(
                Need(
                    r.shape, r.dialect, "natural", f"the natural spelling is {nat.p50 / rem.p50:.1f}x slower"
                )
            )
    return out


def advise_catalog(
    targets: list[Target],
    cat: Catalog,
    options: MeasureOptions,
    advice: AdviseOptions = AdviseOptions(),
    *,
    only: list[str] | None = None,
    base: dict | None = None,
    say: Say | None = None,
    cache_dir: Path | None = None,
) -> CatalogAdvice:
    """Advise ``cat`` on every target in ``options.namespace`` (a complete dbbench seed); nothing is
    left behind (:mod:`dbbench.advise.trial`)."""
    report = say or (lambda _: None)
    start = time.perf_counter()
    out = CatalogAdvice()
    shapes = [s for s in cat.shapes if not only or s.name in only]
    report(f"measuring {len(shapes)} shapes")
    _, results, _ = explain.run(targets, cat, replace(options, natural=True), only=only)
    out.baseline = results
    out.needs = needs(results, slower=advice.slower, only=only)
    small: tuple[str, dict | None] | None = None
    if advice.growth_size and out.needs:
        small = _smaller(targets, cat, advice.growth_size, options, cache_dir, report)
    settling = contextlib.ExitStack()  # what the trials' rolled-back writes leave, removed after
    for target in targets:
        settling.enter_context(writes.settled(target, cat.shapes, options.namespace))
    with settling:
        _advise_targets(targets, cat, options, advice, out, small, base, report)
    out.seconds = time.perf_counter() - start
    return out


def _advise_targets(
    targets: list[Target],
    cat: Catalog,
    options: MeasureOptions,
    advice: AdviseOptions,
    out: CatalogAdvice,
    small: tuple[str, dict | None] | None,
    base: dict | None,
    report: Say,
) -> None:
    """Each target's needs advised (the body of :func:`advise_catalog`)."""
    by_name = {s.name: s for s in cat.shapes}
    for target in targets:
        mine = [n for n in out.needs if n.dialect == target.dialect]
        if not mine:
            continue
        before: dict[str, ShapeMeasurement] = {}
        if advice.side_effects or advice.whole_set:
            with target.all_or_nothing() as conn:
                dialects.get(target.dialect).use(conn, options.namespace)
                conn.commit()  # PostgreSQL's search_path is transactional
                before = effects.baseline(target, conn, cat.shapes, options, base)
        for need in mine:
            shape = by_name[need.shape]
            within = None
            if advice.side_effects:
                within = _within(target, cat.shapes, before, options, base, need.shape)
            found = advise(
                target,
                options.namespace,
                shape,
                options,
                base,
                most=advice.most,
                write_rows=advice.write_rows,
                max_write_ratio=advice.max_write_ratio,
                spelling=need.spelling,
                within=within,
                say=report,
            )
            if small is not None:
                found = _grown(target, shape, found, options, small, report)
            out.shapes.append(found)
        if advice.whole_set:
            mine_advice = [a for a in out.shapes if a.dialect == target.dialect]
            chosen = smallest_set(target.dialect, mine, mine_advice)
            if chosen.trials:
                report(f"{target.dialect}: verifying the set of {len(chosen.trials)} indexes whole")
                own = {
                    a.shape: min(w for t in a.verified if (w := t.evidence.work[1]) is not None)
                    for a in mine_advice
                    if a.spelling == "remediated" and any(t.evidence.work[1] is not None for t in a.verified)
                }
                chosen = verify_set(target, options, base, cat.shapes, before, chosen, advice.write_rows, own)
            out.sets.append(chosen)


def _smaller(
    targets: list[Target], cat: Catalog, size: int, options: MeasureOptions, cache_dir: Path | None, say: Say
) -> tuple[str, dict | None]:
    """The namespace holding ``size`` (``dbbench grow``'s, loaded or reused) and its dataset's values."""
    from dbbench import defaults
    from dbbench.measure.grow import load_size, namespace_for

    ns = namespace_for(defaults.GROW_NAMESPACE, size)
    say(f"loading {ns} for the growth of each verified index")
    load_size(targets, cat, size, ns, cache_dir=cache_dir, isolate=options.isolate)
    metas = explain.seeded_metas(targets, cat, ns)
    names = {m.get("dataset") for m in metas.values()}
    return ns, explain.dataset_params(names.pop()) if len(names) == 1 else None


def _grown(
    target: Target,
    shape: Shape,
    found: ShapeAdvice,
    options: MeasureOptions,
    small: tuple[str, dict | None],
    say: Say,
) -> ShapeAdvice:
    """Each verified trial's growth between the smaller size and this one; one that grows worse
    than the shape claims is rejected as not bounded."""
    measured = natural_spelling(shape, target.dialect) if found.spelling == "natural" else shape
    trials = []
    for t in found.trials:
        if t.verdict == "verified":
            say(f"{target.dialect}: {shape.name}: {t.candidate} at a second size")
            g = growth.measure(
                target,
                measured,
                t.candidate,
                (options.namespace, t.evidence.work[1]),
                small[0],
                options,
                small[1],
            )
            t = replace(t, growth=g)
            if not g.bounded:
                t = replace(t, verdict="rejected", reason=f"not bounded: {g}, the shape claims {g.declared}")
        trials.append(t)
    return replace(found, trials=tuple(trials))


def _within(
    target: Target,
    shapes: list[Shape],
    before: dict[str, ShapeMeasurement],
    options: MeasureOptions,
    base: dict | None,
    own: str,
):
    def rerun(conn, _cand) -> effects.Effects:
        return effects.rerun(target, conn, shapes, before, options, base, skip=[own])

    return rerun


def smallest_set(dialect: str, needs_: list[Need], advice: list[ShapeAdvice]) -> IndexSet:
    """The fewest verified indexes that serve every shape in need (greedy: the index serving the
    most shapes still unserved first, the smaller of two alike); an index serves the shape it was
    verified for and every shape it helps."""
    wanted = {n.shape for n in needs_ if n.dialect == dialect}
    best: dict[str, Trial] = {}
    serves: dict[str, set[str]] = {}
    for a in advice:
        for t in a.verified:
            name = t.candidate.name
            serves.setdefault(name, set()).add(a.shape)
            if t.effects is not None:
                serves[name] |= {e.shape for e in t.effects.helps}
            if name not in best or t.size_bytes < best[name].size_bytes:
                best[name] = t
    left = set(wanted)
    chosen: list[Trial] = []
    while left:
        scored = [(len(serves[n] & left), -best[n].size_bytes, n) for n in best if serves[n] & left]
        if not scored:
            break
        _, _, name = max(scored)
        chosen.append(best[name])
        left -= serves[name]
    served = sorted(set().union(*(serves[t.candidate.name] for t in chosen)) & wanted) if chosen else []
    each = tuple(tuple(sorted(serves[t.candidate.name] & wanted)) for t in chosen)
    return IndexSet(dialect, tuple(chosen), tuple(served), tuple(sorted(left)), each)


def verify_set(
    target: Target,
    options: MeasureOptions,
    base: dict | None,
    shapes: list[Shape],
    before: dict[str, ShapeMeasurement],
    chosen: IndexSet,
    write_rows: int,
    own: dict[str, float],
) -> IndexSet:
    """``chosen`` built whole and every shape measured again with it present: verified when no
    shape regresses and every shape it serves examines about the rows it did with its own index
    (``own``: shape -> rows examined with its best verified index, remediated spellings only)."""
    ns = options.namespace
    statements = [(t.ddl, t.candidate.drop_ddl(target.dialect), t.candidate.name) for t in chosen.trials]
    tables = sorted({t.candidate.table for t in chosen.trials})
    keyed = {
        table: sorted(
            {
                p.name
                for t in chosen.trials
                if t.candidate.table == table
                for p in t.candidate.columns
                if not p.expression
            }
        )
        for table in tables
    }
    with trial.present_all(target, ns, statements) as conn:
        size = sum(trial.size_bytes(conn, ns, t.candidate.table, t.candidate.name) for t in chosen.trials)
        found = effects.rerun(target, conn, shapes, before, options, base)
        with_set = _batch(target, ns, keyed, write_rows, conn)
    without = _batch(target, ns, keyed, write_rows, None)
    problems = [f"regresses {e}" for e in found.regresses]
    by_shape = {e.shape: e for e in found.effects}
    for shape, alone in own.items():
        e = by_shape.get(shape)
        if e is None or shape not in chosen.serves:
            continue
        after = e.work[1]
        if after is None or after > max(FACTOR_ALONE * alone, alone + effects.NOISE_ROWS):
            got = "a timeout" if after is None else f"{after:,.0f} rows"
            problems.append(f"{shape} examines {got} with the set, {alone:,.0f} with its own index")
    return replace(
        chosen,
        size_bytes=size,
        write_seconds=(without, with_set) if without is not None and with_set is not None else None,
        effects=found,
        verified=not problems,
        problem="; ".join(problems),
    )


FACTOR_ALONE = 1.5


def _batch(target: Target, ns: str, keyed: dict[str, list[str]], rows: int, conn) -> float | None:
    """One write batch on each table of the set (its indexed columns updated), seconds summed."""
    if rows <= 0:
        return None
    total = 0.0
    for table, columns in keyed.items():
        if not columns:
            continue
        total += trial.advise_write_cost(target, ns, table, columns, rows, conn).seconds
    return total
