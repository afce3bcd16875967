"""The two-session check of a shape with ``[race]``: does it get past the rows another statement holds?

The seed's publication locks a stage row (``SELECT … FOR UPDATE``) while the cleanup scans for
orphan stages (``FOR UPDATE SKIP LOCKED``). A single session cannot tell whether the cleanup skips
the locked row or queues behind it: only a second transaction holding the lock shows that. So:

1. **Session A, the holder** -- a connection of its own, logged in as the namespace's role as the
   shape SQL always is (:mod:`dbbench.access.isolation`) -- resolves the holder shape's parameters
   (its ``[params]`` and setup rows, then ``race.params``: ``":name"`` is this shape's parameter),
   runs the holder's statement plainly (not ``EXPLAIN``) in a transaction and keeps it open: the
   rows it returned are the **held rows**.
2. **Session B** -- the shape's own connection -- runs the shape's statement plainly in a
   transaction whose lock wait is short (PostgreSQL ``lock_timeout``; MySQL
   ``innodb_lock_wait_timeout``, in whole seconds, restored after), bounded by the statement
   timeout too, in a thread, timed.
3. **The watcher** -- dbbench's own connection -- polls B's lock waits while it runs (PostgreSQL
   ``pg_locks`` not granted and ``pg_blocking_pids``; MySQL ``performance_schema.data_lock_waits``
   joined to ``data_locks``), so a failure names the table, index and lock mode B queued for, and
   whether the holder is the one holding it.

**Pass**: B returned within ``race.wait_ms`` and none of its rows is a held row (compared on the
columns both results have, by name). Both transactions are always rolled back and the holder's
connection closed, also when B fails or times out; every wait is bounded.
"""

from __future__ import annotations

import contextlib
import datetime
import decimal
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

from dbbench import dialects
from dbbench.access import isolation
from dbbench.access.targets import Target
from dbbench.catalog.entries import Shape
from dbbench.catalog.params import to_pyformat
from dbbench.errors import DbbenchError
from dbbench.measure.values import holder_params
from verdict.files import excerpt

POLL_S = 0.02  # how often the watcher reads B's lock waits
MIN_LOCK_WAIT_MS = 250  # B's lock wait is never shorter: long enough for the watcher to see it
GRACE_S = 5.0  # past B's own bounds: cancel it; past that again: give up waiting for the thread
KEPT_ROWS = 50  # rows of each session kept in the result (the comparison uses all of them)


class Options(Protocol):
    """What the check reads of :class:`dbbench.measure.explain.MeasureOptions`."""

    @property
    def namespace(self) -> str: ...

    @property
    def timeout_ms(self) -> int: ...

    @property
    def isolate(self) -> bool: ...


@dataclass
class Outcome:
    """What one session's statement gave: its columns (lower case) and rows, how long it took,
    and the error that ended it (``reason``: lock wait timeout, statement timeout, …)."""

    columns: list[str] = field(default_factory=list)
    rows: list[tuple] = field(default_factory=list)
    ms: float = 0.0
    error: str | None = None
    reason: str | None = None
    returns_rows: bool = True


def check(target: Target, admin, conn, shape: Shape, params: dict, options: Options) -> dict[str, Any]:
    """The race of ``shape`` (on ``conn``, with its resolved ``params``) against
    ``shape.race_holder``, watched from ``admin``: the record
    :attr:`dbbench.measure.explain.ShapeMeasurement.race` keeps ({holder, ok, checked, held_rows,
    rows, waited_ms, wait, problem}, JSON values only)."""
    assert shape.race is not None and shape.race_holder is not None
    holder, d = shape.race_holder, dialects.get(target.dialect)
    record: dict[str, Any] = {
        "holder": holder.name,
        "ok": False,
        "checked": True,
        "held_rows": [],
        "rows": [],
        "waited_ms": None,
        "wait": None,
        "problem": None,
    }
    lead = f"race with {excerpt(holder.name)!r}"
    hv = holder.variants.get(target.dialect)
    if hv is None:
        record["problem"] = f"{lead}: the holder has no {target.dialect} spelling"
        return record
    v = shape.variants[target.dialect]
    conn.rollback()  # B starts a transaction of its own
    try:
        with _holder_session(target, options) as hconn:
            try:
                hparams = holder_params(hconn, d, holder, shape.race["params"], params)
            except DbbenchError as exc:
                record["problem"] = f"{lead}: the holder's parameters: {exc}"
                return record
            sessions = (d.race_session(conn), d.race_session(hconn))  # before the holder's transaction
            held = _run(hconn, d, hv.sql, hparams, hv.settings, options.timeout_ms, options.timeout_ms)
            record["held_rows"] = _rows(held)[:KEPT_ROWS]
            if held.error is not None:
                record["problem"] = f"{lead}: the holder's statement failed: {held.error}"
                return record
            if held.returns_rows and not held.rows:
                record["problem"] = f"{lead}: the holder locked no row (are race.params right?)"
                return record
            wait_ms = int(shape.race["wait_ms"])
            lock_wait = max(wait_ms, MIN_LOCK_WAIT_MS)
            b, wait = _race(
                admin, d, conn, sessions, v.sql, params, v.settings, lock_wait, options.timeout_ms
            )
    finally:
        with contextlib.suppress(Exception):
            admin.rollback()
    record.update(rows=_rows(b)[:KEPT_ROWS], waited_ms=round(b.ms, 3), wait=wait)
    record["problem"] = _problem(lead, held, b, wait, wait_ms)
    record["ok"] = record["problem"] is None
    return record


@contextlib.contextmanager
def _holder_session(target: Target, options: Options) -> Iterator[Any]:
    """A connection of the holder's own in the namespace, logged in as the namespace's role
    (``options.isolate``, see :mod:`dbbench.access.isolation`; else as dbbench's own user):
    rolled back and closed at the end, never returned to a pool, so no lock or session setting
    of it outlives the check."""
    d = dialects.get(target.dialect)
    with isolation.sandbox(target, options.namespace, isolate=options.isolate) as inner:
        raw = inner.engine.raw_connection()
        hconn: Any = raw.driver_connection
        try:
            d.use(hconn, options.namespace)
            hconn.commit()
            yield hconn
        finally:
            try:
                hconn.rollback()
            finally:
                raw.invalidate()  # closed: whatever it held ends with it


def _race(
    admin,
    d,
    conn,
    sessions: tuple[int, int],
    sql: str,
    params: dict,
    settings: dict,
    lock_wait_ms: int,
    timeout_ms: int,
) -> tuple[Outcome, dict | None]:
    """Session B's statement in a thread while the watcher (``admin``) polls its lock waits:
    B's outcome and the first wait seen (None: it never waited). ``sessions``: B's and the
    holder's as the watcher knows them (:func:`_session`). Bounded: past its own limits and
    :data:`GRACE_S`, B is cancelled; the thread is waited for :data:`GRACE_S` more at most."""
    session, holder = sessions
    admin.rollback()
    box: dict[str, Outcome] = {}

    def run_b() -> None:
        began = time.monotonic()
        try:
            box["b"] = _run(conn, d, sql, params, settings, timeout_ms, lock_wait_ms, keep=False)
        except Exception as exc:  # not the server's answer: reported, not lost with the thread
            box["b"] = Outcome(
                error=excerpt(f"{type(exc).__name__}: {exc}", 200), ms=(time.monotonic() - began) * 1000
            )

    thread = threading.Thread(target=run_b, name="dbbench-race", daemon=True)
    start = time.monotonic()
    deadline = start + (lock_wait_ms + timeout_ms) / 1000 + GRACE_S
    wait: dict | None = None
    thread.start()
    while thread.is_alive() and time.monotonic() < deadline:
        if wait is None:
            wait = _wait(admin, d, session, holder)
        thread.join(POLL_S)
    if thread.is_alive():  # beyond every bound it set itself: cancel it
        _cancel(admin, d, conn)
        thread.join(GRACE_S)
    if thread.is_alive():
        ms = (time.monotonic() - start) * 1000
        return Outcome(error=f"still running after {ms:,.0f} ms and a cancel", ms=ms), wait
    return box["b"], wait


def _run(
    conn, d, sql: str, params: dict, settings: dict, timeout_ms: int, lock_wait_ms: int, *, keep: bool = True
) -> Outcome:
    """The statement run plainly in a new transaction on ``conn``, its rows fetched and timed;
    an error is recorded, not raised. ``keep``: its transaction stays open (the holder's locks);
    otherwise it is rolled back. Session settings it changed are restored."""
    out = Outcome()
    with d.race_limits(conn, settings, timeout_ms, lock_wait_ms), d.race_cursor(conn) as cur:
        start = time.perf_counter()
        try:
            cur.execute(to_pyformat(sql), params)
            out.returns_rows = cur.description is not None
            if out.returns_rows:
                out.columns = [str(c[0]).lower() for c in cur.description]
                out.rows = [tuple(r) for r in cur.fetchall()]
        except Exception as exc:
            if not d.is_driver_error(exc):
                raise
            out.error, out.reason = d.race_error(exc)
        finally:
            out.ms = (time.perf_counter() - start) * 1000
            if not keep or out.error is not None:
                conn.rollback()
    return out


def _wait(admin, d, session: int, holder: int) -> dict | None:
    """The lock ``session`` waits for right now (the dialect's ``race_wait``: {table, index, mode,
    row, holder_holds}); None when it waits for none, or the server does not say."""
    try:
        return d.race_wait(admin, session, holder)
    except Exception as exc:
        if not d.is_driver_error(exc):
            raise
        return None
    finally:
        with contextlib.suppress(Exception):
            admin.rollback()


def _cancel(admin, d, conn) -> None:
    """Cancel B's running statement (never its connection's owner's other work)."""
    with contextlib.suppress(Exception):
        d.race_cancel(admin, conn)


def _problem(lead: str, held: Outcome, b: Outcome, wait: dict | None, wait_ms: int) -> str | None:
    """One line saying what B did wrong (None: it passed)."""
    late = b.ms > wait_ms
    if wait is not None and (late or b.error is not None):
        ended = f" ({b.reason})" if b.reason else (f" ({b.error})" if b.error else "")
        return f"{lead}: waited {b.ms:,.0f} ms for a lock on {_describe(wait)}{ended}"
    if b.error is not None:
        return f"{lead}: the statement failed after {b.ms:,.0f} ms: {b.error}"
    if late:
        return f"{lead}: took {b.ms:,.0f} ms (at once is within {wait_ms:,} ms), waiting for no lock seen"
    shared = [c for c in b.columns if c in held.columns]
    if held.returns_rows and b.returns_rows and not shared:
        return (
            f"{lead}: its columns ({', '.join(b.columns)}) share none with the holder's "
            f"({', '.join(held.columns)}): cannot tell whether it returned a held row"
        )
    keys = {_key(held, r, shared) for r in held.rows}
    taken = [r for r in b.rows if _key(b, r, shared) in keys]
    if taken:
        named = ", ".join(f"{c}={_jsonable(v)!r}" for c, v in zip(shared, _key(b, taken[0], shared)))
        return f"{lead}: returned the row the holder has locked ({named})"
    return None


def _describe(wait: dict) -> str:
    """``group_snapshot_stage (PRIMARY, X,REC_NOT_GAP) that the holder holds``."""
    inside = ", ".join(str(x) for x in (wait.get("index"), wait.get("mode")) if x)
    if wait.get("row") and not wait.get("index"):
        inside += f" of row {wait['row']}"
    holds = wait.get("holder_holds")
    who = (
        "the holder may hold"
        if holds is None
        else "the holder holds"
        if holds
        else "another session holds, not the holder"
    )
    return f"{wait.get('table') or 'an object'} ({inside}) that {who}"


def _key(out: Outcome, row: tuple, shared: list[str]) -> tuple:
    """``row``'s values in the ``shared`` columns, comparable across sessions."""
    return tuple(_jsonable(row[out.columns.index(c)]) for c in shared)


def _rows(out: Outcome) -> list[dict[str, Any]]:
    return [{c: _jsonable(v) for c, v in zip(out.columns, r)} for r in out.rows]


def _jsonable(value: Any) -> Any:
    """A value as JSON holds it (and as the two sessions' rows are compared)."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        return "0x" + bytes(value).hex()
    if isinstance(value, (datetime.date, datetime.time)):
        return value.isoformat(" ") if isinstance(value, datetime.datetime) else value.isoformat()
    if isinstance(value, decimal.Decimal):
        return str(value)
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)
