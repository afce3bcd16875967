"""A time that is not the statement's is marked wherever a table shows it (issue 32): grow's p50
column of a file written before statement times, and the same file's points once they say they
are statement times."""

from __future__ import annotations

import copy
import json
from pathlib import Path

from dbbench.output import grow, grow_html

GROW = Path(__file__).resolve().parents[3] / "docs" / "results" / "grow-alpine-10k-100k-1m.json"


def _row(table: str, shape: str, server: str, spelling: str = "remediated") -> str:
    return next(
        ln for ln in table.splitlines() if ln.startswith(shape) and f"{server}  " in ln and spelling in ln
    )


def test_an_older_grow_file_marks_mysqls_const_time_and_every_executor_time():
    doc = json.loads(GROW.read_text())
    assert all("timing" not in p for g in doc["growth"] for p in g["points"])  # written before
    table = grow.growth_table(doc)
    assert "0.00022 ms†" in _row(table, "exact asset path", "MySQL")
    assert "0.070 ms‡" in _row(table, "exact asset path", "PostgreSQL")
    assert "† executor time only, and MySQL read the row while planning" in table
    assert "‡ executor time only" in table
    page = grow_html.page(doc)
    assert "0.00022 ms†" in page and "<p>† executor time only, and MySQL read the row while planning" in page


def test_statement_times_are_not_marked():
    doc = json.loads(GROW.read_text())
    now = copy.deepcopy(doc)
    for g in now["growth"]:
        for p in g["points"]:
            p["timing"] = "statement"
    table = grow.growth_table(now)
    assert "†" not in table and "‡" not in table
    assert "0.070 ms" in _row(table, "exact asset path", "PostgreSQL")
