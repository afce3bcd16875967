"""A :class:`dbbench.diff.DiffReport` as one self-contained HTML page (``dbbench diff --html``,
``dbbench report --baseline … --html``): the verdict, the table of every shape biggest differences
first, and per shape whose plan changed its findings and the two plans side by side
(:func:`dbbench.output.plans.html_plans`). No script; hover a node for all of it."""

from __future__ import annotations

import html as _html

from dbbench.defaults import DIALECT_LABEL
from dbbench.document.diff import DiffReport, ShapeDiff
from dbbench.output import html_start, html_table, plans
from dbbench.output.diff import _headline, _legend, _rows, _sources, _thresholds_line, aligned_diff
from verdict import FAIL, INCONCLUSIVE, PASS

_VERDICT_COLOR = {FAIL: "#cf222e", INCONCLUSIVE: "#9a6700", PASS: "#1a7f37"}
CSS = (
    "h2{margin-top:1.6em;font-size:18px}.verdict{font-size:20px;font-weight:bold}"
    ".findings{margin:.3em 0 .6em;padding-left:1.2em;font-size:13px}.findings .reg{color:#cf222e}"
    ".small{color:#57606a;font-size:12px}.legend span{display:inline-block;padding:0 6px;margin-right:6px}"
)


def _section(s: ShapeDiff, html_plan: str) -> list[str]:
    esc = _html.escape
    status = s.status.upper() if s.regressed else s.status
    out = [
        f'<h2 id="{esc(s.shape)}-{s.dialect}">{esc(s.shape)} · {DIALECT_LABEL[s.dialect]} '
        f'<span style="color:{_VERDICT_COLOR[s.verdict]}">{esc(status)}</span></h2>',
        '<ul class="findings">',
    ]
    for f in s.findings:
        out.append(f'<li class="{"reg" if f.regression else ""}">{esc(f.message)}</li>')
    out += ["</ul>", html_plan]
    return out


def page(report: DiffReport, title: str = "dbbench diff") -> str:
    """The page: the verdict, the sources and thresholds, the shape table (biggest differences
    first), then a section per shape whose plan changed or that has findings, in that order."""
    esc = _html.escape
    out = html_start(title, 1400, CSS + plans.HTML_CSS)
    out += [
        f'<p class="verdict" style="color:{_VERDICT_COLOR[report.verdict]}">{esc(_headline(report))}</p>',
        f"<p>{esc(_sources(report).replace('`', ''))}</p>",
        f'<p class="small">Thresholds: {esc(_thresholds_line(report.thresholds))}.</p>',
        "<h2>Shapes, biggest differences first</h2>",
        html_table(*_rows(report, False)),
    ]
    out += [f'<p class="small">{esc(line)}</p>' for line in _legend(report)]
    shown = [s for s in report.ranked() if s.findings or _plan_changed(s)]
    if shown:
        out.append(
            '<p class="legend small">Each plan node: <span>= the same</span><span>~ changed</span>'
            "<span>+ only in the result</span><span>- only in the baseline</span>; tinted "
            '<span style="background:#ffebe9">more rows examined</span>'
            '<span style="background:#dafbe1">fewer</span>'
            '<span style="background:#fff8c5">another operation or index</span>; '
            "bars as wide as the rows each node examines; hover a node for all of it; "
            "unchanged subtrees folded (click to open).</p>"
        )
    for s in shown:
        d = aligned_diff(s)
        html_plan = "<p>No plan recorded.</p>" if d is None else plans.html_plans(d)
        out += _section(s, html_plan)
    if report.notes:
        out += ["<h2>Notes</h2>", "<ul>"] + [f"<li>{esc(n)}</li>" for n in report.notes] + ["</ul>"]
    out.append("</body></html>")
    return "\n".join(out) + "\n"


def _plan_changed(s: ShapeDiff) -> bool:
    d = aligned_diff(s)
    return d is not None and d.changed
