"""Three verdicts from an interval and a threshold, and the exit codes that carry them.

A threshold splits the values of a metric into *acceptable* and *worse*. With the interval of
the metric (what the data allow the true value to be):

* ``fail``  -- the whole interval lies on the worse side: a real regression;
* ``pass``  -- the whole interval lies on the acceptable side;
* ``inconclusive`` -- the interval straddles the threshold: the noise is larger than the margin
  at the samples taken (or there were too few samples to form an interval at all).

Exit codes: 0 pass, 1 fail, 3 inconclusive; 2 stays bad input / environment.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from verdict.stats import INTERVAL_KEYS, Interval

PASS, FAIL, INCONCLUSIVE = "pass", "fail", "inconclusive"
VERDICTS = (PASS, FAIL, INCONCLUSIVE)
EXIT_CODES = {PASS: 0, FAIL: 1, INCONCLUSIVE: 3}
_SEVERITY = {PASS: 0, INCONCLUSIVE: 1, FAIL: 2}


@dataclass(frozen=True)
class Decision:
    """One metric judged against one threshold, with the evidence."""

    metric: str
    verdict: str
    threshold: float
    worse: str  # "above" (e.g. a p95 ratio) or "below" (e.g. a throughput ratio)
    interval: Interval | None
    reason: str

    @property
    def estimate(self) -> float | None:
        return self.interval.estimate if self.interval else None

    def to_json(self) -> dict:
        interval = self.interval.to_json() if self.interval else dict.fromkeys(INTERVAL_KEYS)
        return {
            "metric": self.metric,
            "verdict": self.verdict,
            "threshold": self.threshold,
            "worse": self.worse,
            **interval,
            "reason": self.reason,
        }


def decide(
    metric: str,
    interval: Interval | None,
    threshold: float,
    worse: str,
    too_few: str = "too few samples for an interval",
) -> Decision:
    """The verdict of ``interval`` against ``threshold``; ``worse`` is the side that regresses."""
    if worse not in ("above", "below"):
        raise ValueError("worse must be 'above' or 'below'")
    if interval is None:
        return Decision(metric, INCONCLUSIVE, threshold, worse, None, too_few)
    lo, hi = interval.low, interval.high
    if worse == "above":
        bad, good = lo > threshold, hi <= threshold
        side = "≤"
    else:
        bad, good = hi < threshold, lo >= threshold
        side = "≥"
    span = f"[{lo:.3g}, {hi:.3g}]"
    if bad:
        return Decision(
            metric,
            FAIL,
            threshold,
            worse,
            interval,
            f"the whole interval {span} is past the threshold {side} {threshold:g}",
        )
    if good:
        return Decision(
            metric,
            PASS,
            threshold,
            worse,
            interval,
            f"the whole interval {span} is within {side} {threshold:g}",
        )
    return Decision(
        metric,
        INCONCLUSIVE,
        threshold,
        worse,
        interval,
        f"the interval {span} straddles {threshold:g}: noise larger than the margin",
    )


def combine(verdicts: Iterable[str]) -> str:
    """fail if any failed, else inconclusive if any was, else pass (an empty set passes)."""
    worst = PASS
    for v in verdicts:
        if _SEVERITY[v] > _SEVERITY[worst]:
            worst = v
    return worst


def exit_code(verdict: str) -> int:
    return EXIT_CODES[verdict]
