"""Verdicts both tools share: distribution-free intervals and the three-way decision.

* :mod:`verdict.stats` -- nearest-rank percentiles, the Hodges-Lehmann estimate with its exact
  Wilcoxon signed-rank interval (paired samples) and Mann-Whitney interval (two independent
  samples).
* :mod:`verdict.decide` -- ``pass`` / ``fail`` / ``inconclusive`` from an interval and a
  threshold, the exit codes (0 / 1 / 3; 2 is bad input), and how verdicts combine.
* :mod:`verdict.files` -- the one atomic file writer; :mod:`verdict.outputs` -- output paths
  checked before any work; :mod:`verdict.entry` -- the console entry point of both commands.
"""

from verdict.decide import EXIT_CODES, FAIL, INCONCLUSIVE, PASS, Decision, combine, decide, exit_code
from verdict.stats import Interval, nearest_rank, rank_sum_interval, signed_rank_interval

__all__ = [
    "EXIT_CODES",
    "FAIL",
    "INCONCLUSIVE",
    "PASS",
    "Decision",
    "Interval",
    "combine",
    "decide",
    "exit_code",
    "nearest_rank",
    "rank_sum_interval",
    "signed_rank_interval",
]
