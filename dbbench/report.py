"""Rendering explain results: the seed-style tables (terminal via tabulate, or Markdown) and JSON.

Renderers only read :class:`dbbench.explain.ShapeResult` objects / the JSON document; they never
measure anything (exporters kept apart from the measurement model).
"""

from __future__ import annotations

from tabulate import tabulate

from dbbench.explain import Measurement, ShapeResult
from dbbench.results import envelope

LABEL = {"postgresql": "PostgreSQL", "mysql": "MySQL"}


def fmt_ms(value: float | None) -> str:
    if value is None:
        return "—"
    if value < 0.01:
        return f"{value:.6f}"
    if value < 1:
        return f"{value:.3f}"
    return f"{value:.3f}" if value < 100 else f"{value:,.1f}"


def _pair(m: Measurement | None) -> str:
    if m is None:
        return "—"
    if m.timeout:
        return "timeout"
    return f"{fmt_ms(m.p50)} / {fmt_ms(m.p95)} ms"


def shape_table(results: list[ShapeResult], tablefmt: str = "simple") -> str:
    dialects = [d for d in ("mysql", "postgresql") if any(r.dialect == d for r in results)]
    by = {(r.shape, r.dialect): r for r in results}
    shapes = list(dict.fromkeys(r.shape for r in results))
    rows = []
    for shape in shapes:
        rs = [by.get((shape, d)) for d in dialects]
        first = next(r for r in rs if r)
        verdicts = []
        for d, r in zip(dialects, rs):
            if r is None:
                continue
            mark = "ok" if r.ok else "FAIL"
            verdicts.append(f"{LABEL[d]} {mark}: {r.verdict.actual if not r.ok else r.verdict.expected}")
        rows.append([shape, first.cardinality, *[_pair(r.remediated) if r else "—" for r in rs],
                     "; ".join(verdicts)])
    headers = ["Query shape", "Cardinality", *[f"{LABEL[d]} p50 / p95" for d in dialects], "Access path"]
    return tabulate(rows, headers=headers, tablefmt=tablefmt, disable_numparse=True)


def remediation_rows(results: list[ShapeResult]) -> list[dict]:
    out = []
    for r in results:
        if r.natural is None:
            continue
        before, after = r.natural.p50, r.remediated.p50
        speedup = (before / after) if (before and after) else None
        out.append({"dialect": r.dialect, "shape": r.shape, "change": r.natural_label or "natural to remediated",
                    "before_p50_ms": before, "final_p50_ms": after, "natural_timeout": r.natural.timeout,
                    "speedup": speedup})
    return out


def remediation_table(results: list[ShapeResult], tablefmt: str = "simple") -> str:
    rows = []
    for item in remediation_rows(results):
        before = "timeout" if item["natural_timeout"] else f"{fmt_ms(item['before_p50_ms'])} ms"
        sp = item["speedup"]
        change = "—" if sp is None else (f"{sp:,.1f}x faster" if sp >= 1 else f"{1 / sp:,.1f}x slower")
        rows.append([f"{LABEL[item['dialect']]} {item['shape']}: {item['change']}", before,
                     f"{fmt_ms(item['final_p50_ms'])} ms", change])
    return tabulate(rows, headers=["Remediated plan", "Before", "Final p50", "Change"], tablefmt=tablefmt,
                    disable_numparse=True, colalign=("left", "right", "right", "right"))


def failures(results: list[ShapeResult]) -> list[str]:
    lines = []
    for r in results:
        if r.ok:
            continue
        lines.append(f"FAIL {r.shape} [{LABEL[r.dialect]}]: expected {r.verdict.expected}; "
                     f"actual: {r.verdict.actual}; " + "; ".join(r.verdict.problems))
        if r.remediated._tree is not None:
            lines.append(r.remediated._tree.render(1))
    return lines


def explain_document(targets, results: list[ShapeResult], metas: dict, config: dict) -> dict:
    doc = envelope("explain", targets)
    doc["config"] = config
    doc["datasets"] = {d: {"name": m.get("dataset"), "seed": m.get("seed"),
                           "fingerprints": {k.split(".", 1)[1]: v for k, v in m.items() if k.startswith("fingerprint.")}}
                       for d, m in metas.items()}
    doc["results"] = []
    for r in results:
        entry = {"shape": r.shape, "dialect": r.dialect, "cardinality": r.cardinality,
                 "expect_rows": r.expect_rows, "params": r.params, "ok": r.ok, "cascade": r.cascade,
                 "verdict": None if r.verdict is None else {"expected": r.verdict.expected, "actual": r.verdict.actual,
                                                            "problems": r.verdict.problems}}
        for m in (r.remediated, r.natural):
            if m is None:
                continue
            entry[m.spelling] = {"sql": " ".join(m.sql.split()), "samples_ms": m.samples_ms, "p50_ms": m.p50,
                                 "p95_ms": m.p95, "rows": m.rows, "timeout": m.timeout, "plan": m.plan,
                                 "raw_plan": m.raw_plan}
        doc["results"].append(entry)
    doc["remediation"] = remediation_rows(results)
    doc["failures"] = [f"{r.shape} [{r.dialect}]" for r in results if not r.ok]
    return doc


def junit_xml(results: list[ShapeResult], suite: str = "dbbench") -> str:
    """JUnit XML: one test case per shape and dialect; a failed assertion is a <failure> with the plan."""
    import xml.etree.ElementTree as ET

    failed = [r for r in results if not r.ok]
    root = ET.Element("testsuites")
    ts = ET.SubElement(root, "testsuite", name=suite, tests=str(len(results)), failures=str(len(failed)),
                       errors="0", skipped="0")
    for r in results:
        seconds = sum(r.remediated.samples_ms) / 1000 if r.remediated.samples_ms else 0.0
        case = ET.SubElement(ts, "testcase", classname=f"{suite}.{r.dialect}", name=r.shape, time=f"{seconds:.6f}")
        if not r.ok:
            failure = ET.SubElement(case, "failure", message="; ".join(r.verdict.problems),
                                    type="PlanAssertion")
            body = [f"expected: {r.verdict.expected}", f"actual: {r.verdict.actual}"]
            if r.remediated._tree is not None:
                body.append(r.remediated._tree.render())
            failure.text = "\n".join(body)
        else:
            out = ET.SubElement(case, "system-out")
            out.text = f"{r.verdict.expected}; p50 {fmt_ms(r.remediated.p50)} ms, p95 {fmt_ms(r.remediated.p95)} ms"
    return ET.tostring(root, encoding="unicode", xml_declaration=True)
