"""Verdict exports: every judged comparison as a JUnit test case, and the GitHub step summary."""

from __future__ import annotations

from typing import Any

from httpbench.report.tables import tables
from verdict.junit import Case, junit


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
    cases = []
    for c in verdict_cases(doc):
        case = Case(classname=f"{suite}.{c['group']}", name=c["name"])
        text = "; ".join(c["messages"])
        if c["verdict"] == "fail":
            case.failure, case.failure_type = text or "gate failed", "GateFailure"
            case.detail = "\n".join(c["messages"])
        elif c["verdict"] == "inconclusive":
            case.skipped = f"inconclusive: {text or 'noise larger than the margin'}"
        else:
            case.system_out = "pass"
        cases.append(case)
    return junit(suite, cases)


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
