"""Nearest-rank percentiles: the ⌈q·n⌉-th smallest sample (n = 7: p50 = 4th, p95 = 7th)."""

from __future__ import annotations

import math
from collections.abc import Sequence


def nearest_rank(samples: Sequence[float], q: float) -> float | None:
    if not samples:
        return None
    if not 0 < q <= 1:
        raise ValueError("q must be in (0, 1]")
    ordered = sorted(samples)
    return ordered[max(1, math.ceil(q * len(ordered))) - 1]
