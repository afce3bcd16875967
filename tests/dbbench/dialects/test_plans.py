"""Plan parsing and assertions on recorded plans (no server needed), and nearest rank."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dbbench.dialects import mysql, postgresql
from dbbench.measure.expect import check
from verdict.stats import nearest_rank

PLANS = Path(__file__).parents[1] / "fixtures" / "plans"


def test_nearest_rank_with_seven_samples():
    samples = [7.0, 1.0, 6.0, 2.0, 5.0, 3.0, 4.0]
    assert nearest_rank(samples, 0.50) == 4.0  # ceil(3.5) = 4th smallest
    assert nearest_rank(samples, 0.95) == 7.0  # ceil(6.65) = 7th
    assert nearest_rank(samples, 0.10) == 1.0


def test_nearest_rank_edges():
    assert nearest_rank([], 0.5) is None
    assert nearest_rank([3.0], 0.95) == 3.0
    assert nearest_rank(list(range(1, 251)), 0.95) == 238  # the seed runner's 250-request rank
    with pytest.raises(ValueError):
        nearest_rank([1.0], 0)


def test_one_nearest_rank_for_both_tools():
    from verdict import stats

    assert stats.nearest_rank is nearest_rank


def test_mysql_97_tree_with_nested_loop():
    sql = (
        "SELECT p.id FROM package_relation r JOIN package p ON p.repository_id = r.repository_id "
        "AND p.id = r.package_id WHERE r.repository_id = 1"
    )
    tree, ms = mysql.parse_plan((PLANS / "mysql97-relation-lookup.txt").read_text(), mysql.alias_map(sql))
    assert ms == pytest.approx(1.19)
    assert tree.kind == "limit" and tree.actual_rows == 100
    lookup = next(n for n in tree.walk() if n.index == "ix_relation_lookup")
    assert (lookup.kind, lookup.table, lookup.alias) == ("index_range", "package_relation", "r")
    probe = next(n for n in tree.walk() if n.kind == "unique_lookup")
    assert (probe.table, probe.index, probe.loops) == ("package", "PRIMARY", 100)
    assert check(tree, "package_relation", "ix_relation_lookup", ["full_scan", "sort"]).ok


def test_mysql_exponent_times_and_const_resolution():
    tree, ms = mysql.parse_plan((PLANS / "mysql97-exact-asset-path.txt").read_text())
    assert tree.kind == "const" and ms == pytest.approx(265e-6)
    doc = json.loads((PLANS / "mysql97-exact-asset-path.json").read_text())
    assert mysql.json_accesses(doc, {}) == [("package", "uq_package_path", "const")]


def test_mysql_80_style_range_scan():
    tree, ms = mysql.parse_plan((PLANS / "mysql80-namespace-page.txt").read_text())
    assert ms == pytest.approx(5.261)
    scan = tree.children[0]
    assert (scan.kind, scan.table, scan.index, scan.est_rows) == (
        "index_range",
        "package",
        "ix_package_namespace",
        9120,
    )
    assert check(tree, "package", "ix_package_namespace", ["full_scan", "sort"]).ok


def test_mysql_80_style_filesort_and_scan_are_caught():
    sql = "SELECT s.x FROM repository r JOIN suite_state s ON s.repository_id = r.id"
    tree, ms = mysql.parse_plan((PLANS / "mysql80-filesort.txt").read_text(), mysql.alias_map(sql))
    assert ms == pytest.approx(145.044)
    verdict = check(tree, "suite_state", "ix_suite_pending", ["full_scan", "sort"])
    assert not verdict.ok
    assert "expected index ix_suite_pending on suite_state is not used" in verdict.problems
    assert "forbidden full scan of repository" in verdict.problems
    assert any(p.startswith("forbidden sort") for p in verdict.problems)
    assert check(tree, "suite_state", "PRIMARY", ["full_scan:suite_state"]).ok


def test_mysql_sort_inside_a_correlated_probe_is_not_a_filesort():
    tree, _ = mysql.parse_plan(
        (PLANS / "mysql97-cleanup.txt").read_text(), {"s": "snapshot", "n": "snapshot", "st": "suite_state"}
    )
    sorts = [n for n in tree.walk() if n.kind == "sort"]
    assert sorts and all(n.in_subquery for n in sorts)
    assert check(tree, "snapshot", "ix_snapshot_cleanup", ["full_scan:snapshot", "sort"]).ok


def test_postgres_json_plan():
    tree, ms = postgresql.parse_plan(json.loads((PLANS / "pg12-namespace-page.json").read_text()))
    assert ms > 0
    scan = tree.children[0]
    assert (scan.kind, scan.table, scan.index) == ("index_range", "package", "ix_package_namespace")
    assert tree.actual_rows == 2048
    assert check(tree, "package", "ix_package_namespace", ["full_scan", "sort"]).ok
    assert not check(tree, "package", "ix_package_full", []).ok


def test_postgres_subplans_are_probes():
    tree, _ = postgresql.parse_plan(json.loads((PLANS / "pg12-cleanup.json").read_text()))
    assert [n.table for n in tree.walk() if n.in_subquery and n.index] == ["suite_state", "snapshot"]
    assert check(tree, "snapshot", "ix_snapshot_cleanup", ["full_scan:snapshot", "sort"]).ok


def test_alias_map_ignores_keywords():
    sql = (
        "SELECT 1 FROM suite_state s FORCE INDEX (ix) STRAIGHT_JOIN repository r ON r.id = s.repository_id "
        "JOIN snapshot WHERE x"
    )
    assert mysql.alias_map(sql) == {
        "suite_state": "suite_state",
        "s": "suite_state",
        "repository": "repository",
        "r": "repository",
        "snapshot": "snapshot",
    }


def test_mysql_const_lookup_with_exponent_times_is_marked_resolved_while_planning():
    """The issue's own line (issue 32): the executor's 111e-6 ms is read exactly, printed as
    0.000111, and the plan's root says the row was read while planning."""
    from dbbench.dialects import timing
    from dbbench.units import fmt_ms

    tree, ms = mysql.parse_plan((PLANS / "mysql80-const-exponent.txt").read_text())
    assert (tree.kind, tree.actual_rows, tree.loops, tree.est_rows) == ("const", 1, 1, 1)
    assert ms == 111e-6 and fmt_ms(ms) == "0.000111"
    assert timing.resolved_while_planning(tree)
    assert timing.kind_of(False, tree) == timing.RESOLVED  # no statement time: marked
    assert timing.kind_of(True, tree) == timing.STATEMENT
    ranged, _ = mysql.parse_plan((PLANS / "mysql80-namespace-page.txt").read_text())
    assert timing.kind_of(False, ranged) == timing.EXECUTOR


def test_times_of_two_kinds_are_compared_on_what_they_share_or_not_at_all():
    from dbbench.dialects import timing

    assert timing.comparable("statement", [2.0], [1.0], "statement", [3.0], [1.5]) == ([2.0], [3.0], None)
    base, new, note = timing.comparable("executor", [1.0], None, "statement", [3.0], [1.5])
    assert (base, new) == ([1.0], [1.5]) and note and "executor time" in note
    why = timing.comparable("resolved-while-planning", [1e-4], None, "statement", [0.12], [1e-4])
    assert isinstance(why, str) and why.startswith("not compared")
