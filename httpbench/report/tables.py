"""The result tables: summary with ratios (seed gates or paired intervals), per-target detail,
per-round, open loop, self-control, the real-client rounds, the footer (totals, notes, verdict)."""

from __future__ import annotations

from typing import Any

from tabulate import tabulate

from httpbench.report.format import Table, _by_metric, _f, _iv, _ms, _rt, _x
from httpbench.report.profiles import profile_tables


def tables(doc: dict[str, Any], markdown: bool = False) -> str:
    fmt = "github" if markdown else "simple"
    cfg = doc["config"]
    names = [t["name"] for t in cfg["targets"]]
    base = cfg["baseline"]
    head = "## " if markdown else ""
    cands = names[1:]
    cand_label = cands[0] if len(cands) == 1 else "candidate"
    paired = doc.get("paired") is not None
    out: list[str] = []
    if paired:
        out += _paired_summary(doc, fmt, head, base, cand_label)
    else:
        out += _seed_summary(doc, fmt, head, base, cand_label)
    out += _detail(doc, fmt, head, names)
    out += _self_control(doc, fmt, head) if paired else _per_round(doc, fmt, head, names)
    if cfg.get("mode") == "open":
        out += _open_loop(doc, fmt, head, names)
    for title, headers, rows in extra_tables(doc):
        out.append("")
        out.append(f"{head}{title}")
        out.append(tabulate(rows, headers=headers, tablefmt=fmt, disable_numparse=True))
    out.append("")
    out += _footer(doc)
    return "\n".join(out)


def _seed_summary(doc: dict[str, Any], fmt: str, head: str, base: str, cand_label: str) -> list[str]:
    """The seed method's summary: medians of the rounds, their ratios and the point-estimate gates."""
    cfg = doc["config"]
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
    return [
        f"{head}Summary ({cand_label} / {base}, median of {cfg['rounds']} rounds)",
        tabulate(
            rows,
            headers=_summary_headers(base, cand_label, "Gate"),
            tablefmt=fmt,
            disable_numparse=True,
            colalign=("left",) + ("right",) * 7,
        ),
    ]


def _detail(doc: dict[str, Any], fmt: str, head: str, names: list[str]) -> list[str]:
    """Per scenario and target: the medians of the per-round statistics."""
    rows = []
    for sc in doc["config"]["scenarios"]:
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
    headers = ["Scenario", "Target", "req/s", "MiB/s", "wall", "p50 RT", "p95 RT", "p99 RT", "max RT"]
    return [
        "",
        f"{head}Response-time detail (medians of per-round statistics; connect time is outside RT)",
        tabulate(
            rows,
            headers=[*headers, "connect p50", "failed"],
            tablefmt=fmt,
            disable_numparse=True,
            colalign=("left", "left") + ("right",) * 9,
        ),
    ]


def _summary_headers(base: str, cand_label: str, *tail: str) -> list[str]:
    """The summary tables' columns: baseline and candidate req/s and p95 with their ratios, then `tail`."""
    metrics = [f"{base} req/s", f"{cand_label} req/s", "Throughput ratio", f"{base} p95", f"{cand_label} p95"]
    return ["Scenario", *metrics, "p95 ratio", *tail]


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
        f"{head}Summary ({cand_label} / {base}: typical ratio of paired rounds [one-sided {conf:.1%} bounds]; "
        "req/s and p95 are medians of rounds)"
    )
    return [
        title,
        tabulate(
            rows,
            headers=_summary_headers(base, cand_label, "Pairs × requests", "Verdict"),
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
