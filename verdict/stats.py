"""Distribution-free estimates and intervals (no normality assumed, exact for small samples).

* :func:`signed_rank_interval` -- paired samples (baseline and candidate measured side by side):
  the Hodges-Lehmann estimate of the centre of the paired differences (the median of the Walsh
  averages) and its exact Wilcoxon signed-rank confidence interval. It assumes only that the
  differences are independent and symmetric about their centre -- which an A/A comparison with
  alternating order guarantees by construction.
* :func:`rank_sum_interval` -- two independent samples (a baseline's timings and a new run's): the
  Hodges-Lehmann shift estimate (median of all pairwise differences) and its exact Mann-Whitney
  interval.
* ``*_ratio_interval`` -- the same on the log scale, returned as ratios (candidate / baseline):
  right for times and rates, whose noise is multiplicative.

Every interval is ``None`` when the samples are too few to reach the requested confidence at all
(e.g. fewer than 6 pairs at 95 %): the caller says so instead of deciding.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from statistics import NormalDist

_EXACT_SIGNED_MAX_N = 100  # exact null distribution up to here, normal approximation above
_EXACT_RANK_SUM_MAX_MN = 10_000


def nearest_rank(values: Sequence[float], q: float) -> float | None:
    """The ⌈q·n⌉-th smallest value (1-based); ``None`` when empty. n = 7: p50 = 4th, p95 = 7th;
    n = 250: p50 = 125th, p95 = 238th, p99 = 248th; q = 1 is the max."""
    n = len(values)
    if n == 0:
        return None
    if not 0 < q <= 1:
        raise ValueError("q must be in (0, 1]")
    ordered = sorted(values)
    rank = math.ceil(q * n - 1e-9)  # guard float noise such as 0.95 * 100 = 95.00000000000001
    return ordered[max(rank, 1) - 1]


INTERVAL_KEYS = ("estimate", "low", "high", "n", "confidence", "method")  # of Interval.to_json


@dataclass(frozen=True)
class Interval:
    """A point estimate with a confidence interval around it."""

    estimate: float
    low: float
    high: float
    n: int  # pairs (paired) or the smaller sample's size (two samples)
    confidence: float  # the exact coverage reached (at least the requested one)
    method: str

    def map(self, fn) -> Interval:
        return Interval(fn(self.estimate), fn(self.low), fn(self.high), self.n, self.confidence, self.method)

    def to_json(self) -> dict:  # its keys: INTERVAL_KEYS
        return {
            "estimate": self.estimate,
            "low": self.low,
            "high": self.high,
            "n": self.n,
            "confidence": round(self.confidence, 6),
            "method": self.method,
        }


# -- null distributions ----------------------------------------------------------------------------
@lru_cache(maxsize=256)
def _signed_rank_cdf(n: int) -> tuple[float, ...]:
    """P(T+ <= t) for t = 0 .. n(n+1)/2, T+ the Wilcoxon signed-rank statistic of n pairs."""
    top = n * (n + 1) // 2
    counts = [1] + [0] * top  # coefficients of prod (1 + q^i)
    reach = 0
    for i in range(1, n + 1):
        reach += i
        for t in range(reach, i - 1, -1):
            counts[t] += counts[t - i]
    total = 2.0**n
    out, acc = [], 0
    for c in counts:
        acc += c
        out.append(acc / total)
    return tuple(out)


@lru_cache(maxsize=256)
def _rank_sum_cdf(m: int, n: int) -> tuple[float, ...]:
    """P(U <= u) for u = 0 .. m·n, U the Mann-Whitney statistic of samples of sizes m and n
    (coefficients of the Gaussian binomial [m+n choose m]_q)."""
    m, n = min(m, n), max(m, n)
    poly = [1]
    for i in range(1, m + 1):
        # multiply by (1 - q^(n+i)), then divide exactly by (1 - q^i)
        poly = poly + [0] * (n + i)
        for t in range(len(poly) - 1, n + i - 1, -1):
            poly[t] -= poly[t - n - i]
        for t in range(i, len(poly)):
            poly[t] += poly[t - i]
        while len(poly) > 1 and poly[-1] == 0:
            poly.pop()
    total = math.comb(m + n, m)
    out, acc = [], 0
    for c in poly:
        acc += c
        out.append(acc / total)
    return tuple(out)


def _lower_rank(cdf: Sequence[float] | None, count: int, alpha: float, mean: float, sd: float) -> int:
    """The largest k >= 1 with P(stat <= k-1) <= alpha/2, or 0 when none exists."""
    if cdf is not None:
        k = 0
        while k < len(cdf) and cdf[k] <= alpha / 2:
            k += 1
        return k
    z = NormalDist().inv_cdf(1 - alpha / 2)
    k = math.floor(mean - z * sd - 0.5) + 1  # continuity-corrected
    return max(0, min(k, count // 2))


def _coverage(cdf: Sequence[float] | None, k: int, alpha: float) -> float:
    if cdf is not None:
        return 1.0 - 2.0 * cdf[k - 1]
    return 1.0 - alpha


# -- intervals ---------------------------------------------------------------------------------------
def signed_rank_interval(diffs: Sequence[float], alpha: float = 0.05) -> Interval | None:
    """Hodges-Lehmann estimate and exact (1 - alpha) Wilcoxon interval of the centre of ``diffs``."""
    d = [float(x) for x in diffs if x is not None and math.isfinite(x)]
    n = len(d)
    if n == 0:
        return None
    walsh = sorted((d[i] + d[j]) / 2.0 for i in range(n) for j in range(i, n))
    count = len(walsh)
    cdf = _signed_rank_cdf(n) if n <= _EXACT_SIGNED_MAX_N else None
    mean, sd = n * (n + 1) / 4.0, math.sqrt(n * (n + 1) * (2 * n + 1) / 24.0)
    k = _lower_rank(cdf, count, alpha, mean, sd)
    if k < 1:
        return None
    est = _median(walsh)
    return Interval(est, walsh[k - 1], walsh[count - k], n, _coverage(cdf, k, alpha), "wilcoxon signed-rank")


def rank_sum_interval(x: Sequence[float], y: Sequence[float], alpha: float = 0.05) -> Interval | None:
    """Hodges-Lehmann shift (``y`` relative to ``x``: median of y_j - x_i) and its exact
    (1 - alpha) Mann-Whitney interval."""
    xs = [float(v) for v in x if v is not None and math.isfinite(v)]
    ys = [float(v) for v in y if v is not None and math.isfinite(v)]
    m, n = len(xs), len(ys)
    if m == 0 or n == 0:
        return None
    diffs = sorted(b - a for a in xs for b in ys)
    count = len(diffs)
    cdf = _rank_sum_cdf(m, n) if m * n <= _EXACT_RANK_SUM_MAX_MN else None
    mean, sd = m * n / 2.0, math.sqrt(m * n * (m + n + 1) / 12.0)
    k = _lower_rank(cdf, count, alpha, mean, sd)
    if k < 1:
        return None
    return Interval(
        _median(diffs), diffs[k - 1], diffs[count - k], min(m, n), _coverage(cdf, k, alpha), "mann-whitney"
    )


def paired_ratio_interval(
    baseline: Sequence[float | None], candidate: Sequence[float | None], alpha: float = 0.05
) -> Interval | None:
    """Interval of the typical candidate/baseline ratio of paired positive measurements; a pair
    with a missing (None) or non-positive side is left out."""
    logs = [
        math.log(c / b)
        for b, c in zip(baseline, candidate)
        if b is not None and c is not None and b > 0 and c > 0
    ]
    iv = signed_rank_interval(logs, alpha)
    return iv.map(math.exp) if iv else None


def ratio_interval(
    baseline: Sequence[float], candidate: Sequence[float], alpha: float = 0.05
) -> Interval | None:
    """Interval of the typical candidate/baseline ratio of two independent positive samples."""
    lb = [math.log(v) for v in baseline if v is not None and v > 0]
    lc = [math.log(v) for v in candidate if v is not None and v > 0]
    iv = rank_sum_interval(lb, lc, alpha)
    return iv.map(math.exp) if iv else None


def chances_to_decide(
    interval: Interval, threshold: float, worse: str, n_final: int, alpha: float
) -> tuple[float, float]:
    """The chances (to fail, to pass) that a ratio ``interval`` now straddling ``threshold`` lies
    wholly past it or wholly within it after ``n_final`` pairs (the predictive probability, on the
    log scale; a normal approximation is enough for a stopping rule -- the verdict itself stays
    exact). ``worse`` is the side that regresses ("above" or "below").

    The spread per pair comes from the interval's width: half-width = z * sigma / sqrt(n). The
    true ratio is uncertain by ``sigma / sqrt(n)`` around the estimate, and the pairs still to come
    add their own scatter, so at ``n_final`` the estimate ends within
    ``sigma * sqrt((n_final - n) / (n_final * n))`` of where it is now (one standard deviation); it
    decides when it ends more than the final half-width ``z * sigma / sqrt(n_final)`` from the
    threshold. Using the estimate as the truth instead (conditional power) would stop runs whose
    first pairs happened to land near the gate, and miss real regressions.
    """
    n = interval.n
    if n_final <= n:
        return 0.0, 0.0
    z = NormalDist().inv_cdf(1 - alpha / 2)
    sigma = (math.log(interval.high) - math.log(interval.low)) / 2 * math.sqrt(n) / z
    # distance from the threshold towards the good side
    good = math.log(interval.estimate) - math.log(threshold)
    if worse == "above":
        good = -good
    half_final = z * sigma / math.sqrt(n_final)
    move = sigma * math.sqrt((n_final - n) / (n_final * n))
    if move <= 0:
        return float(-good > half_final), float(good > half_final)
    unit = NormalDist()
    return unit.cdf((-good - half_final) / move), unit.cdf((good - half_final) / move)


def min_pairs(alpha: float) -> int:
    """The fewest pairs with which a (1 - alpha) signed-rank interval exists: 2^-n <= alpha/2."""
    return max(1, math.ceil(math.log2(2.0 / alpha) - 1e-12))


def _median(sorted_values: Sequence[float]) -> float:
    n = len(sorted_values)
    mid = n // 2
    return sorted_values[mid] if n % 2 else (sorted_values[mid - 1] + sorted_values[mid]) / 2.0
