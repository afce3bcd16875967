"""Writes and locking reads measured without changing anything: what they lock, what they cascade
into, and proof that the data is as it was.

Every sample of an ``UPDATE`` / ``DELETE`` / ``INSERT … SELECT`` / ``SELECT … FOR UPDATE`` runs in
a transaction that is rolled back (:func:`dbbench.dialects.common.explain_frame`); its last timed
sample reads the lock footprint before the rollback (``locks`` of a spelling,
:func:`dbbench.dialects.common.footprint`). Here: which tables a write can change (its own, and
every table a foreign key cascades it into), their digests before the first and after the
last run (:func:`guard`), and what is wrong with a footprint (:func:`lock_problems`): more rows
locked than the shape allows, a child table scanned in full for a foreign key it has no index on.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from typing import Any

from dbbench.dialects import common

_NAMES = re.compile(r"[A-Za-z_][A-Za-z0-9_$]*")


def tables_written(conn, d, namespace: str, sql: str) -> list[str]:
    """The namespace's tables a write may change: the tables its text names, and every table a
    foreign key of one of those reaches (a cascade's child, its children, …), sorted."""
    keys = d.schema_keys(conn, namespace)
    conn.rollback()
    tables = {row[0] for row in keys} | {row[4] for row in keys if row[4]}
    words = {w.lower() for w in _NAMES.findall(sql)}
    found = {t for t in tables if t.lower() in words and t != "dbbench_meta"}
    children: dict[str, set[str]] = {}
    for table, _, kind, _, parent, _, _ in keys:
        if kind == "foreign" and parent:
            children.setdefault(parent, set()).add(table)
    todo = list(found)
    while todo:
        for child in children.get(todo.pop(), ()):
            if child not in found:
                found.add(child)
                todo.append(child)
    return sorted(found)


def digests(conn, d, namespace: str, tables: list[str]) -> dict[str, str]:
    """Each table's digest that any committed change moves (the dialect's ``unchanged_digests``:
    PostgreSQL's row versions, InnoDB's checksum of the rows)."""
    try:
        return d.unchanged_digests(conn, namespace, tables)
    finally:
        conn.rollback()


@contextlib.contextmanager
def guard(conn, d, namespace: str, sql: str) -> Iterator[dict[str, Any]]:
    """Around every run of a write: the digests of the tables it may change (on ``conn``,
    dbbench's own connection) before and after. Yields the record the result keeps
    (``unchanged``: the tables and whether every digest is equal), filled in at the end;
    nothing for a statement that does not write."""
    record: dict[str, Any] = {}
    if not common.writes(sql):
        yield record
        return
    tables = tables_written(conn, d, namespace, sql)
    before = digests(conn, d, namespace, tables)
    if grows(sql):  # recorded before the writes run: a killed run's next run settles them
        record["settle"] = tables
        d.settle_pending(conn, namespace, tables)
    yield record
    after = digests(conn, d, namespace, tables)
    record.update(
        tables=tables,
        equal=before == after,
        changed=[t for t in tables if before.get(t) != after.get(t)],
    )


def unchanged_problem(record: dict[str, Any]) -> str | None:
    """What :func:`guard` found wrong, if anything."""
    if not record or record.get("equal", True):
        return None
    return (
        "the data changed: table(s) "
        + ", ".join(record.get("changed") or [])
        + " hold other rows after the runs than before (every sample should have been rolled back)"
    )


def lock_problems(locks: dict | None, bound: int | None, verb: str) -> list[str]:
    """What is wrong with a lock footprint: more rows locked than ``bound`` (``max_locked_rows``),
    naming the tables and the indexes they were locked through; a child table whose foreign key
    has no index to use (the child is read for every parent row changed)."""
    if not locks:
        return []
    found = []
    rows = int(locks.get("rows") or 0)
    if bound is not None and rows > bound:
        where = "; ".join(
            f"{t['table']}: {t['rows']:,}"
            + (f" through {', '.join(t['indexes'])}" if t.get("indexes") else "")
            for t in sorted(locks.get("tables") or [], key=lambda t: -int(t.get("rows") or 0))
            if t.get("rows")
        )
        many = "" if rows == 1 else "s"
        found.append(
            f"{verb.upper()} locks {rows:,} row{many}, more than max_locked_rows {bound:,} ({where})"
        )
    for c in locks.get("cascades") or []:
        if c.get("index"):
            continue
        scans = c.get("child_full_scans")
        found.append(
            f"{verb.upper()} on {c.get('parent')}: child table {c.get('child')} has no index on its foreign "
            f"key {c.get('constraint')} ({', '.join(c.get('columns') or [])}), so every parent row "
            f"changed reads {c.get('child')}"
            + (
                f" ({scans:,} full scan{'s' if scans != 1 else ''})"
                if isinstance(scans, int) and scans
                else ""
            )
        )
    return found


def verb_of(tree, sql: str) -> str:
    """``UPDATE package_relation`` / ``SELECT … FOR UPDATE``: the statement in two words."""
    first = common.verb(sql).upper()
    if tree is not None and tree.kind == "modify" and tree.table:
        return f"{first} {tree.table}"
    return f"{first} … FOR UPDATE" if first in ("SELECT", "WITH") else first


_GROWING_VERBS = ("insert", "update", "replace", "merge", "with")


def grows(sql: str) -> bool:
    """Whether ``sql`` may leave rolled-back row versions behind (an insert or an update; a
    rolled-back delete leaves none)."""
    return common.writes(sql) and common.verb(sql) in _GROWING_VERBS


@contextlib.contextmanager
def settled(target, shapes, namespace: str) -> Iterator[list[str]]:
    """Around a command that runs a catalog's writes where they cannot be settled one by one
    (inside an index trial's transaction: ``dbbench advise``, ``dbbench indexes``): what a killed
    run left settled first, the tables the writes may grow recorded, and settled at the end, also
    after an error (:func:`~dbbench.dialects.postgresql.settle_writes`). Yields the tables."""
    from dbbench import dialects

    d = dialects.get(target.dialect)
    texts = [s.variants[target.dialect].sql for s in shapes if target.dialect in s.variants]
    texts = [t for t in texts if grows(t)]
    with target.all_or_nothing() as conn:
        d.use(conn, namespace)
        conn.commit()  # PostgreSQL's search_path is transactional
        d.recover_settle(conn, namespace)
        tables = sorted({t for text in texts for t in tables_written(conn, d, namespace, text)})
        if tables:
            d.settle_pending(conn, namespace, tables)
    try:
        yield tables
    finally:
        if tables:
            with target.all_or_nothing() as conn:
                d.settle_writes(conn, namespace, tables)
