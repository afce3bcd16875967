"""Hostile and malformed inputs are one-line errors with bounded work (issue 13, items 5 and 7):
result files, scenario files, deep plans, the dbbench home, unexpected errors and output paths."""

from __future__ import annotations

import json

import pytest

from dbbench.dialects import mysql, postgresql
from dbbench.errors import DbbenchError
from dbbench.plan import MAX_DEPTH


# -- plans from the servers' EXPLAIN output --------------------------------------------------------
def deep_pg_plan(depth: int) -> list:
    leaf: dict = {"Node Type": "Result", "Plan Rows": 1, "Actual Rows": 1, "Actual Loops": 1}
    node = leaf
    for _ in range(depth - 1):
        node = {"Node Type": "Result", "Parent Relationship": "InitPlan", "Plans": [node]}
    return [{"Plan": node, "Execution Time": 0.1}]


def deep_mysql_tree(depth: int) -> str:
    return "\n".join("    " * i + "-> Filter: (x = 1)  (cost=1 rows=1) (actual time=0.1..0.1 rows=1 loops=1)"
                     for i in range(depth)) + "\n"


def test_plans_nested_3000_deep_are_a_one_line_error():
    for parse, doc in ((postgresql.parse_plan, deep_pg_plan(3000)), (mysql.parse_plan, deep_mysql_tree(3000))):
        with pytest.raises(DbbenchError) as info:
            parse(doc)
        assert "nested more than" in str(info.value) and str(MAX_DEPTH) in str(info.value)


def test_plans_at_the_depth_bound_parse():
    tree, _ = postgresql.parse_plan(deep_pg_plan(MAX_DEPTH))
    nodes = list(tree.walk())
    assert len(nodes) == MAX_DEPTH and all(n.in_subquery for n in nodes[1:])
    json.dumps(tree.to_dict())
    tree, _ = mysql.parse_plan(deep_mysql_tree(MAX_DEPTH))
    assert len(list(tree.walk())) == MAX_DEPTH and tree.kind == "filter"


@pytest.fixture()
def pg_conn(local_urls):
    import psycopg
    with psycopg.connect(local_urls["postgresql"].replace("postgresql+psycopg://", "postgresql://")) as conn:
        yield conn


def test_a_deeply_nested_query_on_the_real_postgresql_is_a_one_line_error(pg_conn):
    sql = "SELECT 1"
    for i in range(500):
        sql = f"SELECT ({sql}) AS c{i}"
    with pytest.raises(DbbenchError) as info:
        postgresql.run_explain(pg_conn, sql, {}, 10_000)
    assert "nested more than" in str(info.value)
    # the connection is still usable and a normal plan still parses
    _raw, tree, ms = postgresql.run_explain(pg_conn, "SELECT (SELECT (SELECT 1))", {}, 10_000)
    assert tree.kind == "result" and ms >= 0
