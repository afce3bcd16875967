"""Which column a parameter is compared with, read through what wraps either side
(:func:`dbbench.catalog.sqltext.comparisons`): the column whose data gives the parameter its values."""

from __future__ import annotations

import time

import pytest

from dbbench.catalog.sqltext import comparisons, in_lists

SEEN = [
    # (a WHERE clause, parameter, (qualifier, column), how)
    ("o.customer_id = :customer_id", "customer_id", ("o", "customer_id"), "eq"),
    ("customer_id + 0 = :customer_id", "customer_id", (None, "customer_id"), "eq"),
    ("lower(title) = lower(:title)", "title", (None, "title"), "eq"),
    ("upper(t.code) = :code", "code", ("t", "code"), "eq"),
    ("coalesce(account_id, 0) = :account_id", "account_id", (None, "account_id"), "eq"),
    ("title || '' = :title", "title", (None, "title"), "eq"),
    ("CAST(placed_at AS date) >= :day", "day", (None, "placed_at"), "range"),
    ("date(created_at) = :day", "day", (None, "created_at"), "eq"),
    ("placed_at::date = :day", "day", (None, "placed_at"), "eq"),
    ("customer_id = CAST(:customer_id AS int)", "customer_id", (None, "customer_id"), "eq"),
    ("customer_id = :customer_id::int", "customer_id", (None, "customer_id"), "eq"),
    (":limit_id > id", "limit_id", (None, "id"), "range"),
    ("(upper(:code) = upper(code))", "code", (None, "code"), "eq"),
    ("status IN (:status)", "status", (None, "status"), "eq"),
    ("lower(status) NOT IN (:status)", "status", (None, "status"), "eq"),
    ("name NOT LIKE :name", "name", (None, "name"), "range"),
    ("created_at BETWEEN :a AND :b AND x = 1", "b", (None, "created_at"), "range"),
    ("a IN (SELECT b FROM u WHERE c = :c)", "c", (None, "c"), "eq"),
]

NOT_SEEN = [
    # the other side computes another kind of value than the column's
    ("EXTRACT(YEAR FROM created_at) = :year", "year"),
    ("length(name) = :n", "n"),
    # the parameter's side is not the parameter's value
    ("created_at > now() - :age", "age"),
    ("name = md5(:name)", "name"),
    ("a = :a + b", "a"),
    # no comparison
    ("id = 1 LIMIT :limit", "limit"),
    ("f(a = 1, :x)", "x"),
]


@pytest.mark.parametrize(("where", "name", "column", "how"), SEEN)
def test_the_column_is_found_through_what_wraps_it(where, name, column, how):
    found = comparisons(f"SELECT id FROM t WHERE {where}")
    assert name in found, found
    assert found[name].columns[0] == column and found[name].how == how


@pytest.mark.parametrize(("where", "name"), NOT_SEEN)
def test_a_side_of_another_kind_of_value_gives_no_column(where, name):
    assert name not in comparisons(f"SELECT id FROM t WHERE {where}")


def test_in_lists_name_the_parameters_of_each_list():
    sql = "SELECT 1 FROM t WHERE a IN (:a, :a_2, :a_3) AND b IN (:b) AND c IN (1, :c)"
    assert in_lists(sql) == [["a", "a_2", "a_3"], ["b"]]


def test_a_long_or_deep_text_is_read_in_linear_time():
    n = 200_000
    for sql in (
        "SELECT 1 FROM t WHERE " + "(" * n + "a = :a" + ")" * n,
        "SELECT 1 FROM t WHERE a = " + "lower(" * n + ":a" + ")" * n,
        "SELECT 1 FROM t WHERE " + " AND ".join(f"c{i} = :p{i}" for i in range(n // 10)),
        "SELECT 1 FROM t WHERE a IN (" + ", ".join(f":p{i}" for i in range(n // 10)) + ")",
    ):
        started = time.thread_time()  # this thread's CPU time: the other workers' work is not its
        comparisons(sql)
        in_lists(sql)
        assert time.thread_time() - started < 10


def test_a_list_value_is_written_out_as_one_parameter_per_value():
    from dbbench.catalog.sqltext import expand_lists

    sql, values, groups = expand_lists(
        "SELECT 1 FROM t WHERE s IN (:s) AND a = :a AND b IN ( :s_2 )",
        {"s": ["x", "y", "z"], "a": 1, "s_2": [5]},
    )
    assert sql == "SELECT 1 FROM t WHERE s IN (:s, :s_3, :s_4) AND a = :a AND b IN ( :s_2 )"
    assert values == {"a": 1, "s": "x", "s_3": "y", "s_4": "z", "s_2": 5}
    assert groups == {"s": ["s", "s_3", "s_4"], "s_2": ["s_2"]}


def test_an_annotated_block_with_a_list_parameter_is_checked_with_every_value(tmp_path):
    from dbbench.catalog import sqlfiles

    problems: list[str] = []
    blocks = sqlfiles.parse(
        "-- name: queue\n"
        '-- dbbench: param status = ["open", "pending"]\n'
        "SELECT id FROM tickets WHERE status IN (:status) ORDER BY opened_at LIMIT 50;\n"
        "-- name: bad\n"
        '-- dbbench: param status = ["open"]\n'
        "-- dbbench: param account_id = []\n"
        "-- dbbench: param x = {a = 1}\n"
        "SELECT id FROM tickets WHERE status = :status AND account_id IN (:account_id) AND x = :x;\n",
        tmp_path / "q.sql",
        problems,
    )
    assert (
        blocks[0].sql
        == "SELECT id FROM tickets WHERE status IN (:status, :status_2) ORDER BY opened_at LIMIT 50"
    )
    assert blocks[0].params == {"status": "open", "status_2": "pending"}
    where = f"{tmp_path / 'q.sql'}:4: shape 'bad'"
    assert problems == [
        f"{where}: param status: a list is the values of an IN-list: write IN (:status)",
        f"{where}: param account_id: an empty list: an IN-list holds at least one value",
        f"{where}: param x: a table is not a value",
    ]
    # a captured block is written with its list, and reads back the same
    block = sqlfiles.Block(
        "q", tmp_path / "c.sql", 0, sql="SELECT 1 FROM t WHERE a IN (:a)", params={"a": [1, 2]}
    )
    assert "-- dbbench: param a = [1, 2]\n" in sqlfiles.render(block)
    again = sqlfiles.parse(sqlfiles.render(block), tmp_path / "c.sql", problems)
    assert again[0].sql == "SELECT 1 FROM t WHERE a IN (:a, :a_2)" and again[0].params == {"a": 1, "a_2": 2}
