"""The index-necessity map of a catalog on each target: every index of every table the catalog's
shapes read is hidden in turn (:func:`dbbench.advise.trial.hidden`: PostgreSQL drops it in a
transaction rolled back, MySQL makes it invisible), and every shape that reads its table is
profiled again (:mod:`.profile`: the sample and every parameter probe). Each index is then

* **needed** by the shapes whose work or plan it protects (:func:`.profile.effect`);
* **redundant** when shapes read it but none needs it: another index takes over with no more
  work (named, with the work);
* **unused** by the catalog when no plan reads it and hiding it changes nothing.

Beside each: its size on disk, the write batch it costs (timed with and without it, as ``dbbench
advise`` times one), and the constraint it backs (a primary key, a unique key, a foreign key's
index): reported, never called droppable. The reverse view gives each shape the indexes it needs.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from dbbench import dialects
from dbbench.access.targets import Target
from dbbench.advise import trial
from dbbench.advise.trial import WriteCost
from dbbench.catalog.entries import Catalog, Shape
from dbbench.document.diff import Thresholds
from dbbench.errors import CannotHide, server_message
from dbbench.indexmap.profile import Effect, Profile, effect, profile
from dbbench.measure import probes, writes
from dbbench.measure.explain import MeasureOptions

Say = Callable[[str], None]


@dataclass(frozen=True)
class MapOptions:
    """``runs`` / ``warmups`` of each sample (its work is what is judged: one run is enough),
    the write batch (``write_rows``, 0: no write cost), the thresholds a need is judged by."""

    runs: int = 1
    warmups: int = 1
    write_rows: int = trial.DEFAULT_WRITE_ROWS
    write_repeat: int = trial.DEFAULT_REPEAT
    thresholds: Thresholds = field(default_factory=Thresholds)


@dataclass(frozen=True)
class IndexEntry:
    """One index of one table on one dialect, and what hiding it did."""

    dialect: str
    table: str
    index: str
    kind: str  # primary | unique | index
    parts: tuple[str, ...]
    definition: str
    bound: str  # the constraint that needs it ("" when none)
    size_bytes: int | None
    effects: tuple[Effect, ...] = ()
    hidden_with: str = ""  # what PostgreSQL dropped with it (its constraint, foreign keys)
    not_hidden: str = ""  # why it could not be hidden (then only which plans read it is known)
    read_unhidden: tuple[str, ...] = ()  # not hidden: the shapes whose plans read it
    write_with: WriteCost | None = None
    write_without: WriteCost | None = None
    write_note: str = ""
    seconds: float = 0.0
    shares: tuple[str, tuple[str, ...]] | None = None  # (a foreign key, the other indexes serving it)

    @property
    def needed_by(self) -> tuple[Effect, ...]:
        return tuple(e for e in self.effects if e.needs)

    @property
    def read_by(self) -> tuple[Effect, ...]:
        return tuple(e for e in self.effects if e.read)

    @property
    def verdict(self) -> str:
        if self.not_hidden:
            return "not hidden"
        if self.needed_by:
            return "needed"
        return "redundant" if self.read_by else "unused"

    @property
    def taken_over_by(self) -> tuple[str, ...]:
        """How the shapes that read it read its table without it."""
        return tuple(dict.fromkeys(i for e in self.read_by for i in e.instead))

    @property
    def write_ratio(self) -> float | None:
        w, wo = self.write_with, self.write_without
        if w is None or wo is None or not wo.seconds:
            return None
        return w.seconds / wo.seconds


@dataclass(frozen=True)
class ShapeNeeds:
    """The reverse view: what one shape needs on one dialect. ``needs``: the indexes it cannot do
    without; ``either``: an index it reads that another can replace, with what replaced it."""

    shape: str
    dialect: str
    needs: tuple[str, ...]
    either: tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...]  # (index, how read without it, by which)
    reads: tuple[str, ...]
    ok: bool
    work: float | None


@dataclass
class TargetMap:
    dialect: str
    namespace: str
    tables: list[str] = field(default_factory=list)
    indexes: list[IndexEntry] = field(default_factory=list)
    shapes: list[ShapeNeeds] = field(default_factory=list)
    profiles: list[Profile] = field(default_factory=list)
    drop: DropSet | None = None
    seconds: float = 0.0


def constraint_binding(
    keys: list[tuple[str, str, str, tuple[str, ...], str]], schema_keys: list[tuple]
) -> tuple[dict[tuple[str, str], str], dict[tuple[str, str], tuple[str, tuple[str, ...]]]]:
    """(bound, shared): ``bound`` maps (table, index) to the constraint that needs it (its table's
    primary key, a unique key, or the one index a foreign key's columns lead, in any order);
    ``shared`` maps each of several indexes serving one foreign key to (that key, the others
    serving it): the key needs one of them, none in particular."""
    bound: dict[tuple[str, str], str] = {}
    shared: dict[tuple[str, str], tuple[str, tuple[str, ...]]] = {}
    for table, index, kind, _, _ in keys:
        if kind == "primary":
            bound[(table, index)] = "primary key"
        elif kind == "unique":
            bound[(table, index)] = "unique"
    for table, name, kind, columns, *_ in schema_keys:
        if kind != "foreign" or not columns:
            continue
        serving = [
            i for t, i, _, parts, _ in keys if t == table and set(parts[: len(columns)]) == set(columns)
        ]
        for index in serving:
            if len(serving) > 1 and (table, index) not in bound:
                shared[(table, index)] = (name, tuple(i for i in serving if i != index))
                continue
            said = f"foreign key {name}"
            bound[(table, index)] = f"{bound[(table, index)]}; {said}" if (table, index) in bound else said
    return bound, shared


def map_target(
    target: Target,
    shapes: list[Shape],
    options: MeasureOptions,
    mapping: MapOptions = MapOptions(),
    *,
    base: dict | None = None,
    say: Say | None = None,
) -> TargetMap:
    """The map of ``shapes`` on ``target`` in ``options.namespace`` (a complete dbbench seed);
    nothing is left changed there."""
    report = say or (lambda _: None)
    start = time.perf_counter()
    d = dialects.get(target.dialect)
    ns = options.namespace
    measure = replace(options, runs=mapping.runs, warmups=mapping.warmups, natural=False)
    mine = [s for s in shapes if target.dialect in s.variants]
    out = TargetMap(target.dialect, ns)
    trial.recover(target, ns, wait_s=trial.LOCK_WAIT_S)
    with target.all_or_nothing() as conn:
        d.use(conn, ns)
        conn.commit()  # PostgreSQL's search_path is transactional
        report(f"{target.dialect}: profiling {len(mine)} shapes with every index present")
        out.profiles = [profile(target, conn, s, measure, base) for s in mine]
        values = probes.values_read(conn)  # the probes' values: no index hidden changes them
        touched = sorted(set().union(*(p.tables() for p in out.profiles)) if out.profiles else set())
        keys = [k for k in d.index_keys(conn, ns) if k[0] in touched]
        described = d.schema_keys(conn, ns)
        bound, shared = constraint_binding(keys, described)
        # the key a write batch finds its rows by (trial.write_cost: the primary key, else the first unique one)
        batch_keys: dict[str, set[str]] = {}
        for t, _, _kind, cols, *_ in sorted(
            (k for k in described if k[2] in ("primary", "unique")), key=lambda k: k[2] != "primary"
        ):
            batch_keys.setdefault(t, set(cols))
        sizes: dict[tuple[str, str], int | None] = {}
        for table, index, *_ in keys:
            try:
                sizes[(table, index)] = d.index_size_bytes(conn, ns, table, index)
            except LookupError:
                sizes[(table, index)] = None
        conn.rollback()
    out.tables = touched
    by_name = {s.name: s for s in mine}
    for n, (table, index, kind, parts, definition) in enumerate(keys, 1):
        readers = [p for p in out.profiles if table in p.tables()]
        report(f"{target.dialect}: [{n}/{len(keys)}] {table}.{index} hidden: {len(readers)} shapes again")
        entry = IndexEntry(
            target.dialect,
            table,
            index,
            kind,
            parts,
            definition,
            bound.get((table, index), ""),
            sizes[(table, index)],
            shares=shared.get((table, index)),
        )
        key = batch_keys.get(table, set())
        out.indexes.append(_hide(target, entry, readers, by_name, measure, mapping, base, key, values))
    out.shapes = reverse(out)
    out.drop = drop_set(target, out, by_name, measure, mapping, base, report, values)
    out.seconds = time.perf_counter() - start
    return out


def _hide(
    target: Target,
    entry: IndexEntry,
    readers: list[Profile],
    shapes: dict[str, Shape],
    measure: MeasureOptions,
    mapping: MapOptions,
    base: dict | None,
    batch_key: set[str],
    values: dict,
) -> IndexEntry:
    """``entry`` with what hiding it did to each of ``readers`` and its write cost (``batch_key``:
    the columns a write batch on its table finds its rows by)."""
    start = time.perf_counter()
    ns, table, index = measure.namespace, entry.table, entry.index
    columns = [p for p in entry.parts if p.isidentifier()]
    write_with = write_without = None
    note = ""
    if mapping.write_rows > 0 and entry.kind == "primary":
        note = "not measured: a primary key (no table goes without one)"
    elif mapping.write_rows > 0 and entry.kind == "unique" and set(entry.parts) == batch_key:
        note = "not measured: the write batch finds its rows by this key (the table has no primary key)"
    elif mapping.write_rows > 0 and columns:
        # the same batch on a copy of the table with every index, then on one without this one
        write = {"rows": mapping.write_rows, "repeat": mapping.write_repeat}
        write_with = trial.write_cost(target, ns, table, columns, **write, without="")
        write_without = trial.write_cost(target, ns, table, columns, **write, without=index)
    elif mapping.write_rows > 0:
        note = "not measured: the index has no column a batch could update (an expression)"
    entry = replace(entry, write_with=write_with, write_without=write_without, write_note=note)
    effects: list[Effect] = []
    try:
        with trial.hidden(target, ns, table, index) as conn:
            went = trial.hidden_with(conn)
            probes.assume_values(conn, values)
            for before in readers:
                after = _again(target, conn, shapes[before.shape], measure, base)
                if isinstance(after, str):  # an index hint naming it (MySQL's FORCE INDEX)
                    why = (f"fails without it: {after}",)
                    effects.append(Effect(before.shape, True, why, (before.work, None), (), after))
                else:
                    effects.append(effect(before, after, table, index, mapping.thresholds))
    except (CannotHide, trial.TrialFailed) as exc:
        # the server would not hide it (MySQL: a primary key) or failed to: the map goes on
        read = tuple(p.shape for p in readers if (table, index) in p.reads())
        return replace(entry, not_hidden=str(exc), read_unhidden=read, seconds=time.perf_counter() - start)
    return replace(entry, effects=tuple(effects), hidden_with=went, seconds=time.perf_counter() - start)


def _again(target: Target, conn, shape: Shape, measure: MeasureOptions, base: dict | None) -> Profile | str:
    """``shape`` profiled again on ``conn``; the server's one-line error when its statement fails
    there (an index hint naming an index hidden)."""
    try:
        return profile(target, conn, shape, measure, base)
    except Exception as exc:
        if not dialects.get(target.dialect).is_driver_error(exc):
            raise
        conn.rollback()
        return server_message(exc, 200)


@dataclass(frozen=True)
class DropSet:
    """What this catalog can do without on one dialect: the indexes no shape needs and no
    constraint binds, chosen so that none is dropped with the index that takes over for it (nor a
    foreign key left without an index), then hidden all at once with every shape reading their
    tables measured again: ``verified`` when no shape needs any of them together; ``problems``
    otherwise. ``kept``: candidates left out, and why."""

    indexes: tuple[tuple[str, str], ...]
    kept: tuple[tuple[str, str, str], ...]
    size_bytes: int
    verified: bool
    problems: tuple[str, ...] = ()
    shapes_measured: int = 0


def _takers(e: IndexEntry) -> set[str]:
    """The indexes of its table that read it when ``e`` was hidden."""
    return {i for x in e.read_by for i in x.by}


def drop_set(
    target: Target,
    found: TargetMap,
    shapes: dict[str, Shape],
    measure: MeasureOptions,
    mapping: MapOptions,
    base: dict | None,
    say: Say,
    values: dict,
) -> DropSet | None:
    """Redundant before unused, the largest first: each such index no constraint binds joins the set unless
    it takes over for one already in it, one already in it takes over for it, or it is the last
    index of a foreign key; then the set is verified whole (:func:`dbbench.advise.trial.hidden_all`)."""
    candidates = sorted(
        (e for e in found.indexes if e.verdict in ("unused", "redundant") and not e.bound),
        # a redundant index before an unused one: the index that takes over for it may be unused
        # only because the plans read the redundant one (a prefix of it); then the largest first
        key=lambda e: (e.verdict != "redundant", -(e.size_bytes or 0), e.table, e.index),
    )
    if not candidates:
        return None
    chosen: list[IndexEntry] = []
    kept: list[tuple[str, str, str]] = []
    for e in candidates:
        mine = {(x.table, x.index) for x in chosen}
        over = [x for x in chosen if x.table == e.table and (e.index in _takers(x) or x.index in _takers(e))]
        if over:
            kept.append((e.table, e.index, f"it and {over[0].index} take over for each other: one stays"))
            continue
        if e.shares is not None and all((e.table, other) in mine for other in e.shares[1]):
            kept.append((e.table, e.index, f"the last index of foreign key {e.shares[0]}"))
            continue
        chosen.append(e)
    pairs = [(e.table, e.index) for e in chosen]
    tables = {t for t, _ in pairs}
    readers = [p for p in found.profiles if p.tables() & tables]
    say(f"{target.dialect}: {len(pairs)} index(es) hidden together: {len(readers)} shapes again")
    problems: list[str] = []
    with trial.hidden_all(target, measure.namespace, pairs) as conn:
        probes.assume_values(conn, values)
        for before in readers:
            after = _again(target, conn, shapes[before.shape], measure, base)
            if isinstance(after, str):
                problems.append(f"{before.shape}: fails without them: {after}")
                continue
            reasons = [r for t, i in pairs for r in effect(before, after, t, i, mapping.thresholds).reasons]
            problems += [f"{before.shape}: {r}" for r in dict.fromkeys(reasons)]
    return DropSet(
        tuple(pairs),
        tuple(kept),
        sum(e.size_bytes or 0 for e in chosen),
        not problems,
        tuple(problems),
        len(readers),
    )


def reverse(found: TargetMap) -> list[ShapeNeeds]:
    """Each shape's indexes: those it needs, and those it reads that another can replace."""
    out = []
    for p in found.profiles:
        needs, either = [], []
        for e in found.indexes:
            mine = next((x for x in e.effects if x.shape == p.shape), None)
            if mine is None:
                continue
            if mine.needs:
                needs.append(e.index)
            elif mine.read:
                either.append((e.index, mine.instead, mine.by))
        reads = sorted({i for _, i in p.reads()})
        out.append(ShapeNeeds(p.shape, p.dialect, tuple(needs), tuple(either), tuple(reads), p.ok, p.work))
    return out


@dataclass
class CatalogMap:
    targets: list[TargetMap] = field(default_factory=list)
    seconds: float = 0.0


def map_catalog(
    targets: list[Target],
    cat: Catalog,
    options: MeasureOptions,
    mapping: MapOptions = MapOptions(),
    *,
    only: list[str] | None = None,
    base: dict | None = None,
    say: Say | None = None,
) -> CatalogMap:
    """The map of ``cat`` (``only``: these shapes) on every target."""
    start = time.perf_counter()
    shapes = [s for s in cat.shapes if not only or s.name in only]
    with contextlib.ExitStack() as settling:  # what the trials' rolled-back writes leave, removed after
        for t in targets:
            settling.enter_context(writes.settled(t, shapes, options.namespace))
        found = CatalogMap([map_target(t, shapes, options, mapping, base=base, say=say) for t in targets])
    found.seconds = time.perf_counter() - start
    return found
