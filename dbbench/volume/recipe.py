"""The recipe of a fill (not a query plan: that is :mod:`dbbench.dialects.plan`): a spec made
runnable against a live schema, tables in foreign-key order, each column's generator built, cycles
broken, and rows made in chunks.

* **Order.** A table is made after the tables its foreign keys reference. A cycle (a self
  reference included) is broken where a foreign key references a key that is a pure function of
  the position (a sequence): it is made ahead of its table and loaded with the rows (the loaders
  check foreign keys after the load, :func:`dbbench.volume.load.run_streams`). Otherwise at a
  nullable foreign-key column: it is loaded NULL and filled afterwards (:attr:`Recipe.deferred`),
  once the table it references is loaded.
* **Parent keys.** A foreign key draws parent *positions* and needs the parent's key at them.
  A key made by an indexed generator (a sequence, a unique range) is computed again; any other
  is remembered while the parent is generated (:attr:`TableRecipe.record`: one value per parent
  row, the only memory that grows with the row count). A table the spec does not fill keeps the
  rows its setup SQL loaded, and its keys are read from the server.
* **Slices.** A slice gives an exact number of rows other values (``100 of 10,000 pending``);
  its rows are spread evenly over the table, at positions computed from the counts alone.
* **Determinism.** Every column (and each slice's, and each column's NULLs) draws from its own
  ``random.Random`` seeded from the spec's seed and its name, in row order: the same spec,
  scale and faker version give the same rows whatever the chunk size, on every server.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from dbbench.volume import limits
from dbbench.volume.generators import (
    GENERATORS,
    Context,
    Gen,
    GeneratorError,
    ParentKey,
    Rows,
    _draw_pool,
    _kind_of,
)
from dbbench.volume.schema import Column, Table
from dbbench.volume.spec import ColumnSpec, Spec, SpecError, TableSpec
from verdict.files import excerpt

Existing = Callable[[str, str], list[Any]]  # (table, column) -> the values it holds, sorted


@dataclass
class ColumnRecipe:
    name: str
    gen: Gen
    null: float = 0.0
    null_rng: random.Random | None = None

    @property
    def pure(self) -> bool:
        """Values a pure function of the position: computed again where another table needs them."""
        return self.gen.indexed and not self.null

    def values(self, rows: Rows, get: Callable[[str], list[Any]]) -> list[Any]:
        vals = self.gen.make(rows, get)
        if self.null and self.null_rng is not None:
            rnd, p = self.null_rng.random, self.null
            vals = [None if rnd() < p else v for v in vals]
        return vals


@dataclass
class SliceRecipe:
    name: str
    rows: int
    columns: dict[str, ColumnRecipe]


@dataclass
class TableRecipe:
    name: str
    rows: int
    columns: dict[str, ColumnRecipe] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)  # generation order: what a column reads first
    slices: list[SliceRecipe] = field(default_factory=list)
    deferred: list[str] = field(default_factory=list)  # loaded NULL, filled after the load
    record: set[str] = field(default_factory=set)  # kept while generating: other tables need them

    @property
    def load(self) -> list[str]:
        """The columns of the bulk load, in the spec's order."""
        return [c for c in self.columns if c not in self.deferred]

    def _slice_rows(self, a: int, b: int) -> list[tuple[SliceRecipe, list[int], list[int]]]:
        """Per slice: its own positions and the chunk offsets of its rows in [a, b)."""
        total = sum(s.rows for s in self.slices)
        if not total:
            return []
        n = self.rows
        out: list[tuple[SliceRecipe, list[int], list[int]]] = []
        first, last = (a * total) // n, (b * total) // n  # slice ordinals of the rows in [a, b)
        start = 0
        for s in self.slices:
            lo, hi = max(first, start), min(last, start + s.rows)
            ordinals = range(lo, hi)
            out.append(
                (s, [r - start for r in ordinals], [-(-(r + 1) * n // total) - 1 - a for r in ordinals])
            )
            start += s.rows
        return out

    def chunk(self, a: int, b: int) -> dict[str, list[Any]]:
        """The values of rows [a, b), by column (deferred columns left out)."""
        rows = range(a, b)
        vals: dict[str, list[Any]] = {}
        parts = self._slice_rows(a, b)
        for name in self.order:
            vals[name] = self.columns[name].values(rows, vals.__getitem__)
            for s, local, offsets in parts:
                if name in s.columns and local:
                    sub = s.columns[name].values(local, _at(vals, offsets))
                    col = vals[name]
                    for i, v in zip(offsets, sub):
                        col[i] = v
        return vals


def _at(vals: dict[str, list[Any]], offsets: list[int]) -> Callable[[str], list[Any]]:
    """Another column's values at ``offsets`` of the chunk (a slice's rows)."""
    return lambda c: [vals[c][i] for i in offsets]


@dataclass
class Deferred:
    """A foreign-key column of a cycle: filled by key after every table is loaded."""

    table: TableRecipe
    column: str
    gen: ColumnRecipe
    keys: list[tuple[str, ParentKey]]  # the table's primary key columns


@dataclass
class Recipe:
    spec: Spec
    scale: int
    tables: list[TableRecipe]  # in load order
    deferred: list[Deferred]
    recorded: dict[tuple[str, str], list[Any]]
    kinds: dict[tuple[str, str], str]  # (table, column) -> value kind
    early: list[str] = field(default_factory=list)  # tables referencing rows loaded after them
    fed: list[str] = field(
        default_factory=list
    )  # tables out of the spec that its tables' insert triggers write

    @property
    def emptied(self) -> list[str]:
        """The tables a fill empties first: the spec's, and those their insert triggers fill."""
        return [t.name for t in self.tables] + self.fed

    @property
    def rows(self) -> int:
        return sum(t.rows for t in self.tables)

    def chunks(self, table: TableRecipe, size: int) -> Iterator[dict[str, list[Any]]]:
        """The table's rows in chunks of ``size``, remembering what other tables need."""
        for a in range(0, table.rows, size):
            vals = table.chunk(a, min(a + size, table.rows))
            for c in table.record:
                self.recorded[(table.name, c)].extend(vals[c])
            yield vals

    def deferred_chunks(self, d: Deferred, size: int) -> Iterator[dict[str, list[Any]]]:
        """(key columns…, the column) of every row whose deferred value is not NULL."""
        for a in range(0, d.table.rows, size):
            rows = range(a, min(a + size, d.table.rows))
            keys = {name: key.at(rows) for name, key in d.keys}
            value = d.gen.values(rows, lambda c: [])
            keep = [i for i, v in enumerate(value) if v is not None]
            out = {name: [v[i] for i in keep] for name, v in keys.items()}
            out[d.column] = [value[i] for i in keep]
            yield out


# -- building the recipe -------------------------------------------------------------------------------
def _rng(spec: Spec, *parts: str) -> random.Random:
    return random.Random("/".join([str(spec.seed), *parts]))


def _seed(spec: Spec, *parts: str) -> int:
    return int.from_bytes(hashlib.sha256("/".join([str(spec.seed), *parts]).encode()).digest()[:8], "big")


def _ref(spec_col: ColumnSpec) -> tuple[str, str] | None:
    if spec_col.gen != "fk":
        return None
    table, _, column = str(spec_col.params.get("ref", "")).partition(".")
    return table, column


class _Builder:
    def __init__(
        self, spec: Spec, schema: dict[str, Table], scale: int, existing: Existing, live: bool = True
    ):
        self.spec, self.schema, self.scale, self.existing = spec, schema, scale, existing
        self.live = live  # False: checked without a server (the schema is the spec's own)
        self.failed: set[str] = set()  # tables whose recipe failed (their problem is reported)
        self.siblings: dict[str, Callable[[str], Gen]] = {}  # per table being made: its columns by name
        self.making_ahead: set[tuple[str, str]] = set()
        self.problems: list[str] = []
        self.recipes: dict[str, TableRecipe] = {}
        self.recorded: dict[tuple[str, str], list[Any]] = {}
        self.kinds: dict[tuple[str, str], str] = {}
        self.early: set[str] = set()  # tables with values made ahead of the tables they reference

    def fail(self, where: str, what: str) -> None:
        self.problems.append(f"{self.spec.path}: {where}: {what}")

    def number(self, e) -> int:
        try:
            return e.value(self.scale, self.spec.numbers())
        except ValueError as exc:
            raise GeneratorError(str(exc)) from None

    def rows(self, e, what: str = "rows") -> int:
        """A row count at the run's scale: not negative, at most :data:`limits.MAX_ROWS`."""
        try:
            n = self.number(e)
        except GeneratorError as exc:
            raise GeneratorError(f"{what}: {exc}") from None
        said = f"{n:,} is" if not e.names else f"{excerpt(repr(e.text))} is {n:,} at :scale {self.scale:,}:"
        if n < 0:
            raise GeneratorError(f"{what}: {said} below 0")
        if n > limits.MAX_ROWS:
            raise GeneratorError(f"{what}: {said} above the limit of {limits.MAX_ROWS:,} rows per table")
        return n

    # -- schema checks ---------------------------------------------------------------------------
    def check_schema(self) -> None:
        for name, t in self.spec.tables.items():
            live = self.schema.get(name)
            if live is None:
                self.fail(
                    f"tables.{name}",
                    f"no table {name!r} in the namespace (tables: {', '.join(sorted(self.schema))})",
                )
                continue
            for c, col in t.columns.items():
                if c not in live.columns:
                    self.fail(col.where, f"no column {c!r} in table {name!r}")
                elif live.columns[c].generated:
                    self.fail(col.where, "a generated column: the server computes it, leave it out")

    # -- order and cycles --------------------------------------------------------------------------
    def order(self) -> tuple[list[str], set[tuple[str, str]]]:
        """Tables in load order, and the (table, column) foreign keys deferred to break cycles.

        A cycle is broken first where a foreign key references a key computed from the position
        alone (a sequence, :meth:`ahead`): its values are made before the referenced table's, and
        loaded with the rows, since the loaders check foreign keys after the load. Otherwise a
        nullable foreign key is loaded NULL and filled afterwards (deferred)."""
        edges: dict[str, dict[str, tuple[str, str]]] = {}  # table -> {column: referenced (table, column)}
        for name, t in self.spec.tables.items():
            refs = [(c, _ref(col)) for c, col in t.columns.items()]
            refs += [(c, _ref(col)) for s in t.slices for c, col in s.columns.items()]
            edges[name] = {c: r for c, r in refs if r is not None and r[0] in self.spec.tables}
        deferred: set[tuple[str, str]] = set()
        early: set[tuple[str, str]] = set()  # made ahead of the referenced table
        done: list[str] = []
        left = list(self.spec.tables)
        while left:
            skip = deferred | early
            ready = [t for t in left if all(r[0] in done for c, r in edges[t].items() if (t, c) not in skip)]
            if ready:
                done += ready
                left = [t for t in left if t not in ready]
                continue
            ahead = [
                (t, c)
                for t in left
                for c, r in edges[t].items()
                if r[0] in left and (t, c) not in skip and self.ahead(*r) is not None
            ]
            if ahead:
                early.add(ahead[0])
                self.early.add(ahead[0][0])
                continue
            breakable = [
                (t, c)
                for t in left
                for c, r in edges[t].items()
                if r[0] in left and (t, c) not in skip and self._nullable(t, c) and self._deferrable(t, c)
            ]
            if not breakable:
                known = len(self.problems)
                for name in left:  # a key that failed to be made ahead says why
                    for r in {r for r in edges[name].values() if r[0] in left}:
                        self._key_problem(*r)
                if len(self.problems) > known:  # the cause, not the cycle it leaves unbroken
                    return done + left, deferred
                cycle = ", ".join(sorted(left))
                self.fail(
                    "tables",
                    f"foreign keys form a cycle among {excerpt(cycle)} and none of its columns is "
                    "nullable, nor references a key made from the row's position (a sequence, a "
                    "unique uniform range): make one nullable",
                )
                return done + left, deferred
            deferred.add(breakable[0])
        return done, deferred

    def _key_problem(self, table: str, column: str) -> None:
        """Report the problem of a referenced key's own generator, if it has one."""
        col = self.spec.tables[table].columns.get(column)
        if col is None:
            return
        try:
            self.column(table, col, self.rows(self.spec.tables[table].rows), _alone)
        except _Failed:
            pass
        except GeneratorError as exc:
            if "reads column" not in str(exc):
                self.fail(col.where, str(exc))

    def _nullable(self, table: str, column: str) -> bool:
        live = self.schema.get(table)
        return live is not None and column in live.columns and live.columns[column].nullable

    def _deferrable(self, table: str, column: str) -> bool:
        """A plain foreign key of the table: no slice sets it, no other column reads it."""
        t = self.spec.tables[table]
        if any(column in s.columns for s in t.slices):
            return False
        reads = [p for col in t.columns.values() for k, p in col.params.items() if k in ("column", "follows")]
        return column not in reads

    # -- generators --------------------------------------------------------------------------------
    def key(self, ref: str) -> ParentKey:
        table, _, column = ref.partition(".")
        shown = excerpt(repr(ref))
        if not column:
            raise GeneratorError(f"ref {shown}: write table.column")
        if table in self.spec.tables:
            recipe = self.recipes.get(table)
            if column not in self.spec.tables[table].columns:
                raise GeneratorError(
                    f"ref {shown}: column {excerpt(column, 60)!r} of {excerpt(table, 60)!r} is not in "
                    "its [columns] (give it a generator)"
                )
            if table in self.failed:
                raise _Failed(table)
            if recipe is None:  # referenced ahead of its load: made ahead, or a deferred column
                early = self.ahead(table, column)
                if early is None:
                    raise _Failed(table)
                return early
            if column not in recipe.columns:  # a column of the table being made, listed later
                sibling = self.siblings.get(table)
                if sibling is None:
                    raise _Failed(table)
                sibling(column)  # made now, or why not (a column that reads itself, a failed one)
            cp = recipe.columns[column]
            kind = cp.gen.kind
            if cp.pure and not any(column in s.columns for s in recipe.slices):
                gen = cp.gen
                return ParentKey(recipe.rows, kind, lambda idx: gen.make(idx, lambda c: []))
            recipe.record.add(column)
            store = self.recorded.setdefault((table, column), [])
            return ParentKey(recipe.rows, kind, lambda idx: [store[i] for i in idx])
        if not self.live:  # a table the setup SQL fills: its rows are on the servers only
            return ParentKey(1, "text", lambda idx: [None] * len(idx))
        if table not in self.schema or column not in self.schema[table].columns:
            raise GeneratorError(f"ref {shown}: no such table and column in the namespace")
        values = self.existing(table, column)
        return ParentKey(len(values), _kind_of(values), lambda idx: [values[i] for i in idx])

    def ahead(self, table: str, column: str) -> ParentKey | None:
        """The key ``table.column`` before its table is planned, when its values are a pure function
        of the position (:attr:`ColumnRecipe.pure`, no slice sets it), else None."""
        t = self.spec.tables.get(table)
        col = t.columns.get(column) if t is not None else None
        if t is None or col is None or any(column in s.columns for s in t.slices):
            return None
        if (table, column) in self.making_ahead:  # a key that references itself
            return None
        self.making_ahead.add((table, column))
        try:
            rows = self.rows(t.rows)
            cp = self.column(table, col, rows, _alone)
        except GeneratorError:
            return None
        finally:
            self.making_ahead.discard((table, column))
        if not cp.pure:
            return None
        gen = cp.gen
        return ParentKey(rows, gen.kind, lambda idx: gen.make(idx, lambda c: []))

    def column(
        self, table: str, col: ColumnSpec, rows: int, siblings: Callable[[str], Gen], *scope: str
    ) -> ColumnRecipe:
        generator = GENERATORS[col.gen]
        live = self.schema[table].columns.get(col.name)
        distinct = self.number(col.distinct) if col.distinct is not None else None
        if distinct is not None and not 1 <= distinct <= limits.MAX_DISTINCT:
            raise GeneratorError(f"distinct: {distinct:,} is not between 1 and {limits.MAX_DISTINCT:,}")
        ctx = Context(
            table=table,
            column=col.name,
            rows=rows,
            rng=_rng(self.spec, table, *scope, col.name),
            seed=_seed(self.spec, table, *scope, col.name),
            locale=self.spec.locale,
            unique=col.unique,
            distinct=distinct if generator.pooled else None,
            skew=col.skew,
            max_length=live.max_length if live is not None else None,
            base=self.spec.path.parent,
            root=self.spec.folder,
            dry=not self.live,
            number=self.number,
            parent=self.key,
            sibling=siblings,
        )
        params = {k: v for k, v in col.params.items()}
        if distinct is not None and not generator.pooled:
            pool_ctx = Context(**{**ctx.__dict__, "rows": distinct, "unique": generator.unique})
            base = generator.build(pool_ctx, **params)
            if base.needs:
                raise GeneratorError("distinct: not for a generator that reads other columns")
            pool = list(dict.fromkeys(base.make(range(distinct), lambda c: [])))
            gen = Gen(base.kind, _draw_pool(ctx, pool, None, col.skew), values=pool)
        else:
            gen = generator.build(ctx, **params)
        if live is not None and live.enum is not None and gen.values is not None:
            _labels(gen, live)
        self.kinds[(table, col.name)] = gen.kind
        null_rng = _rng(self.spec, table, *scope, col.name, "null") if col.null else None
        return ColumnRecipe(col.name, gen, col.null, null_rng)

    def table(self, t: TableSpec, deferred: set[tuple[str, str]]) -> TableRecipe:
        try:
            rows = self.rows(t.rows)
        except GeneratorError:
            self.failed.add(t.name)
            raise
        recipe = TableRecipe(t.name, rows)
        self.recipes[t.name] = recipe
        building: list[str] = []  # the columns being built, each reading the next
        failed: set[str] = set()  # columns whose problem is reported

        def sibling(name: str) -> Gen:
            """The column ``name``'s generator, built first when another column reads it."""
            if name not in t.columns:
                raise GeneratorError(f"column {excerpt(repr(name))} is not in the table's [columns]")
            if (t.name, name) in deferred:
                raise GeneratorError(f"column {name!r} is a foreign key filled after the load: not readable")
            if name in failed:
                raise _Failed(t.name)
            if name not in recipe.columns:
                if name in building:  # reported at the column the loop starts from
                    loop = " -> ".join([*building[building.index(name) :], name])
                    raise _Cycle(f"columns read each other: {excerpt(loop, 200)}")
                building.append(name)
                try:
                    recipe.columns[name] = self.column(t.name, t.columns[name], rows, sibling)
                except _Cycle:
                    failed.add(name)
                    raise
                except GeneratorError as exc:
                    failed.add(name)
                    if len(building) == 1 or isinstance(exc, _Failed):
                        raise
                    self.fail(t.columns[name].where, str(exc))  # its own problem, where it is
                    raise _Failed(t.name) from None
                finally:
                    building.pop()
            return recipe.columns[name].gen

        self.siblings[t.name] = sibling

        for name, col in t.columns.items():
            if (t.name, name) in deferred:
                recipe.deferred.append(name)
                continue
            try:
                sibling(name)
            except _Failed:
                pass  # reported where it is (a referenced table, a column this one reads)
            except GeneratorError as exc:
                self.fail(col.where, str(exc))
        total = 0
        for k, s in enumerate(t.slices, start=1):
            srows = self.rows(s.rows, f"slices[{k}].rows")
            total += srows
            cols = {}
            for name, col in s.columns.items():
                try:
                    cols[name] = self.column(t.name, col, srows, sibling, f"slice{k}")
                except _Failed:
                    pass
                except GeneratorError as exc:
                    self.fail(col.where, str(exc))
            recipe.slices.append(SliceRecipe(s.name, srows, cols))
        if total > rows:
            self.fail(f"tables.{t.name}.slices", f"{total:,} slice rows of a table of {rows:,}")
        recipe.columns = {c: recipe.columns[c] for c in t.columns if c in recipe.columns}  # the spec's order
        recipe.order = _generation_order(recipe)
        return recipe

    def deferred_column(self, recipe: TableRecipe, name: str) -> Deferred | None:
        col = self.spec.tables[recipe.name].columns[name]
        pk = self.schema[recipe.name].primary
        if not self.live:  # the primary key is the live schema's: checked by the run
            try:
                self.column(recipe.name, col, recipe.rows, lambda c: recipe.columns[c].gen)
            except _Failed:
                pass
            except GeneratorError as exc:
                self.fail(col.where, str(exc))
            return None
        named = all(k in self.spec.tables[recipe.name].columns for k in pk)
        if pk and named and any(k not in recipe.columns for k in pk):
            return None  # a key column whose own generator failed: its problem is reported
        if not pk or any(k not in recipe.columns for k in pk):
            self.fail(
                col.where,
                "a foreign key of a cycle is filled afterwards by primary key: the table needs "
                "one, and its columns in [columns]",
            )
            return None
        try:
            gen = self.column(recipe.name, col, recipe.rows, lambda c: recipe.columns[c].gen)
            keys = [(k, self.key(f"{recipe.name}.{k}")) for k in pk]
        except _Failed:
            return None
        except GeneratorError as exc:
            self.fail(col.where, str(exc))
            return None
        return Deferred(recipe, name, gen, keys)


class _Cycle(GeneratorError):
    """Columns that read each other: reported at the column the loop starts from."""


class _Failed(GeneratorError):
    """A column that references a table whose recipe failed: that table's problem is reported, not
    this consequence of it."""

    def __init__(self, table: str):
        super().__init__(f"the referenced table {table!r} has a problem")


def _labels(gen: Gen, live: Column) -> None:
    """Every value a column draws from is a label of its enum (a value is named, never quoted:
    it may be a line of a file)."""
    labels = set(live.enum or ())
    for i, v in enumerate(gen.values or ()):
        if v is not None and str(v) not in labels:
            raise GeneratorError(
                f"{gen.value_name(i)} is not one of the enum column's labels "
                f"({excerpt(', '.join(live.enum or ()), 200)})"
            )


def _alone(name: str) -> Gen:
    """A key made ahead reads no other column."""
    raise GeneratorError(f"reads column {name!r}")


def _generation_order(recipe: TableRecipe) -> list[str]:
    """The columns in an order where each comes after the columns it reads (a slice's too); a
    cycle among them is a :class:`GeneratorError` naming it."""
    needs = {c: set(p.gen.needs) for c, p in recipe.columns.items()}
    for s in recipe.slices:
        for c, p in s.columns.items():
            needs.setdefault(c, set()).update(p.gen.needs)
    order: list[str] = []
    for c, read in needs.items():
        missing = sorted(n for n in read if n not in recipe.columns)
        if missing and c in recipe.columns:
            raise GeneratorError(f"column {c!r} reads {excerpt(repr(missing[0]))}, which it does not make")
    done: set[str] = set()
    while len(order) < len(recipe.columns):
        ready = [c for c in recipe.columns if c not in done and needs.get(c, set()) <= done]
        if not ready:
            stuck = [c for c in recipe.columns if c not in done]
            raise GeneratorError(f"columns read each other: {excerpt(', '.join(stuck), 200)}")
        order += ready
        done.update(ready)
    return order


def build(spec: Spec, schema: dict[str, Table], scale: int, existing: Existing) -> Recipe:
    """The recipe of ``spec`` against ``schema`` at ``scale``; every problem at once as a :class:`SpecError`."""
    return _build(_Builder(spec, schema, scale, existing))


def check(spec: Spec, scale: int) -> None:
    """Build the recipe of ``spec`` at ``scale`` without a server, as the run builds it (the same
    code): every problem the run's preparation would find that does not depend on the live
    schema (row counts and their limits, expressions, generators and their parameters, files,
    formats, faker providers, cycles among columns), at once, as a :class:`SpecError`.
    ``dbbench validate`` and every command that reads a catalog's spec call it before touching
    anything."""
    schema = {
        name: Table(name, {c: Column(c, "", True, None, None, None, False, False) for c in t.columns})
        for name, t in spec.tables.items()
    }
    _build(_Builder(spec, schema, scale, lambda table, column: [], live=False))


def _build(b: _Builder) -> Recipe:
    spec, scale = b.spec, b.scale
    if not 1 <= scale <= limits.MAX_SCALE:
        raise SpecError(f"{spec.path}: :scale {scale:,} is not between 1 and {limits.MAX_SCALE:,}")
    b.check_schema()
    if b.problems:
        raise SpecError(b.problems)
    for k, check in enumerate(spec.verify, start=1):  # evaluated after the fill: checked before it
        try:
            b.number(check.expect)
        except GeneratorError as exc:
            b.fail(f"verify[{k}].expect", str(exc))
    names, deferred = b.order()
    if b.problems:
        raise SpecError(b.problems)
    tables = []
    for name in names:
        try:
            tables.append(b.table(spec.tables[name], deferred))
        except _Failed:
            b.failed.add(name)
        except GeneratorError as exc:
            b.failed.add(name)
            b.fail(f"tables.{excerpt(name, 60)}", str(exc))
    later = []
    for recipe in tables:
        for name in recipe.deferred:
            d = b.deferred_column(recipe, name)
            if d is not None:
                later.append(d)
    if b.problems:
        raise SpecError(list(dict.fromkeys(b.problems)))
    return Recipe(spec, b.scale, tables, later, b.recorded, b.kinds, sorted(b.early), _fed(spec, b.schema))


def _fed(spec: Spec, schema: dict[str, Table]) -> list[str]:
    """The tables out of ``spec`` that the insert triggers of its tables write, directly or
    through the triggers of such a table (their rows come from the trigger, so a fill empties them
    first, as it empties the spec's)."""
    fed: list[str] = []
    writers = [t for t in spec.tables if t in schema]
    while writers:
        table = writers.pop()
        for written in schema[table].writes:
            if written not in spec.tables and written not in fed and written in schema:
                fed.append(written)
                writers.append(written)
    return sorted(fed)
