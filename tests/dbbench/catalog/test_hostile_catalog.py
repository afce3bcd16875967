"""Hostile catalogs (issue 31): a device, FIFO, huge file or a link leading outside as a catalog
file, SQL text that ``explain`` would reject (a NUL byte, open quotes, a DROP, a second
statement, a file cut while written), in both catalog formats. ``validate`` refuses each with one
line and exit code 2, and ``explain`` refuses the same text with the same line, before connecting:
one validator. An ``expect`` naming a table the namespace lacks is bad input on the real servers
(exit code 2), not a regression."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

from dbbench.catalog.files import CATALOG_FILE_LIMIT, CATALOG_LIMIT
from tests.conftest import run_cli, shape_toml
from tests.db import drop_namespaces

TICKETS = Path(__file__).resolve().parents[3] / "examples" / "tickets" / "db"
NS = "h31cat_expect"

ENTRY = shape_toml(
    "orders of a customer",
    "10 of 30,000",
    params="customer_id = 42",
    sql="SELECT id FROM orders WHERE customer_id = :customer_id",
    postgresql='expect = { table = "orders", index = "ix_orders_customer" }',
    mysql='expect = { table = "orders", index = "ix_orders_customer" }',
)
BLOCK = "-- name: comments_of_ticket\n-- dbbench: expect comments.ix_comments_ticket_created\n"


def refused(*args: str, timeout: float = 60) -> str:
    """The one error line of a command that must refuse its input: exit code 2, no traceback."""
    started = time.monotonic()
    run = run_cli(*args, timeout=timeout)
    assert run.code == 2, run.output
    assert "Traceback" not in run.output, run.output
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1, run.stderr
    assert time.monotonic() - started < timeout
    return lines[0]


def validate_refuses(catalog: Path | str) -> str:
    return refused("validate", "--catalog", str(catalog))


# -- files that are no catalog file --------------------------------------------------------------
@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom", "/dev/null"])
def test_a_device_as_the_catalog_is_one_line_not_a_read_without_end(device):
    line = validate_refuses(device)
    assert line == f"dbbench: error: {device}: not a regular file (a character device); give a catalog file"


def test_a_fifo_without_a_writer_as_the_catalog_does_not_hang(tmp_path):
    fifo = tmp_path / "a.toml"
    os.mkfifo(fifo)
    assert validate_refuses(fifo).endswith(f"{fifo}: not a regular file (a FIFO); give a catalog file")


@pytest.mark.parametrize("name", ["a.toml", "queries.sql"])
def test_a_fifo_inside_the_catalog_directory_is_named(tmp_path, name):
    os.mkfifo(tmp_path / name)
    assert validate_refuses(tmp_path).endswith(
        f"{tmp_path / name}: not a regular file (a FIFO); give a catalog file"
    )


@pytest.mark.parametrize("name", ["setup.sql", "setup.postgresql.sql"])
def test_a_setup_file_that_is_a_fifo_is_named(tmp_path, name):
    (tmp_path / "a.toml").write_text(ENTRY)
    os.mkfifo(tmp_path / name)
    assert validate_refuses(tmp_path).endswith(
        f"{tmp_path / name}: not a regular file (a FIFO); give a catalog file"
    )


@pytest.mark.parametrize("name", ["a.toml", "queries.sql"])
def test_a_file_over_the_limit_is_refused_before_it_is_parsed(tmp_path, name):
    big = tmp_path / name
    with big.open("wb") as f:  # sparse: no disk used
        f.truncate(CATALOG_FILE_LIMIT + 1)
    line = validate_refuses(tmp_path)
    assert line.startswith(f"dbbench: error: {big}: catalog file holds 2") and line.endswith(
        "; at most 2 MiB is read"
    ), line


def test_a_huge_sql_file_given_as_the_catalog_is_refused(tmp_path):
    big = tmp_path / "big.sql"
    big.write_bytes(
        BLOCK.encode() + b"SELECT 1 FROM comments WHERE id = 1 " + b"-- padding\n" * (2 * 1024 * 1024)
    )
    line = validate_refuses(big)
    assert line.startswith(f"dbbench: error: {big}: catalog file holds 22") and line.endswith(
        "; at most 2 MiB is read"
    ), line


def test_files_over_the_catalogs_limit_together_are_refused(tmp_path):
    """Each file is under the limit of one; together they hold more than a catalog may."""
    pad = b"-- padding\n" * ((CATALOG_FILE_LIMIT - 1000) // 11)
    count = CATALOG_LIMIT // len(pad) + 1
    for n in range(count):
        (tmp_path / f"q{n:02d}.sql").write_bytes(pad + f"-- name: q{n}\nSELECT id FROM comments;\n".encode())
    line = validate_refuses(tmp_path)
    assert line == (
        f"dbbench: error: {tmp_path / f'q{count - 1:02d}.sql'}: the catalog's files hold more than 16 MiB "
        "together; this one is past it"
    )


@pytest.mark.parametrize("name", ["a.toml", "queries.sql"])
def test_a_link_leading_outside_the_catalog_directory_is_refused(tmp_path, name):
    """The file it leads to is a valid entry: before, it was read as part of the catalog."""
    outside, catalog = tmp_path / "elsewhere", tmp_path / "catalog"
    outside.mkdir()
    catalog.mkdir()
    (outside / name).write_text(ENTRY if name.endswith(".toml") else BLOCK + "SELECT id FROM comments;\n")
    (catalog / name).symlink_to(outside / name)
    assert validate_refuses(catalog).endswith(
        f"{catalog / name}: a symbolic link leading outside the catalog directory "
        "(the files a catalog names stay inside it)"
    )


def test_a_link_to_a_device_inside_a_catalog_is_refused(tmp_path):
    (tmp_path / "a.toml").symlink_to("/dev/zero")
    assert "a symbolic link leading outside the catalog directory" in validate_refuses(tmp_path)


def test_a_setup_folder_leading_outside_is_refused(tmp_path):
    outside, catalog = tmp_path / "elsewhere", tmp_path / "catalog"
    outside.mkdir()
    catalog.mkdir()
    (outside / "01-schema.sql").write_text("CREATE TABLE orders (id int, customer_id int);\n")
    (catalog / "a.toml").write_text(ENTRY)
    (catalog / "setup").symlink_to(outside)
    line = validate_refuses(catalog)
    assert line.endswith(
        f"{catalog / 'setup' / '01-schema.sql'}: a symbolic link leading outside the catalog directory "
        "(the files a catalog names stay inside it)"
    ), line


def test_a_link_inside_the_catalog_directory_is_followed(tmp_path):
    (tmp_path / "real.toml.txt").write_text(ENTRY)
    (tmp_path / "a.toml").symlink_to(tmp_path / "real.toml.txt")
    run = run_cli("validate", "--catalog", str(tmp_path))
    assert run.code == 0 and "1 shapes valid" in run.stdout, run.output


def test_an_sql_file_that_is_not_utf8_names_the_byte(tmp_path):
    f = tmp_path / "queries.sql"
    f.write_bytes(BLOCK.encode() + b"SELECT id FROM comments WHERE body = '\xff';\n")
    assert (
        validate_refuses(tmp_path) == f"dbbench: error: {f}: not UTF-8 text (byte 0xff at line 3, column 39)"
    )


# -- SQL text explain would reject ----------------------------------------------------------------
@pytest.mark.parametrize(
    ("sql", "line", "what"),
    [
        (
            "SELECT id FROM comments WHERE ticket_id = 5\x00 OR true;\n",
            3,
            "holds a NUL byte, where the server would cut the statement (at column 44)",
        ),
        (
            "SELECT id FROM comments\n WHERE body = 'it''s;\n",
            4,
            "quoted text is not closed: the text ends inside it (at column 15)",
        ),
        (
            "SELECT $$abc FROM comments;\n",
            3,
            "PostgreSQL: the $$ body is not closed: the text ends inside it (at column 8)",
        ),
        (
            "SELECT id FROM comments /* the rest\n",
            3,
            "a /* comment is not closed: the text ends inside it (at column 25)",
        ),
        (
            "DROP TABLE comments;\n",
            3,
            "DROP is not a query shape EXPLAIN ANALYZE runs (SELECT, WITH, TABLE, VALUES, INSERT, UPDATE, "
            "DELETE; MERGE on PostgreSQL; REPLACE on MySQL) (at column 1)",
        ),
        (
            "SELECT id FROM comments WHERE ticket_id = 5; DELETE FROM comments;\n",
            3,
            "holds a second statement after the first one's ';' (a shape is one statement) (at column 46)",
        ),
        (
            "SELECT id FROM comments\n WHERE ticket_id IN (1, 2\n",
            4,
            "'(' is not closed: the text ends before its ')' (at column 21)",
        ),
        (
            "SELECT id FROM comments WHERE ticket_id = 5)\n",
            3,
            "')' closes no '(' (at column 44)",
        ),
    ],
)
def test_a_block_explain_would_reject_is_a_validate_error_naming_file_and_line(tmp_path, sql, line, what):
    f = tmp_path / "queries.sql"
    f.write_text(BLOCK + sql)
    expected = f"dbbench: error: {f}:{line}: shape 'comments_of_ticket': {what}"
    assert validate_refuses(tmp_path) == expected
    # the run reads the catalog through the same validator: the same line, before connecting
    assert refused("explain", "--catalog", str(tmp_path), "--namespace", "h31cat_never") == expected


@pytest.mark.parametrize(
    "tail",
    [
        "SELECT id FROM comments WHERE ticket_id = 5 ORDER BY created_at DESC LIM",  # no newline, no ;
        "SELECT id FROM comments WHERE body = 'half a val",  # inside a string
        "SELECT id FROM comments WHERE ticket_id IN (SELECT id FROM tickets WHERE account_id = 1",
    ],
)
def test_a_file_cut_while_written_is_a_validate_error_naming_file_and_line(tmp_path, tail):
    """Two complete blocks, then the third cut where a full disk stopped the writer."""
    f = tmp_path / "captured.sql"
    whole = BLOCK + "SELECT id FROM comments WHERE ticket_id = 1;\n\n"
    f.write_text(whole + whole.replace("comments_of_ticket", "second") + "-- name: third\n" + tail)
    line = validate_refuses(tmp_path)
    assert line.startswith(f"dbbench: error: {f}:10: shape 'third': "), line


def test_a_captured_file_cut_after_a_statement_is_named(tmp_path):
    """What capture writes always ends with a newline: a file of its that does not was cut, and the
    blocks after the cut are lost."""
    f = tmp_path / "captured.sql"
    f.write_text(
        "-- Shapes captured by dbbench (dbbench capture, or the pytest plugin's --dbbench-capture):\n"
        "-- the expectations are proposed from the plans observed on the loaded data; review them.\n\n"
        + BLOCK
        + "SELECT id FROM comments WHERE ticket_id = :ticket_id;"
    )
    assert validate_refuses(tmp_path) == (
        f"dbbench: error: {f}:6: the file ends without its final newline, which dbbench's capture always "
        "writes: was the file cut while written?"
    )


def test_ordinary_sql_text_still_passes(tmp_path):
    """Quotes in comments, doubled quotes, E'' escapes, a dollar body, a $ in a name, parentheses
    in strings, a last statement without ';' before the final newline: all valid."""
    (tmp_path / "queries.sql").write_text(
        BLOCK + "SELECT id FROM comments -- isn't it?\n WHERE body <> 'it''s (' AND ticket_id = :t;\n\n"
        "-- name: pg_only\n-- dbbench: only postgresql\n"
        "SELECT $q$ ' ( $q$ AS a, E'\\' (' AS b, x$y FROM comments /* a /* nested */ comment */\n\n"
        "-- name: my_only\n-- dbbench: only mysql\n-- dbbench: param t = 1\n"
        "SELECT id FROM comments # it's a comment\n WHERE body <> 'a\\' (' AND ticket_id = :t\n"
    )
    run = run_cli("validate", "--catalog", str(tmp_path))
    assert run.code == 0 and "3 shapes valid" in run.stdout, run.output


# -- TOML entries: the same check ------------------------------------------------------------------
@pytest.mark.parametrize(
    ("old", "new", "what"),
    [
        (
            'sql = "SELECT id FROM orders WHERE customer_id = :customer_id"',
            'sql = "SELECT id FROM orders WHERE customer_id = :customer_id\\u0000 OR true"',
            "[query] sql: holds a NUL byte, where the server would cut the statement (at column 55 of the SQL)",
        ),
        (
            'sql = "SELECT id FROM orders WHERE customer_id = :customer_id"',
            'sql = "SELECT id FROM orders WHERE status = \'open AND customer_id = :customer_id"',
            "[query] sql: quoted text is not closed: the text ends inside it (at column 38 of the SQL)",
        ),
        (
            'sql = "SELECT id FROM orders WHERE customer_id = :customer_id"',
            'sql = "TRUNCATE orders"',
            "[query] sql: TRUNCATE is not a query shape EXPLAIN ANALYZE runs",
        ),
        (
            '[mysql]\nexpect = { table = "orders", index = "ix_orders_customer" }',
            '[mysql]\nexpect = { table = "orders", index = "ix_orders_customer" }\nnatural = "DELETE FROM orders; '
            'SELECT 1"',
            "[mysql] natural: holds a second statement after the first one's ';' (a shape is one statement)",
        ),
        (
            "[params]\ncustomer_id = 42\n",
            '[params]\ncustomer_id = 42\n[[setup]]\nsql = "DELETE FROM orders RETURNING id AS x"\n',
            "setup[0] sql: DELETE is not one of SELECT, WITH, TABLE, VALUES (at column 1 of the SQL)",
        ),
    ],
)
def test_a_toml_entry_gets_the_same_sql_check(tmp_path, old, new, what):
    assert old in ENTRY
    f = tmp_path / "a.toml"
    f.write_text(ENTRY.replace(old, new, 1))
    line = validate_refuses(tmp_path)
    assert line.startswith(f"dbbench: error: {f}: entry 'orders of a customer': {what}"), line
    assert refused("explain", "--catalog", str(tmp_path), "--namespace", "h31cat_never") == line


def test_a_huge_value_is_quoted_as_a_short_excerpt(tmp_path):
    (tmp_path / "queries.sql").write_text(
        "-- name: a\n-- dbbench: expect " + "x" * 1_500_000 + "\nSELECT id FROM comments;\n"
    )
    line = validate_refuses(tmp_path)
    assert "write TABLE.INDEX" in line and len(line) < 300, line[:300]
    (tmp_path / "queries.sql").unlink()
    (tmp_path / "a.toml").write_text(ENTRY.replace("[params]", f"{'k' * 1_500_000} = 1\n[params]"))
    line = validate_refuses(tmp_path)
    assert "unknown field" in line and len(line) < 400, line[:400]


# -- an expect naming a table that does not exist, against the real servers -------------------------
@pytest.fixture
def tickets(local_servers, tmp_path) -> Path:
    for f in TICKETS.glob("setup.*.sql"):
        shutil.copy(f, tmp_path / f.name)
    (tmp_path / "queries.sql").write_text(
        BLOCK + "SELECT id FROM comments WHERE ticket_id = 5 ORDER BY created_at;\n"
    )
    seeded = run_cli("seed", "--catalog", str(tmp_path), "--namespace", NS)
    assert seeded.code == 0, seeded.output
    yield tmp_path
    drop_namespaces(NS)


@pytest.mark.servers
def test_an_expect_naming_a_missing_table_is_bad_input_not_a_regression(tickets):
    explain = ("explain", "--catalog", str(tickets), "--namespace", NS, "--runs", "1", "--warmups", "0")
    ok = run_cli(*explain)
    assert ok.code == 0, ok.output  # the right table: the assertion holds
    queries = tickets / "queries.sql"
    queries.write_text(queries.read_text().replace("expect comments.", "expect comment."))
    run = run_cli(*explain)
    assert run.code == 2 and "Traceback" not in run.output, run.output
    assert "FAIL" not in run.output, run.output
    errors = [line for line in run.stderr.splitlines() if "error:" in line]
    assert errors == [
        f"dbbench: error: {queries}:1: shape 'comments_of_ticket': [postgresql] expect names table 'comment', "
        f"which the namespace '{NS}' does not have (its tables: accounts, comments, tickets)"
    ], run.stderr


def test_long_runs_are_read_once_not_once_per_character(tmp_path):
    """Patterns that read a long run again from each of its characters took minutes on a megabyte
    line (a name line of suffix characters, a setup query's long select item, open comments)."""
    from dbbench.catalog.entries import _aliases
    from dbbench.catalog.sqlfiles import NAME_LINE
    from dbbench.catalog.sqltext import compared_columns, normalize

    n = 1_000_000
    cases = [
        lambda: NAME_LINE.match("-- name: " + "#" * n + "x"),
        lambda: _aliases("SELECT " + "a" * n + "!"),
        lambda: compared_columns("SELECT " + "a" * n + "!"),
        lambda: normalize("SELECT " + "/* a " * (n // 5)),
        lambda: normalize("SELECT " + "'a\\' , " * (n // 7)),
    ]
    for case in cases:
        started = time.monotonic()
        case()
        assert time.monotonic() - started < 5
    f = tmp_path / "queries.sql"
    f.write_text("-- name: " + "#" * n + "x\nSELECT 1 FROM comments;\n")
    started = time.monotonic()
    line = refused("validate", "--catalog", str(tmp_path), timeout=60)  # read once, then its length refused
    assert "a name of 1,000,001 characters" in line and time.monotonic() - started < 30


# -- found by benchmarks/sweep_hostile_inputs.py -----------------------------------------------------
def test_toml_nested_100k_deep_is_malformed_toml_not_a_recursion_error(tmp_path):
    """tomllib recurses per level: `x = [[[[…]]]]` ended in a RecursionError traceback."""
    deep = "x = " + "[" * 100_000 + "]" * 100_000 + "\n"
    catalog = tmp_path / "c"
    catalog.mkdir()
    (catalog / "a.toml").write_text(deep)
    assert validate_refuses(catalog).endswith("a.toml: not valid TOML: arrays or tables nested too deeply")
    (catalog / "a.toml").unlink()
    (catalog / "a.sql").write_text(f"-- name: a\n-- dbbench: param x = {'[' * 5000}\nSELECT 1;\n")
    assert "param x:" in validate_refuses(catalog)
    (tmp_path / "d.toml").write_text(deep)
    line = refused("seed", "--dataset", str(tmp_path / "d.toml"), "--only", "postgresql")
    assert line.endswith("d.toml: not valid TOML: arrays or tables nested too deeply")


def test_a_shape_name_is_at_most_200_characters(tmp_path):
    """A 10,000-character name was accepted and printed whole in every table."""
    catalog = tmp_path / "c"
    catalog.mkdir()
    (catalog / "a.sql").write_text(f"-- name: {'n' * 10_000}\nSELECT 1;\n")
    line = validate_refuses(catalog)
    assert line.endswith("a.sql:1: a name of 10,000 characters: a shape's name has at most 200")
    (catalog / "a.sql").write_text(f"-- name: {'n' * 200}\nSELECT 1;\n")
    assert run_cli("validate", "--catalog", str(catalog)).code == 0
