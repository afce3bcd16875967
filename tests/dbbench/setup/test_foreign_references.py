"""Setup SQL that names another database or schema is refused by the text checks, in every place a
name can hide -- views, routine and trigger bodies, PostgreSQL function bodies in dollar or single
quotes, quoted identifiers, comments between the parts -- so that ``--no-isolation`` (where they
are the only check on MySQL) never touches data outside the namespace (issue 31).

Each refused spelling is run for real: ``dbbench seed --catalog DIR --no-isolation`` against the
local server, next to a victim database/schema (no dbbench marker) holding one row; the seed exits
2 with one error line naming the reference, and the victim row is still there. The ordinary
statements that only look alike (string literals with dots, decimals, the namespace's own
qualified names, column references) still seed.
"""

from __future__ import annotations

import os

import pytest

from dbbench.setup.guard import check_statement
from dbbench.setup.split import split_sql
from tests.conftest import run_cli
from tests.db import drop_namespaces, sql

V = "h31setup_victim"  # outside any dbbench namespace: no dbbench_meta marker
NS = f"h31setup_ref_{os.getpid()}"

VICTIM_SQL = {
    "postgresql": [
        f"DROP SCHEMA IF EXISTS {V} CASCADE",
        f"CREATE SCHEMA {V}",
        f"CREATE TABLE {V}.victim (id int PRIMARY KEY)",
        f"INSERT INTO {V}.victim VALUES (1)",
        f"CREATE FUNCTION {V}.purge() RETURNS int LANGUAGE sql AS 'DELETE FROM {V}.victim RETURNING 1'",
    ],
    "mysql": [
        f"DROP DATABASE IF EXISTS {V}",
        f"CREATE DATABASE {V}",
        f"CREATE TABLE {V}.victim (id int PRIMARY KEY)",
        f"INSERT INTO {V}.victim VALUES (1)",
        f"CREATE PROCEDURE {V}.purge() DELETE FROM {V}.victim",
    ],
}


@pytest.fixture(scope="module")
def victims(local_servers):
    for dialect, statements in VICTIM_SQL.items():
        sql(dialect, statements)
    yield
    drop_namespaces(NS)
    sql("postgresql", [f"DROP SCHEMA IF EXISTS {V} CASCADE"])
    sql("mysql", [f"DROP DATABASE IF EXISTS {V}"])


def _victim_rows(dialect: str) -> list[tuple]:
    return sql(dialect, [f"SELECT id FROM {V}.victim ORDER BY id"])


def _catalog(tmp_path, dialect: str, setup: str):
    cat = tmp_path / "cat"
    cat.mkdir()
    (cat / "a.toml").write_text(
        'name = "a"\ncardinality = "1"\n[query]\nsql = "SELECT id FROM t WHERE id = 1"\n'
        f'[{dialect}]\nexpect = {{ table = "t", index = "{"t_pkey" if dialect == "postgresql" else "PRIMARY"}" }}\n'
    )
    (cat / f"setup.{dialect}.sql").write_text("CREATE TABLE t (id int PRIMARY KEY);\n" + setup)
    return cat


def _seed(cat, dialect: str, *flags: str):
    return run_cli("seed", "--only", dialect, "--catalog", str(cat), "--namespace", NS, *flags)


def _errors(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("dbbench: error:")]


# (dialect, setup SQL after CREATE TABLE t, what the one error line must name)
REFUSED = [
    # MySQL: a view over another database's table, then a write through it (the reported case)
    ("mysql", f"CREATE VIEW vv AS SELECT * FROM {V}.victim;\nDELETE FROM vv;\n", f"{V}.victim"),
    ("mysql", f"CREATE VIEW vv AS SELECT * FROM `{V}`.`victim`;\nDELETE FROM vv;\n", f"`{V}`.`victim`"),
    (
        "mysql",
        f"CREATE VIEW vv AS SELECT * FROM {V} /* . */ . -- x\n victim;\nDELETE FROM vv;\n",
        f"{V}.victim",
    ),
    ("mysql", f"/*!50000 CREATE VIEW vv AS SELECT * FROM {V}.victim */;\nDELETE FROM vv;\n", f"{V}.victim"),
    ("mysql", f"CREATE VIEW vv AS SELECT x.* FROM t, {V}.victim AS x;\nDELETE FROM vv;\n", f"{V}.victim"),
    # MySQL: routine and trigger bodies
    (
        "mysql",
        f"DELIMITER //\nCREATE PROCEDURE p() BEGIN DELETE v FROM t JOIN {V}.victim v ON 1 = 1; "
        "DELETE v FROM t RIGHT JOIN victim v ON 1 = 1; END //\nDELIMITER ;\nCALL p();\n",
        f"{V}.victim",
    ),
    ("mysql", f"CREATE PROCEDURE p() CALL {V}.purge();\nCALL p();\n", f"{V}.purge"),
    ("mysql", f"CREATE PROCEDURE p() CALL `{V}`.purge;\nCALL p();\n", f"`{V}`.purge"),
    (
        "mysql",
        f"CREATE TRIGGER tr AFTER INSERT ON t FOR EACH ROW DELETE v FROM {V}.victim v;\nINSERT INTO t VALUES (1);\n",
        f"{V}.victim",
    ),
    (
        "mysql",
        "DELIMITER //\nCREATE FUNCTION fx() RETURNS int MODIFIES SQL DATA NOT DETERMINISTIC BEGIN "
        f"UPDATE {V}.victim SET id = id + 100; RETURN 1; END //\nDELIMITER ;\nSELECT fx();\n",
        f"{V}.victim",
    ),
    ("mysql", f"INSERT INTO t SELECT id + 10 FROM {V}.victim;\n", f"{V}.victim"),
    ("mysql", f"CREATE TABLE t2 LIKE {V}.victim;\n", f"{V}.victim"),
    # MySQL: quoting modes that would make the server read names the text checks see as text
    (
        "mysql",
        f'SET sql_mode = \'ANSI_QUOTES\';\nCREATE VIEW vv AS SELECT * FROM "{V}"."victim";\nDELETE FROM vv;\n',
        "ANSI_QUOTES",
    ),
    (
        "mysql",
        f"SET SESSION sql_mode = CONCAT('NO_BACKSLASH', '_ESCAPES');\n"
        f"CREATE VIEW vv AS SELECT 'a\\' AS x, id FROM {V}.victim -- ';\nDELETE FROM vv;\n",
        "NO_BACKSLASH_ESCAPES",
    ),
    # PostgreSQL: views, schema-qualified calls, bodies in dollar and single quotes
    ("postgresql", f"CREATE VIEW vv AS SELECT * FROM {V}.victim;\nDELETE FROM vv;\n", f"{V}.victim"),
    ("postgresql", f'CREATE VIEW vv AS SELECT * FROM "{V}"."victim";\nDELETE FROM vv;\n', f'"{V}"."victim"'),
    (
        "postgresql",
        f"CREATE VIEW vv AS SELECT * FROM {V}/* . */./**/victim;\nDELETE FROM vv;\n",
        f"{V}.victim",
    ),
    ("postgresql", f"SELECT {V}.purge();\n", f"{V}.purge"),
    ("postgresql", f"SELECT count(*) FROM t, {V}.victim;\n", f"{V}.victim"),
    (
        "postgresql",
        f"CREATE FUNCTION f() RETURNS void LANGUAGE sql AS $body$ DELETE FROM {V}.victim $body$;\nSELECT f();\n",
        f"{V}.victim",
    ),
    (
        "postgresql",
        f"CREATE FUNCTION f() RETURNS void LANGUAGE sql AS 'DELETE FROM {V}.victim';\nSELECT f();\n",
        f"{V}.victim",
    ),
    ("postgresql", f"DO $$ BEGIN PERFORM {V}.purge(); END $$;\n", f"{V}.purge"),
    (
        "postgresql",
        "CREATE FUNCTION tf() RETURNS trigger LANGUAGE plpgsql AS $f$ DECLARE r record; BEGIN "
        f"FOR r IN SELECT * FROM t LOOP NULL; END LOOP; DELETE FROM {V}.victim; RETURN NEW; END $f$;\n"
        "CREATE TRIGGER tr AFTER INSERT ON t FOR EACH ROW EXECUTE FUNCTION tf();\nINSERT INTO t VALUES (1);\n",
        f"{V}.victim",
    ),
    (
        "postgresql",
        "DO $$ BEGIN EXECUTE 'DELETE FROM ' || 'h31setup_' || 'victim.victim'; END $$;\n",
        "dynamic SQL",
    ),
    # PostgreSQL: name resolution and quoting tricks
    ("postgresql", f"SELECT set_config('search_path', '{V}', true);\nDELETE FROM victim;\n", "set_config"),
    ("postgresql", f"SET LOCAL search_path = {V};\nDELETE FROM victim;\n", "search_path"),
    ("postgresql", 'DELETE FROM U&"h31setup\\005fvictim".victim;\n', 'U&"'),
    ("postgresql", f"SELECT E'\\''; COMMIT; DELETE FROM {V}.victim; --';\n", f"{V}.victim"),
]


@pytest.mark.parametrize(
    "dialect, setup, named", REFUSED, ids=[f"{d}-{i}" for i, (d, _, _) in enumerate(REFUSED)]
)
def test_a_reference_outside_the_namespace_is_refused_and_touches_nothing(
    victims, tmp_path, dialect, setup, named
):
    assert _victim_rows(dialect) == [(1,)]
    result = _seed(_catalog(tmp_path, dialect, setup), dialect, "--no-isolation")
    try:
        assert result.code == 2, result.output
        errors = _errors(result.stderr)
        assert len(errors) == 1 and "Traceback" not in result.output, result.stderr
        assert named in result.stderr, result.stderr
        assert _victim_rows(dialect) == [(1,)], result.output
    finally:
        sql(dialect, [f"DELETE FROM {V}.victim", f"INSERT INTO {V}.victim VALUES (1)"])


LOOKALIKES = {
    "postgresql": f"""
CREATE TABLE orders (id int PRIMARY KEY, note text DEFAULT 'a.b', price numeric(6, 2) DEFAULT 1.5);
INSERT INTO {NS}.orders VALUES (1, 'x.y z', .5), (2, 'public.orders', 2.25);
COMMENT ON TABLE orders IS 'copied from shop.orders -- not public.orders';
CREATE VIEW big AS SELECT o.id, t.id AS tid FROM orders o JOIN {NS}.t t ON t.id = o.id WHERE o.price > 1.0
    ORDER BY o.id;
CREATE FUNCTION bump() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE n orders.note%TYPE := 'v.w'; BEGIN NEW.price := NEW.price + 0.5; NEW.note := n; RETURN NEW; END $$;
CREATE TRIGGER orders_bump BEFORE INSERT ON orders FOR EACH ROW EXECUTE FUNCTION bump();
INSERT INTO orders (id) SELECT g FROM generate_series(3, 5) g;
INSERT INTO t SELECT o.id FROM orders o WHERE o.note <> 'q.r' AND pg_catalog.length(o.note) > 0;
SELECT setval(pg_get_serial_sequence('orders', 'id'), 1) WHERE false;
""",
    "mysql": f"""
CREATE TABLE orders (id int PRIMARY KEY, note varchar(20) DEFAULT 'a.b', price decimal(6, 2) DEFAULT 1.5);
INSERT INTO {NS}.orders VALUES (1, 'x.y z', .5), (2, "shop.orders", 2.25);
CREATE VIEW big AS SELECT o.id, t.id AS tid FROM orders o JOIN `{NS}`.`t` t ON t.id = o.id WHERE o.price > 1.0;
CREATE TRIGGER orders_bump BEFORE INSERT ON orders FOR EACH ROW SET NEW.price = NEW.price + 0.5;
INSERT INTO orders (id) VALUES (3), (4);
INSERT INTO t SELECT orders.id FROM orders WHERE orders.note <> 'q.r' -- not other.t
    AND orders.id > 0.5;
""",
}


@pytest.mark.parametrize("flags", [[], ["--no-isolation"]], ids=["namespace-role", "no-isolation"])
@pytest.mark.parametrize("dialect", ["postgresql", "mysql"])
def test_lookalikes_of_references_still_seed(victims, tmp_path, dialect, flags):
    result = _seed(_catalog(tmp_path, dialect, LOOKALIKES[dialect]), dialect, *flags)
    assert result.code == 0, result.output


@pytest.mark.parametrize(
    "sql, dialect",
    [
        ("SELECT 1.5 + .25 + 3.0e2", "mysql"),
        ("INSERT INTO t VALUES ('a.b', 'USE x; y.z', 1.5)", "mysql"),
        ("SELECT o.id, lower(o.note) FROM orders AS o ORDER BY o.id, 2", "mysql"),
        ("UPDATE orders o SET o.note = 'a.b' WHERE o.id IN (SELECT c.id FROM customers c)", "mysql"),
        ("CREATE TRIGGER tr BEFORE UPDATE ON orders FOR EACH ROW SET NEW.total = OLD.total + 1", "mysql"),
        ("SELECT pg_catalog.now(), x::pg_catalog.int4 FROM generate_series(1, 2) x", "postgresql"),
        ("INSERT INTO orders SELECT * FROM dbbench_shop.orders_template", "postgresql"),
        ("SELECT nextval('dbbench_shop.orders_id_seq'::regclass)", "postgresql"),
        ("INSERT INTO t (id) VALUES (1) ON CONFLICT (id) DO UPDATE SET id = EXCLUDED.id + 1", "postgresql"),
        # a type or operator class of an extension installed elsewhere reads no data
        ("SELECT 1 FROM t WHERE 'x'::public.citext IS NOT NULL", "postgresql"),
        ("CREATE TABLE t2 (m public.citext, n int)", "postgresql"),
        ("CREATE INDEX ix ON t USING gin (name public.gin_trgm_ops)", "postgresql"),
        ("CREATE FUNCTION f(a int) RETURNS int LANGUAGE sql AS $$ SELECT f.a + 1 $$", "postgresql"),
        (
            "CREATE FUNCTION f() RETURNS text LANGUAGE plpgsql AS $$ BEGIN RAISE NOTICE 'see x.y'; RETURN 'a.b'; END $$",
            "postgresql",
        ),
    ],
)
def test_lookalikes_pass_the_text_checks(sql, dialect):
    assert check_statement(split_sql(sql, dialect)[0], "dbbench_shop", dialect) is None


@pytest.mark.parametrize(
    "sql, dialect, named",
    [
        ("SELECT 1 OPERATOR(other.===) 2", "postgresql", "other.==="),
        ("CREATE AGGREGATE agg (int) (SFUNC = other.f, STYPE = int)", "postgresql", "other.f"),
        ("SELECT other.t.id FROM t", "mysql", "other.t"),
        ("SELECT * FROM t NATURAL JOIN (other.t)", "mysql", "other.t"),
        ("SELECT * FROM t FORCE INDEX (PRIMARY), other.t", "mysql", "other.t"),
        ("SELECT * FROM t FOR UPDATE", "mysql", None),
        ("LOCK TABLES other.t READ", "mysql", "other.t"),
        ("HANDLER other.t OPEN", "mysql", "other.t"),
        (
            "CREATE FUNCTION f() RETURNS other.t LANGUAGE sql AS $$ SELECT NULL::other.t $$",
            "postgresql",
            "other.t",
        ),
        ("SELECT * FROM t WHERE id = (SELECT max(id) FROM ONLY other.t)", "postgresql", "other.t"),
        ("SELECT * FROM t, LATERAL other.f(t.id)", "postgresql", "other.f"),
        ("SELECT * FROM t JOIN u ON t.id = u.id, other.t", "postgresql", "other.t"),
        ("SELECT query_to_xml('SELECT 1', true, false, '')", "postgresql", "runs SQL given as text"),
    ],
)
def test_more_spellings_are_refused(sql, dialect, named):
    why = check_statement(split_sql(sql, dialect)[0], "dbbench_shop", dialect)
    if named is None:
        assert why is None
    else:
        assert why is not None and named in why, why
