"""``dbbench advise`` for people: per shape and dialect the candidates ranked with their verdict
and measured numbers (and what the planner's estimate alone would have said), what no index
bounds, then the whole-catalog set; as terminal tables, Markdown or one HTML page. Read from the
``dbbench.advise/1`` document only (:mod:`dbbench.document.advise`)."""

from __future__ import annotations

import html as _html
from typing import Any

from dbbench.defaults import DIALECT_LABEL
from dbbench.output import html_start, table
from dbbench.units import fmt_factor, fmt_ms

HEADERS = [
    "#",
    "Index",
    "Verdict",
    "Rows examined",
    "p50 ms",
    "Size",
    "Build ms",
    "Write batch",
    "Estimate alone",
    "Also helps",
]


def _rows(value: float | None) -> str:
    return "timeout" if value is None else f"{value:,.0f}"


def size(n: int | None) -> str:
    """Bytes as KiB / MiB."""
    if n is None:
        return "—"
    if n >= 1 << 20:
        return f"{n / (1 << 20):.1f} MiB"
    return f"{n / 1024:.0f} KiB"


def _write(c: dict[str, Any]) -> str:
    return write_batch(c["write"])


def write_batch(w: dict[str, Any]) -> str:
    """A write batch without → with an index (``{without, with, ratio}``, each a dbbench write
    cost), its ratio; "not measured" when either is missing or neither wrote a row."""
    if w["without"] is None or w["with"] is None:
        return "not measured"
    if all(w[k]["insert_ms"] is None and w[k]["update_ms"] is None for k in ("with", "without")):
        return "not measured (no row to write)"
    ratio = f" ({fmt_factor(w['ratio'])})" if w["ratio"] else ""
    return f"{fmt_ms(w['without']['ms'])} → {fmt_ms(w['with']['ms'])} ms{ratio}"


def _estimate(c: dict[str, Any]) -> str:
    """What plain EXPLAIN alone would have concluded: suggest / skip, the estimated saving."""
    e = c.get("estimate")
    if not e:
        return "—"
    saving = f" ({-e['saving']:+.0%} cost)" if e["saving"] is not None else ""
    unused = " (unused)" if e["verdict"] == "skip" and "does not use" in e["reason"] else ""
    mark = " ≠" if c.get("estimate_disagrees") else ""
    return f"{e['verdict']}{unused or saving}{mark}"


def _locked(c: dict[str, Any]) -> str:
    """A write's rows locked before → after (``; locks 2,048 → 100``), "" for a read."""
    locked = c.get("locked_rows")
    if not locked:
        return ""
    return f"; locks {_rows(locked['before'])} → {_rows(locked['after'])}"


def _verdict(c: dict[str, Any]) -> str:
    return "verified" if c["verdict"] == "verified" else f"rejected: {c['reason']}"


def candidate_rows(a: dict[str, Any]) -> list[list[str]]:
    rows = []
    for c in a["candidates"]:
        r, ms = c["rows_examined"], c["p50_ms"]
        helps = (c.get("side_effects") or {}).get("helps") or []
        rows.append(
            [
                str(c["rank"]),
                c["candidate"],
                _verdict(c),
                f"{_rows(r['before'])} → {_rows(r['after'])}" + _locked(c),
                f"{fmt_ms(ms['before'])} → {fmt_ms(ms['after'])}",
                size(c["size_bytes"]),
                fmt_ms(c["build_ms"]),
                _write(c),
                _estimate(c),
                "; ".join(h.split(":")[0] for h in helps) or "—",
            ]
        )
    return rows


def _title(a: dict[str, Any]) -> str:
    spelling = " (natural spelling)" if a["spelling"] == "natural" else ""
    return f"{DIALECT_LABEL.get(a['dialect'], a['dialect'])} {a['shape']}{spelling}"


def conclusion(a: dict[str, Any]) -> str:
    """The answer in one line: the index to build, or why none is advised."""
    best = next((c for c in a["candidates"] if c["verdict"] == "verified"), None)
    if best is not None:
        return f"advice: build {best['candidate']} (verified)"
    if a["spelling"] == "natural":
        return (
            "advice: no index makes the natural spelling do less work; the remedy is the rewrite "
            "(the remediated spelling)"
        )
    if a["unbounded"]:
        return "advice: no index bounds this statement (below); rewrite it"
    if a["candidates"]:
        return "advice: no candidate verified (the reasons above); --most builds more"
    return "advice: no candidate index"


def _notes(a: dict[str, Any]) -> list[str]:
    out = [conclusion(a)]
    out += [f"no index bounds it: {u}" for u in a["unbounded"]]
    out += [f"growth of #{c['rank']}: {c['growth']['said']}" for c in a["candidates"] if c.get("growth")]
    out += [f"already in the namespace: {e['candidate']} is {e['index']}" for e in a["existing"]]
    if a["untried"]:
        out.append(f"{a['untried']} more candidate(s) not built (--most)")
    if not a["candidates"] and not a["unbounded"] and not a["existing"]:
        out.append("the statement has no column an index could narrow")
    return out


def set_lines(doc: dict[str, Any]) -> list[str]:
    out = []
    for s in doc["sets"]:
        label = DIALECT_LABEL.get(s["dialect"], s["dialect"])
        if not s["indexes"]:
            left = ", ".join(s["unserved"]) or "none"
            out.append(f"{label}: no verified index; unserved: {left}")
            continue
        state = "verified whole" if s["verified"] else f"NOT verified whole: {s['problem']}"
        write = ""
        if s["write_ms"]:
            write = f", write batch {fmt_ms(s['write_ms']['without'])} → {fmt_ms(s['write_ms']['with'])} ms"
        out.append(
            f"{label}: {len(s['indexes'])} index(es), {size(s['size_bytes'])}{write}; {state}; "
            f"serves {', '.join(s['serves']) or 'nothing'}"
            + (f"; unserved: {', '.join(s['unserved'])}" if s["unserved"] else "")
        )
        out += [f"  {i['migration_ddl']};" for i in s["indexes"]]
    return out


def to_text(doc: dict[str, Any], fmt: str = "simple") -> str:
    """Every advised shape's table and notes, then the whole-catalog set (terminal or Markdown)."""
    md = fmt == "markdown"
    parts = []
    if not doc["shapes"]:
        parts.append("No shape needs an index: every check passes and no natural spelling is slower.")
    for a in doc["shapes"]:
        reason = why(doc, a)
        parts.append(("### " if md else "") + _title(a) + (f" — {reason}" if reason else ""))
        if a["candidates"]:
            parts.append(table(HEADERS, candidate_rows(a), "rlllrrrrll", fmt))
        parts += [("- " if md else "  ") + n for n in _notes(a)]
        best = next((c for c in a["candidates"] if c["verdict"] == "verified"), None)
        if best is not None:
            parts.append(f"DDL: `{best['migration_ddl']}`" if md else f"  DDL: {best['migration_ddl']}")
        parts.append("")
    if doc["sets"]:
        parts.append(("## " if md else "") + "The whole catalog: the smallest verified set")
        parts += [("- " if md and not line.startswith("  ") else "") + line for line in set_lines(doc)]
    parts.append("\n" + summary_line(doc))
    return "\n".join(parts).rstrip() + "\n"


def summary_line(doc: dict[str, Any]) -> str:
    """How many shapes, candidates, verdicts; where the estimate alone would have said otherwise."""
    s = doc["summary"]
    return (
        f"{s['shapes_advised']} shape(s) advised, {s['candidates_tried']} candidate(s) built and measured: "
        f"{s['verified']} verified, {s['rejected']} rejected ({doc['seconds']:.1f} s); the estimate alone "
        f"(plain EXPLAIN, Dexter's rule) disagrees on {s['estimate_disagrees']} (marked ≠)"
    )


def why(doc: dict[str, Any], a: dict[str, Any]) -> str:
    """Why the shape was advised (its failed check, or its slower natural spelling)."""
    key = (a["shape"], a["dialect"], a["spelling"])
    return next((n["why"] for n in doc["needs"] if (n["shape"], n["dialect"], n["spelling"]) == key), "")


def page(doc: dict[str, Any], title: str | None = None) -> str:
    """One self-contained HTML page: the same tables and the set."""
    esc = _html.escape
    title = title or "dbbench advise: indexes built and measured"
    parts = [
        *html_start(
            title,
            1300,
            "code,pre{background:#f6f8fa;padding:2px 4px;font-size:12px}pre{white-space:pre-wrap;overflow-wrap:anywhere}",
        ),
        f"<p>Catalog {esc(str(doc['config'].get('catalog')))}, namespace {esc(str(doc['config'].get('namespace')))}. "
        "Every candidate was built for real, measured with EXPLAIN ANALYZE and every parameter probe, costed "
        "(build time, size on disk, a write batch with and without it) and removed again. "
        "“Estimate alone” is what plain EXPLAIN would have concluded.</p>",
    ]
    for a in doc["shapes"]:
        parts.append(f"<h2>{esc(_title(a))}</h2>")
        if reason := why(doc, a):
            parts.append(f"<p>Advised because: {esc(reason)}</p>")
        if a["candidates"]:
            parts.append(table(HEADERS, candidate_rows(a), "rlllrrrrll", "html"))
        notes = _notes(a)
        if notes:
            parts.append("<ul>" + "".join(f"<li>{esc(n)}</li>" for n in notes) + "</ul>")
        best = next((c for c in a["candidates"] if c["verdict"] == "verified"), None)
        if best is not None:
            parts.append(f"<p>DDL: <code>{esc(best['migration_ddl'])}</code></p>")
    if doc["sets"]:
        parts.append("<h2>The whole catalog: the smallest verified set</h2>")
        parts.append("<pre>" + esc("\n".join(set_lines(doc))) + "</pre>")
    parts.append(f"<p>{esc(summary_line(doc))}</p>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"
