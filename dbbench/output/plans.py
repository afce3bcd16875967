"""Two aligned plans (:mod:`dbbench.document.plandiff`) drawn for people: styled lines of a tree
for a colour terminal (the command line draws them with rich) and two aligned columns for the HTML
page. The plain-text tree of the Markdown
comment is :func:`dbbench.document.plandiff.render`.

Both views mark a node the same way: ``=`` the same in both plans, ``~`` changed (what changed in
words), ``+`` only in the result, ``-`` only in the baseline; a subtree in which nothing changed is
folded to one line. Colour says which way the work moved: red for a node that examines more rows
(or is new and examines some), green for fewer (or gone), yellow for a change of operation or index
with the same work.
"""

from __future__ import annotations

import html as _html

from dbbench.dialects.plan import PlanNode
from dbbench.document.plandiff import (
    CHANGED,
    GONE,
    NEW,
    SAME,
    NodeDiff,
    factor,
    own_buffers,
    q_error,
    was_input,
)

MARK = {SAME: "=", CHANGED: "~", NEW: "+", GONE: "-"}
WORSE, BETTER, OTHER, QUIET = "worse", "better", "other", "quiet"
COSTLY = ("full_scan", "sort", "temp_table")  # a node of these kinds added is worse, gone better
MOVED = 1.5  # rows examined moved by at least this factor: coloured worse / better


def tone(d: NodeDiff) -> str:
    """How a node reads at a glance: ``worse`` (more rows examined, or a full scan, sort or
    temporary table added), ``better`` (fewer, or one of those gone), ``other`` (another operation
    or index with the same work, a node added or gone), ``quiet`` (the same)."""
    before, after = d.examined
    if d.status in (NEW, GONE):
        costly = d.node.kind in COSTLY
        return (WORSE if d.status == NEW else BETTER) if costly else OTHER
    if before is not None and after is not None and factor(before, after) >= MOVED:
        return WORSE if after > before else BETTER
    pages = d.own_buffers
    if (
        pages[0] is not None
        and pages[1] is not None
        and any(c.startswith("shared buffers") for c in d.changes)
    ):
        return WORSE if pages[1] > pages[0] else BETTER
    return OTHER if d.status == CHANGED else QUIET


def _rows(n: float | None) -> str:
    return "—" if n is None else f"{n:,.0f}"


def numbers(d: NodeDiff) -> str:
    """Rows examined before → after (one number when equal; the one side a new or gone node has;
    nothing where neither plan counts the node's rows, as MySQL's ``Hash``)."""
    before, after = d.examined
    if before is None and after is None:
        return ""
    if d.status == NEW:
        return f"{_rows(after)} rows"
    if d.status == GONE:
        return f"{_rows(before)} rows"
    if before == after:
        return f"{_rows(after)} rows"
    return f"{_rows(before)} → {_rows(after)} rows"


def _folded(d: NodeDiff, depth: int) -> bool:
    return depth > 0 and d.status == SAME and not d.changed


Segment = tuple[str, str]  # (text, style): a tone of :func:`tone` or ``dim`` / ``plain``


def _segments(d: NodeDiff, depth: int) -> list[Segment]:
    """One node's line: its mark and label in its tone, its rows examined, then what changed (or
    how many unchanged nodes are folded under it)."""
    t = tone(d)
    out = [(f"{MARK[d.status]} ", t), (d.node.label, t if d.status != SAME else "plain")]
    if d.was_input:
        out.append((was_input(d), OTHER))
    if numbers(d):
        out.append((f"  {numbers(d)}", "dim"))
    if _folded(d, depth):
        under = sum(1 for _ in d.walk()) - 1
        if under:
            out.append((f"  … {under} node{'s' if under != 1 else ''} unchanged", "dim"))
    elif d.status == CHANGED and d.changes:
        out.append(("  [" + "; ".join(d.changes) + "]", t))
    return out


def styled_lines(diff: NodeDiff) -> list[tuple[int, list[Segment]]]:
    """The aligned plans for a colour terminal: (depth, segments) per node shown, depth first,
    unchanged subtrees folded into their first node (``… 3 nodes unchanged``). The command line
    draws them as a tree (:mod:`dbbench.cli.styled`)."""
    out: list[tuple[int, list[Segment]]] = []
    stack: list[tuple[NodeDiff, int]] = [(diff, 0)]
    while stack:
        d, depth = stack.pop()
        out.append((depth, _segments(d, depth)))
        if not _folded(d, depth):
            stack.extend((c, depth + 1) for c in reversed(d.children))
    return out


# --- HTML: two columns, a row per aligned node ------------------------------------------------

HTML_CSS = (
    ".plan{border:1px solid #d0d7de;border-radius:6px;margin:.5em 0 1.5em;font-size:12.5px}"
    ".plan .head,.plan .row{display:grid;grid-template-columns:1fr 1fr}"
    ".plan .head{background:#f0f3f6;font-weight:bold}.plan .head>div{padding:4px 8px}"
    ".plan .cell{padding:3px 8px;border-top:1px solid #eaeef2;min-width:0;overflow:hidden}"
    ".plan .cell+.cell{border-left:1px solid #d0d7de}"
    ".plan .label{white-space:nowrap;overflow:hidden;text-overflow:ellipsis;font-family:monospace}"
    ".plan .bar{height:5px;background:#8c959f;border-radius:2px;margin-top:2px;min-width:1px}"
    ".plan .n{float:right;padding-left:8px;color:#57606a;font-variant-numeric:tabular-nums}"
    ".plan .why{color:#57606a;font-size:11.5px;white-space:normal}"
    ".plan .empty{background:repeating-linear-gradient(135deg,#fff 0 6px,#f6f8fa 6px 12px)}"
    ".plan .worse .cell.after{background:#ffebe9}.plan .worse .after .bar{background:#cf222e}"
    ".plan .better .cell.after{background:#dafbe1}.plan .better .after .bar{background:#1a7f37}"
    ".plan .other .cell.after{background:#fff8c5}"
    ".plan .quiet .label{color:#57606a}.plan .m{display:inline-block;width:1.3em;font-weight:bold}"
    ".plan details>summary{cursor:pointer;list-style:none}.plan details>summary::-webkit-details-marker{display:none}"
    ".plan summary .row .cell{color:#57606a;font-style:italic}"
)


def node_title(node: PlanNode) -> str:
    """Everything a plan says of one node, for its hover text."""
    parts = [node.label, f"kind: {node.kind}"]
    if node.table:
        alias = f" (as {node.alias})" if node.alias and node.alias != node.table else ""
        parts.append(f"table: {node.table}{alias}")
    if node.index:
        parts.append(f"index: {node.index}")
    if node.est_rows is not None:
        parts.append(f"estimated rows: {node.est_rows:,.0f}")
    if node.actual_rows is not None:
        parts.append(f"actual rows: {node.actual_rows:,.1f} × {node.loops or 1:,.0f} loops")
    if node.removed_rows:
        parts.append(f"rows read and discarded: {node.removed_rows:,.0f} per loop")
    if node.actual_rows is not None:
        parts.append(f"rows examined: {node.examined:,.0f}")
    q = q_error(node)
    if q is not None:
        parts.append(f"q-error (estimate vs actual): {q:,.1f}")
    if node.buffers is not None:
        parts.append(f"shared buffers (with its children): {node.buffers:,.0f}")
    if node.actual_ms is not None:
        parts.append(f"time to its last row: {node.actual_ms:,.3f} ms per loop")
    return "\n".join(parts)


def _cell(side: str, node: PlanNode | None, depth: int, widest: float, mark: str, extra: str = "") -> str:
    esc = _html.escape
    if node is None:
        return f'<div class="cell {side} empty"></div>'
    examined = node.examined if node.actual_rows is not None else None
    width = 0.0 if not examined or widest <= 0 else max(examined / widest * 100, 0.5)
    pages = own_buffers(node)
    number = "" if examined is None else f"{examined:,.0f}" + ("" if not pages else f" · {pages:,.0f} pages")
    number = f'<span class="n">{number}</span>' if number else ""
    bar = f'<div class="bar" style="width:{width:.1f}%"></div>' if examined else ""
    return (
        f'<div class="cell {side}" style="padding-left:{8 + 14 * depth}px" title="{esc(node_title(node))}">'
        f'{number}<div class="label"><span class="m">{esc(mark)}</span>{esc(node.label)}</div>{bar}{extra}</div>'
    )


def _row(d: NodeDiff, depth: int, widest: float, folded: int = 0) -> str:
    esc = _html.escape
    mark = MARK[d.status]
    why = ""
    if d.status == CHANGED and d.changes:
        why = f'<div class="why">{esc("; ".join(d.changes))}</div>'
    elif d.status in (NEW, GONE) and d.changes:
        why = f'<div class="why">{esc(d.changes[0])}</div>'
    fold = (
        f'<div class="why">… {folded} node{"s" if folded != 1 else ""} unchanged (open)</div>'
        if folded
        else ""
    )
    moved = f'<div class="why">{esc(was_input(d).strip(" ()"))}</div>' if d.was_input else ""
    return (
        f'<div class="row {tone(d)}">'
        + _cell("before", d.before, depth, widest, mark, moved + fold)
        + _cell("after", d.after, depth, widest, mark, why + fold)
        + "</div>"
    )


def html_plans(diff: NodeDiff, before: str = "Baseline", after: str = "Result") -> str:
    """The aligned plans as two HTML columns, a row per node (the baseline's left, the result's
    right, a hatched cell where one plan lacks the node); the changed rows tinted by :func:`tone`
    with what changed under the result's node; a bar under each node as wide as its rows examined
    against the most any node of either plan examines, its rows (and PostgreSQL's own shared
    buffers, in pages) beside it; the full node on hover (``title``); unchanged subtrees folded in
    a ``<details>``. No script."""
    widest = max(
        (x for _, n in diff.walk() for x in n.examined if x is not None),
        default=0.0,
    )
    out = [
        '<div class="plan">',
        f'<div class="head"><div>{_html.escape(before)}</div><div>{_html.escape(after)}</div></div>',
    ]

    stack: list[tuple[NodeDiff, int]] = [(diff, 0)]  # depth first
    while stack:
        n, level = stack.pop()
        if _folded(n, level) and n.children:  # its rows inside a <details> under its first row
            under = sum(1 for _ in n.walk()) - 1
            out.append("<details><summary>" + _row(n, level, widest, under) + "</summary>")
            out += [_row(c, level + extra, widest) for extra, c in list(n.walk())[1:]]
            out.append("</details>")
            continue
        out.append(_row(n, level, widest))
        stack.extend((c, level + 1) for c in reversed(n.children))
    out.append("</div>")
    return "\n".join(out)
