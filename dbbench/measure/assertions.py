"""Plan assertions for your own DAO tests: ``assert_plan(conn, sql, params, uses_index=…)``.

>>> from dbbench import assert_plan
>>> assert_plan(engine, "SELECT * FROM orders WHERE customer_id = :c", {"c": 42},
...             uses_index="ix_orders_customer", table="orders", forbid=["seq_scan", "filesort"])

``conn`` is a SQLAlchemy Engine or Connection, or a psycopg / PyMySQL connection, to PostgreSQL or
MySQL 8.0.18+. The statement runs under ``EXPLAIN ANALYZE`` and is rolled back: in a transaction of
its own, or, when the connection is already inside one (a test's uncommitted rows), back to a
savepoint, so the caller's work stays. A failing assertion raises :class:`PlanAssertionError` whose
message shows the plan. ``forbid`` takes ``full_scan`` (or ``seq_scan`` / ``table_scan``),
``full_scan:TABLE``, ``sort`` (or ``filesort``) and ``temp_table`` (or ``temporary``); any other
name is a ValueError, never silently ignored. ``max_rows_examined`` bounds the plan's work, counted
as ``dbbench diff`` and ``dbbench grow`` count it (rows every node produced or read and discarded,
times its loops): evidence that does not move with machine noise.
"""

from __future__ import annotations

from dataclasses import dataclass

from dbbench import dialects
from dbbench.catalog.features import normalize_forbid
from dbbench.catalog.params import to_pyformat
from dbbench.defaults import DIALECT_LABEL
from dbbench.dialects.plan import PlanNode, accesses
from dbbench.measure.expect import PlanCheck, check


class PlanAssertionError(AssertionError):
    def __init__(
        self,
        verdict: PlanCheck,
        tree: PlanNode,
        sql: str,
        dialect: str | None = None,
        params: dict | None = None,
    ):
        self.verdict, self.tree, self.dialect = verdict, tree, dialect
        label = DIALECT_LABEL.get(dialect or "", "")
        super().__init__(
            (f"{label}: " if label else "")
            + f"expected {verdict.expected}; actual: {verdict.actual}\n"
            + "\n".join(f"  - {p}" for p in verdict.problems)
            + f"\nstatement: {' '.join(sql.split())}"
            + (f"\nparams: {params!r}" if params else "")
            + f"\nplan:\n{tree.render(1)}"
        )


@dataclass
class PlanResult:
    tree: PlanNode
    executor_ms: float
    raw: object
    dialect: str = ""

    @property
    def rows_examined(self) -> float:
        """The plan's work: rows every node produced or read and discarded, times its loops."""
        return sum(n.examined for n in self.tree.walk())


def work_problem(result: PlanResult, limit: float) -> str | None:
    """What is wrong with ``result`` examining more than ``limit`` rows, naming the node that
    examined the most; None within the limit."""
    if result.rows_examined <= limit:
        return None
    top = max(result.tree.walk(), key=lambda n: n.examined)
    return (
        f"examines {result.rows_examined:,.0f} rows, more than {limit:,.0f} "
        f"(most at {top.label}: {top.examined:,.0f} rows)"
    )


def _driver_connection(conn):
    """(dialect, DB-API connection, release callback) for the supported connection kinds."""
    import sqlalchemy as sa

    if isinstance(conn, sa.Engine):
        raw = conn.raw_connection()
        return conn.dialect.name, raw.driver_connection, raw.close
    if isinstance(conn, sa.Connection):
        return conn.dialect.name, conn.connection.driver_connection, lambda: None
    module = type(conn).__module__
    if module.startswith("psycopg"):
        return "postgresql", conn, lambda: None
    if module.startswith("pymysql"):
        return "mysql", conn, lambda: None
    raise TypeError(
        f"assert_plan needs a SQLAlchemy engine/connection or a psycopg/PyMySQL connection, "
        f"not {type(conn).__name__}"
    )


def explain(conn, sql: str, params: dict | None = None, *, timeout_ms: int = 30_000) -> PlanResult:
    """The normalized plan of ``sql`` (``:name`` parameters), measured and rolled back."""
    dialect, dbapi, release = _driver_connection(conn)
    try:
        raw, tree, ms = dialects.get(dialect).run_explain(dbapi, to_pyformat(sql), params or {}, timeout_ms)
    finally:
        release()
    return PlanResult(tree, ms, raw, dialect)


def assert_plan(
    conn,
    sql: str,
    params: dict | None = None,
    *,
    uses_index: str,
    table: str | None = None,
    forbid: list[str] | tuple[str, ...] = ("full_scan",),
    max_rows_examined: float | None = None,
) -> PlanResult:
    """Assert that ``sql`` reads ``table`` (default: the table the index is on, else the only table
    read) through ``uses_index``, that no ``forbid`` feature (full_scan, full_scan:TABLE, sort,
    temp_table, or seq_scan / table_scan / filesort / temporary) appears and, when given, that
    it examines at most ``max_rows_examined`` rows. Returns the plan for further checks."""
    __tracebackhide__ = True  # pytest: report the failure at the caller's line
    forbid = normalize_forbid(forbid)
    result = explain(conn, sql, params)
    if table is None:
        found = accesses(result.tree)
        on_index = list(dict.fromkeys(n.table for n in found if n.index == uses_index and n.table))
        read = list(dict.fromkeys(n.table for n in found if n.table))
        table = (on_index or (read if len(read) == 1 else []) or ["?"])[0]
    verdict = check(result.tree, table, uses_index, forbid)
    if max_rows_examined is not None and (problem := work_problem(result, max_rows_examined)):
        verdict.ok = False
        verdict.problems.append(problem)
    if not verdict.ok:
        raise PlanAssertionError(verdict, result.tree, sql, result.dialect, params)
    return result
