"""The frame every index trial runs in: a candidate index present in the namespace dbbench owns,
measured there, and gone afterwards (issue 34).

* **PostgreSQL** builds it inside one transaction that is rolled back at the end. A client that
  dies (Ctrl-C, kill -9) leaves nothing either: the server rolls the transaction back itself. On
  the connection :func:`present` (:func:`present_all`) yields, a caller's ``rollback()`` goes back to just after the
  build and ``commit()`` does nothing, so measuring code that ends its reads that way keeps the
  index (:func:`dbbench.dialects.postgresql.trial_connection`).
* **MySQL** runs a real ``ALTER TABLE … ADD INDEX`` (``ALGORITHM=INPLACE, LOCK=NONE`` where the
  server allows it) and drops the index in ``finally``. Before the ALTER, the trial is recorded in
  the namespace's ``dbbench_meta`` with the table's persisted statistics (an ALTER that rebuilds
  the table throws them away); :func:`recover` undoes a trial whose process died, and runs where
  every command opens a namespace.

A set of indexes is tried whole (:func:`present_all`): all present at once on one connection,
each as above (PostgreSQL: the one transaction; MySQL: every one recorded before the first is
built). Only a namespace dbbench seeded, only ``CREATE INDEX`` (MySQL: ``ADD INDEX``) statements,
one index each on one of its tables, named ``dbbench_adv_…``: anything else is refused before a
connection is opened or anything is changed. What a present index costs: :func:`build_seconds`,
:func:`size_bytes` measured on disk, and :func:`write_cost`, a batch of writes timed with and
without it.
"""

from __future__ import annotations

import contextlib
import re
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from dbbench import defaults, dialects
from dbbench.access import isolation, urls
from dbbench.access.targets import Target
from dbbench.dialects.contract import Dialect
from dbbench.errors import CannotHide, ConnectionFailed, DbbenchError, server_message
from verdict.files import excerpt

PREFIX = "dbbench_adv_"
NAME_PATTERN = r"dbbench_adv_[a-z0-9_]{1,51}"  # at most 63 characters: PostgreSQL's longest name
LOCK_WAIT_S = 10.0  # MySQL: another trial in the namespace, or a dead session's lock not yet freed
DEFAULT_WRITE_ROWS = 1000
DEFAULT_REPEAT = 3
ADVISE_REPEAT = 5  # advise's rounds per batch, after one warm-up: the fastest counts (a busy CPU only adds)
ADVISE_SPREAD_SECONDS = 0.25  # ... spread over at least this long: one burst of other work passes


class TrialRefused(DbbenchError):
    """An index trial dbbench will not run: the namespace is not a seed of dbbench's, or the
    statement is not one index on one of its tables named ``dbbench_adv_…``."""


class TrialFailed(DbbenchError):
    """The server refused an index trial (no privilege to create indexes, a unique index over
    duplicate values, …); nothing is left of it."""


# id(connection) -> (dialect, index name -> seconds its build took)
_LIVE: dict[int, tuple[str, dict[str, float]]] = {}
_HIDDEN: dict[int, str] = {}  # id(connection) -> what went with the index hidden on it


def present(
    target: Target, namespace: str, ddl: str, drop: str, name: str
) -> contextlib.AbstractContextManager[Any]:
    """Index ``name``, made by ``ddl``, present in ``namespace`` for the block; yields a DB-API
    connection of dbbench's own user using ``namespace``, on which EXPLAIN ANALYZE samples
    (:func:`dbbench.measure.explain.run_shape`) see the index. ``drop`` removes it (MySQL runs
    it at the end; PostgreSQL's rollback needs none, but it is checked the same).

    Refused (:class:`TrialRefused`, :class:`~dbbench.errors.NotOurs`) before anything is changed:
    a namespace that is not a complete dbbench seed, a name not ``dbbench_adv_…``, a statement
    that is not one index on a table of the namespace or names another schema. A server error
    while building or removing it is :class:`TrialFailed`, one line."""
    return present_all(target, namespace, [(ddl, drop, name)])


@contextlib.contextmanager
def present_all(target: Target, namespace: str, indexes: Sequence[tuple[str, str, str]]) -> Iterator[Any]:
    """Every index of ``indexes`` ((ddl, drop, name) each, as :func:`present` takes them) present
    at once in ``namespace`` for the block, built in that order, on the one connection yielded;
    all gone afterwards, as :func:`present` leaves one. Refused before anything is changed when
    any of them would be, when there is none, or when two share a name."""
    d = dialects.get(target.dialect)
    built = []  # (table, name, statement, undo) each, as the dialect's index_trial takes them
    for ddl, drop, name in indexes:
        statement, undo, table = checked(d, namespace, ddl, drop, name)
        built.append((table, name, statement, undo))
    names = [name for _, name, _, _ in built]
    if not names or len(set(names)) < len(names):
        raise TrialRefused(
            f"a set of indexes under trial names each once: {excerpt(', '.join(names), 200) or 'none given'}"
        )
    tables = list(dict.fromkeys(table for table, _, _, _ in built))

    def enter(conn):
        return d.index_trial(conn, namespace, built, LOCK_WAIT_S)

    what = f"{'index' if len(names) == 1 else 'indexes'} {excerpt(', '.join(map(repr, names)), 200)}"
    with _framed(target, namespace, tables, enter, what) as (conn, seconds):
        _LIVE[id(conn)] = (target.dialect, dict(zip(names, seconds)))
        try:
            yield conn
        finally:
            _LIVE.pop(id(conn), None)


def hidden(target: Target, namespace: str, table: str, name: str) -> contextlib.AbstractContextManager[Any]:
    """Index ``name`` of ``table`` hidden from the planner in ``namespace`` for the block; yields a
    connection of dbbench's own user using ``namespace`` on which plans are made without it, as
    :func:`present` yields one with an index (the same frame: a refusal before anything changes,
    one line for a server error, undone after an exception, Ctrl-C or kill -9).

    * **PostgreSQL** drops it inside one transaction that is rolled back at the end (a constraint
      it backs is dropped with it, and the foreign keys that need that constraint); nobody else
      sees a change, but the table is locked against every other session meanwhile.
    * **MySQL** makes it INVISIBLE (``ALTER INDEX``, metadata only), recorded in ``dbbench_meta``
      first, visible again in ``finally``; :func:`recover` makes visible what a killed run hid.
      A primary key cannot be made invisible (one line, nothing changed)."""
    return hidden_all(target, namespace, [(table, name)])


@contextlib.contextmanager
def hidden_all(target: Target, namespace: str, indexes: Sequence[tuple[str, str]]) -> Iterator[Any]:
    """Every index of ``indexes`` ((table, name) each) hidden at once for the block, as
    :func:`hidden` hides one (refused when there is none, or one is named twice)."""
    d = dialects.get(target.dialect)
    pairs = [(str(t), str(n)) for t, n in indexes]
    if not pairs or any(not t or not n for t, n in pairs) or len(set(pairs)) < len(pairs):
        raise TrialRefused("indexes to hide are named once each, with their tables")
    tables = list(dict.fromkeys(t for t, _ in pairs))
    names = excerpt(", ".join(repr(n) for _, n in pairs), 200)

    def enter(conn):
        return d.index_hidden(conn, namespace, pairs, LOCK_WAIT_S)

    with _framed(target, namespace, tables, enter, f"{names} hidden") as (conn, went):
        _HIDDEN[id(conn)] = "; ".join(w for w in went if w)
        try:
            yield conn
        finally:
            _HIDDEN.pop(id(conn), None)


def hidden_with(conn) -> str:
    """What went with the index :func:`hidden` hides on ``conn`` (PostgreSQL: the constraint it
    backs and the foreign keys that need it; "" when nothing did)."""
    try:
        return _HIDDEN[id(conn)]
    except KeyError:
        raise LookupError("no index hidden on this connection (hidden)") from None


@contextlib.contextmanager
def _framed(target: Target, namespace: str, tables: list[str], enter, what: str) -> Iterator[tuple[Any, Any]]:
    """The frame of a trial: a connection of its own, the namespace and ``tables`` checked, then
    the dialect's context ``enter(conn)`` held for the block; yields (the connection, what the
    context yields). A server error is :class:`TrialFailed` naming ``what``; when undoing fails
    (a session broken by Ctrl-C), the session is ended and the namespace recovered."""
    d = dialects.get(target.dialect)
    conn = _open(target)
    session = d.trial_session(conn)
    entered = False
    body_error: BaseException | None = None
    try:
        try:
            _require_tables(target, d, conn, namespace, tables)
            d.use(conn, namespace)
            conn.commit()
            entered = True
            with enter(conn) as held:
                try:
                    yield conn, held
                except BaseException as exc:
                    body_error = exc
                    if isinstance(exc, KeyboardInterrupt) and not d.TRIAL_IN_TRANSACTION:
                        # Ctrl-C may land after a statement went out and before its result was
                        # read: undoing on this session would wait for that statement's end (a
                        # minute for a slow sample). Closed instead, the undo fails at once and
                        # the session is ended and the namespace recovered (below).
                        _close(conn)
                    raise
        except Exception as exc:
            if exc is body_error or not d.is_driver_error(exc):
                raise
            raise TrialFailed(
                f"{target.label}: {what} on {namespace}.{excerpt(', '.join(tables), 120)}: "
                f"{server_message(exc, 300)}"
            ) from None
    except BaseException as exc:
        _close(conn)
        if entered and exc is not body_error and not isinstance(exc, CannotHide):  # refused: nothing changed
            # the undo failed (a session broken by Ctrl-C mid-statement, which the server may
            # still be running): the server ends the session, which rolls back PostgreSQL's
            # transaction and frees MySQL's trial lock; then MySQL's record says what to undo
            with contextlib.suppress(Exception), target.all_or_nothing() as admin:
                d.end_trial_session(admin, session)
            if not d.TRIAL_IN_TRANSACTION:
                with contextlib.suppress(Exception):
                    recover(target, namespace, wait_s=LOCK_WAIT_S)
            if body_error is not None:  # what the block raised (Ctrl-C) comes first
                raise body_error from None
        raise
    _close(conn)


def build_seconds(conn, name: str | None = None) -> float:
    """The seconds the statement that built index ``name``, present on ``conn``, took; without
    ``name``, those of every index present there, summed."""
    try:
        built = _LIVE[id(conn)][1]
        return sum(built.values()) if name is None else built[name]
    except KeyError:
        raise LookupError(f"no index {name!r} under trial on this connection (present)") from None


def size_bytes(conn, namespace: str, table: str, name: str, *, dialect: str | None = None) -> int:
    """Bytes on disk of index ``name`` on ``table``, as ``conn`` sees it (a connection
    :func:`present` yielded; another with ``dialect``): PostgreSQL the index relation's size,
    MySQL its pages in InnoDB's persisted statistics times the page size."""
    if dialect is None:
        if id(conn) not in _LIVE:
            raise LookupError("not a connection of an index trial (present): pass dialect")
        dialect = _LIVE[id(conn)][0]
    return dialects.get(dialect).index_size_bytes(conn, namespace, table, name)


def recover(target: Target, namespace: str, *, wait_s: float = 0.0) -> list[str]:
    """Undo every index trial in ``namespace`` that is no longer running: each ``dbbench_adv_…``
    index (recorded in flight or not) dropped, MySQL's persisted statistics as the record saved
    them, the records removed. A live trial (MySQL: its session holds the trial lock, waited for
    up to ``wait_s``) is left alone; a namespace that is not dbbench's is never touched. The
    indexes dropped; running it again drops none."""
    d = dialects.get(target.dialect)
    with target.all_or_nothing() as conn:
        return d.recover_index_trials(conn, namespace, wait_s)


@dataclass(frozen=True)
class WriteCost:
    """What a batch of writes to ``table`` cost, the best of its ``rounds``, each undone: ``inserted``
    copies of existing rows under new keys, then ``updated`` rows whose indexed columns took
    another row's values; their seconds; the bytes the server's log grew by (PostgreSQL's WAL,
    InnoDB's redo log from MySQL 8.0.30, else None: every session's writes move it, so it is
    an upper bound); the dialect's row and handler counters; ``notes``: what was not measured
    and why."""

    table: str
    rows: int  # the batch asked for, at most the table's rows
    inserted: int
    updated: int
    insert_seconds: float | None
    update_seconds: float | None
    log_bytes: int | None
    counters: tuple[tuple[str, int], ...]
    notes: tuple[str, ...] = ()
    rounds: int = 0  # the timed rounds the fastest was taken from
    span_seconds: float = 0.0  # from the first timed round's start to the last one's end

    @property
    def seconds(self) -> float:
        return (self.insert_seconds or 0.0) + (self.update_seconds or 0.0)


def write_cost(
    target: Target,
    namespace: str,
    table: str,
    columns: list[str],
    *,
    rows: int = DEFAULT_WRITE_ROWS,
    repeat: int = DEFAULT_REPEAT,
    warmup: int = 0,
    spread_seconds: float = 0.0,
    conn=None,
    timeout_ms: int = int(defaults.TIMEOUT_S * 1000),
    without: str | None = None,
) -> WriteCost:
    """Time an INSERT of ``rows`` copies of ``table``'s rows (each unique key moved past the
    column's largest value) and an UPDATE of ``columns`` (an index's) on ``rows`` rows, in a
    transaction undone after each, ``repeat`` times after ``warmup`` rounds not counted, their starts
    spread evenly over ``spread_seconds`` (a pause between rounds). With ``conn`` (one :func:`present` yielded)
    the index under trial is there; without, a connection of its own is opened: the caller
    measures both and compares. With ``without`` (an index of ``table``, or "" for none), the
    batch writes a copy of the table holding every index but that one, the same statements
    either way (what an index costs, measured with it and without it: ``dbbench indexes``). The
    table's rows and plans are as before afterwards (PostgreSQL writes into a copy made in the
    transaction: see :func:`dbbench.dialects.postgresql.write_copy`; MySQL's copy without an
    index is recorded before it is made: :func:`dbbench.dialects.mysql.write_outside`).

    A warm-up round matters right after an index is built: a sorted build fills its pages
    (InnoDB's ``innodb_fill_factor`` is 100 by default), so the first writes split them, a cost
    an index in use has long paid. The split pages stay when the writes are undone, so the rounds
    after it measure the index as it is in service.

    ``spread_seconds`` matters on a busy machine: the fastest round counts, and a few rounds of a
    few milliseconds each, one right after the other, can all fall inside one burst of another
    process's work (or of the server's own, right after a build); rounds spread over a quarter of
    a second rarely do. The pauses cost time, not work."""
    d = dialects.get(target.dialect)
    with _connection(target, d, namespace, table, conn) as c:
        batch = _plan(d, c, namespace, table, columns, rows)
        c.rollback()  # the reads' transaction: the batch's frame starts its own
        runs: list[tuple[_Run | None, _Run | None]] = []
        notes = list(batch.notes)
        with (
            d.write_outside(c, namespace, table, list(batch.columns), without) as outside,
            d.write_frame(c, timeout_ms) as (cur, _),
        ):
            where = outside or d.write_copy(c, namespace, table, list(batch.columns), without)
            for _ in range(max(0, warmup)):
                _pair(d, c, cur, namespace, where, batch, notes)
            count, started = max(1, repeat), time.monotonic()
            for round_ in range(count):
                if round_:
                    time.sleep(max(0.0, started + spread_seconds * round_ / (count - 1) - time.monotonic()))
                pair = _pair(d, c, cur, namespace, where, batch, notes)
                runs.append(pair)
                if all(r is None for r in pair):
                    break  # nothing to time: the notes say why
            span = time.monotonic() - started
        d.restore_statistics(c, namespace)  # MySQL's in-memory row count, moved by the undone writes
        c.commit()
    return _best(table, batch.rows, runs, notes, span)


def advise_write_cost(
    target: Target, namespace: str, table: str, columns: list[str], rows: int, conn=None
) -> WriteCost:
    """:func:`write_cost` as advise times each candidate and the batch without it: one warm-up
    round, then the fastest of :data:`ADVISE_REPEAT` rounds spread over
    :data:`ADVISE_SPREAD_SECONDS`."""
    return write_cost(
        target,
        namespace,
        table,
        columns,
        rows=rows,
        repeat=ADVISE_REPEAT,
        warmup=1,
        spread_seconds=ADVISE_SPREAD_SECONDS,
        conn=conn,
    )


def _pair(
    d: Dialect, conn, cur, namespace: str, where: str, batch: _Batch, notes: list[str]
) -> tuple[_Run | None, _Run | None]:
    """One round: the batch's INSERT, then its UPDATE, each timed and undone."""
    return (
        _run(d, conn, cur, namespace, where, batch.insert_sql(d, where), notes),
        _run(d, conn, cur, namespace, where, batch.update_sql(d, where), notes),
    )


@dataclass(frozen=True)
class _Run:
    seconds: float
    count: int
    log_bytes: int | None
    counters: dict[str, int]


@dataclass(frozen=True)
class _Batch:
    """The statements of a write-cost batch on one table (``where``: the relation written)."""

    columns: tuple[str, ...]  # those an INSERT may write (not generated)
    shifted: tuple[tuple[str, int], ...]  # (column, offset): a new value for each unique key
    key: tuple[str, ...]  # the primary key (else the first unique one): the rows' order, the UPDATE's join
    updated: tuple[str, ...]  # the indexed columns the UPDATE sets
    rotate: bool  # each updated row takes another's values (else its own: no key column can change)
    rows: int
    notes: tuple[str, ...]
    insert: bool
    update: bool

    def insert_sql(self, d: Dialect, where: str) -> str | None:
        if not self.insert:
            return None
        q, offsets = d.quote, dict(self.shifted)
        values = [f"{q(c)} + {offsets[c]}" if c in offsets else q(c) for c in self.columns]
        order = f" ORDER BY {', '.join(map(q, self.key))}" if self.key else ""
        return (
            f"INSERT INTO {where} ({', '.join(map(q, self.columns))}) "
            f"SELECT {', '.join(values)} FROM {where}{order} LIMIT {self.rows}"
        )

    def update_sql(self, d: Dialect, where: str) -> str | None:
        if not self.update:
            return None
        keys, cols = [d.quote(k) for k in self.key], [d.quote(c) for c in self.updated]
        order = ", ".join(keys)
        if self.rotate:  # row i takes the values of row i + rows/2 of the slice (wrapping around)
            ahead = max(1, self.rows // 2)
            values = [
                f"COALESCE(LEAD({c}, {ahead}) OVER w, LAG({c}, {self.rows - ahead}) OVER w) AS {c}"
                for c in cols
            ]
            window = f" WINDOW w AS (ORDER BY {order})"
        else:
            values, window = cols, ""
        source = (
            f"(SELECT {order}, {', '.join(values)} FROM (SELECT {', '.join(keys + cols)} FROM {where} "
            f"ORDER BY {order} LIMIT {self.rows}) AS x{window})"
        )
        return d.update_from(where, source, keys, cols)


_INTEGER = frozenset({"tinyint", "smallint", "mediumint", "int", "integer", "bigint"})


def _plan(d: Dialect, conn, namespace: str, table: str, indexed: list[str], rows: int) -> _Batch:
    """The batch's statements, read from ``table``'s columns and keys: the INSERT writes every
    column that is not generated, each unique key made new by shifting one of its integer
    columns that is in no foreign key past that column's largest value; the UPDATE sets the
    ``indexed`` columns that are in no key, to the values of other rows of the slice."""
    described = [r for r in d.schema_columns(conn, namespace) if r[0] == table]
    kinds = {r[1]: r[2] for r in described}
    generated = {r[1] for r in described if r[7]}
    keys = [r for r in d.schema_keys(conn, namespace) if r[0] == table]
    unique = sorted((k for k in keys if k[2] in ("primary", "unique")), key=lambda k: k[2] != "primary")
    in_foreign = {c for k in keys if k[2] == "foreign" for c in k[3]}
    columns = tuple(r[1] for r in described if not r[7])
    notes: list[str] = []
    with conn.cursor() as cur:
        cur.execute(f"SELECT COUNT(*) FROM {d.quote(namespace)}.{d.quote(table)}")
        count = int(cur.fetchone()[0])
    size = min(rows, count)
    if not size:
        notes.append(f"{table} has no rows to copy or update")

    shift: list[str] = []
    for k in unique:
        if set(k[3]) & set(shift):
            continue
        found = [c for c in k[3] if kinds.get(c) in _INTEGER and c not in in_foreign and c not in generated]
        if not found:
            notes.append(
                f"INSERT skipped: unique key {k[1]} of {table} ({', '.join(k[3])}) has no integer column "
                "outside a foreign key to give copied rows new values"
            )
            shift = []
            break
        shift.append(found[0])
    insert = bool(size) and not any(n.startswith("INSERT skipped") for n in notes)
    offsets: list[tuple[str, int]] = []
    if insert and shift:
        q = d.quote
        with conn.cursor() as cur:
            cur.execute(
                "SELECT "
                + ", ".join(f"MIN({q(c)}), MAX({q(c)})" for c in shift)
                + f" FROM {q(namespace)}.{q(table)}"
            )
            bounds = cur.fetchone()
        offsets = [(c, int(bounds[2 * i + 1]) - int(bounds[2 * i]) + 1) for i, c in enumerate(shift)]

    key = tuple(unique[0][3]) if unique else ()
    in_keys = {c for k in unique for c in k[3]} | in_foreign
    present_cols = [c for c in indexed if c in kinds and c not in generated]
    updated = [c for c in present_cols if c not in in_keys]
    rotate = bool(updated)
    if not updated:
        updated = [c for c in present_cols if c not in key]
        if updated:
            notes.append(
                f"UPDATE sets {', '.join(updated)} to their own values: each is in a key of {table} "
                "(PostgreSQL writes new row versions; MySQL changes nothing)"
            )
    update = bool(size) and bool(key) and bool(updated)
    if size and not key:
        notes.append(f"UPDATE skipped: {table} has no primary or unique key to find its rows by")
    elif size and not updated:
        notes.append(f"UPDATE skipped: none of {', '.join(indexed)} is a column of {table} it may set")
    return _Batch(columns, tuple(offsets), key, tuple(updated), rotate, size, tuple(notes), insert, update)


def _run(d: Dialect, conn, cur, namespace: str, where: str, sql: str | None, notes: list[str]) -> _Run | None:
    """``sql`` timed, with the counters before and after, then undone (a savepoint); None when
    there is no statement or the server refused it (why: in ``notes``, once)."""
    if sql is None:
        return None
    position, before = d.write_counters(conn, namespace, where)
    cur.execute("SAVEPOINT dbbench_write")
    try:
        start = time.perf_counter()
        cur.execute(sql)
        seconds = time.perf_counter() - start
        count = cur.rowcount
        moved, after = d.write_counters(conn, namespace, where)
    except Exception as exc:
        if not (d.is_driver_error(exc) or isinstance(exc, TimeoutError)):
            raise
        note = f"{sql.split()[0]} refused: {server_message(exc, 200)}"
        if note not in notes:
            notes.append(note)
        return None
    finally:
        cur.execute("ROLLBACK TO SAVEPOINT dbbench_write")
        cur.execute("RELEASE SAVEPOINT dbbench_write")
    grown = None if position is None or moved is None else moved - position
    return _Run(seconds, count, grown, {k: after[k] - before.get(k, 0) for k in after})


def _best(
    table: str, rows: int, runs: list[tuple[_Run | None, _Run | None]], notes: list[str], span: float
) -> WriteCost:
    """The fastest round's seconds per statement, and each counter's and the log's least growth
    over the rounds (others' writes only ever add to them)."""
    inserts = [i for i, _ in runs if i is not None]
    updates = [u for _, u in runs if u is not None]
    logs = [
        sum(r.log_bytes for r in pair if r is not None and r.log_bytes is not None)
        for pair in runs
        if any(r is not None and r.log_bytes is not None for r in pair)
    ]
    totals: dict[str, list[int]] = {}
    for pair in runs:
        summed: dict[str, int] = {}
        for r in pair:
            for k, v in (r.counters if r is not None else {}).items():
                summed[k] = summed.get(k, 0) + v
        for k, v in summed.items():
            totals.setdefault(k, []).append(v)
    return WriteCost(
        table,
        rows,
        inserts[0].count if inserts else 0,
        updates[0].count if updates else 0,
        min((r.seconds for r in inserts), default=None),
        min((r.seconds for r in updates), default=None),
        min(logs, default=None),
        tuple(sorted((k, min(v)) for k, v in totals.items())),
        tuple(notes),
        len(runs),
        span,
    )


# -- what a trial may run ------------------------------------------------------------------------


def checked(d: Dialect, namespace: str, ddl: str, drop: str, name: str) -> tuple[str, str, str]:
    """(the statement, the drop, the table) of a trial, each statement without its final ``;``;
    :class:`TrialRefused` unless ``name`` is ``dbbench_adv_…``, ``ddl`` is one statement making
    that index on a table named alone or in ``namespace``, whatever follows its key list is an
    option the dialect allows, no other schema is named, and ``drop`` drops that index."""
    if not re.fullmatch(NAME_PATTERN, name):
        raise TrialRefused(
            f"index name {excerpt(name, 80)!r}: an index under trial is named {PREFIX}… "
            "(lower-case letters, digits and _, at most 63 characters)"
        )
    statement, plain = _one_statement(d, namespace, ddl, "index statement")
    made = next((m for p in d.TRIAL_CREATE if (m := p.fullmatch(plain))), None)
    if made is None:
        raise TrialRefused(
            f"index statement {excerpt(ddl)!r} is not one {'CREATE INDEX' if d.TRIAL_IN_TRANSACTION else 'ADD INDEX'} "
            "on a table"
        )
    table = d.identifier(made["table"])
    _same(d, made, namespace, name, ddl, "index statement")
    rest = made["rest"]
    end = _closing(rest)
    if end is None or not d.TRIAL_TAIL.fullmatch(rest[end + 1 :]):
        raise TrialRefused(f"index statement {excerpt(ddl)!r}: only index options may follow its key list")
    undo, plain_drop = _one_statement(d, namespace, drop, "drop statement")
    dropped = next((m for p in d.TRIAL_DROP if (m := p.fullmatch(plain_drop))), None)
    if dropped is None:
        raise TrialRefused(f"drop statement {excerpt(drop)!r} is not one DROP INDEX")
    _same(d, dropped, namespace, name, drop, "drop statement")
    if "table" in dropped.groupdict() and d.identifier(dropped["table"]) != table:
        raise TrialRefused(f"drop statement {excerpt(drop)!r} names another table than {table!r}")
    return statement, undo, table


def _same(d: Dialect, m: re.Match[str], namespace: str, name: str, text: str, what: str) -> None:
    if d.identifier(m["name"]) != name:
        raise TrialRefused(f"{what} {excerpt(text)!r} names another index than {name!r}")
    if m["schema"] is not None and d.identifier(m["schema"]) != namespace:
        raise TrialRefused(
            f"{what} {excerpt(text)!r} names {d.NAMESPACE_KIND} {excerpt(d.identifier(m['schema']), 60)!r}: "
            f"an index is tried only in {namespace!r}"
        )


_QUALIFIER = r'(?<![\w$"`])("(?:[^"]|"")+"|`(?:[^`]|``)+`|[A-Za-z_][\w$]*)\s*\.\s*(?=["`A-Za-z_])'


def _one_statement(d: Dialect, namespace: str, text: str, what: str) -> tuple[str, str]:
    """(``text`` without its final ``;``, the same with every text literal emptied) when it is
    one statement that qualifies names by ``namespace`` alone; else refused. Literals are read
    as the server reads them (MySQL: backslash escapes), so none can hide a statement."""
    statement = text.strip().rstrip(";").rstrip()
    literal = r"'(?:[^'\\]|\\.|'')*'" if d.SETUP_SYNTAX.backslash_escapes else r"'(?:[^']|'')*'"
    plain = re.sub(literal, "''", statement, flags=re.S)
    if re.search(r"[;']|\$\w*\$", re.sub(r"''", "", plain)):
        raise TrialRefused(f"{what} {excerpt(text)!r} is not one statement")
    for m in re.finditer(_QUALIFIER, plain):
        if d.identifier(m.group(1)) != namespace:
            raise TrialRefused(
                f"{what} {excerpt(text)!r} names {d.NAMESPACE_KIND} {excerpt(d.identifier(m.group(1)), 60)!r}: "
                f"an index is tried only in {namespace!r}"
            )
    return statement, plain


def _closing(text: str) -> int | None:
    """The index of the parenthesis closing the one ``text`` starts with (None: unbalanced)."""
    depth = 0
    for i, ch in enumerate(text):
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if depth == 0:
            return i
    return None


# -- connections -----------------------------------------------------------------------------------


def _open(target: Target):
    """A connection of its own for one trial (its session ends with the trial)."""
    d = dialects.get(target.dialect)
    try:
        return d.trial_connection(target.url, target.connect_args)
    except Exception as exc:
        raise ConnectionFailed(
            f"cannot open the index trial's connection to {target.label} at {target.safe_url}: "
            f"{urls.scrub(str(exc), target.url)}"
        ) from None


def _close(conn) -> None:
    with contextlib.suppress(Exception):
        conn.close()


def _require_tables(target: Target, d: Dialect, conn, namespace: str, tables: list[str]) -> None:
    """Refused unless ``namespace`` is a complete dbbench seed holding each of ``tables``."""
    isolation.refuse_foreign(target, conn, namespace)
    state = d.namespace_state(conn, namespace)
    if state != "complete":
        why = "does not exist" if state == "absent" else "holds an incomplete seed"
        conn.rollback()
        raise TrialRefused(
            f"{target.label} {d.NAMESPACE_KIND} {namespace!r} {why}: an index is tried only where "
            "`dbbench seed` has loaded data"
        )
    held = d.statistics_frozen(conn, namespace)  # every table of the namespace but dbbench_meta
    conn.rollback()
    for table in tables:
        if table not in held:
            raise TrialRefused(
                f"{target.label} {d.NAMESPACE_KIND} {namespace!r} has no table {excerpt(table, 60)!r} "
                f"(its tables: {excerpt(', '.join(sorted(held)), 200) or 'none'})"
            )


@contextlib.contextmanager
def _connection(target: Target, d: Dialect, namespace: str, table: str, conn) -> Iterator[Any]:
    """``conn`` itself, else a connection of dbbench's own using ``namespace`` (refused unless a
    complete dbbench seed holding ``table``), rolled back after."""
    if conn is not None:
        yield conn
        return
    with target.all_or_nothing() as own:
        _require_tables(target, d, own, namespace, [table])
        d.use(own, namespace)
        own.commit()
        yield own
        own.rollback()
