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


# the built-in catalog's secondary indexes a test may lose, and their tables
TABLE_OF = {
    "ix_relation_lookup": "package_relation",
    "ix_suite_pending": "suite_state",
    "ix_stage_cleanup": "group_snapshot_stage",
    "ix_package_namespace": "package",
}


def drop_index(dialect: str, index: str, table: str | None = None) -> str:
    """The statement that drops ``index`` (of ``table``, else :data:`TABLE_OF`'s)."""
    if dialect == "postgresql":
        return f"DROP INDEX {index}"
    return f"ALTER TABLE {table or TABLE_OF[index]} DROP INDEX {index}"


@contextlib.contextmanager
def seeded_without(
    namespace: str, *lost: str, dataset: str = "alpine-ci", only: Sequence[Dialect] = DIALECTS
) -> Iterator[dict[str, Target]]:
    """``dataset`` seeded into ``namespace`` on each server, the indexes ``lost`` dropped there (the
    DAO change that lost them); the targets by dialect, disposed and the namespace dropped after."""
    from dbbench.dataset import seed

    targets = [t for t in open_targets({}) if t.dialect in only]
    try:
        _, results, _ = seed.seed(targets, dataset, namespace=namespace)
        assert all(r.ok for r in results), [c for r in results for c in r.checks if not c.ok]
        for t in targets:
            for index in lost:
                sql(t, drop_index(t.dialect, index), namespace=namespace)
        yield {t.dialect: t for t in targets}
    finally:
        for t in targets:
            t.dispose()
        drop_namespaces(namespace, only=only)


def indexes(where: Dialect | Target, namespace: str) -> list[tuple]:
    """Every index of ``namespace`` as the server's catalog shows it, in a fixed order: PostgreSQL
    (name, definition); MySQL one row per key part (table, name, column, expression, position,
    prefix, direction, visibility)."""
    dialect = where if isinstance(where, str) else where.dialect
    if dialect == "postgresql":
        return sql(
            where, f"SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = '{namespace}' ORDER BY 1"
        )
    return sql(
        where,
        "SELECT table_name, index_name, column_name, expression, seq_in_index, sub_part, collation, is_visible "
        f"FROM information_schema.statistics WHERE table_schema = '{namespace}' ORDER BY 1, 2, 5",
    )


def fingerprints(
    namespace: str, tables: Sequence[str], only: Sequence[Dialect] = DIALECTS
) -> dict[tuple[str, str], str]:
    """(dialect, table) -> the content digest of each of ``tables`` of ``namespace`` on the local
    servers of ``only`` (:func:`dbbench.setup.loader.table_fingerprint`): what a rolled-back run
    must leave equal."""
    from dbbench.setup.loader import table_fingerprint

    out = {}
    for dialect in only:
        with connection(dialect, namespace=namespace) as conn:
            for table in tables:
                out[dialect, table] = table_fingerprint(conn, dialect, namespace, table)
    return out


def statistics(where: Dialect | Target, namespace: str) -> list[list[tuple]]:
    """The statistics plans in ``namespace`` are made from, as the server keeps them:
    PostgreSQL's pages, tuples and size on disk of every relation; MySQL's InnoDB persisted
    statistics (its index rows, then its table rows)."""
    dialect = where if isinstance(where, str) else where.dialect
    if dialect == "postgresql":
        queries = [
            "SELECT relname, relpages, reltuples, relallvisible, pg_relation_size(oid) FROM pg_class "
            f"WHERE relnamespace = '{namespace}'::regnamespace ORDER BY 1"
        ]
    else:
        queries = [
            f"SELECT * FROM mysql.innodb_index_stats WHERE database_name = '{namespace}' ORDER BY 2, 3, 5",
            f"SELECT * FROM mysql.innodb_table_stats WHERE database_name = '{namespace}' ORDER BY 2",
        ]
    return sql(where, queries, fetch="each")


def planner_state(where: Dialect | Target, namespace: str) -> dict[str, Any]:
    """What plans in ``namespace`` are made from, cheap to read: the index definitions
    (:func:`indexes`), each table's rows, the :func:`statistics`, and PostgreSQL's pg_stats."""
    dialect = where if isinstance(where, str) else where.dialect
    q = dialects.get(dialect).quote
    found = statistics(where, namespace)
    if dialect == "postgresql":
        tables = [
            r[0] for r in sql(where, f"SELECT tablename FROM pg_tables WHERE schemaname = '{namespace}'")
        ]
        found += sql(
            where,
            "SELECT tablename, attname, null_frac, n_distinct, most_common_vals::text, "
            "most_common_freqs::text, histogram_bounds::text, correlation FROM pg_stats "
            f"WHERE schemaname = '{namespace}' ORDER BY 1, 2",
            fetch="each",
        )
    else:
        tables = [
            r[0]
            for r in sql(
                where,
                "SELECT table_name FROM information_schema.tables "
                f"WHERE table_schema = '{namespace}' AND table_type = 'BASE TABLE'",
            )
        ]
    counts = sql(
        where,
        " UNION ALL ".join(f"SELECT '{t}', COUNT(*) FROM {q(namespace)}.{q(t)}" for t in sorted(tables))
        or "SELECT 1",
    )
    return {"indexes": indexes(where, namespace), "rows": sorted(counts), "statistics": found}


SHARED_100K = "dbbench_t_alpine_100k"


class Shared100k:
    """alpine-100k seeded once per test process into :data:`SHARED_100K`, for the modules that
    use it as seeded (``tests/conftest.py`` sends them to one worker, one after the other). Each
    :meth:`lent` checks the namespace is as the seed left it (:func:`planner_state`) and seeds it
    again when it is not, so a module that changed it costs a seed, never another module's
    result; :meth:`spoil` says a module changed it on purpose."""

    def __init__(self) -> None:
        self.seeded: dict[str, Any] | None = None

    @contextlib.contextmanager
    def lent(self) -> Iterator[dict[str, Target]]:
        """Both servers' targets, by dialect, on the namespace as seeded; disposed after."""
        from dbbench.dataset import seed

        targets = open_targets({})
        try:
            if (
                self.seeded is None
                or {t.dialect: planner_state(t, SHARED_100K) for t in targets} != self.seeded
            ):
                _, results, _ = seed.seed(targets, "alpine-100k", namespace=SHARED_100K)
                assert all(r.ok for r in results), [c for r in results for c in r.checks if not c.ok]
                self.seeded = {t.dialect: planner_state(t, SHARED_100K) for t in targets}
            yield {t.dialect: t for t in targets}
        finally:
            for t in targets:
                t.dispose()

    def spoil(self) -> None:
        """The namespace was changed on purpose: the next :meth:`lent` seeds it again."""
        self.seeded = None
