"""Summaries (the median of each per-round statistic) and the seed gates on their ratios."""

from __future__ import annotations

from httpbench.measure import gates
from httpbench.model import Gate, RoundResult, Scenario


def _round(target: str, n: int, rps: float, p95: float | None, failures: int = 0) -> RoundResult:
    return RoundResult(
        scenario="s",
        target=target,
        round=n,
        position=1,
        order=[target],
        mode="closed",
        requests=10,
        ok=10 - failures,
        failures=failures,
        failure_kinds={"length": failures} if failures else {},
        warmups=0,
        warmup_failures=0,
        concurrency=1,
        connections=1,
        connect_ms={"p50": 0.1, "max": 0.1, "count": 1},
        reconnects=0,
        body_bytes=0,
        wall_ms=1.0,
        rps=rps,
        mibps=0.0,
        p50_ms=p95 and p95 / 2,
        p95_ms=p95,
        p99_ms=p95,
        max_ms=p95,
        ttfb_p50_ms=None,
        ttfb_p95_ms=None,
        client_cpu_s=0.0,
        client_cpu_util=0.5,
        client_bound=False,
    )


def test_summary_is_the_median_of_each_per_round_statistic_not_pooled():
    rounds = [_round("a", 1, 100.0, 9.0), _round("a", 2, 300.0, 1.0), _round("a", 3, 200.0, 5.0)]
    s = gates.summarize(rounds)
    assert s["rps"] == 200.0 and s["p95_ms"] == 5.0  # each field's own median
    rounds = [_round("a", 1, 100.0, 9.0), _round("a", 2, 300.0, 2.0)]
    assert gates.summarize(rounds)["rps"] == 200.0  # even count: mean of the middle two
    # a round with no samples (None) does not count; all None stays None
    assert gates.summarize([_round("a", 1, 0.0, None), _round("a", 2, 10.0, 4.0)])["p95_ms"] == 4.0
    assert gates.summarize([_round("a", 1, 0.0, None)])["p95_ms"] is None


def test_gates_both_ways_and_failures_fail_the_gate():
    sc = Scenario("idx", "/i", klass="metadata")
    gate = Gate(0.80, 1.25)
    base = gates.summarize([_round("a", 1, 1000.0, 2.0)])
    good = gates.summarize([_round("b", 1, 900.0, 2.4)])
    slow = gates.summarize([_round("b", 1, 700.0, 2.6)])
    ok = gates.evaluate(sc, "a", "b", {"a": base, "b": good}, gates.compare(base, good), gate)
    assert ok == []
    bad = gates.evaluate(sc, "a", "b", {"a": base, "b": slow}, gates.compare(base, slow), gate)
    assert len(bad) == 2 and "throughput 0.700x" in bad[0] and "p95 1.300x" in bad[1]
    broken = gates.summarize([_round("b", 1, 1000.0, 2.0, failures=3)])
    fails = gates.evaluate(sc, "a", "b", {"a": base, "b": broken}, gates.compare(base, broken), gate)
    assert any("3 failed" in f for f in fails)
    zero = gates.summarize([_round("a", 1, 0.0, None)])
    fails = gates.evaluate(sc, "a", "b", {"a": zero, "b": good}, gates.compare(zero, good), gate)
    assert any("cannot be computed" in f for f in fails)
