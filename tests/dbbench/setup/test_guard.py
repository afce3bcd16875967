"""The text checks of setup SQL report every refused statement of every setup file in one run."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.conftest import run_cli

SHOP = Path(__file__).resolve().parents[3] / "examples" / "shop"


def test_validate_lists_five_refused_statements_of_two_files_at_once(tmp_path):
    cat = tmp_path / "cat"
    shutil.copytree(SHOP, cat, ignore=shutil.ignore_patterns("*.py", "*.ini", "*.json", "README.md"))
    pg = cat / "setup.postgresql.sql"
    pg.write_text(
        pg.read_text()
        # (a CREATE EXTENSION is left to the seed by validate, which reads no server: test_extensions.py)
        + "\nDROP TABLE public.orders;\nGRANT ALL ON customers TO PUBLIC;\nCREATE ROLE intruder;\n"
    )
    my = cat / "setup.mysql.sql"
    my.write_text(my.read_text() + "\nUSE mysql;\nSELECT * FROM customers INTO OUTFILE '/tmp/x';\n")
    run = run_cli("validate", "--catalog", str(cat))
    assert run.code == 2, run.output
    lines = run.stderr.strip().splitlines()
    assert lines[0] == "dbbench: error: 5 setup statements refused:", run.stderr
    assert len(lines) == 6 and "Traceback" not in run.output
    refused = "\n".join(lines[1:])
    for file, why in [
        (pg, "outside the namespace"),
        (pg, "changes privileges"),
        (pg, "creates server-wide objects"),
        (my, "switches database (USE)"),
        (my, "reads or writes server-side files"),
    ]:
        assert any(str(file) in line and why in line and "(line " in line for line in lines[1:]), (
            why,
            refused,
        )


def test_one_refused_statement_stays_one_line(tmp_path):
    cat = tmp_path / "cat"
    shutil.copytree(SHOP, cat, ignore=shutil.ignore_patterns("*.py", "*.ini", "*.json", "README.md"))
    (cat / "setup.mysql.sql").write_text((cat / "setup.mysql.sql").read_text() + "\nUSE mysql;\n")
    run = run_cli("validate", "--catalog", str(cat))
    assert run.code == 2
    assert (
        run.stderr.count("\n") == 1 and "statement" in run.stderr and "switches database (USE)" in run.stderr
    )


def test_the_mysql_clients_source_command_is_refused_with_what_to_do(tmp_path):
    """A sample split over files with ``source`` (the employees sample) is not followed: the
    refusal says to put the files in a setup/ folder instead."""
    cat = tmp_path / "cat"
    shutil.copytree(SHOP, cat, ignore=shutil.ignore_patterns("*.py", "*.ini", "*.json", "README.md"))
    (cat / "setup.mysql.sql").write_text("CREATE TABLE t (id int);\nsource load_departments.dump;\n")
    run = run_cli("validate", "--catalog", str(cat))
    assert run.code == 2 and "statement 2 (line 2) is the mysql client's source command" in run.stderr, (
        run.output
    )
    assert "setup/ folder" in run.stderr
