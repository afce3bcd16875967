"""Rendering explain results: terminal tables (tabulate), Markdown, JUnit XML, HTML.

Every renderer reads the one JSON result document (:func:`explain_document` builds it from a live
run; ``dbbench report RESULT.json`` reads it from a file), never the measurement objects, so a
file renders exactly like the run that wrote it.
"""

from __future__ import annotations

import hashlib
import html as _html
import math
from pathlib import Path

from tabulate import tabulate

from dbbench.explain import ShapeResult
from dbbench.plan import PlanNode
from dbbench.results import envelope
from dbbench.urls import DIALECT_LABEL

DIALECT_ORDER = ("mysql", "postgresql")   # the seed document's column order


def fmt_ms(value: float | None) -> str:
    if value is None:
        return "—"
    if value < 0.01:
        return f"{value:.6f}"
    if value < 1:
        return f"{value:.3f}"
    return f"{value:.3f}" if value < 100 else f"{value:,.1f}"


def fmt_factor(factor: float) -> str:
    return f"{factor:,.0f}x" if factor >= 100 else f"{factor:.1f}x"


def md_table(headers: list[str], rows: list[list[str]], align: str = "") -> str:
    """A Markdown table in the seed document's style (``| --- | ---: |``); ``align`` holds one
    letter per column, ``l`` or ``r``."""
    def cell(text) -> str:
        return str(text).replace("|", "\\|").replace("\n", " ")
    sep = ["---:" if (align[i:i + 1] == "r") else "---" for i in range(len(headers))]
    lines = ["| " + " | ".join(cell(h) for h in headers) + " |", "| " + " | ".join(sep) + " |"]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def _table(headers, rows, align: str, fmt: str) -> str:
    if fmt == "markdown":
        return md_table(headers, rows, align)
    colalign = tuple("right" if a == "r" else "left" for a in align.ljust(len(headers), "l"))
    return tabulate(rows, headers=headers, tablefmt=fmt, disable_numparse=True, colalign=colalign)


# -- the result document -----------------------------------------------------------------------
def explain_document(targets, results: list[ShapeResult], metas: dict, config: dict) -> dict:
    doc = envelope("explain", targets)
    doc["config"] = config
    doc["datasets"] = {d: {"name": m.get("dataset"), "seed": m.get("seed"),
                           "setup_sha256": m.get("setup_sha256"),
                           "fingerprints": {k.split(".", 1)[1]: v for k, v in m.items() if k.startswith("fingerprint.")}}
                       for d, m in metas.items()}
    doc["results"] = []
    for r in results:
        entry = {"shape": r.shape, "dialect": r.dialect, "cardinality": r.cardinality,
                 "access_path": r.access_path, "expect_rows": r.expect_rows, "params": r.params, "ok": r.ok,
                 "cascade": r.cascade, "natural_label": r.natural_label,
                 "verdict": None if r.verdict is None else {"expected": r.verdict.expected, "actual": r.verdict.actual,
                                                            "problems": r.verdict.problems}}
        for m in (r.remediated, r.natural):
            if m is None:
                continue
            entry[m.spelling] = {"sql": " ".join(m.sql.split()), "samples_ms": m.samples_ms, "p50_ms": m.p50,
                                 "p95_ms": m.p95, "rows": m.rows, "timeout": m.timeout, "plan": m.plan,
                                 "raw_plan": m.raw_plan}
        doc["results"].append(entry)
    doc["remediation"] = remediation_rows(doc["results"])
    doc["failures"] = [f"{r['shape']} [{r['dialect']}]" for r in doc["results"] if not r["ok"]]
    return doc


def remediation_rows(entries: list[dict]) -> list[dict]:
    out = []
    for r in entries:
        nat, rem = r.get("natural"), r["remediated"]
        if not nat:
            continue
        before, after = nat["p50_ms"], rem["p50_ms"]
        speedup = (before / after) if (before and after) else None
        out.append({"dialect": r["dialect"], "shape": r["shape"],
                    "change": r.get("natural_label") or "natural to remediated",
                    "before_p50_ms": before, "final_p50_ms": after, "natural_timeout": nat["timeout"],
                    "speedup": speedup})
    return out


def _dialects(doc: dict) -> list[str]:
    return [d for d in DIALECT_ORDER if any(r["dialect"] == d for r in doc["results"])]


def _pair(m: dict | None) -> str:
    if not m:
        return "—"
    if m.get("timeout"):
        return "timeout"
    return f"{fmt_ms(m['p50_ms'])} / {fmt_ms(m['p95_ms'])} ms"


def _by_shape(doc: dict):
    by = {(r["shape"], r["dialect"]): r for r in doc["results"]}
    for shape in dict.fromkeys(r["shape"] for r in doc["results"]):
        yield shape, by


# -- tables ------------------------------------------------------------------------------------
def shape_rows(doc: dict) -> tuple[list[str], list[list[str]], str]:
    """Per shape: cardinality, p50 / p95 per dialect and each dialect's access-path verdict."""
    dialects = _dialects(doc)
    rows = []
    for shape, by in _by_shape(doc):
        rs = [by.get((shape, d)) for d in dialects]
        first = next(r for r in rs if r)
        verdicts = []
        judged = [(d, r) for d, r in zip(dialects, rs) if r is not None and r["verdict"] is not None]
        same = {r["verdict"]["expected"] for _, r in judged}
        if len(judged) > 1 and all(r["ok"] for _, r in judged) and len(same) == 1:
            verdicts.append(f"ok: {same.pop()}")   # every dialect, one path: say it once
        for d, r in judged if not verdicts else []:
            mark = "ok" if r["ok"] else "FAIL"
            verdicts.append(f"{DIALECT_LABEL[d]} {mark}: {r['verdict']['expected'] if r['ok'] else r['verdict']['actual']}")
        rows.append([shape, first["cardinality"], *[_pair(r["remediated"]) if r else "—" for r in rs],
                     "; ".join(verdicts)])
    headers = ["Query shape", "Cardinality", *[f"{DIALECT_LABEL[d]} p50 / p95" for d in dialects], "Access path"]
    return headers, rows, "ll" + "r" * len(dialects) + "l"


def shape_table(doc: dict, fmt: str = "simple") -> str:
    return _table(*shape_rows(doc), fmt)


def seed_rows(doc: dict) -> tuple[list[str], list[list[str]], str]:
    """The seed document's table: shape, cardinality, p50 / p95 per dialect, bounded access path
    (the catalog's ``access_path`` words, else the asserted index; a failing dialect says so)."""
    dialects = _dialects(doc)
    rows = []
    for shape, by in _by_shape(doc):
        rs = [by.get((shape, d)) for d in dialects]
        first = next(r for r in rs if r)
        words = first.get("access_path") or "; ".join(
            dict.fromkeys(r["verdict"]["expected"] for r in rs if r and r["verdict"]))
        bad = [f"{DIALECT_LABEL[d]}: {r['verdict']['actual']}" for d, r in zip(dialects, rs)
               if r and not r["ok"] and r["verdict"]]
        if bad:
            words += " — FAIL " + "; ".join(bad)
        rows.append([shape, first["cardinality"], *[_pair(r["remediated"]) if r else "—" for r in rs], words])
    headers = ["Query shape", "Cardinality", *[f"{DIALECT_LABEL[d]} p50 / p95" for d in dialects], "Bounded access path"]
    return headers, rows, "ll" + "r" * len(dialects) + "l"


def seed_table(doc: dict, fmt: str = "markdown") -> str:
    return _table(*seed_rows(doc), fmt)


def remediation_rows_table(doc: dict) -> tuple[list[str], list[list[str]], str]:
    rows = []
    for item in doc.get("remediation") or remediation_rows(doc["results"]):
        before = "timeout" if item["natural_timeout"] else f"{fmt_ms(item['before_p50_ms'])} ms"
        sp = item["speedup"]
        change = "—" if sp is None else (f"{fmt_factor(sp)} faster" if sp >= 1 else f"{fmt_factor(1 / sp)} slower")
        rows.append([f"{DIALECT_LABEL[item['dialect']]} {item['shape']}: {item['change']}", before,
                     f"{fmt_ms(item['final_p50_ms'])} ms", change])
    return ["Remediated plan", "Before", "Final p50", "Change"], rows, "lrrr"


def remediation_table(doc: dict, fmt: str = "simple") -> str:
    return _table(*remediation_rows_table(doc), fmt)


def has_remediation(doc: dict) -> bool:
    return bool(doc.get("remediation") or remediation_rows(doc["results"]))


def plan_tree(m: dict | None) -> PlanNode | None:
    return PlanNode.from_dict(m["plan"]) if m and m.get("plan") else None


def failures(doc: dict) -> list[str]:
    lines = []
    for r in doc["results"]:
        if r["ok"]:
            continue
        v = r["verdict"] or {"expected": "?", "actual": "?", "problems": []}
        lines.append(f"FAIL {r['shape']} [{DIALECT_LABEL[r['dialect']]}]: expected {v['expected']}; "
                     f"actual: {v['actual']}; " + "; ".join(v["problems"]))
        tree = plan_tree(r["remediated"])
        if tree is not None:
            lines.append(tree.render(1))
    return lines


# -- CI ----------------------------------------------------------------------------------------
def junit_xml(doc: dict, suite: str = "dbbench") -> str:
    """JUnit XML: one test case per shape and dialect; a failed assertion is a <failure> with the plan."""
    import xml.etree.ElementTree as ET

    entries = doc["results"]
    failed = [r for r in entries if not r["ok"]]
    root = ET.Element("testsuites")
    ts = ET.SubElement(root, "testsuite", name=suite, tests=str(len(entries)), failures=str(len(failed)),
                       errors="0", skipped="0")
    for r in entries:
        rem = r["remediated"]
        seconds = sum(rem["samples_ms"]) / 1000 if rem["samples_ms"] else 0.0
        case = ET.SubElement(ts, "testcase", classname=f"{suite}.{r['dialect']}", name=r["shape"],
                             time=f"{seconds:.6f}")
        v = r["verdict"] or {"expected": "?", "actual": "?", "problems": ["no verdict"]}
        if not r["ok"]:
            failure = ET.SubElement(case, "failure", message="; ".join(v["problems"]), type="PlanAssertion")
            body = [f"expected: {v['expected']}", f"actual: {v['actual']}"]
            tree = plan_tree(rem)
            if tree is not None:
                body.append(tree.render())
            failure.text = "\n".join(body)
        else:
            out = ET.SubElement(case, "system-out")
            out.text = f"{v['expected']}; p50 {fmt_ms(rem['p50_ms'])} ms, p95 {fmt_ms(rem['p95_ms'])} ms"
    return ET.tostring(root, encoding="unicode", xml_declaration=True)


def github_summary(doc: dict, title: str) -> str:
    """Markdown for ``$GITHUB_STEP_SUMMARY``: verdict line, the shape table, failures with plans."""
    bad = [r for r in doc["results"] if not r["ok"]]
    head = (f"### {title}: {len(doc['results']) - len(bad)} of {len(doc['results'])} checks hold"
            + ("" if not bad else f", **{len(bad)} failed**"))
    out = [head, "", shape_table(doc, "markdown")]
    if bad:
        out += ["", "```", *failures(doc), "```"]
    return "\n".join(out) + "\n"


def append_summary(path: Path | str, markdown: str) -> None:
    """Append to a GitHub step summary file (GitHub concatenates every step's summary)."""
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(markdown if markdown.endswith("\n") else markdown + "\n")


# -- the report (seed-style Markdown and HTML) -------------------------------------------------
def _sample_counts(doc: dict) -> tuple[int | None, int | None]:
    cfg = doc.get("config") or {}
    runs = cfg.get("runs")
    if runs is None:
        counts = {len(r["remediated"]["samples_ms"]) for r in doc["results"] if r["remediated"]["samples_ms"]}
        runs = counts.pop() if len(counts) == 1 else None
    return runs, cfg.get("warmups")


def _intro(doc: dict) -> list[str]:
    servers = ", ".join(f"{DIALECT_LABEL.get(s['dialect'], s['dialect'])} {s['version']}" for s in doc.get("servers", []))
    datasets = doc.get("datasets") or {}
    names = sorted({str(d.get("name")) for d in datasets.values() if d.get("name")})
    cfg = doc.get("config") or {}
    runs, warmups = _sample_counts(doc)
    lines = []
    where = f" in namespace `{cfg['namespace']}`" if cfg.get("namespace") else ""
    catalog = f"catalog `{cfg['catalog']}`, " if cfg.get("catalog") else ""
    lines.append(f"Servers: {servers or 'unknown'}; {catalog}dataset {', '.join(f'`{n}`' for n in names) or 'unknown'}"
                 f"{where}; generated {doc.get('generated_at', '?')} by dbbench {doc.get('tool', {}).get('version', '?')}.")
    if runs:
        lines.append("")
        if warmups:
            lines.append(f"Each row below is database executor time from {runs} consecutive warmed `EXPLAIN ANALYZE` "
                         f"runs after {warmups} untimed warm-ups. The p50 and p95 use nearest-rank selection over "
                         f"those {runs} samples.")
        else:
            lines.append(f"Each row below is database executor time from {runs} `EXPLAIN ANALYZE` "
                         f"run{'s' if runs != 1 else ''} without warm-up (nearest-rank p50 and p95).")
    return lines


def markdown(doc: dict, source: Path | None = None) -> str:
    """The seed document's database section, reproduced from a result: the shape table, the
    remediation table (when the run measured natural spellings), failures, and the file's SHA-256."""
    out = _intro(doc) + ["", seed_table(doc, "markdown")]
    if has_remediation(doc):
        out += ["", remediation_table(doc, "markdown")]
    if any(not r["ok"] for r in doc["results"]):
        out += ["", "Failed assertions:", "", "```", *failures(doc), "```"]
    if source is not None:
        digest = hashlib.sha256(Path(source).read_bytes()).hexdigest()
        out += ["", f"All individual samples and plans are in `{Path(source).name}`. Its SHA-256 is `{digest}`."]
    return "\n".join(out) + "\n"


_COLORS = {"postgresql": "#336791", "mysql": "#d9822b"}


def _ticks(lo: float, hi: float) -> list[float]:
    """Decades covering [lo, hi], with room for a dot that sits right on the edge."""
    first, last = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    if math.log10(lo) - first < 0.15:
        first -= 1
    if last - math.log10(hi) < 0.15:
        last += 1
    return [10.0 ** e for e in range(first, last + 1)]


def _tick_label(v: float) -> str:
    if v >= 1000:
        return f"{v / 1000:g} s"
    if v < 1:
        return f"{v:.{-math.floor(math.log10(v))}f} ms"
    return f"{v:g} ms"


def samples_svg(doc: dict, width: int = 900) -> str:
    """An inline SVG strip chart: every timed sample per shape and dialect on a log axis, p50 and
    p95 marked; natural spellings as hollow circles. No scripts: hover titles are SVG <title>s."""
    rows = []
    for shape, by in _by_shape(doc):
        for d in _dialects(doc):
            r = by.get((shape, d))
            if r is None:
                continue
            for spelling in ("remediated", "natural"):
                m = r.get(spelling)
                if m and m.get("samples_ms"):
                    rows.append((shape, d, spelling, m))
    values = [v for *_, m in rows for v in m["samples_ms"] if v and v > 0]
    if not values:
        return '<p>No timed samples.</p>'
    lo, hi = min(values), max(values)
    ticks = _ticks(lo, hi)
    left, right, top, row_h = 330, 20, 30, 18
    plot_w = width - left - right
    height = top + row_h * len(rows) + 30
    a, b = math.log10(ticks[0]), math.log10(ticks[-1])
    span = (b - a) or 1.0

    def x(v: float) -> float:
        return left + (math.log10(max(v, ticks[0])) - a) / span * plot_w

    esc = _html.escape
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11" role="img" '
             f'aria-label="Per-sample EXPLAIN ANALYZE executor times">']
    for t in ticks:
        parts.append(f'<line x1="{x(t):.1f}" y1="{top - 8}" x2="{x(t):.1f}" y2="{height - 24}" stroke="#ddd"/>')
        parts.append(f'<text x="{x(t):.1f}" y="{height - 10}" text-anchor="middle" fill="#555">{esc(_tick_label(t))}</text>')
    parts.append(f'<text x="{left}" y="14" fill="#333">executor time per sample (log scale); '
                 f'| p50, ¦ p95; ● remediated, ○ natural</text>')
    for i, (shape, d, spelling, m) in enumerate(rows):
        y = top + i * row_h + row_h / 2
        if i % 2 == 0:
            parts.append(f'<rect x="0" y="{y - row_h / 2:.1f}" width="{width}" height="{row_h}" fill="#f6f8fa"/>')
        label = f"{shape} · {DIALECT_LABEL[d]}" + (" (natural)" if spelling == "natural" else "")
        parts.append(f'<text x="{left - 8}" y="{y + 4:.1f}" text-anchor="end" fill="#222">{esc(label)}</text>')
        color = _COLORS[d]
        for k, v in enumerate(m["samples_ms"], start=1):
            fill = color if spelling == "remediated" else "none"
            parts.append(f'<circle cx="{x(v):.1f}" cy="{y:.1f}" r="3.5" fill="{fill}" stroke="{color}" '
                         f'fill-opacity="0.6"><title>{esc(label)}: sample {k} = {v:g} ms</title></circle>')
        if m.get("p50_ms"):
            parts.append(f'<line x1="{x(m["p50_ms"]):.1f}" y1="{y - 7:.1f}" x2="{x(m["p50_ms"]):.1f}" '
                         f'y2="{y + 7:.1f}" stroke="#000" stroke-width="2"><title>p50 {m["p50_ms"]:g} ms</title></line>')
        if m.get("p95_ms"):
            parts.append(f'<line x1="{x(m["p95_ms"]):.1f}" y1="{y - 7:.1f}" x2="{x(m["p95_ms"]):.1f}" '
                         f'y2="{y + 7:.1f}" stroke="#000" stroke-dasharray="2,2"><title>p95 {m["p95_ms"]:g} ms</title></line>')
    parts.append("</svg>")
    return "\n".join(parts)


def _html_table(headers: list[str], rows: list[list[str]], align: str) -> str:
    esc = _html.escape

    def td(tag: str, text: str, i: int) -> str:
        style = ' style="text-align:right"' if align[i:i + 1] == "r" else ""
        return f"<{tag}{style}>{esc(str(text))}</{tag}>"
    head = "<tr>" + "".join(td("th", h, i) for i, h in enumerate(headers)) + "</tr>"
    body = "\n".join("<tr>" + "".join(td("td", c, i) for i, c in enumerate(row)) + "</tr>" for row in rows)
    return f"<table>\n<thead>{head}</thead>\n<tbody>\n{body}\n</tbody>\n</table>"


def html(doc: dict, source: Path | None = None, title: str | None = None) -> str:
    """A self-contained HTML page: the same tables as :func:`markdown` and the per-sample chart."""
    esc = _html.escape
    title = title or "dbbench explain report"
    intro = [ln for ln in _intro(doc) if ln]
    parts = ["<!doctype html>", '<html lang="en"><head><meta charset="utf-8">', f"<title>{esc(title)}</title>",
             "<style>body{font-family:sans-serif;max-width:1100px;margin:2em auto;color:#222}"
             "table{border-collapse:collapse;margin:1em 0}th,td{border:1px solid #ccc;padding:4px 8px;font-size:13px}"
             "th{background:#f0f3f6}pre{background:#f6f8fa;padding:8px;overflow-x:auto;font-size:12px}"
             ".fail{color:#b00020;font-weight:bold}</style>", "</head><body>", f"<h1>{esc(title)}</h1>"]
    parts += [f"<p>{esc(ln).replace('`', '')}</p>" for ln in intro]
    parts.append("<h2>Query shapes</h2>")
    parts.append(_html_table(*seed_rows(doc)))
    if has_remediation(doc):
        parts.append("<h2>Remediated plans</h2>")
        parts.append(_html_table(*remediation_rows_table(doc)))
    parts.append("<h2>Per-sample timings</h2>")
    parts.append(samples_svg(doc))
    if any(not r["ok"] for r in doc["results"]):
        parts.append('<h2 class="fail">Failed assertions</h2>')
        parts.append("<pre>" + esc("\n".join(failures(doc))) + "</pre>")
    if source is not None:
        digest = hashlib.sha256(Path(source).read_bytes()).hexdigest()
        parts.append(f"<p>Source: {esc(Path(source).name)} (SHA-256 <code>{digest}</code>)</p>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"
