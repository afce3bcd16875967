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

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from dbbench import dialects
from dbbench.access.targets import Target
from dbbench.advise import trial
from dbbench.advise.trial import WriteCost
from dbbench.catalog.entries import Catalog, Shape
from dbbench.document.diff import Thresholds
from dbbench.errors import DbbenchError, server_message
from dbbench.indexmap.profile import Effect, Profile, effect, profile
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
    either: tuple[tuple[str, tuple[str, ...]], ...]
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
    seconds: float = 0.0


def constraint_binding(
    keys: list[tuple[str, str, str, tuple[str, ...], str]], schema_keys: list[tuple]
) -> dict[tuple[str, str], str]:
    """(table, index) -> the constraint that needs it: its table's primary key, a unique key, or
    the index of a foreign key (whose columns lead its key parts, in any order)."""
    bound: dict[tuple[str, str], str] = {}
    for table, index, kind, _, _ in keys:
        if kind == "primary":
            bound[(table, index)] = "primary key"
        elif kind == "unique":
            bound[(table, index)] = "unique"
    for table, name, kind, columns, *_ in schema_keys:
        if kind != "foreign" or not columns:
            continue
        for t, index, _, parts, _ in keys:
            if t == table and set(parts[: len(columns)]) == set(columns):
                said = f"foreign key {name}"
                bound[(t, index)] = f"{bound[(t, index)]}; {said}" if (t, index) in bound else said
    return bound


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
        touched = sorted(set().union(*(p.tables() for p in out.profiles)) if out.profiles else set())
        keys = [k for k in d.index_keys(conn, ns) if k[0] in touched]
        bound = constraint_binding(keys, d.schema_keys(conn, ns))
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
        )
        out.indexes.append(_hide(target, entry, readers, by_name, measure, mapping, base))
    out.shapes = reverse(out)
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
) -> IndexEntry:
    """``entry`` with what hiding it did to each of ``readers`` and its write cost."""
    start = time.perf_counter()
    d = dialects.get(target.dialect)
    ns, table, index = measure.namespace, entry.table, entry.index
    columns = [p for p in entry.parts if p.isidentifier()]
    write_with = write_without = None
    note = ""
    if mapping.write_rows > 0 and entry.kind == "primary":
        note = "not measured: a primary key (no table goes without one)"
    elif mapping.write_rows > 0 and columns:
        # the same batch on a copy of the table with every index, then on one without this one
        write = {"rows": mapping.write_rows, "repeat": mapping.write_repeat}
        write_with = trial.write_cost(target, ns, table, columns, **write, without="")
        write_without = trial.write_cost(target, ns, table, columns, **write, without=index)
    elif mapping.write_rows > 0:
        note = "not measured: the index has no column a batch could update (an expression)"
    effects: list[Effect] = []
    try:
        with trial.hidden(target, ns, table, index) as conn:
            went = trial.hidden_with(conn)
            for before in readers:
                try:
                    after = profile(target, conn, shapes[before.shape], measure, base)
                except Exception as exc:
                    if not d.is_driver_error(exc):
                        raise
                    conn.rollback()
                    # an index hint naming it (MySQL's FORCE INDEX): the statement fails without it
                    why = server_message(exc, 200)
                    effects.append(
                        Effect(
                            before.shape, True, (f"fails without it: {why}",), (before.work, None), (), why
                        )
                    )
                    continue
                effects.append(effect(before, after, table, index, mapping.thresholds))
    except DbbenchError as exc:
        # the server would not hide it (MySQL: a primary key) or failed to: the map goes on
        if isinstance(exc, trial.TrialFailed) or "cannot make" in str(exc) or "invisible already" in str(exc):
            read = tuple(p.shape for p in readers if (table, index) in p.reads())
            return replace(
                entry,
                not_hidden=str(exc),
                read_unhidden=read,
                write_with=write_with,
                write_without=write_without,
                write_note=note,
                seconds=time.perf_counter() - start,
            )
        raise
    return replace(
        entry,
        effects=tuple(effects),
        hidden_with=went,
        write_with=write_with,
        write_without=write_without,
        write_note=note,
        seconds=time.perf_counter() - start,
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
                either.append((e.index, mine.instead))
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
    found = CatalogMap([map_target(t, shapes, options, mapping, base=base, say=say) for t in targets])
    found.seconds = time.perf_counter() - start
    return found
