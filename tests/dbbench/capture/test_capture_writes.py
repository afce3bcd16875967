"""Capture keeps writes: ``UPDATE … WHERE``, ``DELETE … WHERE`` (MySQL's multi-table form, PostgreSQL's
``USING``), ``INSERT … SELECT``, ``INSERT … VALUES`` and ``SELECT … FOR UPDATE``; ``dbbench capture``
turns the servers' normalised writes (``$1`` / literal samples) into shapes that run, each measured
in a rolled-back transaction with what it locked, and the data is as it was."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from dbbench.capture.statements import keep, merge
from dbbench.catalog import sqlfiles
from dbbench.catalog.entries import sql_shape
from tests import db
from tests.conftest import run_cli
from tests.db import connection, drop_namespaces

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "tickets" / "db"
NS = "dbbench_t_capwrites"
UPDATE_BLOCK = """\
-- name: close_pending_tickets
-- An account's pending tickets closed, found through the (account, status, opened) index.
-- Its hottest status (closed: 95% of the rows) is read through the (account, opened) index
-- instead, and rightly: the values probe is left out, the generic plan kept.
-- dbbench: expect tickets.ix_tickets_account_status_opened
-- dbbench: forbid full_scan
-- dbbench: max-locked-rows 256
-- dbbench: probe generic
-- dbbench: param new_status = "closed"
-- dbbench: param account_id = 1
-- dbbench: param status = "pending"
UPDATE tickets SET status = :new_status WHERE account_id = :account_id AND status = :status;
"""


@pytest.mark.parametrize(
    ("sql", "kept"),
    [
        ("UPDATE tickets SET status = 'closed' WHERE account_id = 1", True),
        ("DELETE FROM comments WHERE ticket_id = 7", True),
        ("DELETE c FROM comments c JOIN tickets t ON t.id = c.ticket_id WHERE t.account_id = 1", True),
        ("DELETE FROM comments c USING tickets t WHERE t.id = c.ticket_id AND t.account_id = 1", True),
        ("INSERT INTO archive SELECT * FROM tickets WHERE status = 'closed'", True),
        ("INSERT INTO comments (id, ticket_id) VALUES (1, 2)", True),
        ("SELECT id FROM tickets WHERE id = 5 FOR UPDATE SKIP LOCKED", True),
        (
            "WITH gone AS (DELETE FROM comments WHERE ticket_id = 5 RETURNING id) SELECT count(*) FROM gone",
            True,
        ),
        ("UPDATE counters SET n = 0", False),  # every row, by design: no access path to check
        ("DELETE FROM comments", False),
        ("INSERT INTO t SELECT 1", False),
        ("REPLACE INTO t VALUES (1)", False),
        ("TRUNCATE comments", False),
        ("/* dbbench lock 9f2c */ UPDATE tickets SET status = 'x' WHERE id = 1", False),  # dbbench's own
        ("/* dbbench sample 9f2c */ DELETE FROM comments WHERE ticket_id = 1", False),
        ("UPDATE mysql.innodb_table_stats SET n_rows = 1 WHERE table_name = 't'", False),
        ("DELETE FROM pg_temp.x WHERE a = 1", False),
    ],
)
def test_which_writes_are_kept(sql, kept):
    assert keep(sql) is kept


def test_an_insert_without_its_values_is_left_out_and_driver_casts_are_dropped():
    found = merge(
        [
            ("postgresql", "INSERT INTO comments (id, body) VALUES ($1, $2)", None, 4, "pg", None, None),
            (
                "postgresql",
                "INSERT INTO comments (id, created_at) VALUES (%(id)s::BIGINT, "
                "%(created_at)s::TIMESTAMP WITHOUT TIME ZONE)",
                {"id": 1, "created_at": "2026-01-01"},
                1,
                "dao.py:3",
                None,
                None,
            ),
            (
                "mysql",
                "INSERT INTO comments (id, created_at) VALUES (1, '2026-01-01')",
                None,
                1,
                "ps",
                None,
                None,
            ),
        ]
    )
    # one shape (the literal sample is the same statement), run with the values it was seen with
    assert [(s.sql, s.dialects, s.calls) for s in found] == [
        ("INSERT INTO comments (id, created_at) VALUES (:id, :created_at)", ["postgresql", "mysql"], 2)
    ]
    assert found[0].values["id"] == 1 and found[0].values["created_at"] == "2026-01-01"


def test_the_annotated_format_takes_a_write_and_its_locked_rows_bound(tmp_path):
    problems: list[str] = []
    text = UPDATE_BLOCK.replace(
        "-- dbbench: max-locked-rows 256\n",
        "-- dbbench: max-locked-rows 256\n-- dbbench: mysql max-locked-rows 300\n",
    )
    (block,) = sqlfiles.parse(text, tmp_path / "q.sql", problems)
    assert problems == []
    shape = sql_shape(block)
    assert shape.locked_rows_bound("postgresql") == 256 and shape.locked_rows_bound("mysql") == 300
    assert "-- dbbench: max-locked-rows 256\n-- dbbench: mysql max-locked-rows 300\n" in sqlfiles.render(
        block
    )
    sqlfiles.parse(
        UPDATE_BLOCK.replace("max-locked-rows 256", "max-locked-rows many"), tmp_path / "q.sql", problems
    )
    assert problems == [
        f"{tmp_path / 'q.sql'}:7: shape 'close_pending_tickets': max-locked-rows 'many': a non-negative "
        "integer (the most rows the statement may lock)"
    ]
    inserting = "-- name: add_comment\nINSERT INTO comments (id, ticket_id) VALUES (:id, :ticket_id);\n"
    (block,) = sqlfiles.parse(inserting, tmp_path / "q.sql", problems)
    assert sql_shape(block).variants["mysql"].expect_table == "comments"  # no expect needed


@pytest.fixture(scope="module")
def catalog(local_servers, tmp_path_factory) -> Path:
    """The ticket example's schema and data, with one UPDATE block, loaded into the namespace."""
    folder = tmp_path_factory.mktemp("capwrites")
    for f in EXAMPLE.glob("setup.*.sql"):
        shutil.copy(f, folder / f.name)
    (folder / "queries.sql").write_text(UPDATE_BLOCK)
    seeded = run_cli("seed", "--catalog", str(folder), "--namespace", NS)
    assert seeded.code == 0, seeded.output
    yield folder
    drop_namespaces(NS)


def fingerprints() -> dict[tuple[str, str], str]:
    return db.fingerprints(NS, ("accounts", "tickets", "comments"))


WRITES = [
    "UPDATE tickets SET status = 'closed' WHERE account_id = 1 AND status = 'pending'",
    "DELETE FROM comments WHERE ticket_id = 1234",
    "INSERT INTO comments (id, ticket_id, body, created_at) VALUES (900001, 1234, 'thanks', '2026-01-01 00:00:00')",
    "SELECT id FROM tickets WHERE account_id = 7 AND status = 'open' FOR UPDATE",
]
JOINED = {
    "postgresql": "DELETE FROM comments c USING tickets t WHERE t.id = c.ticket_id AND t.account_id = 42 "
    "AND t.status = 'closed'",
    "mysql": "DELETE c FROM comments c JOIN tickets t ON t.id = c.ticket_id WHERE t.account_id = 42 "
    "AND t.status = 'closed'",
}


def test_capture_turns_the_servers_normalised_writes_into_shapes_that_run(catalog):
    before = fingerprints()
    assert run_cli("capture", "--reset").code == 0
    for dialect in ("postgresql", "mysql"):  # the application's writes, rolled back
        with connection(dialect, namespace=NS) as conn:
            with conn.cursor() as cur:
                for sql in [*WRITES, JOINED[dialect]]:
                    cur.execute(sql)
            conn.rollback()
    out = catalog / "captured.sql"
    # pg_stat_statements holds every session of the database (other tests' scans too): accepted
    run = run_cli(
        "capture", "--catalog", str(catalog), "--namespace", NS, "--output", str(out), "--accept-scans"
    )
    assert run.code == 0, run.output
    said = run.stdout
    assert "ok   close_pending_tickets [PostgreSQL, MySQL] (pg_stat_statements, 1 call" in said
    assert (
        "NEW  comments_by_ticket_id [PostgreSQL, MySQL]: PostgreSQL: expect comments.ix_comments_ticket_created"
    ) in said
    for label, gaps in (("PostgreSQL", ""), ("MySQL", ", 3 gaps")):
        assert (
            f"  [{label}] DELETE comments: expect comments.ix_comments_ticket_created; forbid full_scan, sort; "
            f"locks 2 rows (comments 2){gaps}; rolled back: comments unchanged (fingerprints equal before and after)"
        ) in said
    assert "  [PostgreSQL] SELECT … FOR UPDATE: expect tickets.ix_tickets_account_status_opened" in said
    assert (
        "MySQL: no access path (INSERT … VALUES): inserts into comments, writing 2 indexes: "
        "ix_comments_ticket_created, PRIMARY"
    ) in said  # MySQL's digest sample has the values; pg_stat_statements has none: left out
    text = out.read_text()
    assert "DELETE FROM comments WHERE ticket_id = :ticket_id;" in text
    assert "SELECT id FROM tickets WHERE account_id = :account_id AND status = :status FOR UPDATE;" in text
    assert (
        "DELETE FROM comments c USING tickets t WHERE t.id = c.ticket_id AND t.account_id = :account_id"
        in text
    )
    assert (
        "DELETE c FROM comments c JOIN tickets t ON t.id = c.ticket_id WHERE t.account_id = :account_id"
        in text
    )
    assert "dbbench sample" not in text and "dbbench lock" not in text  # dbbench's own writes
    # the shapes written run: the catalog (queries.sql + captured.sql) passes, writes rolled back
    check = run_cli("check", "--catalog", str(catalog), "--namespace", NS)
    # The hottest account (4,000 of 40,000 tickets) puts PostgreSQL's DELETE … USING at its tipping
    # point: with the row estimate the seed's sampled statistics give (175 or 177 of 172), it
    # hash-joins comments in full or not. That probe may fail it, and nothing else may fail.
    failed = [x for x in check.stderr.splitlines() if x.startswith("FAIL ")]
    assert check.code == (1 if failed else 0), check.output
    assert all(
        x.startswith("FAIL comments_by_account_id_status [PostgreSQL]: ")
        and "hottest value account_id = 1 " in x
        and x.count("hottest value") == 1
        for x in failed
    ), check.output
    assert fingerprints() == before
