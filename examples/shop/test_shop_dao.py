"""The shop's DAO tests, with dbbench's pytest plugin (see pytest.ini next to this file).

Each test runs on PostgreSQL and on MySQL (``test_…[postgresql]``, ``test_…[mysql]``), in a
namespace dbbench built from this directory's setup SQL.
"""

import shop_dao


def test_recent_orders_walk_the_customer_index(dbbench_conn, assert_plan):
    plan = assert_plan(
        dbbench_conn,
        shop_dao.RECENT_ORDERS,
        {"customer_id": 42},
        uses_index="ix_orders_customer_placed",
        forbid=["seq_scan", "filesort"],
    )
    assert plan.tree.actual_rows == 10


def test_sign_in_uses_the_unique_email_index(dbbench_conn, assert_plan):
    assert_plan(
        dbbench_conn,
        shop_dao.CUSTOMER_BY_EMAIL,
        {"email": "customer42@example.com"},
        uses_index="uq_customers_email",
        forbid=["full_scan"],
    )


def test_open_orders_need_no_sort(dbbench_conn, assert_plan):
    assert_plan(
        dbbench_conn,
        shop_dao.OPEN_ORDERS,
        {"status": "open"},
        uses_index="ix_orders_status_placed",
        forbid=["full_scan", "sort"],
    )


def test_a_new_order_is_found_through_the_index(dbbench_conn, assert_plan):
    # Rows the test writes stay visible to the plan check (it runs under a savepoint) and are
    # rolled back after the test by the dbbench_conn fixture.
    shop_dao.place_order(dbbench_conn, 900001, 42, 1234)
    assert shop_dao.recent_orders(dbbench_conn, 42)[0][0] == 900001
    plan = assert_plan(
        dbbench_conn,
        shop_dao.RECENT_ORDERS,
        {"customer_id": 42},
        uses_index="ix_orders_customer_placed",
        forbid=["seq_scan", "filesort"],
    )
    assert plan.tree.actual_rows == 10
    assert shop_dao.recent_orders(dbbench_conn, 42)[0][0] == 900001
