"""Nearest-rank percentiles: the ⌈q·n⌉-th smallest sample (n = 7: p50 = 4th, p95 = 7th).

One implementation for both tools, :func:`verdict.stats.nearest_rank`; this name stays for the
modules that import it from here."""

from __future__ import annotations

from verdict.stats import nearest_rank

__all__ = ["nearest_rank"]
