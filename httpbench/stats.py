"""Nearest-rank percentiles, medians of per-round statistics, and safe ratios."""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Sequence


def nearest_rank(sorted_values: Sequence[float], q: float) -> float | None:
    """The ceil(q*n)-th smallest value (1-based), i.e. index ceil(q*n)-1; None when empty.

    For n = 250: p50 is the 125th, p95 the 238th, p99 the 248th smallest; q = 1 gives the max.
    """
    n = len(sorted_values)
    if n == 0:
        return None
    if not 0 < q <= 1:
        raise ValueError("q must be in (0, 1]")
    rank = math.ceil(q * n - 1e-9)   # guard float noise such as 0.95 * 100 = 95.00000000000001
    return sorted_values[max(rank, 1) - 1]


def percentiles(values: Iterable[float], qs: Sequence[float] = (0.5, 0.95, 0.99, 1.0)) -> list[float | None]:
    ordered = sorted(values)
    return [nearest_rank(ordered, q) for q in qs]


def median_or_none(values: Iterable[float | None]) -> float | None:
    """Median of the values that exist (None values, e.g. rounds with no samples, are skipped)."""
    present = [v for v in values if v is not None and math.isfinite(v)]
    if not present:
        return None
    return float(statistics.median(present))


def ratio(candidate: float | None, baseline: float | None) -> float | None:
    """candidate / baseline, or None when either is missing or the baseline is zero."""
    if candidate is None or baseline is None or baseline == 0:
        return None
    value = candidate / baseline
    return value if math.isfinite(value) else None
