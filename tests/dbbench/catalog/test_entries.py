"""Catalog validation (file, entry, field), forbid names, and the setup-SQL splitter and guard.
No server needed."""

from __future__ import annotations

from pathlib import Path

import pytest

from dbbench.catalog import entries
from dbbench.catalog.entries import CatalogError
from dbbench.catalog.features import normalize_forbid
from dbbench.setup.loader import SetupError, check_statement, split_sql, statements_for
from tests.conftest import run_cli, shape_toml

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "shop"

GOOD = shape_toml(
    "orders of a customer",
    "10 of 30,000",
    params="customer_id = 42",
    sql="SELECT id FROM orders WHERE customer_id = :customer_id",
    postgresql='expect = { table = "orders", index = "ix_orders_customer" }\nforbid = ["seq_scan", "filesort"]',
    mysql='expect = { table = "orders", index = "ix_orders_customer" }\n'
    'forbid = ["table_scan", "sort", "full_scan:orders"]',
)


def test_example_catalog_is_valid_and_carries_its_setup():
    cat = entries.open_catalog(EXAMPLE)
    assert cat.name == "shop" and cat.dataset_name == "setup:shop"
    assert [s.name for s in cat.shapes][:2] == ["customer by email", "recent orders of a customer"]
    assert set(cat.setup) == {"postgresql", "mysql"}
    assert cat.shapes[1].variants["postgresql"].forbid == [
        "full_scan",
        "sort",
    ]  # seq_scan, sort spelled natively


def test_forbid_aliases_are_normalized(tmp_path):
    (tmp_path / "a.toml").write_text(GOOD)
    shape = entries.load(tmp_path)[0]
    assert shape.variants["postgresql"].forbid == ["full_scan", "sort"]
    assert shape.variants["mysql"].forbid == ["full_scan", "sort", "full_scan:orders"]
    assert normalize_forbid(["temporary", "filesort"]) == ["temp_table", "sort"]
    for bad in (["hash_join"], ["sort:orders"], ["full_scan:"], [3]):
        with pytest.raises(ValueError):
            normalize_forbid(bad)


def test_every_problem_is_reported_with_file_entry_and_field(tmp_path):
    (tmp_path / "a.toml").write_text(
        GOOD.replace('cardinality = "10 of 30,000"\n', "")
        .replace(':customer_id"', ':customer"')
        .replace('forbid = ["seq_scan", "filesort"]', 'forbid = ["seq_scan", "nested_loop"]\nexpct = 1')
    )
    (tmp_path / "b.toml").write_text(
        GOOD.replace(
            'expect = { table = "orders", index = "ix_orders_customer" }\nforbid = ["table_scan"',
            'expect = { table = "orders" }\nforbid = ["table_scan"',
        )
    )
    (tmp_path / "c.toml").write_text(GOOD)  # same name as a.toml
    (tmp_path / "d.toml").write_text("name = 'x'\ncardinality = [1\n")
    with pytest.raises(CatalogError) as info:
        entries.open_catalog(tmp_path)
    problems = info.value.problems
    a, b, d = (str(tmp_path / f) for f in ("a.toml", "b.toml", "d.toml"))
    entry = "entry 'orders of a customer'"
    assert f"{a}: {entry}: cardinality: required text is missing" in problems
    assert (
        f"{a}: {entry}: [postgresql] expct: unknown field (expected one of expect, forbid, max_locked_rows, natural, natural_label, settings, sql)"
        in problems
    )
    assert any(
        p.startswith(f"{a}: {entry}: [postgresql] forbid: 'nested_loop' is not one of") for p in problems
    )
    assert (
        f"{a}: {entry}: [postgresql] sql: parameter :customer is not in [params] or a setup query" in problems
    )
    assert f'{b}: {entry}: [mysql] expect: needs {{ table = "…", index = "…" }}' in problems
    assert any(p.startswith(f"{d}: not valid TOML") for p in problems)
    assert any("c.toml: entry 'orders of a customer': name: already used by" in p for p in problems)


def test_a_catalog_with_its_own_setup_does_not_offer_the_alpine_dataset_values(tmp_path):
    (tmp_path / "a.toml").write_text(GOOD.replace(":customer_id", ":now"))
    entries.load(tmp_path)  # without setup SQL, :now comes from the seeded alpine dataset
    (tmp_path / "setup.sql").write_text("CREATE TABLE orders (id int PRIMARY KEY, customer_id int);")
    with pytest.raises(CatalogError, match=r"\[postgresql\] sql: parameter :now is not in \[params\]"):
        entries.load(tmp_path)


def test_split_sql_respects_quotes_comments_dollar_bodies_and_delimiter():
    text = """-- header; not a statement
CREATE TABLE t (a text DEFAULT 'x;y');   /* a ; in a comment */
INSERT INTO t VALUES ('it''s; fine');
CREATE FUNCTION f() RETURNS int AS $body$ SELECT 1; $body$ LANGUAGE sql;

SELECT 2"""
    stmts = split_sql(text, "postgresql")
    assert [s.line for s in stmts] == [2, 3, 4, 6]
    assert stmts[0].text.startswith("CREATE TABLE t") and "'x;y'" in stmts[0].text
    assert "$body$ SELECT 1; $body$" in stmts[2].text and "SELECT 1" not in stmts[2].code
    mysql = "CREATE TABLE t (a int);\nDELIMITER //\nCREATE PROCEDURE p() BEGIN SELECT 1; SELECT 2; END//\nDELIMITER ;\nCALL p();\n"
    stmts = split_sql(mysql, "mysql")
    assert [s.text for s in stmts] == [
        "CREATE TABLE t (a int)",
        "CREATE PROCEDURE p() BEGIN SELECT 1; SELECT 2; END",
        "CALL p()",
    ]
    assert [s.line for s in stmts] == [1, 3, 5]
    with pytest.raises(SetupError, match="line 1: unterminated"):
        split_sql("SELECT 'open", "mysql")


class _CountingText(str):
    """Script text that counts the characters its slices copy (``text[i:]`` at each line would
    copy the rest of the script every time: quadratic)."""

    copied = 0

    def __getitem__(self, key):
        piece = str.__getitem__(self, key)
        if isinstance(key, slice):
            self.copied += len(piece)
        return piece


def _split_counting(text: str, dialect: str) -> tuple[list, int, int]:
    """split_sql's statements, the characters it copied by slicing, and its ``str.join`` calls."""
    import sys

    joins = 0

    def profile(frame, event, arg):
        nonlocal joins
        if event == "c_call" and getattr(arg, "__name__", "") == "join":
            joins += 1

    counted = _CountingText(text)
    sys.setprofile(profile)
    try:
        stmts = split_sql(counted, dialect)
    finally:
        sys.setprofile(None)
    return stmts, counted.copied, joins


@pytest.mark.parametrize("dialect", ["postgresql", "mysql"])
def test_split_sql_is_linear_a_long_statement_joined_once_and_the_script_copied_at_most_once(dialect):
    """Counted, not timed: one statement of 20,000 lines (a dump's INSERT) is joined once (its text
    and its code), whatever its length, and no step copies the rest of the script as it goes."""
    rows = ",\n".join(f"({k}, 'name {k}; it''s', $x$ :a; {k} $x$)" for k in range(20_000))
    if dialect == "mysql":
        rows = rows.replace("$x$", "'")
    text = f"CREATE TABLE t (a int);\nINSERT INTO t VALUES\n{rows};\nSELECT 1;\n"
    stmts, copied, joins = _split_counting(text, dialect)
    assert [s.line for s in stmts] == [1, 2, 20_003]
    assert stmts[1].text == f"INSERT INTO t VALUES\n{rows}"
    assert joins <= 2 * len(stmts) and copied <= len(text)


def test_split_sql_large_dump_splits_as_written():
    """A 1 MB mysqldump-like script: every statement found, at its line, with its text as written
    (DELIMITER bodies, conditional comments, escaped quotes and ``#`` comments included)."""
    expected, lines, parts, line = [], [], [], 1
    for t in range(40):
        values = ",".join(f"({r},'it\\'s {r};','a\\\\b')" for r in range(1_000))
        body = f"CREATE PROCEDURE p{t}() BEGIN SELECT {t}; SELECT ';'; END"
        for stmt in (f"CREATE TABLE t{t} (id int, name text, b text)", f"INSERT INTO t{t} VALUES {values}"):
            parts.append(f"# table {t}\n{stmt};\n")
            expected.append(stmt)
            lines.append(line + 1)
            line += 2
        parts.append(f"DELIMITER //\n{body}//\nDELIMITER ;\n")
        expected.append(body)
        lines.append(line + 1)
        line += 3
    text = "".join(parts)
    assert len(text) > 1_000_000
    stmts, copied, joins = _split_counting(text, "mysql")
    assert [s.text for s in stmts] == expected and [s.line for s in stmts] == lines
    assert joins <= 2 * len(stmts) and copied <= len(text)


def test_binds_replace_only_code():
    """``:scale`` in code is the size; in a literal, a dollar-quoted body or a comment, and as a
    ``::`` cast or part of a longer name, it stays as written."""
    text = (
        "INSERT INTO t SELECT g, ':scale' FROM generate_series(1, :scale) g; -- :scale\n"
        "SELECT $b$ :scale $b$, x::scale, :scaled, :other, (:scale)"
    )
    first, second = split_sql(text, "postgresql", binds={"scale": "1000"})
    assert first.text == "INSERT INTO t SELECT g, ':scale' FROM generate_series(1, 1000) g"
    assert second.text == "SELECT $b$ :scale $b$, x::scale, :scaled, :other, (1000)"
    assert second.code == "SELECT '', x::scale, :scaled, :other, (1000)"
    assert split_sql(text, "postgresql")[0].text.endswith("generate_series(1, :scale) g")  # no binds


@pytest.mark.parametrize(
    "sql, why",
    [
        ("USE production", "switches database"),
        ("SET search_path TO public", "search_path"),
        ("CREATE SCHEMA other", "schema/database"),
        ("DROP DATABASE shop_live", "schema/database"),
        ("COMMIT", "transaction"),
        ("GRANT SELECT ON orders TO app", "privileges"),
        ("CREATE EXTENSION pg_trgm", "server-wide"),
        ("SET GLOBAL max_connections = 10", "server-wide settings"),
        ("DELETE FROM dbbench_meta", "ownership marker"),
        ("INSERT INTO shop_live.orders SELECT * FROM orders", "writes to shop_live.orders"),
        ('CREATE INDEX ix ON "public"."orders" (id)', 'writes to "public"."orders"'),
        ("ALTER TABLE `shop_live`.orders ADD COLUMN x int", "writes to `shop_live`.orders"),
        ("TRUNCATE public.orders", "writes to public.orders"),
    ],
)
def test_the_guard_refuses_what_could_touch_anything_else(sql, why):
    stmt = split_sql(sql, "postgresql" if '"' in sql else "mysql")[0]
    assert why in (check_statement(stmt, "dbbench_shop") or "")


@pytest.mark.parametrize(
    "sql",
    [
        "CREATE TABLE orders (id int PRIMARY KEY, customer_id int REFERENCES customers (id))",
        "INSERT INTO dbbench_shop.orders SELECT * FROM orders",
        "SELECT o.id FROM orders o JOIN customers c ON c.id = o.customer_id",
        "INSERT INTO orders SELECT * FROM dbbench_shop.orders_template",  # reading elsewhere: refused (issue 31)
        "SET SESSION cte_max_recursion_depth = 100000",
        "INSERT INTO t VALUES ('USE other; x.y')",
        "CREATE INDEX ix ON orders (customer_id)",
    ],
)
def test_the_guard_allows_ordinary_setup(sql):
    assert check_statement(split_sql(sql, "mysql")[0], "dbbench_shop") is None


OUTSIDE = "outside the namespace"
LIVE_ORDERS = f"shop_live.orders, {OUTSIDE}"


@pytest.mark.parametrize(
    "sql, dialect, why",
    [
        # every name of a list, not only the first
        ("DROP TABLE IF EXISTS scratch, shop_live.orders", "mysql", LIVE_ORDERS),
        ("TRUNCATE scratch, public.orders", "postgresql", f"public.orders, {OUTSIDE}"),
        ("DROP INDEX public.ix_orders_customer", "postgresql", f"public.ix_orders_customer, {OUTSIDE}"),
        ("RENAME TABLE scratch TO shop_live.stolen", "mysql", f"shop_live.stolen, {OUTSIDE}"),
        ("ALTER TABLE scratch RENAME TO shop_live.moved", "mysql", f"shop_live.moved, {OUTSIDE}"),
        ("ALTER TABLE scratch SET SCHEMA public", "postgresql", "moves an object to another schema"),
        # MySQL multi-table writes name their targets before FROM / SET
        ("DELETE x FROM shop_live.orders AS x WHERE x.id = 1", "mysql", LIVE_ORDERS),
        (
            "DELETE FROM orders, shop_live.orders USING orders JOIN shop_live.orders ON 1 = 1",
            "mysql",
            LIVE_ORDERS,
        ),
        (
            "UPDATE orders JOIN shop_live.orders AS x ON x.id = orders.id SET x.status = 'gone'",
            "mysql",
            LIVE_ORDERS,
        ),
        # what cannot be checked, or reaches the server's files
        ("PREPARE s FROM 'DELETE FROM shop_live.orders'", "mysql", "dynamic SQL"),
        ("CALL shop_live.purge_orders()", "mysql", OUTSIDE),
        ("SELECT id FROM orders INTO OUTFILE '/tmp/orders.txt'", "mysql", "server-side file"),
        ("SELECT pg_read_file('/etc/passwd')", "postgresql", "server-side file"),
        ("SELECT LOAD_FILE('/etc/passwd')", "mysql", "server-side file"),
    ],
)
def test_the_guard_sees_every_target_of_a_statement(sql, dialect, why):
    assert why in (check_statement(split_sql(sql, dialect)[0], "dbbench_shop") or "")


@pytest.mark.parametrize(
    "sql",
    [
        "DROP TABLE IF EXISTS scratch, old_orders",
        "DELETE FROM orders WHERE orders.id IN (SELECT o.id FROM dbbench_shop.orders_template o)",
        "DELETE o FROM orders AS o JOIN customers AS c ON c.id = o.customer_id WHERE c.name = 'x'",
        "UPDATE orders AS o JOIN customers AS c ON c.id = o.customer_id SET o.status = c.name",
        "ALTER TABLE orders RENAME COLUMN status TO state",
        "DROP INDEX ix_orders_customer ON orders",
        "SELECT lower(o.status), o.id FROM orders o",
    ],
)
def test_the_guard_still_allows_ordinary_statements(sql):
    assert check_statement(split_sql(sql, "mysql")[0], "dbbench_shop") is None


def test_a_refused_statement_names_file_statement_and_line(tmp_path):
    f = tmp_path / "setup.sql"
    f.write_text("CREATE TABLE a (id int);\n\n-- oops\nINSERT INTO live.a VALUES (1);\n")
    with pytest.raises(SetupError) as info:
        statements_for(f, "postgresql", "dbbench")
    assert str(info.value).startswith(
        f"{f}: statement 2 (line 4) writes to live.a, outside the namespace 'dbbench'"
    )


def test_a_setup_file_that_is_not_utf8_is_one_line_naming_the_byte(tmp_path):
    """Found where it is read (the catalog opens without reading its setup files whole): on
    PostgreSQL, which takes UTF-8 only; MySQL keeps a dump's raw binary columns."""
    (tmp_path / "a.toml").write_text(GOOD)
    f = tmp_path / "setup.sql"
    f.write_bytes(
        b"CREATE TABLE orders (id int);\n" * 40_000 + b"INSERT INTO orders VALUES (1); -- \xff\xfe\n"
    )
    entries.open_catalog(tmp_path)
    run = run_cli("validate", "--catalog", str(tmp_path))
    assert run.code == 2 and "Traceback" not in run.output, run.output
    assert run.stderr.strip().endswith(f"{f}: not UTF-8 text (byte 1,200,034: b'\\xff\\xfe\\n')"), run.stderr
