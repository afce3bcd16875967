"""Plain SQL on the local servers, for the tests that set up or check a database by hand.

>>> sql("postgresql", "SELECT 1")
[(1,)]
>>> sql(target, "SELECT COUNT(*) FROM orders", namespace="shop")  # a target a fixture holds
[(20000,)]

Statements run as dbbench's own (admin) user, either on a dialect's server found as the command
line the tests run finds it (:func:`~dbbench.access.targets.open_targets`: its URL env var, else the
local server), opened and disposed for the call, or on a :class:`~dbbench.access.targets.Target`
the caller holds, left open. No parameters are sent, so ``%`` is literal.
:func:`drop_namespaces` removes what a test seeded, roles included.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any, Literal

from dbbench import dialects
from dbbench.access import isolation
from dbbench.access.targets import Target, open_targets
from dbbench.defaults import DIALECTS, Dialect

Rows = list[tuple]


@contextlib.contextmanager
def local_target(dialect: Dialect) -> Iterator[Target]:
    """The target of ``dialect`` the command line would use (the local server), disposed after."""
    (target,) = open_targets({}, dialect)
    try:
        yield target
    finally:
        target.dispose()


@contextlib.contextmanager
def connection(
    where: Dialect | Target, *, namespace: str | None = None, autocommit: bool = False
) -> Iterator[Any]:
    """The driver (DB-API) connection of ``where``: a dialect's local server, or a target.

    In ``namespace`` when given: the dialect's ``USE`` / ``search_path``, committed so that a
    rollback keeps it (a target's pooled connection keeps it too, as MySQL's ``USE`` always did).
    ``autocommit`` for what may not run in a transaction (``VACUUM``, ``CREATE DATABASE``). What
    is left uncommitted at the end is rolled back (:meth:`Target.all_or_nothing`)."""
    with contextlib.ExitStack() as stack:
        target = where if isinstance(where, Target) else stack.enter_context(local_target(where))
        with target.all_or_nothing() as conn:
            if autocommit:
                _autocommit(conn, True)
            if namespace is not None:
                dialects.get(target.dialect).use(conn, namespace)
                conn.commit()
            yield conn
            if autocommit:  # back to the target's pool as the pool gave it
                _autocommit(conn, False)


def _autocommit(conn: Any, on: bool) -> None:
    if callable(conn.autocommit):  # PyMySQL: a method; psycopg: an attribute
        conn.autocommit(on)
    else:
        conn.autocommit = on


def execute(conn: Any, statements: str | Sequence[str], *, fetch: Literal["last", "each"] = "last") -> Any:
    """Run ``statements`` (one, or each in turn) on an open driver connection, committing nothing.

    ``fetch="last"``: the last statement's rows (``[]`` when it returns none); ``"each"``: one such
    list per statement."""
    each: list[Rows] = []
    with conn.cursor() as cur:
        for stmt in [statements] if isinstance(statements, str) else statements:
            cur.execute(stmt)
            each.append([tuple(r) for r in cur.fetchall()] if cur.description else [])
    if fetch == "each":
        return each
    return each[-1] if each else []


def sql(
    where: Dialect | Target,
    statements: str | Sequence[str],
    *,
    namespace: str | None = None,
    fetch: Literal["last", "each"] = "last",
    autocommit: bool = False,
) -> Any:
    """Run ``statements`` on ``where`` (a dialect's local server, or a target) in one transaction,
    committed; the rows as :func:`execute` returns them. ``namespace`` and ``autocommit`` as in
    :func:`connection`."""
    with connection(where, namespace=namespace, autocommit=autocommit) as conn:
        rows = execute(conn, statements, fetch=fetch)
        conn.commit()
    return rows


def drop_namespaces(*namespaces: str, only: Sequence[Dialect] = DIALECTS) -> None:
    """Drop each of ``namespaces`` that is dbbench's, with its role, on the local servers of
    ``only`` (:func:`dbbench.access.isolation.drop_namespace`: absent is fine, anything not
    dbbench's is left alone)."""
    for dialect in only:
        with local_target(dialect) as target:
            for ns in namespaces:
                isolation.drop_namespace(target, ns)
