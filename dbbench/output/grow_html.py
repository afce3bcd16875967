"""A grow result as one self-contained HTML page: per shape a log-log chart of work against N,
both dialects, the natural spelling (dashed, hollow) beside the remediated one (solid), then the
tables. Inline SVG, no scripts; hover titles are SVG <title>s."""

from __future__ import annotations

import html as _html
import math
from typing import Any

from dbbench.defaults import DIALECT_LABEL
from dbbench.output import HTML_TABLE_CSS
from dbbench.units import size_label

_COLORS = {"postgresql": "#336791", "mysql": "#d9822b"}
W, H, PAD_L, PAD_B, PAD_T, PAD_R = 330, 230, 52, 34, 26, 10


def _decades(lo: float, hi: float) -> list[float]:
    first, last = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    if first == last:
        last += 1
    return [10.0**e for e in range(first, last + 1)]


def _rows(v: float) -> str:
    if v >= 1_000_000:
        return f"{v / 1_000_000:g}M"
    return f"{v / 1000:g}k" if v >= 1000 else f"{v:g}"


def panel(shape: str, series: list[dict[str, Any]], sizes: list[int]) -> str:
    """One shape's chart: x = log N over the ladder, y = log work (rows examined)."""
    esc = _html.escape
    works = [max(p["work"], 1.0) for g in series for p in g["points"] if p["work"] is not None]
    if not works:
        return f"<figure><figcaption>{esc(shape)}: no work measured</figcaption></figure>"
    yt = _decades(min(works), max(works))
    lx0, lx1 = math.log10(sizes[0]), math.log10(sizes[-1])
    ly0, ly1 = math.log10(yt[0]), math.log10(yt[-1])

    def x(n: float) -> float:
        return PAD_L + (math.log10(n) - lx0) / (lx1 - lx0 or 1) * (W - PAD_L - PAD_R)

    def y(w: float) -> float:
        return H - PAD_B - (math.log10(max(w, 1.0)) - ly0) / (ly1 - ly0 or 1) * (H - PAD_B - PAD_T)

    out = [f'<svg width="{W}" height="{H}" viewBox="0 0 {W} {H}" role="img" aria-label="{esc(shape)}">']
    out.append(
        f'<text x="{W / 2}" y="15" text-anchor="middle" font-size="12" font-weight="bold">{esc(shape)}</text>'
    )
    for t in yt:
        out.append(f'<line x1="{PAD_L}" x2="{W - PAD_R}" y1="{y(t):.1f}" y2="{y(t):.1f}" stroke="#e3e3e3"/>')
        out.append(
            f'<text x="{PAD_L - 4}" y="{y(t) + 4:.1f}" text-anchor="end" font-size="10">{_rows(t)}</text>'
        )
    for n in sizes:
        out.append(f'<line x1="{x(n):.1f}" x2="{x(n):.1f}" y1="{PAD_T}" y2="{H - PAD_B}" stroke="#eee"/>')
        out.append(
            f'<text x="{x(n):.1f}" y="{H - PAD_B + 13}" text-anchor="middle" font-size="10">{size_label(n)}</text>'
        )
    out.append(
        f'<text x="{W / 2}" y="{H - 4}" text-anchor="middle" font-size="10">rows in the table (N)</text>'
    )
    out.append(
        f'<text x="11" y="{H / 2}" text-anchor="middle" font-size="10" transform="rotate(-90 11 {H / 2})">'
        "rows examined</text>"
    )
    for g in series:
        pts = [(p["size"], p["work"]) for p in g["points"] if p["work"] is not None]
        color = _COLORS.get(g["dialect"], "#555")
        natural = g["spelling"] == "natural"
        dash = ' stroke-dasharray="5,3"' if natural else ""
        path = " ".join(f"{'M' if i == 0 else 'L'}{x(n):.1f},{y(w):.1f}" for i, (n, w) in enumerate(pts))
        out.append(f'<path d="{path}" fill="none" stroke="{color}" stroke-width="2"{dash}/>')
        k = "—" if g["k"] is None else f"{g['k']:.2f}"
        for n, w in pts:
            fill = "white" if natural else color
            tip = f"{DIALECT_LABEL.get(g['dialect'], g['dialect'])} {g['spelling']} at {size_label(n)}: {w:,.0f} rows (k {k}, {g['verdict']})"
            out.append(
                f'<circle cx="{x(n):.1f}" cy="{y(w):.1f}" r="3.5" fill="{fill}" stroke="{color}" stroke-width="1.5">'
                f"<title>{esc(tip)}</title></circle>"
            )
    out.append("</svg>")
    return "".join(out)


def page(doc: dict[str, Any], title: str | None = None) -> str:
    """The whole page: legend, one chart per shape, then the growth and ratio tables."""
    from dbbench.output import grow

    esc = _html.escape
    title = title or "dbbench grow: work against table size"
    shapes: dict[str, list[dict[str, Any]]] = {}
    for g in doc["growth"]:
        shapes.setdefault(g["shape"], []).append(g)
    legend = (
        " ".join(f'<span style="color:{c}">■ {DIALECT_LABEL[d]}</span>' for d, c in _COLORS.items())
        + " — solid: remediated spelling; dashed, hollow: natural spelling"
    )
    parts = [
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{esc(title)}</title>",
        "<style>body{font-family:sans-serif;max-width:1100px;margin:2em auto;color:#222}"
        "figure{display:inline-block;margin:4px}pre{background:#f6f8fa;padding:8px;overflow-x:auto;font-size:12px}"
        + HTML_TABLE_CSS
        + ".fail{color:#b00020;font-weight:bold}</style>",
        "</head><body>",
        f"<h1>{esc(title)}</h1>",
        f"<p>Sizes: {', '.join(size_label(n) for n in doc['sizes'])}. Work is rows examined (rows × loops "
        "summed over the plan, filtered rows included), not time: it does not move with machine noise. "
        f"k is the worst log-log slope; bounded k ≤ {doc['thresholds']['bounded_max_k']}, logarithmic "
        f"k ≤ {doc['thresholds']['logarithmic_max_k']}.</p>",
        f"<p>{legend}</p>",
        "<div>",
    ]
    parts += [
        f"<figure>{panel(shape, series, doc['sizes'])}</figure>" for shape, series in sorted(shapes.items())
    ]
    parts.append("</div>")
    parts.append("<h2>Growth per shape</h2>")
    parts.append(grow.growth_table(doc, fmt="html"))
    parts.append("<h2>Natural against remediated at the largest size</h2>")
    parts.append(grow.ratio_table(doc, fmt="html"))
    if doc["problems"]:
        parts.append('<h2 class="fail">Worse than declared</h2>')
        parts.append("<pre>" + esc("\n".join(doc["problems"])) + "</pre>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"
