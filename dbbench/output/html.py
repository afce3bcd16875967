"""An explain result document as one self-contained HTML page: the write-up's tables and an inline
SVG chart of every timed sample (no scripts)."""

from __future__ import annotations

import hashlib
import html as _html
import math
from collections.abc import Callable
from pathlib import Path

from dbbench.defaults import DIALECT_LABEL
from dbbench.dialects import timing
from dbbench.document.diff import DiffReport
from dbbench.document.model import Document, Spelling, as_document
from dbbench.output import HTML_TABLE_CSS, diff_html, html_table, plans
from dbbench.output.explain import (
    Doc,
    by_shape,
    dialects_of,
    failures,
    has_locks,
    has_remediation,
    intro,
    lock_rows,
    mark,
    remediation_rows_table,
    seed_rows,
    time_legend,
)

_COLORS = {"postgresql": "#336791", "mysql": "#d9822b"}
# The most samples one row of the chart plots (a dot is ~250 bytes of SVG): a row with more plots
# this many, evenly spaced by rank (the fastest and slowest included), and the page says so; p50
# and p95 stay those of all samples.
MAX_PLOTTED = 200


def plotted(samples: tuple[float, ...] | list[float], cap: int = MAX_PLOTTED) -> list[tuple[int, float]]:
    """(1-based sample number, value) of the samples a chart row plots: all of them, or ``cap``
    of them evenly spaced by rank (deterministic: the same samples give the same points)."""
    if len(samples) <= cap:
        return list(enumerate(samples, start=1))
    ranked = sorted(range(len(samples)), key=samples.__getitem__)  # stable: ties in sample order
    last = len(ranked) - 1
    picks = sorted({ranked[round(j * last / (cap - 1))] for j in range(cap)})
    return [(i + 1, samples[i]) for i in picks]


def _ticks(lo: float, hi: float) -> list[float]:
    """Decades covering [lo, hi], with room for a dot that sits right on the edge."""
    first, last = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    if math.log10(lo) - first < 0.15:
        first -= 1
    if last - math.log10(hi) < 0.15:
        last += 1
    return [10.0**e for e in range(first, last + 1)]


def _tick_label(v: float) -> str:
    if v >= 1000:
        return f"{v / 1000:g} s"
    if v < 1:
        return f"{v:.{-math.floor(math.log10(v))}f} ms"
    return f"{v:g} ms"


_LEFT, _RIGHT, _TOP, _ROW_H = 330, 20, 30, 18  # the chart's label column, margins and row height
ChartRow = tuple[str, str, str, Spelling]  # (shape, dialect, spelling name, its measurement)


def samples_svg(doc: Doc, width: int = 900) -> str:
    """An inline SVG strip chart: every timed sample per shape and dialect on a log axis, p50 and
    p95 marked; natural spellings as hollow circles. No scripts: hover titles are SVG <title>s."""
    rows = _chart_rows(as_document(doc))
    values = [v for *_, m in rows for v in m.samples_ms if v and v > 0]
    if not values:
        return "<p>No timed samples.</p>"
    ticks = _ticks(min(values), max(values))
    height = _TOP + _ROW_H * len(rows) + 30
    x = _log_x(ticks, _LEFT, width - _LEFT - _RIGHT)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11" role="img" '
        f'aria-label="Per-sample EXPLAIN ANALYZE times">'
    ]
    kinds = {m.time_kind for *_, m in rows}
    what = "statement time" if kinds == {timing.STATEMENT} else "time"
    if kinds == {timing.EXECUTOR}:
        what = "executor time"
    for t in ticks:
        parts.append(
            f'<line x1="{x(t):.1f}" y1="{_TOP - 8}" x2="{x(t):.1f}" y2="{height - 24}" stroke="#ddd"/>'
        )
        parts.append(
            f'<text x="{x(t):.1f}" y="{height - 10}" text-anchor="middle" fill="#555">{_html.escape(_tick_label(t))}</text>'
        )
    parts.append(
        f'<text x="{_LEFT}" y="14" fill="#333">{what} per sample (log scale); '
        f"| p50, ¦ p95; ● remediated, ○ natural</text>"
    )
    for i, row in enumerate(rows):
        parts += _row_svg(i, row, x, width)
    parts.append("</svg>")
    return "\n".join(parts + _capped_note(rows))


def _chart_rows(doc: Document) -> list[ChartRow]:
    """(shape, dialect, spelling, measurement) of every spelling with timed samples, in report order."""
    rows = []
    for shape, by in by_shape(doc):
        for d in dialects_of(doc):
            r = by.get((shape, d))
            if r is None:
                continue
            rows += [(shape, d, spelling, m) for spelling, m in r.spellings() if m.samples_ms]
    return rows


def _log_x(ticks: list[float], left: int, plot_w: int) -> Callable[[float], float]:
    """The x position of a value on the log axis from the first tick to the last."""
    a, b = math.log10(ticks[0]), math.log10(ticks[-1])
    span = (b - a) or 1.0

    def x(v: float) -> float:
        return left + (math.log10(max(v, ticks[0])) - a) / span * plot_w

    return x


def _row_svg(i: int, row: ChartRow, x: Callable[[float], float], width: int) -> list[str]:
    """One chart row: its band (every other row), label, a dot per plotted sample, p50 and p95."""
    esc = _html.escape
    shape, d, spelling, m = row
    parts = []
    y = _TOP + i * _ROW_H + _ROW_H / 2
    if i % 2 == 0:
        parts.append(
            f'<rect x="0" y="{y - _ROW_H / 2:.1f}" width="{width}" height="{_ROW_H}" fill="#f6f8fa"/>'
        )
    label = f"{shape} · {DIALECT_LABEL[d]}" + (" (natural)" if spelling == "natural" else "") + mark(m)
    parts.append(f'<text x="{_LEFT - 8}" y="{y + 4:.1f}" text-anchor="end" fill="#222">{esc(label)}</text>')
    color = _COLORS[d]
    for k, v in plotted(m.samples_ms):
        fill = color if spelling == "remediated" else "none"
        parts.append(
            f'<circle cx="{x(v):.1f}" cy="{y:.1f}" r="3.5" fill="{fill}" stroke="{color}" '
            f'fill-opacity="0.6"><title>{esc(label)}: sample {k} = {v:g} ms</title></circle>'
        )
    if m.p50_ms:
        parts.append(
            f'<line x1="{x(m.p50_ms):.1f}" y1="{y - 7:.1f}" x2="{x(m.p50_ms):.1f}" '
            f'y2="{y + 7:.1f}" stroke="#000" stroke-width="2"><title>p50 {m.p50_ms:g} ms</title></line>'
        )
    if m.p95_ms:
        parts.append(
            f'<line x1="{x(m.p95_ms):.1f}" y1="{y - 7:.1f}" x2="{x(m.p95_ms):.1f}" '
            f'y2="{y + 7:.1f}" stroke="#000" stroke-dasharray="2,2"><title>p95 {m.p95_ms:g} ms</title></line>'
        )
    return parts


def _capped_note(rows: list[ChartRow]) -> list[str]:
    """A sentence under the chart if some rows plot only :data:`MAX_PLOTTED` of their samples."""
    capped = [m for *_, m in rows if len(m.samples_ms) > MAX_PLOTTED]
    if not capped:
        return []
    most = max(len(m.samples_ms) for m in capped)
    return [
        f"<p>{len(capped)} of {len(rows)} rows hold more than {MAX_PLOTTED} samples (up to {most:,}): "
        f"each plots {MAX_PLOTTED} of them, evenly spaced by rank with the fastest and slowest "
        "included; p50 and p95 are of all samples.</p>"
    ]


LOCKS_NOTE = (
    "What each write or locking read held before its transaction was rolled back: the rows "
    "locked per table (MySQL performance_schema.data_locks; PostgreSQL the rows changed and the "
    "rows FOR UPDATE returned), MySQL's gap locks, and the foreign-key cascades into child tables "
    "with the index each child was read through."
)


def html(
    doc: Doc, source: Path | None = None, title: str | None = None, against: DiffReport | None = None
) -> str:
    """A self-contained HTML page: the same tables as :func:`markdown` and the per-sample chart;
    ``against``: the result compared with a baseline (``dbbench report --baseline``), its plans
    side by side (:func:`dbbench.output.diff_html.body`)."""
    doc = as_document(doc)
    esc = _html.escape
    title = title or "dbbench explain report"
    lines = [ln for ln in intro(doc) if ln]
    parts = [
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{esc(title)}</title>",
        "<style>body{font-family:sans-serif;max-width:1100px;margin:2em auto;color:#222}"
        + HTML_TABLE_CSS
        + "pre{background:#f6f8fa;padding:8px;overflow-x:auto;font-size:12px}"
        ".fail{color:#b00020;font-weight:bold}"
        + (diff_html.CSS + plans.HTML_CSS if against is not None else "")
        + "</style>",
        "</head><body>",
        f"<h1>{esc(title)}</h1>",
    ]
    parts += [f"<p>{esc(ln).replace('`', '')}</p>" for ln in lines]
    parts.append("<h2>Query shapes</h2>")
    parts.append(html_table(*seed_rows(doc)))
    parts += [f"<p>{esc(line)}</p>" for line in time_legend(doc)]
    if has_locks(doc):
        parts.append("<h2>Lock footprint</h2>")
        parts.append(html_table(*lock_rows(doc)))
        parts.append(f"<p>{esc(LOCKS_NOTE)}</p>")
    if has_remediation(doc):
        parts.append("<h2>Remediated plans</h2>")
        parts.append(html_table(*remediation_rows_table(doc)))
    parts.append("<h2>Per-sample timings</h2>")
    parts.append(samples_svg(doc))
    if any(not r.ok for r in doc.results):
        parts.append('<h2 class="fail">Failed assertions</h2>')
        parts.append("<pre>" + esc("\n".join(failures(doc))) + "</pre>")
    if against is not None:
        parts.append(f'<h2 id="against">Against the baseline {esc(Path(against.baseline).name)}</h2>')
        parts += diff_html.body(against, level=3)
    if source is not None:
        digest = hashlib.sha256(Path(source).read_bytes()).hexdigest()
        parts.append(f"<p>Source: {esc(Path(source).name)} (SHA-256 <code>{digest}</code>)</p>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"
