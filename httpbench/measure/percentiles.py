"""The descriptive numbers of a run: nearest-rank percentiles of samples (verdict's one
``nearest_rank``), medians of per-round statistics, and safe ratios. What they let one conclude
(intervals, decisions) is :mod:`verdict.stats` and :mod:`verdict.decide`."""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Sequence

from verdict.stats import nearest_rank

__all__ = ["median_or_none", "nearest_rank", "percentiles", "ratio"]


def percentiles(values: Iterable[float], qs: Sequence[float] = (0.5, 0.95, 0.99, 1.0)) -> list[float | None]:
    """Nearest-rank percentiles (:func:`verdict.stats.nearest_rank`) of the values, one per ``q``."""
    ordered = sorted(values)  # sorted once: nearest_rank's own sort is then linear
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
