"""Annotated SQL files as a catalog: every placeholder style, the dbbench lines, their errors."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from dbbench.catalog import sqlfiles
from dbbench.catalog.entries import CatalogError, open_catalog
from dbbench.catalog.sqltext import normalize, shape_key

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "tickets" / "db"


def write(tmp_path: Path, text: str, name: str = "queries.sql") -> Path:
    (tmp_path / name).write_text(textwrap.dedent(text))
    return tmp_path


@pytest.mark.parametrize(
    ("written", "expected"),
    [
        (
            "SELECT id FROM t WHERE account_id = :account_id",
            "SELECT id FROM t WHERE account_id = :account_id",
        ),
        ("SELECT id FROM t WHERE account_id = %(acc)s", "SELECT id FROM t WHERE account_id = :acc"),
        (
            "SELECT id FROM t WHERE a.account_id = $1 AND b = $2 OR c = $1",
            "SELECT id FROM t WHERE a.account_id = :account_id AND b = :b OR c = :account_id",
        ),
        (
            "SELECT id FROM t WHERE account_id = ? LIMIT ?",
            "SELECT id FROM t WHERE account_id = :account_id LIMIT :limit",
        ),
        (
            "SELECT id::text FROM t WHERE s = 'a:b' AND x = ?",
            "SELECT id::text FROM t WHERE s = 'a:b' AND x = :x",
        ),
    ],
)
def test_every_placeholder_style_becomes_a_named_parameter(written, expected):
    assert normalize(written).sql == expected


def test_captured_literals_become_parameters_and_in_lists_fold():
    n = normalize(
        "SELECT id FROM tickets WHERE status IN ('open', 'pending') AND account_id = 42 "
        "AND opened_at > DATE '2025-01-01' LIMIT 10",
        literals=True,
        fold_in_lists=True,
    )
    assert n.sql == (
        "SELECT id FROM tickets WHERE status IN (:status) AND account_id = :account_id "
        "AND opened_at > DATE '2025-01-01' LIMIT :limit"
    )
    assert n.values == {"status": "open", "account_id": 42, "limit": 10}
    assert n.lists == {"status": ["open", "pending"]}
    # the same shape whatever the values, the list's length, the placeholder style
    assert shape_key(
        "select id from tickets where status in (%s, %s, %s) and account_id = %s and "
        "opened_at > DATE '2025-01-01' limit 5"
    ) == shape_key(n.sql)


def test_a_block_carries_its_expectations_params_and_line(tmp_path):
    write(
        tmp_path,
        """\
        -- name: get_account^
        -- One account.
        -- dbbench: expect accounts.uq_email
        -- dbbench: mysql forbid full_scan, filesort
        -- dbbench: param email = "a@example.com"
        -- dbbench: rows 1
        SELECT id FROM accounts WHERE email = :email;

        -- :name recent :? :*
        -- dbbench: only postgresql
        -- dbbench: probe generic
        SELECT id FROM tickets WHERE account_id = $1 ORDER BY id LIMIT 10
        """,
    )
    (tmp_path / "setup.sql").write_text("CREATE TABLE accounts (id int);\n")
    cat = open_catalog(tmp_path)
    assert [s.name for s in cat.shapes] == ["get_account", "recent"]
    first, second = cat.shapes
    assert first.line == 1 and first.description == "One account." and first.expect_rows == 1
    assert first.params == {"email": "a@example.com"} and first.probes == ("values", "generic")
    assert first.variants["postgresql"].forbid == [] and first.variants["mysql"].forbid == [
        "full_scan",
        "sort",
    ]
    assert first.variants["mysql"].expect_index == "uq_email"
    assert list(second.variants) == ["postgresql"] and second.probes == ("generic",)
    assert second.variants["postgresql"].sql.endswith("account_id = :account_id ORDER BY id LIMIT 10")
    assert second.variants["postgresql"].expect_index == ""  # none written: proposed when measured
    assert cat.setup["postgresql"] == [tmp_path / "setup.sql"]  # the schema, not a shape


def test_every_problem_is_named_with_file_and_line(tmp_path):
    write(
        tmp_path,
        """\
        -- name: a
        -- dbbench: expect accounts
        -- dbbench: forbid hash_join
        -- dbbench: expct x.y
        -- dbbench: param n = not-a-value
        SELECT 1;
        -- name: a
        SELECT 2;
        -- name: empty
        """,
    )
    with pytest.raises(CatalogError) as exc:
        open_catalog(tmp_path)
    problems = exc.value.problems
    where = tmp_path / "queries.sql"
    assert f"{where}:2: shape 'a': expect 'accounts': write TABLE.INDEX" in problems
    assert any(p.startswith(f"{where}:3: shape 'a': forbid: 'hash_join' is not one of") for p in problems)
    assert any(p.startswith(f"{where}:4: shape 'a': unknown dbbench line 'expct x.y'") for p in problems)
    assert any(p.startswith(f"{where}:5: shape 'a': param n:") for p in problems)
    assert f"{where}:7: shape 'a': name already used at line 1" in problems
    assert f"{where}:9: shape 'empty': no SQL after the name line" in problems


def test_a_directory_with_only_setup_sql_is_no_catalog(tmp_path):
    (tmp_path / "setup.postgresql.sql").write_text("CREATE TABLE t (id int);\n")
    with pytest.raises(CatalogError, match="no .toml catalog entries"):
        open_catalog(tmp_path)


def test_accept_writes_the_lines_after_the_name_line(tmp_path):
    write(tmp_path, "-- name: one\nSELECT 1 FROM t;\n\n-- name: two\n-- Two.\nSELECT 2 FROM t;\n")
    blocks, problems = sqlfiles.read(tmp_path)
    assert problems == []
    proposed = sqlfiles.Block("two", tmp_path, 4, expect={None: ("t", "ix_t")}, forbid={None: ["full_scan"]})
    path = tmp_path / "queries.sql"
    path.write_text(sqlfiles.inserted(path.read_text(), blocks[1].name, proposed))
    assert (tmp_path / "queries.sql").read_text() == (
        "-- name: one\nSELECT 1 FROM t;\n\n-- name: two\n-- dbbench: expect t.ix_t\n"
        "-- dbbench: forbid full_scan\n-- Two.\nSELECT 2 FROM t;\n"
    )
    again, _ = sqlfiles.read(tmp_path)
    assert again[1].expected("mysql") == ("t", "ix_t") and again[1].description == "Two."


def test_the_example_queries_file_is_a_catalog():
    cat = open_catalog(EXAMPLE)
    assert {s.name for s in cat.shapes} >= {
        "account_by_email",
        "recent_tickets",
        "ticket_queue",
        "ticket_comments",
    }
    assert all(s.variants["mysql"].expect_index for s in cat.shapes)
