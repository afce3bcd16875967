"""``dbbench indexes`` for people: per dialect every index of the tables the catalog reads with its
verdict and the evidence (the work each shape would lose, the index that takes over), its size,
write cost and the constraint that binds it; then per shape the indexes it needs. Terminal tables,
Markdown (a pull-request comment) or one HTML page, read from the ``dbbench.indexes/1`` document
only (:mod:`dbbench.indexmap.document`)."""

from __future__ import annotations

import html as _html
from typing import Any

from dbbench.defaults import DIALECT_LABEL
from dbbench.output import HTML_TABLE_CSS, table
from dbbench.output.advise import size
from dbbench.units import fmt_factor, fmt_ms

HEADERS = [
    "Index",
    "Verdict",
    "Evidence (rows examined with → without it)",
    "Size",
    "Write batch without → with",
    "Constraint",
]
SHAPE_HEADERS = ["Shape", "Needs", "Reads, replaceable", "Rows examined"]
_REASON = 140  # a reason longer than this is cut in the tables (the JSON holds it whole)


def _rows(value: float | None) -> str:
    return "timeout" if value is None else f"{value:,.0f}"


def _cut(text: str, at: int = _REASON) -> str:
    return text if len(text) <= at else text[: at - 1] + "…"


def _work(e: dict[str, Any]) -> str:
    r = e["rows_examined"]
    after = "an error" if e.get("error") else _rows(r["after"])
    return f"rows examined {_rows(r['before'])} → {after}"


def evidence(i: dict[str, Any]) -> list[str]:
    """The verdict's evidence in short, one line per shape: the work it would lose, or the work it
    keeps without the index and what reads the table instead."""
    if i["not_hidden"]:
        return [f"read by {s}" for s in i["read_by_unhidden"]] or ["no plan reads it"]
    if i["verdict"] == "needed":
        return [f"{e['shape']}: {_work(e)}" for e in i["needed_by"]]
    if i["verdict"] == "redundant":
        return [f"{e['shape']}: {_work(e)}, by {_instead(e)}" for e in i["taken_over"]]
    return [f"no plan reads it ({i['shapes_measured']} shapes read {i['table']})"]


def _instead(e: dict[str, Any]) -> str:
    """What read the table without the index: the index names, else the plan's words."""
    found = [
        part.rsplit(" using ", 1)[1] for part in "; ".join(e["instead"]).split("; ") if " using " in part
    ]
    return ", ".join(dict.fromkeys(found)) or "; ".join(e["instead"]) or "another path"


def details(t: dict[str, Any]) -> list[str]:
    """Why each needed index is needed (every reason per shape), what went with a hidden
    constraint, why an index was not hidden."""
    out = []
    for i in t["indexes"]:
        name = f"{i['table']}.{i['index']}"
        if i["not_hidden"]:
            out.append(f"{name}: not hidden: {i['not_hidden']}")
            continue
        went = f" (hidden with it: {i['hidden_with']})" if i["hidden_with"] else ""
        for e in i["needed_by"]:
            out.append(
                f"{name} needed by {e['shape']}{went}: " + "; ".join(_cut(r) for r in e["reasons"][:3])
            )
            if len(e["reasons"]) > 3:
                out.append(f"  … and {len(e['reasons']) - 3} more (the JSON holds every reason)")
    return out


def _write(i: dict[str, Any]) -> str:
    w = i["write"]
    if w["with"] is None or w["without"] is None:
        return "not measured" + (" (MySQL)" if w.get("note") and "MySQL" in w["note"] else "")
    ratio = f" ({fmt_factor(w['ratio'])})" if w["ratio"] else ""
    return f"{fmt_ms(w['without']['ms'])} → {fmt_ms(w['with']['ms'])} ms{ratio}"


def _verdict(i: dict[str, Any]) -> str:
    if i["verdict"] in ("unused", "redundant") and i["constraint"]:
        return f"{i['verdict']}, constraint-bound"
    return i["verdict"]


def index_rows(t: dict[str, Any], sep: str = "\n") -> list[list[str]]:
    order = {"needed": 0, "redundant": 1, "unused": 2, "not hidden": 3}
    rows = []
    for i in sorted(t["indexes"], key=lambda i: (order.get(i["verdict"], 9), i["table"], i["index"])):
        rows.append(
            [
                f"{i['table']}.{i['index']}",
                _verdict(i),
                sep.join(evidence(i)),
                size(i["size_bytes"]),
                _write(i),
                i["constraint"] or "—",
            ]
        )
    return rows


def shape_rows(t: dict[str, Any]) -> list[list[str]]:
    return [
        [
            s["shape"] + ("" if s["ok"] else " (its check fails)"),
            ", ".join(s["needs"]) or "—",
            "; ".join(f"{e['index']} (or {_instead(e)})" for e in s["either"]) or "—",
            _rows(s["rows_examined"]),
        ]
        for s in t["shapes"]
    ]


def _label(t: dict[str, Any]) -> str:
    return DIALECT_LABEL.get(t["dialect"], t["dialect"])


def heading(t: dict[str, Any]) -> str:
    return (
        f"{_label(t)} ({t['namespace']}): {len(t['indexes'])} indexes on {len(t['tables'])} tables, "
        f"each hidden in turn with the {len(t['shapes'])} shapes re-run ({t['seconds']:.1f} s)"
    )


def droppable(t: dict[str, Any]) -> list[str]:
    """The answer in lines: the indexes this catalog does not need and no constraint binds (what
    dropping them would save), and those a constraint keeps."""
    out = []
    free = [i for i in t["indexes"] if i["verdict"] in ("unused", "redundant") and not i["constraint"]]
    bound = [i for i in t["indexes"] if i["verdict"] in ("unused", "redundant") and i["constraint"]]
    for i in free:
        write = f", write batch {fmt_factor(i['write']['ratio'])} with it" if i["write"]["ratio"] else ""
        out.append(
            f"{_label(t)}: {i['table']}.{i['index']} is {i['verdict']} by this catalog ({size(i['size_bytes'])}{write}): "
            "a candidate to drop, once no other query needs it"
        )
    for i in bound:
        out.append(
            f"{_label(t)}: {i['table']}.{i['index']} is {i['verdict']} by this catalog but backs {i['constraint']}: keep it"
        )
    if not free and not bound:
        needed = sum(i["verdict"] == "needed" for i in t["indexes"])
        out.append(
            f"{_label(t)}: every index is needed: {needed} of {len(t['indexes'])} "
            f"(the rest not hidden: {sum(i['verdict'] == 'not hidden' for i in t['indexes'])})"
        )
    return out


def summary_line(doc: dict[str, Any]) -> str:
    s = doc["summary"]
    return (
        f"{s['indexes']} index(es) hidden in turn: {s['needed']} needed, {s['redundant']} redundant, "
        f"{s['unused']} unused, {s['not_hidden']} not hidden; {s['constraint_bound']} bound by a constraint "
        f"({doc['seconds']:.1f} s)"
    )


def to_text(doc: dict[str, Any], fmt: str = "simple") -> str:
    """Every target's index table, the per-shape view, what could go (terminal or Markdown)."""
    md = fmt == "markdown"
    parts = []
    for t in doc["targets"]:
        parts.append(("### " if md else "") + heading(t))
        parts.append(table(HEADERS, index_rows(t, "<br>" if md else "\n"), "lllrrl", fmt))
        parts.append("")
        parts.append(("#### " if md else "") + f"{_label(t)}: what each shape needs")
        parts.append(table(SHAPE_HEADERS, shape_rows(t), "lllr", fmt))
        parts.append("")
        parts += [("- " if md else "  ") + line for line in droppable(t)]
        parts.append("")
        parts.append(("#### " if md else "") + f"{_label(t)}: why")
        parts += [("- " if md else "  ") + line for line in details(t)]
        parts.append("")
    parts.append(summary_line(doc))
    return "\n".join(parts).rstrip() + "\n"


def page(doc: dict[str, Any], title: str | None = None) -> str:
    """One self-contained HTML page: the same tables."""
    esc = _html.escape
    title = title or "dbbench indexes: which index serves which query"
    parts = [
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{esc(title)}</title>",
        "<style>body{font-family:sans-serif;max-width:1400px;margin:2em auto;color:#222}"
        "td{vertical-align:top;white-space:pre-line}.needed{color:#1a7f37}.redundant{color:#9a6700}.unused{color:#cf222e}"
        + HTML_TABLE_CSS
        + "</style>",
        "</head><body>",
        f"<h1>{esc(title)}</h1>",
        f"<p>Catalog {esc(str(doc['config'].get('catalog')))}, namespace {esc(str(doc['config'].get('namespace')))}. "
        "Each index was hidden in turn (PostgreSQL: dropped in a transaction rolled back; MySQL: made "
        "invisible, then visible again) and every shape reading its table measured again with every "
        "parameter probe. <em>Needed</em>: a shape's check fails or its work rises past the diff thresholds "
        "without it. <em>Redundant</em>: shapes read it, but another index takes over with no more work. "
        "<em>Unused</em>: no plan reads it.</p>",
    ]
    for t in doc["targets"]:
        parts.append(f"<h2>{esc(heading(t))}</h2>")
        parts.append(table(HEADERS, index_rows(t, "\n"), "lllrrl", "html"))
        parts.append(f"<h3>{esc(_label(t))}: what each shape needs</h3>")
        parts.append(table(SHAPE_HEADERS, shape_rows(t), "lllr", "html"))
        parts.append("<ul>" + "".join(f"<li>{esc(line)}</li>" for line in droppable(t)) + "</ul>")
        parts.append(f"<h3>{esc(_label(t))}: why</h3>")
        parts.append("<ul>" + "".join(f"<li>{esc(line)}</li>" for line in details(t)) + "</ul>")
    parts.append(f"<p>{esc(summary_line(doc))}</p>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"
