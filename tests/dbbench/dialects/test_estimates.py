"""Plain ``EXPLAIN`` (the planner's estimate, nothing executed) read by the same parsers as
``EXPLAIN ANALYZE``: the accesses and estimated rows, no actuals (no server needed). Shortened
from plans PostgreSQL 12 and MySQL 9.7 made of their system catalogs."""

from __future__ import annotations

from dbbench.dialects import mysql, postgresql
from dbbench.dialects.plan import accesses

PG_PLAIN = [
    {
        "Plan": {
            "Node Type": "Limit",
            "Startup Cost": 0.42,
            "Total Cost": 1.89,
            "Plan Rows": 3,
            "Plans": [
                {
                    "Node Type": "Nested Loop",
                    "Parent Relationship": "Outer",
                    "Join Type": "Inner",
                    "Total Cost": 459.34,
                    "Plan Rows": 935,
                    "Plans": [
                        {
                            "Node Type": "Index Only Scan",
                            "Parent Relationship": "Outer",
                            "Scan Direction": "Forward",
                            "Index Name": "pg_class_relname_nsp_index",
                            "Relation Name": "pg_class",
                            "Alias": "c",
                            "Total Cost": 304.64,
                            "Plan Rows": 935,
                            "Index Cond": "(relname > 'a'::name)",
                        },
                        {
                            "Node Type": "Seq Scan",
                            "Parent Relationship": "Inner",
                            "Relation Name": "pg_namespace",
                            "Alias": "n",
                            "Total Cost": 0.17,
                            "Plan Rows": 1,
                        },
                    ],
                }
            ],
        }
    }
]

MYSQL_PLAIN = """-> Limit: 3 row(s)  (cost=3.05 rows=3)
    -> Nested loop inner join  (cost=3.05 rows=5.2)
        -> Sort: u.`User`  (cost=1.27 rows=5)
            -> Filter: (u.`Host` > 'a')  (cost=1.27 rows=5)
                -> Covering index range scan on u using PRIMARY over ('a' < Host)  (cost=1.27 rows=5)
        -> Covering index lookup on h using User (User = u.`User`)  (cost=0.272 rows=1.04)
"""


def test_postgresql_plain_explain_reads_as_a_plan_without_actuals():
    tree, ms = postgresql.parse_plan(PG_PLAIN)
    assert ms == 0.0
    assert [(n.kind, n.table, n.index) for n in accesses(tree)] == [
        ("index_range", "pg_class", "pg_class_relname_nsp_index"),
        ("full_scan", "pg_namespace", None),
    ]
    assert all(n.actual_rows is None and n.loops is None and n.buffers is None for n in tree.walk())
    assert [n.est_rows for n in tree.walk()] == [3, 935, 935, 1]
    assert all(n.removed_rows == 0 for n in tree.walk())


def test_mysql_plain_explain_reads_as_a_plan_without_actuals():
    sql = "SELECT h.Host FROM mysql.user u JOIN mysql.db h ON h.User = u.User WHERE u.Host > 'a' ORDER BY u.User LIMIT 3"
    tree, ms = mysql.parse_plan(MYSQL_PLAIN, mysql.alias_map(sql))
    assert ms == 0.0
    assert [(n.kind, n.alias, n.index) for n in accesses(tree)] == [
        ("index_range", "u", "PRIMARY"),
        ("index_lookup", "h", "User"),
    ]
    assert [n.kind for n in tree.walk()][:4] == ["limit", "join", "sort", "filter"]
    assert all(n.actual_rows is None and n.actual_ms is None for n in tree.walk())
    assert [n.est_rows for n in tree.walk()] == [3, 5.2, 5, 5, 5, 1.04]
