"""DB-API helpers and frames that are the same for both drivers; each dialect passes its SQL text
and the few steps that differ (a cursor, how a transaction begins, its timeout)."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from typing import Any, TypeVar

T = TypeVar("T")


def execute(conn, statements: list[str]) -> None:
    with conn.cursor() as cur:
        for stmt in statements:
            cur.execute(stmt)


def commit(conn) -> None:
    conn.commit()


def write_meta(conn, upsert: str, meta: dict[str, str]) -> None:
    """Each (key, value) of ``meta`` through ``upsert``: the dialect's insert-or-update of one
    ``dbbench_meta`` row, with the key and the value as its two ``%s``."""
    with conn.cursor() as cur:
        for key, value in meta.items():
            cur.execute(upsert, (key, value))


def read_meta(conn, select: str) -> dict[str, str]:
    """Key -> value of the ``dbbench_meta`` rows ``select`` reads."""
    with conn.cursor() as cur:
        cur.execute(select)
        return dict(cur.fetchall())


def query_row(conn, cursor, sql: str, params: dict) -> dict | None:
    """The first row of ``sql`` as a dict, read in ``cursor`` (the driver's dict cursor of
    ``conn``, not yet entered); rolled back afterwards, so a probe leaves no transaction open."""
    try:
        with cursor as cur:
            cur.execute(sql, params)
            return cur.fetchone()
    finally:
        conn.rollback()


@contextlib.contextmanager
def explain_frame(
    conn,
    cursor,
    *,
    in_transaction: bool,
    begin: Callable[[Any], object],
    limits: Callable[[Any], AbstractContextManager[T] | None],
    is_timeout: Callable[[BaseException], bool],
    timeout: str,
) -> Iterator[tuple[Any, T | None]]:
    """The transaction one ``EXPLAIN ANALYZE`` sample runs in, always undone: it executes the
    statement, and a write must not stay. Yields ``cursor`` (of ``conn``, not yet entered) and what
    ``limits`` yields.

    Inside the caller's open transaction (``in_transaction``: a test's uncommitted rows) it opens
    the savepoint ``dbbench_explain`` and rolls back to it, keeping the caller's work; else
    ``begin(cur)`` opens a transaction, rolled back whole. ``limits(cur)`` then sets the sample's
    timeout (and what else the sample needs) inside it; a context manager it returns is exited
    after the undo (a session setting the rollback does not restore). A driver error for which
    ``is_timeout`` holds is raised as ``TimeoutError(f"{timeout} reached")``."""
    with contextlib.ExitStack() as limited:  # exited last: after the undo
        try:
            with cursor as cur:
                if in_transaction:
                    cur.execute("SAVEPOINT dbbench_explain")
                else:
                    begin(cur)
                settings = limits(cur)
                yield cur, None if settings is None else limited.enter_context(settings)
        except Exception as exc:
            if is_timeout(exc):
                raise TimeoutError(f"{timeout} reached") from None
            raise
        finally:
            undo_sample(conn, in_transaction)


def undo_sample(conn, in_transaction: bool) -> None:
    """Undo an EXPLAIN ANALYZE sample: back to the ``dbbench_explain`` savepoint when the caller
    already had a transaction open (its own uncommitted work survives), else the whole transaction."""
    if in_transaction:
        with conn.cursor() as cur:
            cur.execute("ROLLBACK TO SAVEPOINT dbbench_explain")
            cur.execute("RELEASE SAVEPOINT dbbench_explain")
    else:
        conn.rollback()


@contextlib.contextmanager
def statement_statistics(conn, problem: Callable[[Any], str | None], *, keep: bool) -> Iterator[Any]:
    """A cursor on the server's statement statistics (``dbbench capture``), once ``problem(cur)``
    (why they cannot be read here, else None) found nothing; a problem is raised as one
    DbbenchError line. ``keep``: commit what was done (a reset), else roll it back (a read). On
    any error the transaction is rolled back before it is raised, so the connection is usable
    again (PostgreSQL refuses every statement in a failed transaction until then)."""
    from dbbench.errors import DbbenchError

    try:
        with conn.cursor() as cur:
            if found := problem(cur):
                raise DbbenchError(found)
            yield cur
    except BaseException:
        with contextlib.suppress(Exception):  # a busy connection refuses it: the error itself is raised
            conn.rollback()
        raise
    if keep:
        conn.commit()
    else:
        conn.rollback()


def meta_state(meta: dict[str, str]) -> str:
    """foreign | incomplete | complete: what a namespace's ``dbbench_meta`` rows say."""
    if meta.get("owner") != "dbbench":
        return "foreign"
    return "complete" if meta.get("state") == "complete" else "incomplete"


def drop_if_ours(conn, state: str, statement: str) -> None:
    """Run ``statement`` (the namespace's DROP) when ``state`` says the namespace is dbbench's."""
    if state in ("complete", "incomplete"):
        execute(conn, [statement])
        conn.commit()


def canonical(column: str, kind: str, forms: dict[str, str], null: str) -> str:
    """One column as text, ``null`` for NULL: ``forms[kind]`` (else ``forms["text"]``) with the
    column at ``{c}``. The dialects' forms give identical text for identical values."""
    return f"COALESCE({forms.get(kind, forms['text']).format(c=column)}, {null})"


def namespace_state(
    conn, exists: tuple[str, tuple[str, ...]], marker: tuple[str, tuple[str, ...]], meta_sql: str
) -> str:
    """absent | foreign | incomplete | complete: the query ``exists`` finds the namespace, ``marker``
    its ``dbbench_meta`` table (a row whose first value is not NULL), ``meta_sql`` reads that."""
    with conn.cursor() as cur:
        for (sql, params), missing in ((exists, "absent"), (marker, "foreign")):
            cur.execute(sql, params)
            row = cur.fetchone()
            if row is None or row[0] is None:
                return missing
        cur.execute(meta_sql)
        return meta_state(dict(cur.fetchall()))


_NAMED = re.compile(r"%\((\w+)\)s")


def positional(sql: str, params: dict, numbered: bool) -> tuple[str, list]:
    """``%(name)s`` parameters as ``$1, $2, …`` (``numbered``: one number per name) or ``?`` (one
    per occurrence), ``%%`` as ``%``; and the values in that order."""
    order: list[str] = []

    def one(m: re.Match) -> str:
        name = m.group(1)
        if not numbered:
            order.append(name)
            return "?"
        if name not in order:
            order.append(name)
        return f"${order.index(name) + 1}"

    text = _NAMED.sub(one, sql).replace("%%", "%")
    return text, [params[n] for n in order]


# -- lock footprint (what a write or a locking read locks and changes, read before the rollback) --
_LOCKING_READ = re.compile(
    r"\bFOR\s+(?:NO\s+KEY\s+)?UPDATE\b|\bFOR\s+(?:KEY\s+)?SHARE\b|\bLOCK\s+IN\s+SHARE\s+MODE\b", re.I
)
_WRITE_VERB = re.compile(r"\b(?:INSERT|UPDATE|DELETE|MERGE|REPLACE)\b", re.I)
_FIRST_WORD = re.compile(r"^(?:\s|\(|/\*.*?\*/|--[^\n]*\n)*([A-Za-z]+)", re.S)
WRITE_VERBS = ("insert", "update", "delete", "merge", "replace")


def verb(sql: str) -> str:
    """The statement's first keyword, lower case ("" when there is none)."""
    m = _FIRST_WORD.match(sql)
    return m.group(1).lower() if m else ""


def writes(sql: str) -> bool:
    """Whether ``sql`` changes rows: INSERT / UPDATE / DELETE / MERGE / REPLACE, or a WITH whose
    statement (or one of its parts) is one."""
    first = verb(sql)
    return first in WRITE_VERBS or (first == "with" and bool(_WRITE_VERB.search(sql)))


def locks_rows(sql: str) -> bool:
    """Whether ``sql`` writes or reads with row locks (``FOR UPDATE``, ``FOR SHARE``, …): its lock
    footprint is worth reading."""
    return writes(sql) or bool(_LOCKING_READ.search(sql))


def footprint(
    tables: dict[str, dict[str, Any]], cascades: list[dict[str, Any]], affected: int | None
) -> dict:
    """The lock footprint as the result document holds it (``locks`` of a spelling): per table the
    rows locked (``rows``), the gaps (MySQL's next-key and gap locks), the rows changed
    (``changed``: inserted / updated / deleted) and the lock modes; the totals; the cascades a
    write on a parent caused; ``affected``: the rows the statement itself changed."""
    listed: list[dict[str, Any]] = []
    for name in sorted(tables):
        t = tables[name]
        changed = {k: int(v) for k, v in (t.get("changed") or {}).items() if v}
        listed.append(
            {
                "table": name,
                "rows": int(t.get("rows") or 0),
                "gaps": int(t.get("gaps") or 0),
                "changed": changed,
                "modes": sorted(set(t.get("modes") or ())),
                "indexes": sorted(set(t.get("indexes") or ())),
            }
        )
    return {
        "rows": sum(t["rows"] for t in listed),
        "gaps": sum(t["gaps"] for t in listed),
        "changed": sum(sum(t["changed"].values()) for t in listed),
        "affected": affected,
        "tables": listed,
        "cascades": cascades,
    }


def _count(value: Any) -> int:
    """A count of a footprint (a missing or malformed one counts 0: a result file is input)."""
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0


def footprint_summary(locks: dict[str, Any] | None) -> str:
    """A footprint (:func:`footprint`) in a few words: ``2,002 rows (group_binding 2,000,
    group_snapshot_stage 2), 2,011 gaps`` (tables holding none of its row locks left out; "" for
    a read)."""
    if not isinstance(locks, dict):
        return ""
    held = [t for t in locks.get("tables") or [] if isinstance(t, dict) and t.get("table")]
    parts = [f"{t['table']} {_count(t.get('rows')):,}" for t in held if _count(t.get("rows"))]
    rows, gaps = _count(locks.get("rows")), _count(locks.get("gaps"))
    text = f"{rows:,} row{'' if rows == 1 else 's'}" + (f" ({', '.join(parts)})" if parts else "")
    return text + (f", {gaps:,} gaps" if gaps else "")


def lock_wait(
    table: str | None,
    mode: str,
    *,
    index: str | None = None,
    row: str | None = None,
    holds: bool | None = None,
) -> dict[str, Any]:
    """A lock a session waits for, as a race's record keeps it (:mod:`dbbench.measure.race`): the
    lock's table, index (MySQL), mode and row, and whether the holder is the session holding it
    (None: not known)."""
    return {"table": table, "index": index, "mode": mode, "row": row, "holder_holds": holds}
