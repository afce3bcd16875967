"""A :class:`dbbench.diff.DiffReport` as one self-contained HTML page (``dbbench diff --html``,
``dbbench report --baseline … --html``): the verdict, the table of every shape biggest differences
first, and per shape whose plan changed its findings and the two plans side by side
(:func:`dbbench.output.plans.html_plans`). No script; hover a node for all of it."""

from __future__ import annotations

import html as _html

from dbbench.defaults import DIALECT_LABEL
from dbbench.document.diff import DiffReport, ShapeDiff
from dbbench.document.plandiff import NodeDiff, biggest_first
from dbbench.output import html_start, html_table, plans
from dbbench.output.diff import _headline, _legend, _rows, _sources, _thresholds_line
from verdict import FAIL, INCONCLUSIVE, PASS

_VERDICT_COLOR = {FAIL: "#cf222e", INCONCLUSIVE: "#9a6700", PASS: "#1a7f37"}
CSS = (
    "h2{margin-top:1.6em;font-size:18px}.verdict{font-size:20px;font-weight:bold}"
    ".findings{margin:.3em 0 .6em;padding-left:1.2em;font-size:13px}.findings .reg{color:#cf222e}"
    ".small{color:#57606a;font-size:12px}.legend span{display:inline-block;padding:0 6px;margin-right:6px}"
)


def _section(s: ShapeDiff, html_plan: str, level: int) -> list[str]:
    esc = _html.escape
    status = s.status.upper() if s.regressed else s.status
    out = [
        f"<h{level}>{esc(s.shape)} · {DIALECT_LABEL[s.dialect]} "
        f'<span style="color:{_VERDICT_COLOR[s.verdict]}">{esc(status)}</span></h{level}>',
        '<ul class="findings">',
    ]
    for f in s.findings:
        out.append(f'<li class="{"reg" if f.regression else ""}">{esc(f.message)}</li>')
    out += ["</ul>", html_plan]
    return out


def page(report: DiffReport, title: str = "dbbench diff") -> str:
    """The page: the verdict, the sources and thresholds, the shape table (biggest differences
    first), then a section per shape whose plan changed or that has findings, in that order."""
    out = html_start(title, 1400, CSS + plans.HTML_CSS)
    out += body(report)
    out.append("</body></html>")
    return "\n".join(out) + "\n"


def body(report: DiffReport, level: int = 2) -> list[str]:
    """The page's content (:func:`page`), its headings at ``level`` (``dbbench report`` puts it
    under one of its own); its style is :data:`CSS` and :data:`dbbench.output.plans.HTML_CSS`."""
    esc = _html.escape
    out = [
        f'<p class="verdict" style="color:{_VERDICT_COLOR[report.verdict]}">{esc(_headline(report))}</p>',
        f"<p>{esc(_sources(report).replace('`', ''))}</p>",
        f'<p class="small">Thresholds: {esc(_thresholds_line(report.thresholds))}.</p>',
        f"<h{level}>Shapes, biggest differences first</h{level}>",
    ]
    headers, rows, align = _rows(report, False)  # in report.ranked()'s order
    moved = [r for r, s in zip(rows, report.ranked(), strict=True) if s.status != "unchanged"]
    still = rows[len(moved) :]
    if moved:
        out.append(html_table(headers, moved, align))
    if still:
        out.append(
            f"<details{'' if moved else ' open'}><summary>{len(still)} unchanged shape"
            f"{'s' if len(still) != 1 else ''}</summary>{html_table(headers, still, align)}</details>"
        )
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
        d = s.aligned
        html_plan = "<p>No plan recorded.</p>" if d is None else _moved_most(d) + plans.html_plans(d)
        out += _section(s, html_plan, level)
    if report.notes:
        out += (
            [f"<h{level}>Notes</h{level}>", "<ul>"] + [f"<li>{esc(n)}</li>" for n in report.notes] + ["</ul>"]
        )
    return out


MOVED_MOST = 3  # nodes named above a plan pair


def _moved_most(d: NodeDiff) -> str:
    """A line naming the nodes of both plans whose rows examined moved most (at most
    :data:`MOVED_MOST`, each by at least 1.5x and 10 rows), biggest first; nothing when no node's
    work moved so (a node one plan lacks is drawn as such, not named here)."""
    paired = [n for n in biggest_first([d]) if n.before is not None and n.after is not None]
    moved = [n for n in paired if n.moved() >= plans.MOVED and _by(n) >= 10][:MOVED_MOST]
    if not moved:
        return ""
    words = "; ".join(f"{n.node.label}: {plans.numbers(n)} ({n.moved():,.1f}x)" for n in moved)
    return f'<p class="small">Moved most: {_html.escape(words)}</p>'


def _by(n: NodeDiff) -> float:
    """How many rows a node's rows examined moved by."""
    a, b = n.examined
    return abs((b or 0.0) - (a or 0.0))


def _plan_changed(s: ShapeDiff) -> bool:
    d = s.aligned
    return d is not None and d.changed
