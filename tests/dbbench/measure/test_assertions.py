"""assert_plan for users' own DAO tests, on a small schema of the test's own, on both servers."""

from __future__ import annotations

import pytest

from dbbench import PlanAssertionError, assert_plan
from tests.db import connection, execute

SCHEMA = {
    "postgresql": [
        "DROP SCHEMA IF EXISTS dbbench_t_shop CASCADE",
        "CREATE SCHEMA dbbench_t_shop",
        "SET search_path TO dbbench_t_shop",
    ],
    "mysql": [
        "DROP DATABASE IF EXISTS dbbench_t_shop",
        "CREATE DATABASE dbbench_t_shop",
        "USE dbbench_t_shop",
    ],
}
BY_CUSTOMER = "SELECT id FROM orders WHERE customer_id = :c"


@pytest.fixture(params=["postgresql", "mysql"])
def shop(request, local_servers):
    """An `orders` table with 20,000 rows and an index on customer_id."""
    dialect = request.param
    rows = ",".join(f"({i}, {i % 2000}, {i * 7 % 1000})" for i in range(1, 20001))
    with connection(dialect) as conn:
        execute(
            conn,
            [
                *SCHEMA[dialect],
                "CREATE TABLE orders (id int PRIMARY KEY, customer_id int NOT NULL, total int NOT NULL)",
                f"INSERT INTO orders VALUES {rows}",
                "CREATE INDEX ix_orders_customer ON orders (customer_id)",
                "ANALYZE orders" if dialect == "postgresql" else "ANALYZE TABLE orders",
            ],
        )
        conn.commit()
        yield dialect, conn


def scalar(conn, sql: str):
    """The first value of ``sql``'s first row, read in the test's own connection (its uncommitted
    rows seen); the transaction it read in is rolled back."""
    value = execute(conn, sql)[0][0]
    conn.rollback()
    return value


def test_assert_plan_passes_on_the_designed_index(shop):
    _dialect, conn = shop
    result = assert_plan(
        conn,
        "SELECT id, total FROM orders WHERE customer_id = :c",
        {"c": 42},
        uses_index="ix_orders_customer",
        forbid=["full_scan"],
    )
    assert result.tree.actual_rows == 10


def test_assert_plan_failure_shows_the_plan(shop):
    _dialect, conn = shop
    with pytest.raises(PlanAssertionError) as info:
        assert_plan(
            conn,
            "SELECT id FROM orders WHERE total = :t ORDER BY total",
            {"t": 7},
            uses_index="ix_orders_customer",
            table="orders",
            forbid=["full_scan"],
        )
    message = str(info.value)
    assert "expected orders using ix_orders_customer" in message
    assert "forbidden full scan of orders" in message
    assert "plan:" in message and ("Seq Scan" in message or "Table scan" in message)


def test_writes_are_executed_and_rolled_back(shop):
    """MySQL cannot EXPLAIN ANALYZE a single-table UPDATE: its plan is read from EXPLAIN FORMAT=JSON
    and the statement executed in the rolled-back transaction, its rows examined read from
    performance_schema; PostgreSQL's EXPLAIN ANALYZE executes it there too."""
    _dialect, conn = shop
    sql = "UPDATE orders SET total = -1 WHERE customer_id = :c"
    result = assert_plan(conn, sql, {"c": 1}, uses_index="ix_orders_customer")
    assert result.tree.kind == "modify" and result.tree.table == "orders"
    (access,) = [n for n in result.tree.walk() if n.index == "ix_orders_customer"]
    assert access.table == "orders" and access.actual_rows and access.actual_rows > 0
    with pytest.raises(PlanAssertionError, match="expected index ix_orders_total on orders is not used"):
        assert_plan(conn, sql, {"c": 1}, uses_index="ix_orders_total")
    changed = scalar(conn, "SELECT COUNT(*) FROM orders WHERE total = -1")
    assert changed == 0


def test_the_issues_call_with_the_servers_own_feature_names(shop):
    _dialect, conn = shop
    assert_plan(
        conn,
        "SELECT id, total FROM orders WHERE customer_id = :c ORDER BY customer_id",
        {"c": 42},
        uses_index="ix_orders_customer",
        forbid=["seq_scan", "filesort"],
    )
    with pytest.raises(ValueError, match="'hash_join' is not one of"):
        assert_plan(conn, BY_CUSTOMER, {"c": 42}, uses_index="ix_orders_customer", forbid=["hash_join"])


def test_uncommitted_rows_of_the_caller_survive_the_plan_check(shop):
    _dialect, conn = shop
    execute(conn, "INSERT INTO orders VALUES (900001, 42, 5)")  # the test's own, uncommitted
    result = assert_plan(conn, BY_CUSTOMER, {"c": 42}, uses_index="ix_orders_customer", forbid=["full_scan"])
    assert result.tree.actual_rows == 11  # the plan saw it
    still_there = scalar(conn, "SELECT COUNT(*) FROM orders WHERE id = 900001")
    after_rollback = scalar(conn, "SELECT COUNT(*) FROM orders WHERE id = 900001")
    assert (still_there, after_rollback) == (1, 0)  # kept, and never committed


def test_an_autocommit_connection_does_not_commit_the_explained_write(shop, local_urls):
    """EXPLAIN ANALYZE executes the statement: on an autocommit connection it must still be undone."""
    dialect, conn = shop
    import sqlalchemy as sa

    url = sa.engine.make_url(local_urls[dialect])
    if dialect == "postgresql":
        engine = sa.create_engine(
            url, isolation_level="AUTOCOMMIT", connect_args={"options": "-c search_path=dbbench_t_shop"}
        )
        sql = "DELETE FROM orders WHERE customer_id = :c"
    else:
        engine = sa.create_engine(url.set(database="dbbench_t_shop"), isolation_level="AUTOCOMMIT")
        sql = "DELETE o FROM orders AS o WHERE o.customer_id = :c"  # MySQL: multi-table form
    try:
        with engine.connect() as ac:  # a SQLAlchemy connection in AUTOCOMMIT
            assert_plan(ac, sql, {"c": 42}, uses_index="ix_orders_customer")
            raw = ac.connection.driver_connection  # the driver's own autocommit connection
            assert_plan(raw, sql, {"c": 43}, uses_index="ix_orders_customer")
    finally:
        engine.dispose()
    left = scalar(conn, "SELECT COUNT(*) FROM orders WHERE customer_id IN (42, 43)")
    assert left == 20


def test_aliased_tables_resolve_in_bitmap_scans_and_multi_table_updates(shop):
    dialect, conn = shop
    if dialect == "postgresql":
        execute(conn, "SET enable_seqscan = off")
        sql = "SELECT count(*) FROM orders o WHERE o.id < 50 OR o.customer_id = :c"
        result = assert_plan(conn, sql, {"c": 7}, uses_index="ix_orders_customer", table="orders")
        execute(conn, "RESET enable_seqscan")
        conn.commit()
        assert any(n.label == "BitmapOr" for n in result.tree.walk())  # the indexes sit under BitmapOr
        scans = [n for n in result.tree.walk() if n.index]
        assert {(n.table, n.alias) for n in scans} == {("orders", "o")}
    else:
        sql = "UPDATE orders AS o JOIN (SELECT 1 AS one) AS x SET o.total = -1 WHERE o.id = :id"
        result = assert_plan(conn, sql, {"id": 5}, uses_index="PRIMARY", table="orders")
        assert "using None" not in result.tree.render()
        assert scalar(conn, "SELECT total FROM orders WHERE id = 5") != -1


def test_the_callers_session_settings_are_left_as_they_were(shop):
    dialect, conn = shop
    setting = {"postgresql": "SHOW statement_timeout", "mysql": "SELECT @@SESSION.max_execution_time"}[
        dialect
    ]
    before = scalar(conn, setting)
    assert_plan(conn, BY_CUSTOMER, {"c": 42}, uses_index="ix_orders_customer")
    after = scalar(conn, setting)
    assert after == before
