"""The views of two aligned plans (issue 37), on hand-made documents: the terminal's coloured tree
(``dbbench diff --color``), the HTML page's two columns (``--html``), biggest differences first,
and a Markdown comment that stays under GitHub's comment limit. No server needed; the same views
of real servers' plans are checked in tests/dbbench/diff/test_work_live.py and
tests/dbbench/diff/test_plan_views_live.py."""

from __future__ import annotations

import copy
import json
import re

from dbbench import diff
from dbbench.document.plandiff import align
from dbbench.output import diff_html, plans
from dbbench.output.diff import GITHUB_COMMENT_LIMIT, to_markdown, to_text
from tests.conftest import run_cli
from tests.dbbench.diff.test_diff import doc, entry, indexed, node, scanned


def _pair(tmp_path, base: dict, new: dict):
    a, b = tmp_path / "base.json", tmp_path / "new.json"
    a.write_text(json.dumps(base))
    b.write_text(json.dumps(new))
    return a, b


def _regressed():
    return (
        doc(entry("recent orders", "postgresql", indexed(), 0.02)),
        doc(entry("recent orders", "postgresql", scanned(), 2.6)),
    )


def test_the_terminal_draws_a_coloured_tree_only_when_asked_or_on_a_terminal(tmp_path):
    a, b = _pair(tmp_path, *_regressed())
    coloured = run_cli("diff", str(a), str(b), "--color", "always")
    assert coloured.code == 1, coloured.output
    tree = [line for line in coloured.stdout.splitlines() if "Seq Scan on orders" in line and "\x1b[" in line]
    assert tree, coloured.stdout
    assert "\x1b[1;31m+ " in tree[0] or "\x1b[1;31m~ " in tree[0]  # the new full scan, in red
    assert "└── " in coloured.stdout  # drawn as a tree
    for option in (["--color", "never"], []):  # off a terminal, auto is plain
        plain = run_cli("diff", str(a), str(b), *option)
        assert "\x1b[" not in plain.stdout and "└── " not in plain.stdout
        assert "    plan, baseline → result (= same, ~ changed, + new, - gone):" in plain.stdout
    assert "        ~ Seq Scan on orders  [Index Scan → Seq Scan; index ix_c → none;" in plain.stdout


def test_no_color_turns_an_automatic_colour_off(tmp_path):
    a, b = _pair(tmp_path, *_regressed())
    run = run_cli("diff", str(a), str(b), "--color", "auto", env={"NO_COLOR": "1"})
    assert "\x1b[" not in run.stdout


def test_the_html_page_puts_the_two_plans_side_by_side_and_fetches_nothing(tmp_path):
    a, b = _pair(tmp_path, *_regressed())
    page_file = tmp_path / "diff.html"
    run = run_cli("diff", str(a), str(b), "--html", str(page_file))
    assert run.code == 1 and page_file.exists(), run.output
    page = page_file.read_text()
    assert "<script" not in page and not re.search(r"(src|href)=", page)  # self-contained
    assert '<div class="head"><div>Baseline</div><div>Result</div></div>' in page
    rows = [(chunk.split('"')[0], chunk) for chunk in page.split('<div class="row ')[1:]]
    assert rows
    # the limit is the same in both plans; the sort is new (hatched on the left) and tinted as more
    # work; the index scan and the full scan of the same table share a row
    sort = next(r for r in rows if "Sort" in r[1])
    assert sort[0] == "worse" and 'class="cell before empty"' in sort[1]
    scan = next(r for r in rows if "Index Scan on orders using ix_c" in r[1])  # paired through the Sort
    assert "Seq Scan on orders" in scan[1] and "Index Scan → Seq Scan; index ix_c → none" in scan[1]
    # hover: the whole node; bars as wide as the rows examined against the most any node examines
    assert 'title="Seq Scan on orders\nkind: full_scan\ntable: orders\nestimated rows: 15' in page
    assert 'style="width:100.0%"' in page


def test_report_against_a_baseline_adds_the_diff_and_its_plans_side_by_side(tmp_path):
    a, b = _pair(tmp_path, *_regressed())
    page_file = tmp_path / "report.html"
    run = run_cli("report", str(b), "--baseline", str(a), "--html", str(page_file))
    assert run.code == 0, run.output  # a write-up, not a gate (`dbbench diff` is the gate)
    assert "### ❌ dbbench diff: fail: 1 regression: recent orders (PostgreSQL)" in run.stdout
    page = page_file.read_text()
    assert '<h2 id="against">Against the baseline base.json</h2>' in page
    assert "<h3>recent orders · PostgreSQL" in page and '<div class="cell after"' in page
    alone = run_cli("report", str(b), "--html", str(tmp_path / "alone.html"))
    assert (
        "Against the baseline" not in (tmp_path / "alone.html").read_text()
        and "dbbench diff" not in alone.stdout
    )


def test_bars_are_proportional_to_rows_examined():
    scan = node("index_range", "Index Scan on t using ix", table="t", index="ix", rows=10)
    before = node("limit", "Limit", scan, rows=10)
    after = node("limit", "Limit", node("full_scan", "Seq Scan on t", table="t", rows=10), rows=10)
    after.children[0].removed_rows = 990.0
    html = plans.html_plans(align(before, after))
    widths = [float(w) for w in re.findall(r'class="bar" style="width:([\d.]+)%"', html)]
    # Limit 10 | 10, scan 10 | 1,000: the widest is 100%, ten rows 1% of it
    assert sorted(widths) == [1.0, 1.0, 1.0, 100.0]


def test_shapes_come_biggest_difference_first():
    def work(rows: float):
        n = node("index_range", "Index Scan on t using ix", table="t", index="ix", rows=rows)
        return node("limit", "Limit", n)

    base = doc(*(entry(name, "postgresql", work(10), 0.02) for name in ("a", "b", "c")))
    new = doc(
        entry("a", "postgresql", work(10), 0.02),  # unchanged
        entry("b", "postgresql", work(5_000), 0.02),  # 500x
        entry("c", "postgresql", work(50_000), 0.02),  # 5,000x
    )
    report = diff.compare(base, new)
    assert [s.shape for s in report.ranked()] == ["c", "b", "a"]
    text = to_text(report)
    assert text.index("\nc ") < text.index("\nb ") < text.index("\na ")
    shapes = report.to_dict()["shapes"]  # JSON: catalog order, each with its difference
    assert [s["difference"] for s in shapes] == [1.0, 500.0, 5000.0]
    assert shapes[0]["plan_diff"] is None  # nothing changed
    assert shapes[2]["plan_diff"] == [
        {"depth": 0, "status": "same", "before": "Limit", "after": "Limit", "changes": [],
         "rows_before": None, "rows_after": None},
        {"depth": 1, "status": "changed", "before": "Index Scan on t using ix", "after": "Index Scan on t using ix",
         "changes": ["rows examined 10 → 50,000 (5,000.0x more)"], "rows_before": 10.0, "rows_after": 50_000.0},
    ]  # fmt: skip


def _deep_plan(depth: int, label: str, kind: str, index: str | None, rows: float):
    """A chain of ``depth`` joins over a scan, each label long as a real MySQL one."""
    leaf = node(
        kind, f"{label} on t{depth} " + "x" * 150, table=f"t{depth}", index=index, est=rows, rows=rows
    )
    for i in range(depth):
        leaf = node("join", f"Nested loop inner join ({'y' * 80}) #{i}", leaf,
                    node("unique_lookup", f"Single-row index lookup on u{i} using PRIMARY", table=f"u{i}",
                         index="PRIMARY", est=1, rows=1, loops=rows), rows=rows)  # fmt: skip
    return leaf


def test_a_20_shape_comment_stays_under_github_s_limit_and_says_what_it_cut():
    """Every shape of a 20-shape catalog regressed on both dialects (a dropped index all of them
    need), each plan a six-table join of 11 nodes with labels as long as MySQL's: the comment keeps
    the headline, the table and every finding, and cuts plans, saying so."""
    names = [f"shape {i:02d}" for i in range(20)]
    dialects = ("postgresql", "mysql")
    base = doc(*(entry(n, d, _deep_plan(5, "Index range scan", "index_range", "ix", 10), 0.02)
                 for n in names for d in dialects))  # fmt: skip
    new = doc(*(entry(n, d, _deep_plan(5, "Table scan", "full_scan", None, 100_000), 9.0)
                for n in names for d in dialects))  # fmt: skip
    report = diff.compare(base, new)
    assert len(report.regressions) == 40
    full = to_markdown(report, limit=10**9)
    assert len(full) > GITHUB_COMMENT_LIMIT  # the whole comment would not fit
    md = to_markdown(report)
    assert len(md) <= GITHUB_COMMENT_LIMIT
    assert "### ❌ dbbench diff: fail: 40 regressions" in md
    assert all(f"| {n} | PostgreSQL |" in md and f"| {n} | MySQL |" in md for n in names)
    assert md.count("index lost: ix on t5") == 40  # every finding stays
    (note,) = [line for line in md.splitlines() if line.startswith("_Cut to fit GitHub's comment limit")]
    assert "the plans as each server printed them" in note, note
    assert md.count("<details>") == md.count("</details>")


def test_a_small_diff_is_not_cut():
    report = diff.compare(*_regressed())
    md = to_markdown(report)
    assert "Cut to fit" not in md and "Baseline:" in md and "Result:" in md


def test_an_unchanged_node_keeps_its_place_and_identical_docs_show_no_plan():
    base = doc(entry("recent orders", "postgresql", indexed(), 0.02))
    report = diff.compare(base, copy.deepcopy(base))
    assert "<details>" not in to_markdown(report)
    assert "recent orders · PostgreSQL" not in diff_html.page(report)  # no section: nothing changed
