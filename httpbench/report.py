"""httpbench's output, for every command: the result tables (summary with ratios, per-target detail,
per-round, open loop, self-control), the optional sections' tables (real-client rounds, the
profiles' own: Alpine preflight, Hugging Face cold fill and clients), the JSON writer, JUnit and the
GitHub step summary. Measuring modules never format; everything here renders the result document."""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tabulate import tabulate

from httpbench.model import finite_or_none


def _f(value: float | None, digits: int = 2) -> str:
    return "—" if value is None else f"{value:,.{digits}f}"


def _ms(value: float | None, grouped: bool = False) -> str:
    """Milliseconds with three decimals (``grouped``: with thousands separators)."""
    if value is None:
        return "—"
    return f"{value:,.3f} ms" if grouped else f"{value:.3f} ms"


def _x(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}x"


def _rt(r: dict[str, Any]) -> str:
    vals = [r.get(k) for k in ("p50_ms", "p95_ms", "p99_ms", "max_ms")]
    return " / ".join("—" if v is None else f"{v:.3f}" for v in vals)


def tables(doc: dict[str, Any], markdown: bool = False) -> str:
    fmt = "github" if markdown else "simple"
    cfg = doc["config"]
    names = [t["name"] for t in cfg["targets"]]
    base = cfg["baseline"]
    out: list[str] = []
    head = "## " if markdown else ""

    cands = names[1:]
    cand_label = cands[0] if len(cands) == 1 else "candidate"
    if doc.get("paired") is not None:
        out += _paired_summary(doc, fmt, head, base, cand_label)
    else:
        rows = []
        for sc in cfg["scenarios"]:
            summ = doc["summaries"][sc["name"]]
            for cand, cmp in doc["comparisons"][sc["name"]].items():
                rt = cmp["ratios"]
                rows.append(
                    [
                        sc["name"],
                        _f(summ[base]["rps"]),
                        _f(summ[cand]["rps"]),
                        _x(rt["throughput"]),
                        _ms(summ[base]["p95_ms"]),
                        _ms(summ[cand]["p95_ms"]),
                        _x(rt["p95"]),
                        "pass" if cmp["passed"] else "FAIL",
                    ]
                )
        out.append(f"{head}Summary ({cand_label} / {base}, median of {cfg['rounds']} rounds)")
        out.append(
            tabulate(
                rows,
                headers=[
                    "Scenario",
                    f"{base} req/s",
                    f"{cand_label} req/s",
                    "Throughput ratio",
                    f"{base} p95",
                    f"{cand_label} p95",
                    "p95 ratio",
                    "Gate",
                ],
                tablefmt=fmt,
                disable_numparse=True,
                colalign=("left",) + ("right",) * 7,
            )
        )

    rows = []
    for sc in cfg["scenarios"]:
        for name in names:
            s = doc["summaries"][sc["name"]][name]
            flag = " (client-bound)" if s["client_bound"] else ""
            rows.append(
                [
                    sc["name"],
                    name + flag,
                    _f(s["rps"]),
                    _f(s["mibps"]),
                    _ms(s["wall_ms"]),
                    _ms(s["p50_ms"]),
                    _ms(s["p95_ms"]),
                    _ms(s["p99_ms"]),
                    _ms(s["max_ms"]),
                    _ms(s["connect_p50_ms"]),
                    f"{s['failures']}/{s['requests']}",
                ]
            )
    out.append("")
    out.append(f"{head}Response-time detail (medians of per-round statistics; connect time is outside RT)")
    out.append(
        tabulate(
            rows,
            headers=[
                "Scenario",
                "Target",
                "req/s",
                "MiB/s",
                "wall",
                "p50 RT",
                "p95 RT",
                "p99 RT",
                "max RT",
                "connect p50",
                "failed",
            ],
            tablefmt=fmt,
            disable_numparse=True,
            colalign=("left", "left") + ("right",) * 9,
        )
    )

    if doc.get("paired") is None:
        out += _per_round(doc, fmt, head, names)
    else:
        out += _self_control(doc, fmt, head)

    if cfg.get("mode") == "open":
        out += _open_loop(doc, fmt, head, names)

    for title, headers, rows in extra_tables(doc):
        out.append("")
        out.append(f"{head}{title}")
        out.append(tabulate(rows, headers=headers, tablefmt=fmt, disable_numparse=True))

    out.append("")
    out += _footer(doc)
    return "\n".join(out)


def _per_round(doc: dict[str, Any], fmt: str, head: str, names: list[str]) -> list[str]:
    cfg = doc["config"]
    out: list[str] = []
    rows = []
    by_key = {(r["scenario"], r["round"], r["target"]): r for r in doc["rounds"]}
    for sc in cfg["scenarios"]:
        for rnd in range(1, cfg["rounds"] + 1):
            row = [sc["name"], str(rnd)]
            order = None
            for name in names:
                r = by_key.get((sc["name"], rnd, name))
                if r is None:
                    row += ["—", "—"]
                    continue
                order = r["order"]
                fail = f" ({r['failures']} failed)" if r["failures"] else ""
                row += [_f(r["rps"]) + fail, _rt(r)]
            row.insert(2, " → ".join(order or []))
            rows.append(row)
    headers = ["Scenario", "Round", "Order"]
    for name in names:
        headers += [f"{name} req/s", f"{name} p50/p95/p99/max ms"]
    out.append("")
    out.append(f"{head}Per-round throughput and RT")
    out.append(
        tabulate(
            rows,
            headers=headers,
            tablefmt=fmt,
            disable_numparse=True,
            colalign=("left", "right", "left") + ("right",) * (2 * len(names)),
        )
    )
    return out


def _open_loop(doc: dict[str, Any], fmt: str, head: str, names: list[str]) -> list[str]:
    cfg = doc["config"]
    out: list[str] = []
    rows = []
    for sc in cfg["scenarios"]:
        for name in names:
            s = doc["summaries"][sc["name"]][name]
            rows.append(
                [
                    sc["name"],
                    name,
                    _ms(s["p50_ms"]),
                    _ms(s["p95_ms"]),
                    _ms(s["p99_ms"]),
                    _ms(s.get("service_p50_ms")),
                    _ms(s.get("service_p95_ms")),
                    _ms(s.get("service_p99_ms")),
                ]
            )
    out.append("")
    out.append(f"{head}Open loop at {cfg['rate']:g} req/s: corrected (from intended send) vs service time")
    out.append(
        tabulate(
            rows,
            headers=["Scenario", "Target", "p50", "p95", "p99", "service p50", "service p95", "service p99"],
            tablefmt=fmt,
            disable_numparse=True,
        )
    )
    return out


def _footer(doc: dict[str, Any]) -> list[str]:
    out: list[str] = []
    totals = doc["totals"]
    out.append(
        f"Timed requests: {totals['timed_requests']:,}, ok {totals['ok']:,}, failed {totals['failures']:,}."
    )
    if doc["client_bound"]:
        out.append(
            "Client-bound (client CPU >= "
            f"{doc['environment']['client_bound_cpu_threshold']:.0%} of wall; the target may be faster "
            f"than measured): " + "; ".join(doc["client_bound"])
        )
    for note in (doc.get("profile") or {}).get("notes", []):
        out.append(f"Note: {note}")
    if doc["gate_failures"]:
        out.append("Gate failures:")
        out += [f"- {g}" for g in doc["gate_failures"]]
    else:
        out.append("gate_failures: none")
    if doc.get("inconclusive"):
        out.append("Inconclusive:")
        out += [f"- {g}" for g in doc["inconclusive"]]
    if doc.get("verdict"):
        out.append(
            f"Verdict: {doc['verdict']}"
            + (f" ({_VERDICT_WORDS[doc['verdict']]})" if doc["verdict"] in _VERDICT_WORDS else "")
        )
    return out


_VERDICT_WORDS = {
    "pass": "every gate's interval lies within its threshold",
    "fail": "a gate's interval lies wholly past its threshold, or requests failed",
    "inconclusive": "the noise is larger than a gate's margin at this budget",
}


def _iv(d: dict[str, Any] | None) -> str:
    if d is None or d.get("estimate") is None:
        return "—"
    return f"{d['estimate']:.3f}x [{d['low']:.3f}, {d['high']:.3f}]"


def _by_metric(decisions: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {d["metric"]: d for d in decisions}


def _paired_summary(doc: dict[str, Any], fmt: str, head: str, base: str, cand_label: str) -> list[str]:
    cfg = doc["config"]
    plan = cfg.get("paired") or {}
    rows = []
    for sc in cfg["scenarios"]:
        summ = doc["summaries"][sc["name"]]
        rec = doc["paired"][sc["name"]]
        for cand, cmp in doc["comparisons"][sc["name"]].items():
            d = _by_metric(cmp.get("decisions", []))
            verdict = cmp["verdict"]
            rows.append(
                [
                    sc["name"],
                    _f(summ[base]["rps"]),
                    _f(summ[cand]["rps"]),
                    _iv(d.get("throughput")),
                    _ms(summ[base]["p95_ms"]),
                    _ms(summ[cand]["p95_ms"]),
                    _iv(d.get("p95")),
                    f"{rec['pairs']} × {rec['requests_per_round']:,}",
                    verdict.upper() if verdict == "fail" else verdict,
                ]
            )
    conf = 1 - plan.get("look_alpha", 0.05)
    title = (
        f"{head}Summary ({cand_label} / {base}: typical ratio of paired rounds [{conf:.1%} interval]; "
        "req/s and p95 are medians of rounds)"
    )
    return [
        title,
        tabulate(
            rows,
            headers=[
                "Scenario",
                f"{base} req/s",
                f"{cand_label} req/s",
                "Throughput ratio",
                f"{base} p95",
                f"{cand_label} p95",
                "p95 ratio",
                "Pairs × requests",
                "Verdict",
            ],
            tablefmt=fmt,
            disable_numparse=True,
            colalign=("left",) + ("right",) * 7 + ("left",),
        ),
    ]


def _self_control(doc: dict[str, Any], fmt: str, head: str) -> list[str]:
    rows = []
    for name, rec in doc["paired"].items():
        aa = rec.get("self_control")
        if not aa:
            continue
        cand = next(iter(aa["candidates"].values()))
        d = _by_metric(cand["decisions"])
        rows.append([name, _iv(d.get("throughput")), _iv(d.get("p95")), str(aa["pairs"]), cand["verdict"]])
    if not rows:
        return []
    base = doc["config"]["baseline"]
    return [
        "",
        f"{head}Self-control ({base} against itself: the noise floor of each gate on this machine)",
        tabulate(
            rows,
            headers=["Scenario", "Throughput ratio", "p95 ratio", "Pairs", "A/A verdict"],
            tablefmt=fmt,
            disable_numparse=True,
        ),
    ]


Table = tuple[str, list[str], list[list[str]]]  # (title, headers, rows)


def extra_tables(doc: dict[str, Any]) -> list[Table]:
    """Tables of the optional sections: the profile's own, then the real-client rounds."""
    out = []
    if doc.get("profile"):
        out += profile_tables(doc["profile"]["name"], doc["profile"])
    if doc.get("clients"):
        out += client_tables(doc["clients"], [t["name"] for t in doc["config"]["targets"]])
    return out


def client_tables(section: dict[str, Any], names: list[str]) -> list[Table]:
    """The real-client table: per scenario and target, each round, p50, p95, p95 ratio."""
    rounds = section["rounds"]
    headers = (
        ["Client", "Target"]
        + [f"Round {i}" for i in range(1, rounds + 1)]
        + ["p50", "p95", "p95 ratio", "pair ratio", "verdict"]
    )
    rows = []
    fmt = lambda v: _ms(v, grouped=True)
    for label, sc in section["scenarios"].items():
        for name in names:
            by_round = {s["round"]: s for s in sc["samples"] if s["target"] == name}
            cells = [
                fmt(by_round[i]["ms"]) if i in by_round and by_round[i]["ok"] else "failed"
                for i in range(1, rounds + 1)
            ]
            cmp = sc["comparisons"].get(name)
            d = (cmp or {}).get("decision") or {}
            rows.append(
                [
                    label,
                    name,
                    *cells,
                    fmt(sc["summary"][name]["p50_ms"]),
                    fmt(sc["summary"][name]["p95_ms"]),
                    "—" if cmp is None else _x(cmp["p95_ratio"]),
                    _iv(d),
                    "—" if cmp is None else cmp.get("verdict", "pass" if cmp["passed"] else "fail"),
                ]
            )
    return [("Real client RT (one subprocess per sample, alternating order)", headers, rows)]


# -- the profiles' sections -------------------------------------------------------------------------


def profile_tables(name: str, section: dict[str, Any]) -> list[Table]:
    """Extra result tables rendered from a profile's JSON section (none for an unknown profile)."""
    render = PROFILE_TABLES.get(name)
    return render(section) if render else []


def alpine_tables(section: dict[str, Any]) -> list[Table]:
    """``--profile alpine``: the preflight per target (index records, signature, key, package identity)."""
    pre = section.get("preflight") or {}
    targets = pre.get("targets") or {}
    if not targets:
        return []
    rows = []
    for name, t in targets.items():
        ident = t.get("package_identity") or "-"
        if t.get("package_identity_matches") is False:
            ident += " (not the package's)"
        rows.append(
            [
                name,
                str(t.get("records", "-")),
                f"{t.get('signature_algorithm', '-')} ({t.get('signature_digest', '?')})",
                t.get("key_name") or "-",
                ident,
                "yes" if t.get("verified") else "no",
            ]
        )
    return [
        ("Alpine preflight", ["Target", "Index records", "Signature", "Key", "Package C:", "Verified"], rows)
    ]


def huggingface_tables(section: dict[str, Any]) -> list[Table]:
    """``--profile huggingface``: the cold fill and the real huggingface_hub client rounds."""
    phases = section.get("phases") or {}
    out = []
    if phases.get("cold_fill"):
        out.append(_cold_table(phases["cold_fill"]))
    if phases.get("clients"):
        out.append(_hf_client_table(phases["clients"]))
    return out


def _cold_table(cold: dict[str, Any]) -> Table:
    headers = [
        "Target",
        "Samples",
        "Median total",
        "Median TTFB",
        "Median MiB/s",
        "Throughput ratio",
        "Upstream per repo (resolve/body)",
        f"{cold['concurrency']} concurrent misses",
    ]
    rows = []
    for name, s in cold["summary"].items():
        ups = (
            "—"
            if s["upstream_body_per_repo"] is None
            else f"{s['upstream_resolve_per_repo']}/{s['upstream_body_per_repo']}"
        )
        c = s["concurrent"]
        conc = (
            "—"
            if c is None
            else (
                f"{c['ok']}/{c['requests']} ok, max {_ms(c['max_ms'], grouped=True)}"
                + (
                    ""
                    if c["upstream_body"] is None
                    else f", upstream {c['upstream_resolve']}/{c['upstream_body']}"
                )
            )
        )
        cmp = cold["comparisons"].get(name)
        rows.append(
            [
                name,
                f"{s['ok']}/{s['samples']}",
                _ms(s["median_total_ms"], grouped=True),
                _ms(s["median_ttfb_ms"], grouped=True),
                _f(s["median_mibps"]),
                "—" if cmp is None else _x(cmp["throughput_ratio"]),
                ups,
                conc,
            ]
        )
    return ("Cold fill (fresh repository per sample, alternating order)", headers, rows)


def _hf_client_table(clients: dict[str, Any]) -> Table:
    headers = ["Client", "Target", "Timed", "OK", "p50", "p95", "p95 ratio", "Process p50"]
    rows = []
    for client, data in clients["clients"].items():
        for name, s in data["summary"].items():
            cmp = data["comparisons"].get(name)
            rows.append(
                [
                    client,
                    name,
                    s["timed"],
                    f"{s['ok']}/{s['samples']}",
                    _ms(s["p50_ms"], grouped=True),
                    _ms(s["p95_ms"], grouped=True),
                    "—" if cmp is None else _x(cmp["p95_ratio"]),
                    _ms(s["process_p50_ms"], grouped=True),
                ]
            )
    return ("Hugging Face client (one subprocess per sample, fresh HF_HOME)", headers, rows)


PROFILE_TABLES: dict[str, Callable[[dict[str, Any]], list[Table]]] = {
    "alpine": alpine_tables,
    "huggingface": huggingface_tables,
}


def dumps(doc: dict[str, Any]) -> str:
    return json.dumps(finite_or_none(doc), indent=2, allow_nan=False) + "\n"


def write_json(doc: dict[str, Any], path: str) -> None:
    """Atomic write (temp file + rename) so a half-written result never replaces a good one."""
    target = Path(path)
    text = dumps(doc)
    directory = target.parent if str(target.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(prefix=".httpbench-", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes 0600; a result file is an ordinary file
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


# -- verdict exports (JUnit, GitHub step summary) ------------------------------------------------
def verdict_cases(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """Every judged comparison as a test case: name, verdict, and its messages (the gate-failure /
    inconclusive strings that belong to it). HTTP scenarios, real-client rounds, cold fill."""
    messages = [("fail", m) for m in doc["gate_failures"]] + [
        ("inconclusive", m) for m in doc.get("inconclusive", [])
    ]
    cases = []

    def add(group: str, name: str, verdict: str, prefix: str, candidate: str) -> None:
        mine = [m for _, m in messages if m.startswith(prefix) and (candidate in m or " had " in m)]
        cases.append({"group": group, "name": name, "verdict": verdict, "messages": mine})

    def verdict_of(cmp: dict[str, Any]) -> str:
        return cmp.get("verdict", "pass" if cmp["passed"] else "fail")

    for sc in doc["config"]["scenarios"]:
        for cand, cmp in doc["comparisons"][sc["name"]].items():
            add("http", f"{sc['name']}: {cand}", verdict_of(cmp), f"{sc['name']}: ", cand)
    for label, sc in ((doc.get("clients") or {}).get("scenarios") or {}).items():
        for cand, cmp in sc["comparisons"].items():
            add("client", f"client {label}: {cand}", verdict_of(cmp), f"client {label}: ", cand)
    phases = (doc.get("profile") or {}).get("phases") or {}
    for cand, cmp in ((phases.get("cold_fill") or {}).get("comparisons") or {}).items():
        add("cold", f"cold fill: {cand}", verdict_of(cmp), "cold fill: ", cand)
    for label, sc in ((phases.get("clients") or {}).get("clients") or {}).items():
        for cand, cmp in sc["comparisons"].items():
            add("client", f"client {label}: {cand}", verdict_of(cmp), f"client {label}: ", cand)
    return cases


def junit_xml(doc: dict[str, Any], suite: str = "httpbench.compare") -> str:
    """JUnit XML: one test case per judged comparison; fail is a <failure>, inconclusive a
    <skipped> whose message starts with "inconclusive:", pass carries its evidence in system-out."""
    import xml.etree.ElementTree as ET

    cases = verdict_cases(doc)
    root = ET.Element("testsuites")
    ts = ET.SubElement(
        root,
        "testsuite",
        name=suite,
        tests=str(len(cases)),
        failures=str(sum(c["verdict"] == "fail" for c in cases)),
        errors="0",
        skipped=str(sum(c["verdict"] == "inconclusive" for c in cases)),
    )
    for c in cases:
        case = ET.SubElement(ts, "testcase", classname=f"{suite}.{c['group']}", name=c["name"], time="0")
        text = "; ".join(c["messages"])
        if c["verdict"] == "fail":
            ET.SubElement(
                case, "failure", type="GateFailure", message=text or "gate failed"
            ).text = "\n".join(c["messages"])
        elif c["verdict"] == "inconclusive":
            ET.SubElement(case, "skipped", message=f"inconclusive: {text or 'noise larger than the margin'}")
        else:
            ET.SubElement(case, "system-out").text = "pass"
    return ET.tostring(root, encoding="unicode", xml_declaration=True)


_MARK = {"pass": "✅", "fail": "❌", "inconclusive": "⚠️"}


def github_summary(doc: dict[str, Any]) -> str:
    """Markdown for a GitHub step summary: the verdict headline, then the tables."""
    verdict = doc.get("verdict", "pass")
    counts = {v: sum(c["verdict"] == v for c in verdict_cases(doc)) for v in ("pass", "fail", "inconclusive")}
    head = (
        f"### {_MARK.get(verdict, '')} httpbench compare: {verdict} "
        f"({counts['pass']} pass, {counts['fail']} fail, {counts['inconclusive']} inconclusive)\n\n"
    )
    return head + tables(doc, markdown=True) + "\n"
