"""`dbbench grow` for people: per shape and dialect, work at every size, the slope and the verdict;
the natural / remediated work ratio at the largest size."""

from __future__ import annotations

import html as _html
from typing import Any

from dbbench.defaults import DIALECT_LABEL, DIALECTS
from dbbench.dialects import timing
from dbbench.output import table
from dbbench.units import fmt_factor, fmt_ms, size_label


def _work(value: float | None) -> str:
    return "—" if value is None else f"{value:,.0f}"


def growth_table(doc: dict[str, Any], fmt: str = "simple") -> str:
    """One row per shape, dialect and spelling: rows examined (and PostgreSQL buffers) at each
    size, p50 at the largest, the worst slope k, the verdict and the declared growth."""
    sizes = doc["sizes"]
    headers = ["Shape", "Server", "Spelling", *[f"work {size_label(n)}" for n in sizes]]
    headers += [f"p50 {size_label(sizes[-1])}", "k", "growth", "declared"]
    rows = []
    order = {d: k for k, d in enumerate(DIALECTS)}  # the one dialect order
    for g in sorted(
        doc["growth"], key=lambda g: (g["shape"], order.get(g["dialect"], 9), g["spelling"] != "remediated")
    ):
        by_size = {p["size"]: p for p in g["points"]}
        cells = []
        for n in sizes:
            p = by_size.get(n)
            text = _work(p["work"]) if p else "—"
            if p and p.get("buffers") is not None:
                text += f" ({p['buffers']:,} buf)"
            cells.append(text)
        last = by_size.get(sizes[-1])
        verdict = g["verdict"] or "—"
        if g["declared"] and not g["ok"]:
            verdict = f"{verdict.upper()} (worse than declared)"
        rows.append(
            [
                g["shape"],
                DIALECT_LABEL.get(g["dialect"], g["dialect"]),
                g["spelling"],
                *cells,
                f"{fmt_ms(last['p50_ms'])} ms{_mark(last)}" if last and last["p50_ms"] is not None else "—",
                "—" if g["k"] is None else f"{g['k']:.2f}",
                verdict,
                g["declared"] or "",
            ]
        )
    out = table(headers, rows, "lll" + "r" * (len(sizes) + 2) + "ll", fmt)
    return out + _legend(doc, fmt)


def _kind(point: dict[str, Any]) -> str:
    """What a point's p50 is: its ``timing``; a point of a file written before it was recorded
    holds executor time, resolved while planning when its plan was MySQL's const."""
    if point.get("timing") in timing.KINDS:
        return str(point["timing"])
    return timing.RESOLVED if str(point.get("plan", "")).startswith("const ") else timing.EXECUTOR


def _mark(point: dict[str, Any]) -> str:
    return timing.MARK[_kind(point)]


def _legend(doc: dict[str, Any], fmt: str) -> str:
    """What the marked p50s are, under the growth table."""
    largest = doc["sizes"][-1]
    kinds = [
        _kind(p)
        for g in doc["growth"]
        for p in g["points"]
        if p["size"] == largest and p["p50_ms"] is not None
    ]
    lines = timing.legend(kinds)
    if not lines:
        return ""
    if fmt == "html":
        return "\n" + "\n".join(f"<p>{_html.escape(line)}</p>" for line in lines)
    return "\n\n" + ("\n\n" if fmt == "markdown" else "\n").join(lines)


def ratio_table(doc: dict[str, Any], fmt: str = "simple") -> str:
    """At the largest size: natural work / remediated work, and which natural spellings grow linearly."""
    largest = doc["sizes"][-1]
    by = {(g["shape"], g["dialect"], g["spelling"]): g for g in doc["growth"]}
    rows = []
    for (shape, dialect, spelling), nat in sorted(by.items()):
        if spelling != "natural" or (shape, dialect, "remediated") not in by:
            continue
        rem = by[(shape, dialect, "remediated")]
        nw = next((p["work"] for p in nat["points"] if p["size"] == largest), None)
        rw = next((p["work"] for p in rem["points"] if p["size"] == largest), None)
        ratio = None if nw is None or rw is None else nw / max(rw, 1.0)
        rows.append(
            [
                shape,
                DIALECT_LABEL.get(dialect, dialect),
                _work(nw),
                _work(rw),
                "—" if ratio is None else fmt_factor(ratio),
                nat["verdict"] or "—",
                rem["verdict"] or "—",
            ]
        )
    headers = [
        "Shape",
        "Server",
        f"natural work {size_label(largest)}",
        f"remediated work {size_label(largest)}",
    ]
    headers += ["natural / remediated", "natural grows", "remediated grows"]
    return table(headers, rows, "llrrrll", fmt)
