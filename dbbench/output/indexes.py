"""``dbbench indexes`` for people: per dialect every index of the tables the catalog reads with its
verdict and the evidence (the work each shape would lose, the index that takes over), its size,
write cost and the constraint that binds it; then per shape the indexes it needs. Terminal tables,
Markdown (a pull-request comment) or one HTML page, read from the ``dbbench.indexes/1`` document
only (:mod:`dbbench.indexmap.document`)."""

from __future__ import annotations

import html as _html
from typing import Any

from dbbench.defaults import DIALECT_LABEL
from dbbench.output import html_start, table
from dbbench.output.advise import size, write_batch

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
        return [_needed(e) for e in i["needed_by"]]
    if i["verdict"] == "redundant":
        return [f"{e['shape']}: {_work(e)}, by {_instead(e)}" for e in i["taken_over"]]
    return [f"no plan reads it ({i['shapes_measured']} shapes read {i['table']})"]


def _needed(e: dict[str, Any]) -> str:
    """The sample's work when it rose, else the first reason (a probe's, a failed check)."""
    r = e["rows_examined"]
    rose = e.get("error") or r["before"] is None or r["after"] is None or r["after"] > r["before"]
    return f"{e['shape']}: {_work(e)}" if rose else f"{e['shape']}: {_cut(e['reasons'][0], 90)}"


def _instead(e: dict[str, Any]) -> str:
    """What read the table without the index: the index names, else the plan's words."""
    return ", ".join(e["by"]) or "; ".join(e["instead"]) or "another path"


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


def _shares(i: dict[str, Any]) -> str:
    shares = i.get("shares")
    if not shares:
        return ""
    return f"foreign key {shares['foreign_key']} (or {', '.join(shares['with'])})"


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
                write_batch(i["write"]),
                i["constraint"] or _shares(i) or "—",
            ]
        )
    return rows


def shape_rows(t: dict[str, Any]) -> list[list[str]]:
    def needs(s: dict[str, Any]) -> str:
        """The indexes it needs, and those it reads that could not be hidden (unknown)."""
        unknown = [
            f"{i['index']} (read; not hidden)" for i in t["indexes"] if s["shape"] in i["read_by_unhidden"]
        ]
        return ", ".join([*s["needs"], *unknown]) or "—"

    return [
        [
            s["shape"] + ("" if s["ok"] else " (its check fails)"),
            needs(s),
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
    """The answer in lines: the set of indexes this catalog can do without, verified by hiding them
    together (what dropping them would save), those left out of it and why, and the ones a
    constraint keeps."""
    out = []
    label = _label(t)
    ds = t.get("drop_set")
    if ds:
        names = ", ".join(f"{i['table']}.{i['index']}" for i in ds["indexes"])
        if ds["verified"]:
            out.append(
                f"{label}: this catalog can do without {names} ({size(ds['size_bytes'])}): hidden together, none "
                f"of the {ds['shapes_measured']} shapes reading their tables needs them; candidates to drop, "
                "once no other query needs them"
            )
        else:
            more = f" (+{len(ds['problems']) - 1} more)" if len(ds["problems"]) > 1 else ""
            out.append(
                f"{label}: {names}, each unneeded alone, are needed together: {_cut(ds['problems'][0])}{more}"
            )
        out += [f"{label}: {k['table']}.{k['index']} stays: {k['why']}" for k in ds["kept"]]
    for i in t["indexes"]:
        if i["verdict"] in ("unused", "redundant") and i["constraint"]:
            out.append(
                f"{label}: {i['table']}.{i['index']} is {i['verdict']} by this catalog but backs {i['constraint']}: keep it"
            )
    if not out:
        needed = sum(i["verdict"] == "needed" for i in t["indexes"])
        hidden = sum(i["verdict"] != "not hidden" for i in t["indexes"])
        out.append(f"{label}: every index hidden is needed ({needed} of {hidden})")
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
        *html_start(title, 1400, "td{vertical-align:top;white-space:pre-line}"),
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
