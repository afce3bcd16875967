"""Join changes named as such on both servers (issue 37), on sakila's form (the schema of
tests/dbbench/measure/test_writes_real_schemas.py: MySQL's sakila and its PostgreSQL port, a few
thousand generated rows): a film's rentals, ``inventory ⋈ rental``, as a DAO change rewrites it.

* join order: a condition on the rental date added, each server drives the join from ``rental``
  (one row by the unique key) instead of ``inventory``: both say ``join order inventory ⋈ rental →
  rental ⋈ inventory``, and the aligned plans mark where each input stood;
* join type: the join key wrapped in an expression (``r.inventory_id + 0``), no index serves it and
  each server hashes instead: ``Nested Loop → Hash Join`` (PostgreSQL), ``Nested loop inner join →
  Inner hash join`` (MySQL).

Each in the three views: the findings and the coloured tree on the terminal, the Markdown comment,
the HTML page."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.conftest import run_cli, shape_toml
from tests.db import drop_namespaces
from tests.dbbench.measure.test_writes_real_schemas import MYSQL_SETUP, POSTGRESQL_SETUP

pytestmark = pytest.mark.servers

NS = f"dbbench_t_plan_views_{os.getpid()}"
ON = "r.inventory_id = i.inventory_id"
FILM = "i.store_id = 1 AND i.film_id = 5"  # two copies of film 5 in store 1, three rentals each


def _shape(cat: Path, on: str, where: str) -> None:
    """The catalog's one shape, a film's rentals, spelled with ``on`` and ``where``."""
    (cat / "01-film-rentals.toml").write_text(
        shape_toml(
            "film rentals",
            "6 rows",
            sql=f"SELECT i.inventory_id, r.rental_id FROM inventory i JOIN rental r ON {on} WHERE {where}",
            postgresql='expect = { table = "rental", index = "idx_fk_inventory_id" }',
        )
    )


@pytest.fixture(scope="module")
def baseline(local_servers, tmp_path_factory):
    """The sakila-form catalog seeded into this module's namespace and its baseline with the shape
    as first written (a nested loop from inventory into rental through idx_fk_inventory_id)."""
    root = tmp_path_factory.mktemp("plan_views")
    cat = root / "sakila"
    cat.mkdir()
    (cat / "setup.mysql.sql").write_text(MYSQL_SETUP)
    (cat / "setup.postgresql.sql").write_text(POSTGRESQL_SETUP)
    _shape(cat, ON, FILM)
    try:
        seeded = run_cli("seed", "--catalog", str(cat), "--namespace", NS)
        assert seeded.code == 0, seeded.output
        base = root / "baseline.json"
        saved = run_cli(
            "baseline", "save", str(base), "--catalog", str(cat), "--namespace", NS, "--runs", "3"
        )
        assert saved.code == 0, saved.output
        yield cat, base
    finally:
        drop_namespaces(NS)


def _diff(baseline, tmp_path: Path, on: str, where: str):
    cat, base = baseline
    _shape(cat, on, where)
    try:
        run = run_cli(
            "diff", str(base), "--catalog", str(cat), "--namespace", NS, "--runs", "3", "--color", "always",
            "--markdown", str(tmp_path / "diff.md"), "--html", str(tmp_path / "diff.html"),
        )  # fmt: skip
    finally:
        _shape(cat, ON, FILM)
    return run, (tmp_path / "diff.md").read_text(), (tmp_path / "diff.html").read_text()


def _findings(run, dialect: str) -> list[str]:
    """The finding lines of ``dialect``'s entry in the terminal's Regressions."""
    lines = run.stdout.splitlines()
    start = lines.index(f"  film rentals [{dialect}]")
    out = []
    for line in lines[start + 1 :]:
        if not line.startswith("    - "):
            break
        out.append(line[6:])
    return out


def test_a_join_driven_from_the_other_table_is_named_a_join_order_change_on_both(baseline, tmp_path):
    run, md, page = _diff(baseline, tmp_path, ON, "i.store_id = 1 AND r.rental_date = '2005-06-01 05:00:00'")
    assert run.code == 1, run.output  # the expected index is lost on both
    words = "join order inventory ⋈ rental → rental ⋈ inventory"
    for dialect in ("PostgreSQL", "MySQL"):
        assert words in _findings(run, dialect), run.stdout
    assert md.count(words) == 4  # a finding and the join's line of the aligned plan, per dialect
    assert md.count("(input 2 in the baseline)") == 2  # rental was the join's second input
    assert page.count(words) == 4 and page.count("input 2 in the baseline") == 2
    tree = [line for line in run.stdout.splitlines() if words in line and "\x1b[" in line]
    assert len(tree) == 2, run.stdout  # the coloured tree's join line, per dialect


def test_a_join_key_no_index_serves_is_named_a_join_type_change_on_both(baseline, tmp_path):
    run, md, page = _diff(baseline, tmp_path, "r.inventory_id + 0 = i.inventory_id", FILM)
    assert run.code == 1, run.output  # rental read whole: 6 → 3,000 rows examined
    expected = {
        "PostgreSQL": "join type Nested Loop → Hash Join of rental ⋈ inventory",
        "MySQL": "join type Nested loop inner join → Inner hash join of rental ⋈ inventory",
    }
    for dialect, words in expected.items():
        assert words in _findings(run, dialect), run.stdout
        assert words in md and words in page
        assert "rows examined 6 → 3,000 (500.0x more)" in md
    # the build side: a Hash added over the inventory scan, paired with the baseline's inventory read
    assert md.count("+ Hash") == 2, md
