"""assert_plan's work bound (``max_rows_examined``), counted as ``dbbench diff`` counts work, on a
schema of the test's own on both servers: the same index, the rows a filter throws away included."""

from __future__ import annotations

import pytest

from dbbench import PlanAssertionError, assert_plan
from dbbench.measure.assertions import explain
from tests.db import connection, execute

NS = "dbbench_t_planwork"
SCHEMA = {
    "postgresql": [f"DROP SCHEMA IF EXISTS {NS} CASCADE", f"CREATE SCHEMA {NS}", f"SET search_path TO {NS}"],
    "mysql": [f"DROP DATABASE IF EXISTS {NS}", f"CREATE DATABASE {NS}", f"USE {NS}"],
}
# 1,000 orders per customer; 20 of them with each total: (customer, total) bounds 20 rows, a
# spelling the index cannot bound by total reads the customer's 1,000 and throws 980 away
BOUNDED = "SELECT id FROM orders WHERE customer_id = :c AND total = :t"
FILTERED = "SELECT id FROM orders WHERE customer_id = :c AND total + 0 = :t"
PARAMS = {"c": 7, "t": 49}


TABLE = [
    "CREATE TABLE orders (id int PRIMARY KEY, customer_id int NOT NULL, total int NOT NULL)",
    "INSERT INTO orders VALUES " + ",".join(f"({i}, {i % 20}, {i * 7 % 1000})" for i in range(1, 20001)),
    "CREATE INDEX ix_orders_customer_total ON orders (customer_id, total)",
]
ANALYZE = {"postgresql": "ANALYZE orders", "mysql": "ANALYZE TABLE orders"}


@pytest.fixture(params=["postgresql", "mysql"])
def orders(request, local_servers):
    """A connection in the test's own namespace, holding 20,000 orders of 20 customers."""
    dialect = request.param
    with connection(dialect) as conn:
        execute(conn, [*SCHEMA[dialect], *TABLE, ANALYZE[dialect]])
        conn.commit()
        yield conn
        execute(conn, SCHEMA[dialect][:1])
        conn.commit()


def test_a_bound_on_the_rows_examined_tells_a_bounded_lookup_from_a_filtered_one(orders):
    bounded = assert_plan(
        orders, BOUNDED, PARAMS, uses_index="ix_orders_customer_total", max_rows_examined=100
    )
    assert 20 <= bounded.rows_examined <= 100
    # the same index, but the total is filtered after the customer's 1,000 rows are read
    filtered = explain(orders, FILTERED, PARAMS)
    assert any(n.index == "ix_orders_customer_total" for n in filtered.tree.walk())
    assert filtered.rows_examined >= 1000 and filtered.rows_examined >= 10 * bounded.rows_examined
    with pytest.raises(PlanAssertionError) as failed:
        assert_plan(orders, FILTERED, PARAMS, uses_index="ix_orders_customer_total", max_rows_examined=100)
    message = str(failed.value)
    assert f"examines {filtered.rows_examined:,.0f} rows, more than 100 (most at " in message
    assert "plan:" in message
