"""The shop's DAO tests, with dbbench's pytest plugin (see pytest.ini next to this file).

Each test runs on PostgreSQL and on MySQL (``test_…[postgresql]``, ``test_…[mysql]``), in a
namespace dbbench built from this directory's setup SQL.
"""

import pytest
import shop_dao


def assert_recent_orders_walk_the_index(dbbench_conn, assert_plan):
    """A customer's ten most recent orders: read in order from the (customer, placed) index."""
    plan = assert_plan(
        dbbench_conn,
        shop_dao.RECENT_ORDERS,
        {"customer_id": 42},
        uses_index="ix_orders_customer_placed",
        forbid=["seq_scan", "filesort"],
    )
    assert plan.tree.actual_rows == 10


def test_recent_orders_walk_the_customer_index(dbbench_conn, assert_plan):
    assert_recent_orders_walk_the_index(dbbench_conn, assert_plan)


# (query, parameters, the index it must use, what its plan must not do)
LOOKUPS = {
    "sign_in_by_email": (
        shop_dao.CUSTOMER_BY_EMAIL,
        {"email": "customer42@example.com"},
        "uq_customers_email",
        ["full_scan"],
    ),
    "open_orders_unsorted": (
        shop_dao.OPEN_ORDERS,
        {"status": "open"},
        "ix_orders_status_placed",
        ["full_scan", "sort"],
    ),
}


@pytest.mark.parametrize(("sql", "params", "index", "forbid"), list(LOOKUPS.values()), ids=list(LOOKUPS))
def test_lookups_use_their_index(dbbench_conn, assert_plan, sql, params, index, forbid):
    assert_plan(dbbench_conn, sql, params, uses_index=index, forbid=forbid)


def test_a_new_order_is_found_through_the_index(dbbench_conn, assert_plan):
    # Rows the test writes stay visible to the plan check (it runs under a savepoint) and are
    # rolled back after the test by the dbbench_conn fixture.
    shop_dao.place_order(dbbench_conn, 900001, 42, 1234)
    assert shop_dao.recent_orders(dbbench_conn, 42)[0][0] == 900001
    assert_recent_orders_walk_the_index(dbbench_conn, assert_plan)
    assert shop_dao.recent_orders(dbbench_conn, 42)[0][0] == 900001
