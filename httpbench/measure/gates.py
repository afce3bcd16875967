"""Summaries (median of each per-round statistic), candidate/baseline ratios, and gates."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from httpbench.measure.percentiles import median_or_none, ratio
from httpbench.model import SUMMARY_FIELDS, Gate, RoundResult, Scenario
from verdict import Decision, decide
from verdict.stats import Interval, min_pairs, paired_ratio_interval

PAIRED_MIN_SAMPLES = 8  # default pairs of real-client / cold-fill samples under --method paired


def gate_interval(
    base: Sequence[float | None], cand: Sequence[float | None], alpha: float
) -> Interval | None:
    """The typical candidate/baseline ratio of paired samples with bounds for a gate's verdict at
    error ``alpha``: each end is a one-sided (1 - alpha) bound, since a verdict reads only the end
    facing the gate (``fail``: the near end past it; ``pass``: the far end within it), and the true
    ratio lies on one side of the gate, so only one of the two wrong verdicts is possible. As one
    interval it covers 1 - 2 alpha."""
    return paired_ratio_interval(base, cand, 2 * alpha)


def fewest_pairs(alpha: float) -> int:
    """The fewest pairs that can decide a gate at error ``alpha``: all n on one side of the gate
    by chance alone (2^-n) must be at most ``alpha``. 5 at 0.05; 7 at 0.05 / 6."""
    return min_pairs(2 * alpha)


def add_failures(failures: list[str], new: list[str]) -> None:
    """Append gate-failure strings to ``failures``, each listed once, in order of discovery."""
    for failure in new:
        if failure not in failures:
            failures.append(failure)


def summarize(rounds: list[RoundResult]) -> dict[str, Any]:
    """Field-by-field median over rounds (not pooled): the median req/s and the median p95 may
    come from different rounds. Failures are summed; client_bound is true if any round was."""
    out: dict[str, Any] = {f: median_or_none(getattr(r, f) for r in rounds) for f in SUMMARY_FIELDS}
    out["rounds"] = len(rounds)
    out["requests"] = sum(r.requests for r in rounds)
    out["ok"] = sum(r.ok for r in rounds)
    out["failures"] = sum(r.failures for r in rounds)
    kinds: dict[str, int] = {}
    for r in rounds:
        for k, v in r.failure_kinds.items():
            kinds[k] = kinds.get(k, 0) + v
    out["failure_kinds"] = kinds
    out["client_bound"] = any(r.client_bound for r in rounds)
    out["connect_p50_ms"] = median_or_none(r.connect_ms.get("p50") for r in rounds)
    if any(r.mode == "open" for r in rounds):
        for f in ("service_p50_ms", "service_p95_ms", "service_p99_ms"):
            out[f] = median_or_none(getattr(r, f) for r in rounds)
    return out


def compare(base: dict[str, Any], cand: dict[str, Any]) -> dict[str, float | None]:
    return {
        "throughput": ratio(cand["rps"], base["rps"]),
        "mibps": ratio(cand["mibps"], base["mibps"]),
        "p50": ratio(cand["p50_ms"], base["p50_ms"]),
        "p95": ratio(cand["p95_ms"], base["p95_ms"]),
        "p99": ratio(cand["p99_ms"], base["p99_ms"]),
    }


def evaluate(
    scenario: Scenario,
    baseline: str,
    candidate: str,
    summaries: dict[str, dict[str, Any]],
    ratios: dict[str, float | None],
    gate: Gate,
) -> list[str]:
    """Gate-failure strings for one candidate on one scenario (empty list: passed)."""
    fails = []
    where = f"{scenario.name}: {candidate}"
    for name in (baseline, candidate):
        s = summaries[name]
        if s["failures"]:
            kinds = ", ".join(f"{k} {v}" for k, v in sorted(s["failure_kinds"].items()))
            fails.append(
                f"{scenario.name}: {name} had {s['failures']} failed of {s['requests']} "
                f"timed requests ({kinds})"
            )
    tp, p95 = ratios["throughput"], ratios["p95"]
    if tp is None:
        fails.append(
            f"{where} throughput ratio cannot be computed (baseline {summaries[baseline]['rps']}, "
            f"candidate {summaries[candidate]['rps']} req/s)"
        )
    elif tp < gate.min_throughput_ratio:
        fails.append(
            f"{where} throughput {tp:.3f}x {baseline} < {gate.min_throughput_ratio:.2f}x "
            f"({scenario.klass} gate)"
        )
    if p95 is None:
        fails.append(f"{where} p95 ratio cannot be computed (no successful samples)")
    elif p95 > gate.max_p95_ratio:
        fails.append(f"{where} p95 {p95:.3f}x {baseline} > {gate.max_p95_ratio:.2f}x ({scenario.klass} gate)")
    return fails


def paired_messages(
    scenario: Scenario, baseline: str, candidate: str, decided: dict[str, Any]
) -> tuple[list[str], list[str]]:
    """Gate-failure and inconclusive strings of one candidate on one scenario (paired method),
    each with its evidence: estimate, interval, pairs, confidence, threshold."""
    fails: list[str] = []
    unsure: list[str] = []
    where = f"{scenario.name}: {candidate}"
    for d in decided["decisions"]:
        if d["metric"] == "correctness":
            fails.append(f"{scenario.name}: {d['reason']}")
            continue
        sign = "≥" if d["worse"] == "below" else "≤"
        gate = f"{sign} {d['threshold']:.2f}x ({scenario.klass} gate)"
        if d["estimate"] is None:
            if d["verdict"] == "inconclusive":
                unsure.append(f"{where} {d['metric']}: {d['reason']}")
            continue
        evidence = (
            f"{d['metric']} {d['estimate']:.3f}x {baseline} [{d['low']:.3f}, {d['high']:.3f}] "
            f"({d['n']} pairs, {d['confidence']:.1%} interval)"
        )
        if d["verdict"] == "fail":
            fails.append(f"{where} {evidence} is past {gate}")
        elif d["verdict"] == "inconclusive" and d["reason"].startswith("is past the gate"):
            unsure.append(f"{where} {evidence} {d['reason'].replace('the gate', gate, 1)}")
        elif d["verdict"] == "inconclusive":
            unsure.append(f"{where} {evidence} straddles {gate}: noise larger than the margin")
    note = decided.get("self_control_note")
    if note:
        unsure.append(f"{where}: {note}")
    return fails, unsure


def paired_samples(
    metric: str,
    base: list[float | None],
    cand: list[float | None],
    threshold: float,
    worse: str,
    alpha: float,
) -> Decision:
    """One decision on samples taken in pairs (real-client rounds, cold fills): the typical
    candidate/baseline ratio of each pair with its exact signed-rank interval, one look at alpha."""
    pairs = [(b, c) for b, c in zip(base, cand) if b and c]
    iv = gate_interval([b for b, _ in pairs], [c for _, c in pairs], alpha)
    return decide(metric, iv, threshold, worse, too_few("sample pairs", len(pairs), alpha))


def too_few(what: str, n: int, alpha: float) -> str:
    """Why a gate has no interval: fewer ``what`` with a value than a verdict at ``alpha`` needs."""
    return f"too few {what} with a value to decide at alpha {alpha:.3g} ({n}; at least {fewest_pairs(alpha)})"


def decision_message(where: str, d: Decision, gate_name: str) -> str:
    """The evidence of a decided or undecided gate, for gate_failures / inconclusive."""
    sign = "≥" if d.worse == "below" else "≤"
    gate = f"{sign} {d.threshold:.2f}x ({gate_name} gate)"
    iv = d.interval
    if iv is None:
        return f"{where} {d.metric}: {d.reason}"
    evidence = (
        f"{d.metric} {iv.estimate:.3f}x [{iv.low:.3f}, {iv.high:.3f}] ({iv.n} pairs, "
        f"{iv.confidence:.1%} interval)"
    )
    if d.verdict == "fail":
        return f"{where} {evidence} is past {gate}"
    if d.verdict == "pass":
        return f"{where} {evidence} is within {gate}"
    return f"{where} {evidence} straddles {gate}: noise larger than the margin"
