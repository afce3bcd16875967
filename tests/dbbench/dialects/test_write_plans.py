"""Plans of writes read into the normalized tree (issue 36): MySQL 8.0's ``EXPLAIN FORMAT=JSON`` of
a single-table UPDATE / DELETE (which its iterator executor cannot EXPLAIN ANALYZE), the iterator's
``Delete from`` / ``Update`` / ``Insert into`` roots, PostgreSQL's ModifyTable; and which statements
write or lock rows."""

from __future__ import annotations

import pytest

from dbbench.dialects import common
from dbbench.dialects.mysql_plan import parse_plan, write_tree
from dbbench.dialects.plan import ACCESS_KINDS
from dbbench.dialects.postgresql import parse_plan as pg_parse_plan

# MySQL 8.0.36 EXPLAIN FORMAT=JSON (the only JSON format 8.0 has; 8.3+ with version 1)
DELETE_RANGE = {
    "query_block": {
        "select_id": 1,
        "table": {
            "delete": True,
            "table_name": "s",
            "access_type": "range",
            "possible_keys": ["ix_stage_cleanup"],
            "key": "ix_stage_cleanup",
            "used_key_parts": ["created_at"],
            "key_length": "8",
            "rows_examined_per_scan": 1,
            "filtered": "100.00",
            "attached_condition": "(`db`.`s`.`created_at` < TIMESTAMP'2026-08-01 00:00:00')",
        },
    }
}
UPDATE_SORTED = {
    "query_block": {
        "select_id": 1,
        "ordering_operation": {
            "using_filesort": True,
            "table": {
                "update": True,
                "table_name": "package_relation",
                "access_type": "ALL",
                "rows_examined_per_scan": 100000,
                "filtered": "100.00",
                "using_temporary_table": "for update",
                "attached_condition": "(`db`.`package_relation`.`token` = 'so:libcrypto.so.3')",
            },
        },
    }
}
UPDATE_BY_PRIMARY_SCAN = {
    "query_block": {
        "select_id": 1,
        "table": {
            "update": True,
            "table_name": "package_relation",
            "access_type": "index",
            "key": "PRIMARY",
            "rows_examined_per_scan": 2048,
        },
    }
}


def test_a_single_table_delete_is_a_modify_root_over_its_range_access_with_the_rows_it_examined():
    tree = write_tree(DELETE_RANGE, {"s": "group_snapshot_stage"}, "delete", 1, 1)
    assert (tree.kind, tree.label, tree.table, tree.actual_rows) == (
        "modify",
        "Delete group_snapshot_stage",
        "group_snapshot_stage",
        1,
    )
    (access,) = tree.children
    assert (access.kind, access.table, access.alias, access.index, access.est_rows, access.actual_rows) == (
        "index_range",
        "group_snapshot_stage",
        "s",
        "ix_stage_cleanup",
        1.0,
        1,
    )
    assert access.label == "Index range scan on group_snapshot_stage using ix_stage_cleanup"


def test_a_sorted_update_through_a_buffer_shows_the_sort_the_temporary_table_and_the_full_scan():
    tree = write_tree(UPDATE_SORTED, {}, "update", 100000, 100)
    assert [(n.kind, n.label) for n in tree.walk()] == [
        ("modify", "Update package_relation"),
        ("sort", "Sort (filesort)"),
        ("temp_table", "Temporary table (rows to change)"),
        ("full_scan", "Table scan on package_relation"),
    ]


def test_a_scan_of_the_clustered_primary_index_is_a_full_scan():
    (access,) = write_tree(UPDATE_BY_PRIMARY_SCAN, {}, "update", None, None).children
    assert (access.kind, access.index, access.actual_rows) == ("full_scan", None, None)


def test_the_iterator_executors_write_roots_name_the_table_they_change():
    text = (
        "-> Delete from g (buffered)  (actual time=0.1..0.1 rows=0 loops=1)\n"
        "    -> Table scan on g  (cost=0.45 rows=2) (actual time=0.02..0.03 rows=2 loops=1)\n"
    )
    tree, _ = parse_plan(text, {"g": "group_snapshot_stage"})
    assert (tree.kind, tree.table, tree.alias) == ("modify", "group_snapshot_stage", "g")
    tree, _ = parse_plan("-> Insert into repository\n    -> Rows fetched before execution\n", {})
    assert (tree.kind, tree.table) == ("modify", "repository")
    assert "modify" not in ACCESS_KINDS  # a write's root is not a table access of its own


def test_a_scan_of_mysqls_own_buffer_is_no_full_scan_of_a_table():
    """INSERT … SELECT from its own table reads the rows through a temporary table first."""
    text = (
        "-> Insert into repository\n"
        "    -> Table scan on <temporary>  (actual time=0.1..0.1 rows=2 loops=1)\n"
        "        -> Temporary table  (actual time=0.1..0.1 rows=2 loops=1)\n"
        "            -> Index range scan on repository using PRIMARY over (id < 3)  (actual time=0.1..0.1 rows=2 loops=1)\n"
    )
    tree, _ = parse_plan(text, {})
    assert [(n.kind, n.table) for n in tree.walk()] == [
        ("modify", "repository"),
        ("operator", None),
        ("temp_table", None),
        ("index_range", "repository"),
    ]


def test_postgresql_modify_table_reads_as_its_operation_on_the_table():
    doc = [
        {
            "Plan": {
                "Node Type": "ModifyTable",
                "Operation": "Delete",
                "Relation Name": "group_snapshot_stage",
                "Alias": "group_snapshot_stage",
                "Actual Rows": 0,
                "Actual Loops": 1,
                "Plans": [
                    {
                        "Node Type": "Index Scan",
                        "Parent Relationship": "Member",
                        "Relation Name": "group_snapshot_stage",
                        "Alias": "group_snapshot_stage",
                        "Index Name": "group_snapshot_stage_pkey",
                        "Index Cond": "(group_repository_id = 4)",
                        "Actual Rows": 1,
                        "Actual Loops": 1,
                    }
                ],
            },
            "Triggers": [{"Trigger Name": "RI_ConstraintTrigger_a_1", "Constraint Name": "fk", "Time": 5.8}],
            "Execution Time": 6.1,
        }
    ]
    tree, ms = pg_parse_plan(doc)
    assert (tree.kind, tree.label, ms) == ("modify", "Delete on group_snapshot_stage", 6.1)
    assert tree.children[0].index == "group_snapshot_stage_pkey"


@pytest.mark.parametrize(
    ("sql", "writes", "locks"),
    [
        ("SELECT 1 FROM t", False, False),
        ("select * from t where id = 1 for update", False, True),
        ("SELECT * FROM t FOR NO KEY UPDATE SKIP LOCKED", False, True),
        ("SELECT * FROM t LOCK IN SHARE MODE", False, True),
        ("  /* app */ UPDATE t SET a = 1 WHERE id = 2", True, True),
        ("(DELETE FROM t)", True, True),
        ("INSERT INTO t SELECT * FROM u", True, True),
        ("WITH x AS (SELECT 1) DELETE FROM t USING x", True, True),
        ("WITH x AS (SELECT 1) SELECT * FROM x", False, False),
        ("-- note\nREPLACE INTO t VALUES (1)", True, True),
    ],
)
def test_which_statements_write_or_lock_rows(sql, writes, locks):
    assert common.writes(sql) is writes
    assert common.locks_rows(sql) is locks


def test_the_footprint_totals_its_tables():
    found = common.footprint(
        {
            "b": {"rows": 2000, "gaps": 9, "changed": {"deleted": 2000}, "modes": ["IX"], "indexes": ["ix"]},
            "a": {"rows": 1, "changed": {"deleted": 1, "updated": 0}},
        },
        [],
        1,
    )
    assert (found["rows"], found["gaps"], found["changed"], found["affected"]) == (2001, 9, 2001, 1)
    assert [t["table"] for t in found["tables"]] == ["a", "b"]
    assert found["tables"][0]["changed"] == {"deleted": 1}
