"""The text checks are as strict as the boundary behind them needs (issue 31, item 5).

Under ``--no-isolation`` setup SQL runs as dbbench's own user and the text is the only check, so
any name outside the namespace, and dynamic SQL in a function body, is refused
(``test_foreign_references.py``). Isolated, it runs as the namespace's own role and the server
refuses what reaches outside; there a real dump still loads: its functions run dynamic SQL (as
pagila's do) and its defaults call an extension's function in ``public`` (``uuid_generate_v4()``).
Writes to another schema's names are refused early in both modes.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from dbbench.setup.guard import check_statement
from dbbench.setup.split import split_sql
from tests.conftest import run_cli
from tests.db import drop_namespaces

NS = f"h31modes_{os.getpid()}"

# A function whose body builds its statement as text (EXECUTE format(…)), as pagila's
# last_day()/film_in_stock() family and many application dumps do, and a read of pg_catalog.
DYNAMIC = """
CREATE TABLE items (id integer PRIMARY KEY, name text NOT NULL);
INSERT INTO items SELECT g, 'item ' || g FROM generate_series(1, 50) g;
CREATE FUNCTION count_rows(tbl text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE n bigint;
BEGIN
    EXECUTE format('SELECT count(*) FROM %I', tbl) INTO n;
    RETURN n;
END $$;
SELECT count_rows('items');
"""
QUERY = "-- name: item_by_id\n-- dbbench: expect items.items_pkey\nSELECT name FROM items WHERE id = :id;\n"


@pytest.mark.parametrize(
    "sql",
    [
        "CREATE TABLE t (id uuid DEFAULT public.uuid_generate_v4() PRIMARY KEY)",
        "INSERT INTO orders SELECT * FROM public.orders_template",
        "CREATE FUNCTION f() RETURNS void LANGUAGE plpgsql AS $$ BEGIN EXECUTE 'SELECT 1'; END $$",
        "SELECT public.similarity('a', 'b')",
    ],
)
def test_isolated_setup_sql_may_read_and_call_outside_but_not_without_isolation(sql):
    (stmt,) = split_sql(sql, "postgresql")
    assert check_statement(stmt, "ns", "postgresql", any_reference=False) is None
    assert check_statement(stmt, "ns", "postgresql") is not None


@pytest.mark.parametrize(
    "sql",
    [
        "DELETE FROM public.orders",
        "INSERT INTO public.log VALUES (1)",
        "DROP TABLE other.t",
        "CREATE VIEW public.v AS SELECT 1",
    ],
)
def test_writes_to_another_schema_are_refused_in_both_modes(sql):
    (stmt,) = split_sql(sql, "postgresql")
    for any_reference in (False, True):
        assert check_statement(stmt, "ns", "postgresql", any_reference=any_reference) is not None


@pytest.mark.servers
def test_a_dump_with_dynamic_sql_seeds_isolated_and_is_refused_without_isolation(
    local_servers, tmp_path: Path
):
    catalog = tmp_path / "dyn"
    catalog.mkdir()
    (catalog / "setup.postgresql.sql").write_text(DYNAMIC)
    (catalog / "queries.sql").write_text(QUERY)
    try:
        res = run_cli("seed", "--catalog", str(catalog), "--namespace", NS, "--only", "postgresql")
        assert res.code == 0, res.output
        res = run_cli("validate", "--catalog", str(catalog), "--namespace", NS)
        assert res.code == 0, res.output
        for args in (["seed", "--only", "postgresql"], ["validate"]):
            res = run_cli(*args, "--catalog", str(catalog), "--namespace", NS, "--no-isolation")
            assert res.code == 2 and "runs dynamic SQL (EXECUTE in a function or DO body)" in res.stderr, (
                res.output
            )
    finally:
        drop_namespaces(NS)


ADMIN = [
    ("SHUTDOWN", "mysql"),
    ("RESTART", "mysql"),
    ("KILL QUERY 1", "mysql"),
    ("INSTALL PLUGIN x SONAME 'x.so'", "mysql"),
    ("SET PASSWORD FOR root = 'x'", "mysql"),
    ("FLUSH PRIVILEGES", "mysql"),
    ("DELIMITER //\nCREATE PROCEDURE p() BEGIN SELECT 1; SHUTDOWN; END//\nDELIMITER ;", "mysql"),
    ("CREATE PROCEDURE p() SHUTDOWN", "mysql"),
    ("SELECT pg_terminate_backend(pid) FROM pg_stat_activity", "postgresql"),
    ("SELECT pg_reload_conf()", "postgresql"),
    ("LOAD '/tmp/x.so'", "postgresql"),
]


@pytest.mark.parametrize("sql,dialect", ADMIN)
def test_the_servers_administration_is_refused_in_both_modes(sql, dialect):
    """`SHUTDOWN` in setup SQL under --no-isolation stopped the local MySQL (issue 31's sweep)."""
    stmt = split_sql(sql, dialect)[0]
    for any_reference in (False, True):
        why = check_statement(stmt, "ns", dialect, any_reference=any_reference)
        assert why is not None and why.startswith("administers the server"), (sql, why)


@pytest.mark.parametrize(
    "sql",
    ["FLUSH TABLES", "CREATE TABLE kill_list (id int, restart int)", "INSERT INTO t VALUES ('SHUTDOWN')"],
)
def test_names_that_only_look_like_administration_pass(sql):
    (stmt,) = split_sql(sql, "mysql")
    assert check_statement(stmt, "ns", "mysql", any_reference=True) is None


@pytest.mark.servers
def test_shutdown_in_setup_sql_without_isolation_leaves_mysql_running(local_servers, tmp_path: Path):
    catalog = tmp_path / "stop"
    catalog.mkdir()
    (catalog / "setup.mysql.sql").write_text("CREATE TABLE items (id int PRIMARY KEY);\nSHUTDOWN;\n")
    (catalog / "queries.sql").write_text("-- name: one\nSELECT id FROM items WHERE id = :id;\n")
    try:
        res = run_cli(
            "seed", "--catalog", str(catalog), "--namespace", NS, "--only", "mysql", "--no-isolation"
        )
        assert res.code == 2 and "administers the server" in res.stderr, res.output
        assert run_cli("info", "--only", "mysql").code == 0  # still up: nothing ran
    finally:
        drop_namespaces(NS)
