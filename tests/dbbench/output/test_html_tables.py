"""The HTML pages show their tables as HTML tables, numbers right-aligned, not as terminal text in a
<pre> with a horizontal scrollbar (issue 32): dbbench grow --html and dbbench report --html alike."""

from __future__ import annotations

import json
import re
from pathlib import Path

from dbbench.document import store
from dbbench.output import grow_html, html

ROOT = Path(__file__).resolve().parents[3]
GROW = ROOT / "docs" / "results" / "grow-alpine-10k-100k-1m.json"
BASELINE = ROOT / "examples" / "shop" / "baseline.json"


def test_the_growth_page_tables_are_html_tables():
    page = grow_html.page(json.loads(GROW.read_text()))
    assert "<pre>" not in page  # no problems in this result: nothing is preformatted text
    assert page.count("<table>") == 2
    growth = page.split("<h2>Growth per shape</h2>")[1].split("</table>")[0]
    assert "<th>Shape</th>" in growth and '<th style="text-align:right">work 1m</th>' in growth
    assert re.search(r'<td style="text-align:right">[\d,]+</td>', growth)
    ratio = page.split("<h2>Natural against remediated at the largest size</h2>")[1].split("</table>")[0]
    assert '<td style="text-align:right">' in ratio and "x</td>" in ratio


def test_the_report_page_uses_the_same_tables_and_style():
    page = html.html(store.load_document(BASELINE), BASELINE)
    assert page.count("<table>") >= 1 and "border-collapse:collapse" in page
    assert "<th>Query shape</th>" in page
