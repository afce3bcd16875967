"""`dbbench diff` on the real servers, alpine-100k: unchanged data passes; a DAO change that keeps
the plan's index but examines 45x the rows fails on work alone, naming the node; keyset pagination
rewritten as OFFSET does the same on both dialects; the same rows read from 37x the pages fail on
PostgreSQL's shared buffers; a dropped index still fails; an old baseline falls back to plan shape;
--gate-timing measures its noise floor. Each regression is also drawn in the three views of the
aligned plans (issue 37): the coloured terminal tree, the Markdown comment and the HTML page."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest

from dbbench import dialects
from tests.conftest import run_cli
from tests.db import SHARED_100K, sql
from tests.dbbench.diff.regressions import (
    SEEDED_ORDER,
    SHUFFLED_ORDER,
    offset_catalog,
    rewrite_group_binding,
    unbounded_catalog,
)

pytestmark = pytest.mark.servers

NS = SHARED_100K
WORK = re.compile(
    r"work up at Index Scan on package using ix_package_namespace: 2,048 → ([\d,]+) rows examined "
    r"\(([\d.]+)x\); shared buffers up at Index Scan on package using ix_package_namespace: [\d,]+ → "
    r"[\d,]+ \([\d.]+x\); in total 4,096 → [\d,]+ rows examined \([\d.]+x\), shared buffers [\d,]+ → [\d,]+"
)


RED = "\x1b[1;31m"  # the terminal tree's colour of a node that examines more rows


def views(tmp_path: Path) -> list[str]:
    """The options that draw a diff in all three views: colour on stdout, Markdown and HTML files."""
    return [
        "--color",
        "always",
        "--markdown",
        str(tmp_path / "diff.md"),
        "--html",
        str(tmp_path / "diff.html"),
    ]


def assert_views(run, tmp_path: Path, shape: str, dialect: str, node: str, change: str) -> None:
    """``node`` of ``shape`` drawn changed (with ``change`` in its words) in the three views: a red
    line of the terminal's tree (ANSI colour), a ``~`` line of the Markdown comment's aligned plan
    in its <details>, and a row of the HTML page's two columns tinted as more work."""
    tree = [line for line in run.stdout.splitlines() if node in line and "\x1b[" in line]
    assert tree and RED in tree[0] and "~ " in tree[0], run.stdout
    md = (tmp_path / "diff.md").read_text()
    assert f"<details><summary>Plans: {shape} [{dialect}]</summary>" in md
    (line,) = [x for x in md.splitlines() if x.lstrip().startswith(f"~ {node}")][:1]
    assert change in line, line
    page = (tmp_path / "diff.html").read_text()
    assert "<script" not in page and "http://" not in page and "https://" not in page
    section = page[page.index(f"{shape} · {dialect} ") :]
    row = section[: section.index(f"</span>{html.escape(node)}")].rsplit('<div class="row ', 1)[1]
    assert row.startswith("worse"), row[:200]
    assert '<div class="cell before"' in row and "title=" in row


@pytest.fixture(scope="module")
def baseline(alpine_100k_pool, tmp_path_factory) -> Path:
    """alpine-100k as seeded (the namespace this module shares: tests.db.Shared100k), and its
    baseline (both dialects)."""
    path = tmp_path_factory.mktemp("diffwork") / "baseline.json"
    with alpine_100k_pool.lent():
        run = run_cli("baseline", "save", str(path), "--namespace", NS, "--no-natural")
        assert run.code == 0, run.output
        yield path


def test_unchanged_data_passes_with_the_work_of_every_shape_equal(baseline, tmp_path):
    out = tmp_path / "diff.json"
    run = run_cli("diff", str(baseline), "--namespace", NS, "--output", str(out))
    assert run.code == 0, run.output
    assert "dbbench diff: pass: no regressions; 24 of 24 unchanged" in run.stdout
    shapes = json.loads(out.read_text())["shapes"]
    assert len(shapes) == 24
    assert all(s["work"]["rows_before"] == s["work"]["rows_after"] for s in shapes), shapes


def test_the_same_index_examining_45x_the_rows_fails_on_work_naming_the_node(baseline, tmp_path):
    out = tmp_path / "diff.json"
    cat = unbounded_catalog(tmp_path / "alpine-unbounded")
    run = run_cli(
        "diff", str(baseline), "--namespace", NS, "--catalog", str(cat), "--output", str(out), *views(tmp_path)
    )  # fmt: skip
    assert run.code == 1, run.output
    assert "1 regression: namespace late keyset page (PostgreSQL); 23 of 24 unchanged" in run.stdout
    node = "Index Scan on package using ix_package_namespace"
    assert_views(run, tmp_path, "namespace late keyset page", "PostgreSQL", node, "rows examined 2,048 → ")
    m = WORK.search(run.stdout)
    assert m, run.stdout
    after, ratio = int(m.group(1).replace(",", "")), float(m.group(2))
    assert after >= 10 * 2048 and ratio >= 10
    shape = next(s for s in json.loads(out.read_text())["shapes"] if s["regressed"])
    # the plan shape held: same index, no sort; only the work (and, advisory, the time) changed
    assert (
        shape["baseline_access"]
        == shape["result_access"]
        == "index_range on package using ix_package_namespace"
    )
    # no plan-shape finding: work, and the catalog assertion, whose generic-plan probe (a prepared
    # statement's plan: the unbounded comparison's estimate no longer trusts the index order) sorts
    assert {f["kind"] for f in shape["findings"] if f["regression"]} == {"work", "assertion"}
    (assertion,) = [f["message"] for f in shape["findings"] if f["kind"] == "assertion"]
    assert "generic plan (PREPARE / EXECUTE" in assertion and "forbidden sort" in assertion, assertion
    assert all(f["advisory"] for f in shape["findings"] if f["kind"] in ("slower", "faster"))
    # an old (dbbench.explain/1) baseline cannot see the work: plan shape and the catalog assertion
    # alone decide (here the generic plan's sort), and it says so
    old = json.loads(baseline.read_text()) | {"schema": "dbbench.explain/1"}
    (tmp_path / "old.json").write_text(json.dumps(old))
    run = run_cli(
        "diff", str(tmp_path / "old.json"), "--namespace", NS, "--catalog", str(cat), "--output", str(out)
    )
    assert run.code == 1, run.output
    assert "work unknown: the baseline is a dbbench.explain/1 document" in run.stdout
    shape = next(s for s in json.loads(out.read_text())["shapes"] if s["regressed"])
    assert {f["kind"] for f in shape["findings"] if f["regression"]} == {"assertion"}


def test_keyset_pagination_rewritten_as_offset_fails_on_work_on_both_dialects(baseline, tmp_path):
    """The DAO change every reviewer should catch: the same index, the same plan shape, but the page
    after row 90,000 read by skipping 90,000 rows."""
    cat = offset_catalog(tmp_path / "alpine-offset")
    run = run_cli("diff", str(baseline), "--namespace", NS, "--catalog", str(cat), *views(tmp_path))
    assert run.code == 1, run.output
    assert "2 regressions: namespace late keyset page (" in run.stdout
    for dialect, node in (
        ("PostgreSQL", "Index Scan on package using ix_package_namespace"),
        ("MySQL", "Index range scan on package using ix_package_namespace"),
    ):
        assert_views(run, tmp_path, "namespace late keyset page", dialect, node, "rows examined 2,048 → 92,0")
    # MySQL names its limit node after the offset it now skips
    assert "Limit → Limit/Offset" in (tmp_path / "diff.md").read_text()


def test_gated_timing_measures_a_second_run_and_never_fails_unchanged_data(baseline):
    run = run_cli("diff", str(baseline), "--namespace", NS, "--gate-timing")
    assert run.code in (0, 3), run.output  # an A/A may be undecided on timing; never a failure
    assert "Self-control (this run against a second run now: the noise floor)" in run.stdout
    assert (
        "slower (--gate-timing): the 95% interval of the sample ratio, widened by the run-to-run"
        in run.stdout
    )
    assert "A/A work" in run.stdout and "DIFFERS" not in run.stdout


def test_the_same_rows_from_37x_the_pages_fail_on_shared_buffers(baseline, tmp_path):
    """group_binding's heap no longer in its page index's order (a rewrite, a bulk reload): the
    same plan examines the same 2,048 rows, each from its own page."""
    out = tmp_path / "diff.json"
    rewrite_group_binding(NS, SHUFFLED_ORDER)
    try:
        run = run_cli("diff", str(baseline), "--namespace", NS, "--output", str(out), *views(tmp_path))
    finally:
        rewrite_group_binding(NS, SEEDED_ORDER)
    assert run.code == 1, run.output
    assert "1 regression: group binding late page (PostgreSQL); 23 of 24 unchanged" in run.stdout
    m = re.search(
        r"- shared buffers up at Index Scan on group_binding using ix_binding_page: ([\d,]+) → ([\d,]+) "
        r"\([\d.]+x\); in total 4,096 → 4,096 rows examined \(1\.0x\)",
        run.stdout,
    )
    assert m, run.stdout
    before, after = (int(g.replace(",", "")) for g in m.groups())
    assert before < 100 and after > 1000  # 56 pages as seeded; about one page per row shuffled
    shape = next(s for s in json.loads(out.read_text())["shapes"] if s["regressed"])
    assert {f["kind"] for f in shape["findings"] if f["regression"]} == {"work"}
    assert shape["baseline_access"] == shape["result_access"]
    # the same rows from more pages: the aligned plans name the index scan's own shared buffers
    md = (tmp_path / "diff.md").read_text()
    assert "<details><summary>Plans: group binding late page [PostgreSQL]</summary>" in md
    assert re.search(
        r"~ Index Scan on group_binding using ix_binding_page  \[shared buffers \d+ → [\d,]+", md
    ), md
    page = (tmp_path / "diff.html").read_text()
    assert "group binding late page · PostgreSQL" in page and "shared buffers" in page
    restored = run_cli("diff", str(baseline), "--namespace", NS)
    assert restored.code == 0, restored.output


def test_a_dropped_index_still_fails(baseline, alpine_100k_pool, tmp_path):
    """Last in the module, and the module last of those sharing the namespace: the index stays
    dropped (a module after it would have the namespace seeded again)."""
    alpine_100k_pool.spoil()
    drop = {
        "postgresql": "DROP INDEX {ns}.ix_stage_cleanup",
        "mysql": "DROP INDEX ix_stage_cleanup ON {ns}.group_snapshot_stage",
    }
    for dialect, statement in drop.items():
        sql(dialect, statement.format(ns=dialects.get(dialect).quote(NS)))
    run = run_cli("diff", str(baseline), "--namespace", NS, *views(Path(tmp_path)))
    assert run.code == 1, run.output
    assert "2 regressions: orphan group stage scan (MySQL, PostgreSQL)" in run.stdout
    assert run.stdout.count("index lost: ix_stage_cleanup on group_snapshot_stage") == 2
    # the aligned plans: a sort added above the join (its input paired through it), the stage
    # table read through its primary key instead
    md = (tmp_path / "diff.md").read_text()
    assert "+ Sort" in md and "index ix_stage_cleanup → group_snapshot_stage_pkey" in md, md
    page = (tmp_path / "diff.html").read_text()
    assert page.count("orphan group stage scan · ") == 2 and "Sort added" in page
