"""``dbbench fill``: a data spec generated once and streamed into every target's namespace.

The rows are made once, in chunks, on the calling thread, and each chunk goes to one loader thread
per server through a short queue (memory stays flat: a few chunks in flight), which streams it into
``COPY … FROM STDIN`` / ``LOAD DATA LOCAL`` as it comes -- the servers' own bulk loads, as
``dbbench seed`` uses them. Both servers get the same rows.

Per target, under the same ownership rules as ``dbbench seed --catalog``:

1. the namespace must be dbbench's, built from a catalog's setup SQL (the tables exist); it is
   marked ``loading`` first, ``complete`` at the end;
2. the spec's tables are emptied and loaded in foreign-key order, logged in as the namespace's own
   role (:mod:`dbbench.access.isolation`: the team's triggers run with its privileges, not
   dbbench's); on PostgreSQL in one transaction;
3. foreign keys deferred to break a cycle are filled by primary key from a temporary table;
4. every table is analyzed, counted and fingerprinted (the content fingerprint of ``dbbench
   seed``), the spec's ``[[verify]]`` checks run, and the spec, seed, scale and faker version are
   written into the namespace's marker next to the fingerprints.
"""

from __future__ import annotations

import functools
import queue
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

import dbbench.volume.spec
from dbbench import defaults, dialects
from dbbench.access import isolation
from dbbench.access.targets import Target
from dbbench.dataset.seed import CheckResult, Verified  # as our own dataset's
from dbbench.errors import DbbenchError, NotOurs
from dbbench.setup.fingerprint import fingerprint, fingerprints_agree
from dbbench.volume import recipe, schema, text
from dbbench.volume.fanout import Fanout
from dbbench.volume.generators import faker_version
from dbbench.volume.recipe import Recipe
from dbbench.volume.schema import Table
from dbbench.volume.spec import Spec
from verdict.files import excerpt

Progress = Callable[[str, int, int], None]  # (table, rows made, rows of the table)
TOTAL = ""  # the table name of the one progress call before the first: (TOTAL, 0, rows of the fill)
CHUNK_ROWS = 20_000
QUEUE_CHUNKS = 4  # chunks in flight per server
STAGE = "dbbench_fill_stage"  # the temporary table a deferred column is filled from
NATIVE_BINARY = frozenset({"mysql"})  # dialects that load a native value's bytes (geometry, BIT)


@dataclass
class FillResult(Verified):
    dialect: str
    server_version: str
    namespace: str
    spec: str
    sha256: str
    seed: int
    scale: int
    faker: str
    isolation: str
    loaded: dict[str, int] = field(default_factory=dict)  # rows generated per spec table
    rows: dict[str, int] = field(default_factory=dict)  # rows counted per table of the namespace
    fingerprints: dict[str, str] = field(default_factory=dict)
    checks: list[CheckResult] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)


def agree(results: list[FillResult]) -> dict[str, bool]:
    """Per table of any result (sorted): whether every result holds the same fingerprint (as for
    setup SQL: :func:`dbbench.setup.fingerprint.fingerprints_agree`)."""
    return fingerprints_agree(results, by_name=True)


def problems(results: list[FillResult]) -> list[str]:
    """What does not verify: a check of the spec, a fingerprint differing between dialects."""
    bad = [
        f"{r.dialect}: {c.name} = {c.actual}, expected {c.expected}"
        for r in results
        for c in r.checks
        if not c.ok
    ]
    return bad + [
        f"fingerprint of {t} differs between dialects" for t, ok in agree(results).items() if not ok
    ]


class FillFailed(DbbenchError):
    """A check of the spec does not hold after the fill (exit code 1)."""

    exit_code = 1


# -- before loading: the namespaces, their schemas, the recipe ----------------------------------------
def _inspect(target: Target, namespace: str) -> dict[str, Table]:
    d = dialects.get(target.dialect)
    with target.all_or_nothing() as conn:
        state = d.namespace_state(conn, namespace)
        where = f"{target.label} {d.NAMESPACE_KIND} {namespace!r}"
        if state == "absent":
            raise DbbenchError(
                f"{where} does not exist: create its tables first with "
                f"`dbbench seed --catalog DIR --namespace {namespace}`"
            )
        if state == "foreign":
            raise NotOurs(
                f"{where} exists and is not dbbench's (no dbbench_meta marker); nothing was changed"
            )
        dataset = d.read_meta(conn, namespace).get("dataset", "")
        if not dataset.startswith("setup:"):
            raise DbbenchError(
                f"{where} holds the dataset {dataset!r}, not a catalog's own schema: fill a namespace "
                "built by `dbbench seed --catalog DIR`"
            )
        found = schema.read(conn, target.dialect, namespace)
        conn.rollback()
    return found


def _merge(found: list[dict[str, Table]]) -> dict[str, Table]:
    """The first target's schema, each text column's limit the smallest of all targets' (so every
    server takes the same values), nullable only where it is on every target."""
    merged = found[0]
    for other in found[1:]:
        for name, table in merged.items():
            for c, col in list(table.columns.items()):
                theirs = other.get(name, Table(name)).columns.get(c)
                if theirs is None:
                    continue
                limits = [x for x in (col.max_length, theirs.max_length) if x is not None]
                table.columns[c] = replace(
                    col,
                    nullable=col.nullable and theirs.nullable,
                    max_length=min(limits) if limits else None,
                    generated=col.generated or theirs.generated,
                )
    return merged


def _existing(targets: list[Target], namespace: str) -> recipe.Existing:
    """Reads the distinct values of a column of a table the spec does not fill, on every target
    (they must agree: the setup SQL loaded the same rows), sorted."""

    def read(table: str, column: str) -> list[Any]:
        seen: list[list[Any]] = []
        for t in targets:
            d = dialects.get(t.dialect)
            with t.all_or_nothing() as conn, conn.cursor() as cur:
                col = d.quote(column)
                cur.execute(
                    f"{defaults.QUERY_TAG}SELECT DISTINCT {col} FROM {d.quote(namespace)}.{d.quote(table)} "
                    f"WHERE {col} IS NOT NULL"
                )
                seen.append(sorted(r[0] for r in cur.fetchall()))
                conn.rollback()
        if any(s != seen[0] for s in seen[1:]):
            raise DbbenchError(
                f"{table}.{column} holds different values on the servers: load the same rows into both"
            )
        return seen[0]

    return read


def prepare(targets: list[Target], namespace: str, spec: Spec, scale: int) -> Recipe:
    """The recipe of ``spec`` against the targets' namespaces (checked, nothing changed)."""
    if not defaults.valid_namespace(namespace):
        raise DbbenchError(f"namespace {namespace!r}: {defaults.NAMESPACE_RULE}")
    if not targets:
        raise DbbenchError("no target to fill")
    found = [_inspect(t, namespace) for t in targets]
    return recipe.build(spec, _merge(found), scale, _existing(targets, namespace))


# -- loading ---------------------------------------------------------------------------------------
class _Aborted(Exception):
    """Another part of the fill failed: stop this one."""


@dataclass
class _Stream:
    """One bulk load: into ``table``'s ``columns``, before/after SQL around it."""

    table: str
    columns: list[str]
    kinds: list[str]
    before: list[str]
    after: list[str]
    chunks: Callable[[], Iterator[dict[str, list[Any]]]]
    label: str
    rows: int


def _streams(p: Recipe, d_name: str, chunk_rows: int) -> list[_Stream]:
    d = dialects.get(d_name)
    out = []
    for t in p.tables:
        cols = t.load
        out.append(
            _Stream(
                d.quote(t.name),
                cols,
                [p.kinds[(t.name, c)] for c in cols],
                [],
                [],
                functools.partial(p.chunks, t, chunk_rows),
                t.name,
                t.rows,
            )
        )
    for k, x in enumerate(p.deferred):
        stage = f"{STAGE}_{k}"
        keys = [name for name, _ in x.keys]
        cols = [*keys, x.column]
        quoted = ", ".join(d.quote(c) for c in cols)
        out.append(
            _Stream(
                stage,
                cols,
                [key.kind for _, key in x.keys] + [x.gen.gen.kind],
                [
                    f"CREATE TEMPORARY TABLE {stage} AS SELECT {quoted} FROM {d.quote(x.table.name)} LIMIT 0",
                    f"ALTER TABLE {stage} ADD PRIMARY KEY ({', '.join(d.quote(k) for k in keys)})",
                ],
                [
                    d.update_from(
                        d.quote(x.table.name), stage, [d.quote(k) for k in keys], [d.quote(x.column)]
                    )
                ],
                functools.partial(p.deferred_chunks, x, chunk_rows),
                f"{x.table.name}.{x.column}",
                x.table.rows,
            )
        )
    return out


def _loader(
    target: Target,
    namespace: str,
    streams: list[_Stream],
    tables: list[str],
    early: list[str],
    emptied: list[str],
    inbox: Inbox,
    isolate: bool,
    stop: threading.Event,
    seconds: dict[str, float],
) -> None:
    """One server's side: empty ``emptied`` (the spec's tables and those their insert triggers
    fill), set the spec tables' foreign keys and plain indexes aside, then each stream as its chunks
    arrive (into a table emptied here, PostgreSQL writes the rows frozen); the indexes built and the
    foreign keys checked over all their rows at once (``defer_constraints``); commit."""
    d = dialects.get(target.dialect)
    binary_kinds = {"bytes", "native"} if target.dialect in NATIVE_BINARY else {"bytes"}

    def arriving() -> Iterator[bytes]:
        while True:
            try:
                item = inbox.get(timeout=0.2)
            except queue.Empty:
                if stop.is_set():
                    raise _Aborted() from None
                continue
            if item is None:
                return
            yield item

    with isolation.sandbox(target, namespace, isolate=isolate) as inner, inner.loader() as conn:
        start = time.perf_counter()
        d.use(conn, namespace)
        fresh = [d.quote(t) for t in emptied]  # emptied in this transaction: COPY … FREEZE on PostgreSQL
        d.empty_tables(conn, fresh)
        restore = d.defer_constraints(conn, tables, early)
        for s in streams:
            d.execute(conn, s.before)
            binary = frozenset(d.quote(c) for c, k in zip(s.columns, s.kinds) if k in binary_kinds)
            try:
                columns = [d.quote(c) for c in s.columns]
                d.stream_load(conn, s.table, columns, binary, arriving(), emptied=s.table in fresh)
            except RuntimeError as exc:  # MySQL's LOAD DATA warned: a value the server would change
                raise DbbenchError(f"{target.label}: {excerpt(str(exc), 400)}") from None
            d.execute(conn, s.after)
        restore(conn)
        d.commit(conn)
        seconds["load"] = time.perf_counter() - start


class Inbox(Protocol):
    """Where a loader takes its chunks from (a :class:`queue.Queue`, a :class:`Fanout` reader)."""

    def get(self, block: bool = True, timeout: float | None = None) -> Any: ...


Produce = Callable[[Sequence[Inbox], threading.Event], None]  # feeds the loaders' inboxes


def encoded(
    p: Recipe, dialect_names: Sequence[str], chunk_rows: int, progress: Progress
) -> Iterator[list[bytes] | None]:
    """Every stream's chunks, made once, as the bulk-load text of each dialect (encoded apart only
    where a binary column makes the texts differ); None ends a stream. ``progress`` hears of the
    fill's whole row count first (:data:`TOTAL`), then of each stream's rows as they are made."""
    streams = _streams(p, dialect_names[0], chunk_rows)
    progress(TOTAL, 0, sum(s.rows for s in streams))
    for first in streams:
        encoders = [
            text.encoder(first.kinds, dialects.get(d).encode_bytes, d in NATIVE_BINARY) for d in dialect_names
        ]
        shared = "bytes" not in first.kinds and "native" not in first.kinds
        done = 0
        progress(first.label, 0, first.rows)
        for vals in first.chunks():
            columns = [vals[c] for c in first.columns]
            yield [encoders[0](columns)] * len(encoders) if shared else [e(columns) for e in encoders]
            done += len(columns[0]) if columns else 0
            progress(first.label, done, first.rows)
        yield None


def _generate(p: Recipe, targets: list[Target], chunk_rows: int, progress: Progress, fan: Fanout) -> Produce:
    """Hand each chunk of :func:`encoded` to every target's loader through ``fan`` as it is made."""

    def produce(inboxes: Sequence[Inbox], stop: threading.Event) -> None:
        for data in encoded(p, [t.dialect for t in targets], chunk_rows, progress):
            while not fan.put([None] * len(targets) if data is None else data, timeout=0.2):
                if stop.is_set():
                    raise _Aborted()

    return produce


def run_streams(
    p: Recipe,
    targets: list[Target],
    namespace: str,
    isolate: bool,
    chunk_rows: int,
    produce: Produce,
    inboxes: Sequence[Inbox] | None = None,
) -> list[dict[str, float]]:
    """Load every stream of ``p`` on every target at once, the chunks coming from ``produce`` into
    ``inboxes`` (one per target; default: a short queue each); the first error (of any side) is
    raised. Per target: the seconds of ``generate+load`` (from its first statement to its commit)."""
    stop = threading.Event()
    if inboxes is None:
        inboxes = [queue.Queue(QUEUE_CHUNKS) for _ in targets]
    seconds: list[dict[str, float]] = [{} for _ in targets]
    errors: list[BaseException] = []
    spec_tables = [t.name for t in p.tables]

    def side(i: int) -> None:
        try:
            _loader(
                targets[i],
                namespace,
                _streams(p, targets[i].dialect, chunk_rows),
                spec_tables,
                p.early,
                p.emptied,
                inboxes[i],
                isolate,
                stop,
                seconds[i],
            )
        except BaseException as exc:  # reported by the caller's thread
            if not isinstance(exc, _Aborted):
                errors.append(exc)
            stop.set()

    threads = [threading.Thread(target=side, args=(i,), daemon=True) for i in range(len(targets))]
    for th in threads:
        th.start()
    start = time.perf_counter()
    try:
        produce(inboxes, stop)
    except _Aborted:
        pass
    except BaseException:
        stop.set()
        raise
    finally:
        for th in threads:
            th.join()
    if errors:
        raise errors[0]
    wall = time.perf_counter() - start
    return [{"generate+load": s.get("load", wall)} for s in seconds]


# -- after loading ---------------------------------------------------------------------------------
def _finish(target: Target, namespace: str, p: Recipe, isolate: bool, result: FillResult) -> None:
    """Analyze, run the spec's checks (as the namespace's role), fingerprint every table, mark complete."""
    from dbbench.catalog.params import to_pyformat

    d = dialects.get(target.dialect)
    clock = time.perf_counter
    start = clock()
    params: dict[str, Any] = {**p.spec.params, "scale": p.scale}
    with isolation.sandbox(target, namespace, isolate=isolate) as inner, inner.all_or_nothing() as conn:
        d.use(conn, namespace)
        d.analyze(conn, [d.quote(t) for t in p.emptied])
        d.commit(conn)
        result.seconds["analyze"] = clock() - start
        start = clock()
        with conn.cursor() as cur:
            for check in p.spec.verify:
                sql = p.spec.check_sql(check, target.dialect)
                if sql is None:
                    continue
                cur.execute(to_pyformat(sql), params)
                expected = check.expect.value(p.scale, p.spec.numbers())
                result.checks.append(CheckResult(check.name, expected, int(cur.fetchone()[0])))
        conn.rollback()
        result.seconds["verify"] = clock() - start
    start = clock()
    with target.all_or_nothing() as conn:
        d.use(conn, namespace)
        tables = schema.read(conn, target.dialect, namespace)
        for name in sorted(tables):
            cols = tables[name].columns.values()
            result.fingerprints[name] = fingerprint(
                conn, target.dialect, d.quote(name), [d.quote(c.name) for c in cols], [c.kind for c in cols]
            )
        result.rows = {t: int(fp.split(":")[0]) for t, fp in result.fingerprints.items()}
        result.seconds["fingerprint"] = clock() - start
        if result.ok:
            d.write_meta(
                conn,
                namespace,
                _meta(result) | {"state": "complete", "finished_at": datetime.now().isoformat()},
            )
        d.commit(conn)


def _meta(r: FillResult) -> dict[str, str]:
    """What the namespace's marker records of the fill (next to the fingerprints)."""
    return {
        "volume.spec": r.spec,
        "volume.spec_sha256": r.sha256,
        "volume.seed": str(r.seed),
        "volume.scale": str(r.scale),
        "volume.faker": r.faker,
        **{f"fingerprint.{k}": v for k, v in r.fingerprints.items()},
    }


def _mark_loading(target: Target, namespace: str) -> None:
    d = dialects.get(target.dialect)
    with target.all_or_nothing() as conn:
        d.write_meta(conn, namespace, {"state": "loading", "volume.started_at": datetime.now().isoformat()})
        d.commit(conn)


def fill(
    targets: list[Target],
    namespace: str,
    spec: Spec | str | Path,
    *,
    scale: int | None = None,
    isolate: bool = True,
    progress: Progress | None = None,
    chunk_rows: int = CHUNK_ROWS,
) -> list[FillResult]:
    """Fill the tables of ``spec`` in ``namespace`` on every target (the rows made once, loaded
    into all at once); ``scale`` is ``:scale`` (default: the spec's ``scale``, else
    :data:`dbbench.defaults.SCALE`). Returns one result per target, in the targets' order."""
    sp = spec if isinstance(spec, Spec) else dbbench.volume.spec.read(spec)
    scale = scale if scale is not None else sp.scale or defaults.SCALE
    p = prepare(targets, namespace, sp, scale)
    version = faker_version()
    results = [
        FillResult(
            t.dialect,
            t.version_text,
            namespace,
            str(sp.path),
            sp.sha256,
            sp.seed,
            scale,
            version,
            isolation.role_name(namespace) if isolate else "none",
            loaded={x.name: x.rows for x in p.tables},
        )
        for t in targets
    ]
    for t in targets:
        _mark_loading(t, namespace)
    fan = Fanout(len(targets))
    try:
        produce = _generate(p, targets, chunk_rows, progress or (lambda *_: None), fan)
        readers = [fan.reader(i) for i in range(len(targets))]
        seconds = run_streams(p, targets, namespace, isolate, chunk_rows, produce, readers)
    finally:
        fan.close()
    for r, s in zip(results, seconds):
        r.seconds.update(s)
    with ThreadPoolExecutor(max_workers=len(targets)) as pool:
        list(pool.map(lambda tr: _finish(tr[0], namespace, p, isolate, tr[1]), zip(targets, results)))
    return results


def load_spec(
    target: Target,
    namespace: str,
    spec: Spec | str | Path,
    *,
    scale: int | None = None,
    isolate: bool = True,
    progress: Progress | None = None,
) -> FillResult:
    """:func:`fill` on one target."""
    return fill([target], namespace, spec, scale=scale, isolate=isolate, progress=progress)[0]
