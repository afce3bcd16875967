"""``dbbench capture`` and ``dbbench catalog accept`` on hostile ground (issue 31), against the real
servers: an output that cannot be written (a full device, a write cut by a file-size limit, an
immutable file) leaves every file as it was and is one line, exit 2; the output is never one of
the user's own files; the servers' catalog queries, dbbench's own and another session's role
lookups are left out; a namespace that does not exist is said so; and a captured statement whose
plan uses no index is never written as a shape the catalog's own ``explain`` rejects."""

from __future__ import annotations

import os
import resource
import shutil
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from dbbench import servers
from dbbench.servers.mysql import client
from tests.conftest import CliResult, run_cli
from tests.db import drop_namespaces
from tests.dbbench.capture.test_capture import _psql

pytestmark = pytest.mark.servers
ROOT = Path(__file__).resolve().parents[3]
EXAMPLE = ROOT / "examples" / "tickets" / "db"
NS = "h31cap"
ABSENT = "h31cap_absent"
APP = [  # a shape of the catalog, and a new one an index serves
    "SELECT id, name FROM accounts WHERE email = 'account7@example.com';",
    "SELECT id, subject FROM tickets WHERE account_id = 42 AND status = 'closed' ORDER BY opened_at DESC LIMIT 5;",
]
SCAN = "SELECT id FROM tickets WHERE subject = 'no such subject';"  # no index on subject, either server
HEADER = "-- Shapes captured by dbbench"


@pytest.fixture(scope="module")
def seeded(local_servers, tmp_path_factory) -> Iterator[Path]:
    """The ticket example's catalog (queries.sql and its setup SQL, in a folder named db as the
    example's), seeded into NS."""
    db = tmp_path_factory.mktemp("h31cap") / "db"
    db.mkdir()
    for name in ("queries.sql", "setup.postgresql.sql", "setup.mysql.sql"):
        shutil.copy(EXAMPLE / name, db / name)
    done = run_cli("seed", "--catalog", str(db), "--namespace", NS)
    assert done.code == 0, done.output
    yield db
    drop_namespaces(NS, ABSENT)


def _clients(*statements: str) -> None:
    """The statements run by the psql and mysql command-line clients, in NS, after a reset."""
    assert run_cli("capture", "--reset").code == 0
    _psql(f"SET search_path TO {NS}; " + " ".join(statements))
    url = servers.local_url("mysql").replace("mysql+pymysql", "mysql")
    done = client("mysql", url, [NS, "-e", " ".join(statements)])
    assert done.returncode == 0, done.stderr


def _capture(db: Path, out: Path | str, *more: str) -> CliResult:
    return run_cli("capture", "--catalog", str(db), "--namespace", NS, "--output", str(out), *more)


def _one_line(run: CliResult, *said: str) -> None:
    assert run.code == 2, run.output
    assert "Traceback" not in run.output, run.output
    errors = [line for line in run.stderr.splitlines() if line.startswith("dbbench: error:")]
    assert len(errors) == 1, run.stderr
    for words in said:
        assert words in errors[0], errors[0]


def _bytes(path: Path) -> bytes:
    return path.read_bytes()


# -- item 11: what is left out, and a namespace that does not exist --------------------------------
def test_the_servers_catalog_queries_dbbench_s_own_and_role_lookups_are_left_out(seeded, tmp_path):
    _clients(*APP)
    # what another session, a driver (psycopg's type lookup) or dbbench itself runs besides the application
    _psql(
        "SELECT 1 FROM pg_roles WHERE rolname = 'someone'; "
        "SELECT b.rolname FROM pg_auth_members m JOIN pg_roles b ON b.oid = m.roleid WHERE m.member = 10; "
        "SELECT typname, oid FROM pg_type t WHERE t.oid = to_regtype('int4'); "
        "SELECT 1 FROM pg_extension WHERE extname = 'plpgsql';"
    )
    # dbbench's own statements in the namespace (role lookups, value probes, plans)
    assert run_cli("check", "--catalog", str(seeded), "--namespace", NS, "--only", "postgresql").code == 0
    out = tmp_path / "captured.sql"
    run = _capture(seeded, out)
    assert run.code == 0, run.output
    assert "ok   account_by_email [PostgreSQL, MySQL]" in run.stdout
    assert "NEW  tickets_by_account_id_status [PostgreSQL, MySQL]" in run.stdout
    named = [
        line.split(" [")[0] for line in run.stdout.splitlines() if line.startswith(("NEW", "SCAN", "ok"))
    ]
    assert all("pg_" not in name and "rol" not in name for name in named), named
    text = out.read_text().replace("source pg_stat_statements", "source")
    for word in ("pg_", "rolname", "to_regtype", "extname", "typname"):
        assert word not in text, text


def test_dbbench_init_s_row_counts_are_not_captured_as_the_application_s(seeded, tmp_path):
    """init counted each table's rows untagged: capture took `SELECT COUNT(*) FROM …` for a shape."""
    _clients(*APP)
    for dialect in ("postgresql", "mysql"):
        done = run_cli("init", "--namespace", NS, "--only", dialect)
        assert done.code == 0, done.output
    out = tmp_path / "captured.sql"
    run = _capture(seeded, out)
    assert run.code == 0, run.output
    new = [line.split(" [")[0] for line in run.stdout.splitlines() if line.startswith(("NEW", "SCAN"))]
    assert new == ["NEW  tickets_by_account_id_status"], run.stdout
    assert "COUNT(" not in out.read_text().upper(), out.read_text()


def test_a_statement_s_line_comment_is_not_written_into_the_catalog(seeded, tmp_path):
    """A trailing ``-- …`` comment would swallow the written shape's ';' (the shape is one line)."""
    _clients(APP[0])
    _psql(
        f"SET search_path TO {NS}; SELECT id FROM tickets WHERE account_id = 42 ORDER BY opened_at "
        "-- name: evil\n;\nSELECT id FROM comments WHERE ticket_id = 9 -- dbbench: expect comments.nope\n;"
    )
    out = tmp_path / "captured.sql"
    run = _capture(seeded, out)
    assert run.code == 0, run.output
    text = out.read_text()
    assert "SELECT id FROM tickets WHERE account_id = :account_id ORDER BY opened_at;" in text
    assert "SELECT id FROM comments WHERE ticket_id = :ticket_id;" in text
    assert "evil" not in text and "nope" not in text
    valid = run_cli("validate", "--catalog", str(out))
    assert valid.code == 0, valid.output


@pytest.mark.parametrize("dialect", ["postgresql", "mysql"])
def test_a_namespace_that_does_not_exist_is_said_so(seeded, tmp_path, dialect):
    _clients(*APP)
    out = tmp_path / "captured.sql"
    run = run_cli(
        "capture", "--catalog", str(seeded), "--namespace", ABSENT, "--output", str(out), "--only", dialect
    )
    _one_line(run, repr(ABSENT), "does not exist", "dbbench seed")
    assert "CREATEROLE" not in run.output
    assert not out.exists()


# -- items 4 and 10: writes that fail leave every file as it was -------------------------------------
def test_capture_to_a_full_device_is_one_line_and_the_device_stays(seeded):
    _clients(*APP)
    run = _capture(seeded, "/dev/full")
    _one_line(run, "/dev/full", "No space left on device")
    assert stat.S_ISCHR(os.lstat("/dev/full").st_mode)


def test_a_write_cut_short_leaves_the_existing_captured_file_whole(seeded, tmp_path):
    out = tmp_path / "existing.sql"
    _clients(APP[0], "SELECT id FROM comments WHERE ticket_id = 7 ORDER BY created_at;")
    assert _capture(seeded, out).code == 0
    before = _bytes(out)
    assert before.startswith(HEADER.encode()) and b"comments_by_ticket_id" in before
    _clients(*APP)  # a new shape to append
    limit = len(before) + 40  # the disk fills 40 bytes into the new block

    def small_disk() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    args = ["capture", "--catalog", str(seeded), "--namespace", NS, "--output", str(out)]
    proc = subprocess.run(
        [sys.executable, "-m", "dbbench", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        preexec_fn=small_disk,
        timeout=600,
    )
    run = CliResult(proc.returncode, proc.stdout, proc.stderr)
    _one_line(run, str(out), "too large")
    assert _bytes(out) == before  # not cut mid-statement
    assert [p.name for p in tmp_path.iterdir()] == ["existing.sql"]  # no temporary file left
    valid = run_cli("validate", "--catalog", str(out))
    assert valid.code == 0, valid.output


def _two_files(tmp_path: Path) -> Path:
    db = tmp_path / "db"
    db.mkdir()
    for name in ("setup.postgresql.sql", "setup.mysql.sql"):
        shutil.copy(EXAMPLE / name, db / name)
    (db / "a.sql").write_text(
        "-- name: comments_of_ticket\nSELECT id FROM comments WHERE ticket_id = $1 ORDER BY created_at;\n"
    )
    (db / "b.sql").write_text("-- name: tickets_of_account\nSELECT id FROM tickets WHERE account_id = $1;\n")
    return db


def test_catalog_accept_checks_every_file_before_it_rewrites_any(local_servers, tmp_path):
    db = _two_files(tmp_path)
    ns = f"{NS}_accept"
    try:
        assert run_cli("seed", "--catalog", str(db), "--namespace", ns).code == 0
        a, b = _bytes(db / "a.sql"), _bytes(db / "b.sql")
        subprocess.run(["chattr", "+i", str(db / "b.sql")], check=True)
        try:
            run = run_cli("catalog", "accept", "--catalog", str(db), "--namespace", ns)
        finally:
            subprocess.run(["chattr", "-i", str(db / "b.sql")], check=True)
        _one_line(run, str(db / "b.sql"))
        assert "wrote the expectations" not in run.stdout
        assert _bytes(db / "a.sql") == a and _bytes(db / "b.sql") == b
        assert sorted(p.name for p in db.iterdir()) == [
            "a.sql",
            "b.sql",
            "setup.mysql.sql",
            "setup.postgresql.sql",
        ]
        done = run_cli("catalog", "accept", "--catalog", str(db), "--namespace", ns)
        assert done.code == 0 and "wrote the expectations of 2 blocks" in done.stdout, done.output
        assert "expect tickets.ix_tickets_account" in (db / "b.sql").read_text()
        assert "expect comments.ix_comments_ticket_created" in (db / "a.sql").read_text()
    finally:
        drop_namespaces(ns)


# -- the output is capture's own file, never one the user wrote -------------------------------------
def test_the_output_is_never_a_file_the_user_wrote(seeded, tmp_path):
    _clients(*APP)
    queries = seeded / "queries.sql"
    kept = {p: _bytes(p) for p in seeded.iterdir()}
    run = _capture(seeded, queries)
    _one_line(run, str(queries), "not a file dbbench capture wrote")
    for name in ("setup.postgresql.sql", "setup.sql", "captured.toml"):
        run = _capture(seeded, seeded / name)
        _one_line(run, str(seeded / name))
    link = tmp_path / "captured.sql"
    link.symlink_to(queries)  # a link to the user's file is that file
    _one_line(_capture(seeded, link), str(queries), "not a file dbbench capture wrote")
    assert {p: _bytes(p) for p in seeded.iterdir()} == kept  # nothing written, nothing created
    mine = tmp_path / "notes.sql"
    mine.write_text("-- name: mine\nSELECT 1 FROM accounts;\n")
    _one_line(_capture(seeded, mine), str(mine), "not a file dbbench capture wrote")
    assert mine.read_text() == "-- name: mine\nSELECT 1 FROM accounts;\n"


def test_an_existing_captured_file_is_read_bounded(seeded, tmp_path):
    _clients(*APP)
    big = tmp_path / "captured.sql"
    with big.open("wb") as fh:
        fh.write(HEADER.encode() + b"\n")
        fh.truncate(80 * 1024 * 1024)  # sparse: 80 MiB on paper
    _one_line(_capture(seeded, big), str(big), "MiB")
    assert big.stat().st_size == 80 * 1024 * 1024
    bad = tmp_path / "bad.sql"
    bad.write_bytes(HEADER.encode() + b"\n-- name: x\nSELECT \xff FROM accounts;\n")
    _one_line(_capture(seeded, bad), str(bad), "not UTF-8")


# -- item 12: a statement whose plan uses no index ---------------------------------------------------
def _explain(db: Path, out: Path) -> CliResult:
    """explain on queries.sql + the written captured.sql, as one catalog."""
    cat = out.parent
    for name in ("queries.sql", "setup.postgresql.sql", "setup.mysql.sql"):
        shutil.copy(db / name, cat / name)
    return run_cli("explain", "--catalog", str(cat), "--namespace", NS, "--runs", "1")


def test_a_scan_is_never_written_as_a_shape_explain_rejects(seeded, tmp_path):
    _clients(APP[1], SCAN)
    out = tmp_path / "db" / "captured.sql"
    out.parent.mkdir()
    run = _capture(seeded, out)
    assert run.code == 1, run.output
    assert "SCAN tickets_by_subject [PostgreSQL, MySQL]: no index used" in run.stdout
    assert "full_scan on tickets" in run.stdout
    assert "add an index" in run.stdout and "--accept-scans" in run.stdout
    text = out.read_text()
    assert (
        "tickets_by_account_id_status" in text
        and "tickets_by_subject" not in text
        and "subject = " not in text
    )
    explained = _explain(seeded, out)
    assert explained.code == 0, explained.output  # the catalog passes as written

    # accepted explicitly: the capture passes; still nothing to expect, so nothing written for it
    before = _bytes(out)
    run = _capture(seeded, out, "--accept-scans")
    assert run.code == 0, run.output
    assert "SCAN tickets_by_subject [PostgreSQL, MySQL]: no index used" in run.stdout
    assert "scan accepted (--accept-scans): not written" in run.stdout
    assert _bytes(out) == before
    explained = _explain(seeded, out)
    assert explained.code == 0, explained.output


def test_a_shape_no_index_serves_is_told_to_add_one_not_to_accept(seeded, tmp_path):
    """`catalog accept` writes an index expectation; with no index to write, saying it would was wrong."""
    cat = tmp_path / "db"
    cat.mkdir()
    for name in ("queries.sql", "setup.postgresql.sql", "setup.mysql.sql"):
        shutil.copy(seeded / name, cat / name)
    (cat / "scan.sql").write_text(f"-- name: tickets_by_subject\n{SCAN}\n")
    run = run_cli("explain", "--catalog", str(cat), "--namespace", NS, "--runs", "1", "--warmups", "0")
    assert run.code == 1, run.output
    assert "no index serves it" in run.output and "add an index for it" in run.output, run.output
    assert "catalog accept writes it" not in run.output
