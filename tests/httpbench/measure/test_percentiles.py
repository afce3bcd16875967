"""Pure measurement arithmetic: nearest rank, medians of rounds, ratios, order, JSON hygiene."""

from __future__ import annotations

import json
import math

import pytest

from httpbench import report
from httpbench.measure import gates
from httpbench.measure.percentiles import median_or_none, nearest_rank, percentiles, ratio
from httpbench.measure.schedule import round_order
from httpbench.model import Gate, RoundResult, Scenario


def test_nearest_rank_is_the_ceil_q_n_th_smallest():
    values = [float(i) for i in range(1, 251)]  # 1..250: the k-th smallest is k
    assert nearest_rank(values, 0.50) == 125
    assert nearest_rank(values, 0.95) == 238
    assert nearest_rank(values, 0.99) == 248
    assert nearest_rank(values, 1.0) == 250
    hundred = [float(i) for i in range(1, 101)]
    assert nearest_rank(hundred, 0.95) == 95  # 0.95 * 100 float noise must not give 96
    assert nearest_rank(hundred, 0.5) == 50
    assert nearest_rank([7.0], 0.99) == 7.0
    assert nearest_rank([1.0, 2.0], 0.5) == 1.0  # ceil(1.0) = 1st, not an interpolation
    assert percentiles([5.0, 1.0, 3.0, 2.0, 4.0]) == [3.0, 5.0, 5.0, 5.0]


def test_empty_samples_have_no_percentiles():
    assert nearest_rank([], 0.5) is None
    assert percentiles([]) == [None, None, None, None]


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
    assert median_or_none([]) is None


def test_ratios_with_a_zero_or_missing_baseline_are_none():
    assert ratio(5.0, 0.0) is None and ratio(None, 1.0) is None and ratio(1.0, None) is None
    assert ratio(3.0, 2.0) == 1.5


def test_target_order_alternates_between_rounds():
    names = ["nexus", "kkrepo"]
    assert [round_order(names, 0, r) for r in range(4)] == [
        ["nexus", "kkrepo"],
        ["kkrepo", "nexus"],
        ["nexus", "kkrepo"],
        ["kkrepo", "nexus"],
    ]
    assert round_order(names, 1, 0) == ["kkrepo", "nexus"]  # next scenario starts the other way
    three = [round_order(["a", "b", "c"], 0, r)[0] for r in range(3)]
    assert three == ["a", "b", "c"]  # everyone goes first once


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


def test_json_never_contains_infinity_or_nan():
    text = report.dumps({"a": math.inf, "b": [math.nan, 1.5], "c": {"d": -math.inf}})
    assert json.loads(text, parse_constant=pytest.fail) == {"a": None, "b": [None, 1.5], "c": {"d": None}}
