"""Setup files are split as they are read: the same statements whatever the block size, memory
bounded by the longest statement, a COPY's rows streamed, and several files run in order."""

from __future__ import annotations

import shutil
import tracemalloc
from collections import Counter
from pathlib import Path

import pytest

from dbbench.access.targets import open_targets
from dbbench.catalog.entries import CatalogError, open_catalog
from dbbench.setup import loader
from dbbench.setup.fingerprint import fingerprints_agree
from dbbench.setup.guard import check_statement
from dbbench.setup.split import split_file, split_sql
from tests.conftest import run_cli
from tests.db import drop_namespaces

SHOP = Path(__file__).resolve().parents[3] / "examples" / "shop"

PG_SCRIPT = (
    "-- a header; with a semicolon\n"
    "CREATE TABLE t (a text DEFAULT 'x;y\nover two lines', b int);\n"
    "/* a comment\n   of ; three\n   lines */ INSERT INTO t VALUES ('it''s; fine', 1), ('two', 2);\n"
    "CREATE FUNCTION f() RETURNS int AS $body$\n  SELECT 1;\n  SELECT 2;\n$body$ LANGUAGE sql;\n"
    "COPY t (a, b) FROM stdin;\n" + "".join(f"row {k};\\t\t{k}\n" for k in range(300)) + "\\.\n"
    "INSERT INTO t VALUES (now()::text, 3);\n"
    "SELECT 'tail';\n"
)
MYSQL_SCRIPT = (
    "# a header; with a semicolon\n"
    "CREATE TABLE t (a text, b int);\n"
    "/*!40101 SET @OLD_SQL_MODE=@@SQL_MODE, SQL_MODE='NO_AUTO_VALUE_ON_ZERO' */;\n"
    "INSERT INTO `t` VALUES " + ",".join(f"('it\\'s; {k}\\\\',{k})" for k in range(200)) + ";\n"
    "INSERT INTO t VALUES ('a\nmultiline; text', 2);\n"
    "DELIMITER //\nCREATE PROCEDURE p() BEGIN SELECT 1; SELECT ';'; END//\nDELIMITER ;\n"
    "INSERT INTO t VALUES (NOW(), 3);\n"
    "SELECT 'tail'"
)


def _rows(stmts) -> list[tuple]:
    """Each statement as the checks and the server see it (an INSERT of data rows taken whole has
    its head for code: the rows hold nothing to check)."""
    return [
        (
            s.text,
            s.line,
            _head(s.code),
            check_statement(s, "ns"),
            None if s.data is None else "".join(s.data.chunks(7)),
        )
        for s in stmts
    ]


def _head(code: str) -> str:
    return code[: code.index("VALUES") + 6] if code.startswith("INSERT") and "VALUES (''" in code else code


@pytest.mark.parametrize("dialect,script", [("postgresql", PG_SCRIPT), ("mysql", MYSQL_SCRIPT)])
@pytest.mark.parametrize("block", [1, 5, 64, 4096, 1 << 20])
def test_a_file_splits_as_its_text_does_whatever_the_block_size(tmp_path, dialect, script, block):
    """Text, comments and bodies spanning lines and blocks, a DELIMITER body, a COPY whose rows
    run over many blocks: the statements, lines, code and rows are those of the whole text."""
    f = tmp_path / "setup.sql"
    f.write_text(script)
    expected = _rows(split_sql(script, dialect, str(f)))
    read: list[int] = []
    assert _rows(split_file(f, dialect, on_bytes=read.append, block=block)) == expected
    assert sum(read) == f.stat().st_size
    assert len(expected) == (6 if dialect == "postgresql" else 7)


def test_copy_rows_left_unconsumed_are_skipped_and_an_unterminated_copy_is_an_error(tmp_path):
    f = tmp_path / "setup.sql"
    f.write_text(PG_SCRIPT)
    texts = [s.text for s in split_file(f, "postgresql", block=16)]  # no COPY's rows consumed
    assert texts[-2:] == ["INSERT INTO t VALUES (now()::text, 3)", "SELECT 'tail'"]
    f.write_text(PG_SCRIPT.split("\\.\n")[0])
    with pytest.raises(loader.SetupError, match=r"line \d+: COPY … FROM stdin without its data's closing"):
        for _ in split_file(f, "postgresql", block=16):
            pass


def test_an_insert_of_data_rows_is_taken_whole_and_checked_by_its_head():
    """The splitter takes an INSERT whose rows hold data only in one step (its code is its head);
    an INSERT with anything else in its rows is split, and checked, as any statement."""
    data, call, outside = split_sql(
        "INSERT INTO `t` (a, b) VALUES ('x;y', 1), (_binary 'z', -2.5e3);\n"
        "INSERT INTO t VALUES (load_file('/etc/passwd'), 1);\n"
        "INSERT INTO other.t VALUES ('x', 1);\n",
        "mysql",
    )
    assert data.code == "INSERT INTO `t` (a, b) VALUES" and data.text.endswith("(_binary 'z', -2.5e3)")
    assert call.code == "INSERT INTO t VALUES (load_file(''), 1)"
    assert check_statement(data, "ns") is None
    assert "server-side files" in (check_statement(call, "ns") or "")
    assert "outside the namespace" in (check_statement(outside, "ns") or "")


@pytest.mark.parametrize("dialect", ["postgresql", "mysql"])
def test_splitting_a_large_file_holds_a_bounded_window(tmp_path, dialect):
    """Counted, not timed: splitting a 20+ MB dump (one COPY, or 1 MB INSERT lines) allocates a
    few blocks at a time, never the file (its rows consumed as a load would)."""
    f = tmp_path / "dump.sql"
    with f.open("w") as out:
        out.write("CREATE TABLE t (a int, b text);\n")
        if dialect == "postgresql":
            out.write("COPY t (a, b) FROM stdin;\n")
            for k in range(24 * 16):
                out.write("".join(f"{k * 2048 + r}\tsome text of row {r}\n" for r in range(2048)))
            out.write("\\.\n")
        else:
            for _ in range(24):
                out.write(
                    "INSERT INTO t VALUES " + ",".join(f"({r},'row {r} text')" for r in range(70_000)) + ";\n"
                )
    size = f.stat().st_size
    assert size > 20_000_000
    tracemalloc.start()
    try:
        count = 0
        for s in split_file(f, dialect):
            count += 1
            for _ in s.data.chunks() if s.data is not None else ():
                pass
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert count == (2 if dialect == "postgresql" else 25)
    assert peak < 12_000_000, f"peak {peak:,} bytes for a {size:,}-byte file"


def _folder_catalog(tmp_path: Path) -> Path:
    """examples/shop with its setup SQL as a setup/ folder: the schema of each dialect, then data
    common to both."""
    cat = tmp_path / "cat"
    shutil.copytree(
        SHOP, cat, ignore=shutil.ignore_patterns("*.py", "*.ini", "*.json", "README.md", "setup.*")
    )
    (cat / "setup").mkdir()
    for dialect in ("postgresql", "mysql"):
        (cat / "setup" / f"01-shop.{dialect}.sql").write_text((SHOP / f"setup.{dialect}.sql").read_text())
    (cat / "setup" / "02-more.sql").write_text(
        "CREATE TABLE notes (id int PRIMARY KEY, body varchar(40));\n"
        "INSERT INTO notes VALUES (1, 'one'), (2, 'two;2');\n"
    )
    (cat / "setup" / "README.txt").write_text("not SQL: ignored")
    return cat


def test_a_setup_folder_runs_its_files_in_name_order_on_each_dialect(local_servers, tmp_path):
    cat = _folder_catalog(tmp_path)
    opened = open_catalog(cat)
    assert {d: [f.name for f in files] for d, files in opened.setup.items()} == {
        "postgresql": ["01-shop.postgresql.sql", "02-more.sql"],
        "mysql": ["01-shop.mysql.sql", "02-more.sql"],
    }
    assert opened.setup_label("mysql") == "setup/ (2 files)"
    checked = run_cli("validate", "--catalog", str(cat))
    assert checked.code == 0 and "PostgreSQL: setup/ (2 files)" in checked.stdout, checked.output
    progress: Counter[tuple[str, str]] = Counter()
    totals: dict[str, int] = {}

    def report(dialect: str, step: str, advance: int, total: int) -> None:
        progress[dialect, step] += advance
        totals[dialect] = total

    targets = open_targets({})
    try:
        _, results = loader.load(targets, cat, namespace="dbbench_t_setupdir", progress=report)
        assert fingerprints_agree(results, by_name=True) == {t: True for t in results[0].fingerprints}
        assert all(r.rows["notes"] == 2 and r.rows["orders"] > 0 for r in results)
        for d in ("postgresql", "mysql"):
            size = sum(f.stat().st_size for f in opened.setup[d])
            assert totals[d] == size and progress[d, "checking"] == size and progress[d, "loading"] == size
    finally:
        for t in targets:
            t.dispose()
        drop_namespaces("dbbench_t_setupdir")


def test_a_setup_folder_beside_a_setup_file_is_refused(tmp_path):
    cat = _folder_catalog(tmp_path)
    (cat / "setup.sql").write_text("CREATE TABLE x (id int);\n")
    with pytest.raises(CatalogError, match=r"both setup\.sql and setup/ hold setup SQL for postgresql"):
        open_catalog(cat)


def test_read_ahead_hands_over_the_statements_in_order_streamed_rows_and_errors_included(tmp_path):
    """Split in a thread of its own: the same statements and rows (a COPY streamed past the
    window is handed over alone), a splitter error raised in order, and a consumer that stops
    early stops the thread and closes the file."""
    import threading

    from dbbench.setup.readahead import read_ahead

    f = tmp_path / "setup.sql"
    f.write_text(PG_SCRIPT)
    expected = _rows(split_sql(PG_SCRIPT, "postgresql", str(f)))
    assert _rows(read_ahead(split_file(f, "postgresql", block=16), depth=2)) == expected
    f.write_text(PG_SCRIPT + "SELECT 'unterminated;\n")
    got = []
    with pytest.raises(loader.SetupError, match=r"line 315: unterminated 'quoted' text"):
        for s in read_ahead(split_file(f, "postgresql", block=16)):
            got.append(s.text)
    assert got == [r[0] for r in expected]
    before = threading.active_count(), len(list(Path("/proc/self/fd").iterdir()))
    stmts = read_ahead(split_file(f, "postgresql", block=16))
    next(stmts)
    stmts.close()
    assert (threading.active_count(), len(list(Path("/proc/self/fd").iterdir()))) == before


@pytest.mark.parametrize("block", [4, 64])
def test_a_streamed_copy_may_end_the_file_without_a_newline(tmp_path, block):
    f = tmp_path / "setup.sql"
    f.write_text("COPY t (a) FROM stdin;\n" + "".join(f"{k}\n" for k in range(100)) + "\\.")
    (copy,) = [
        (s.text, "".join(s.data.chunks()) if s.data else None)
        for s in split_file(f, "postgresql", block=block)
    ]
    assert copy == ("COPY t (a) FROM stdin", "".join(f"{k}\n" for k in range(100)))
