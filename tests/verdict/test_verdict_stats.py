"""The shared verdict package: exact distribution-free intervals, the three-way decision, the atomic
file writer and the console entry point."""

from __future__ import annotations

import math
import os
import random
import stat

import pytest

from verdict import FAIL, INCONCLUSIVE, PASS, combine, decide, exit_code
from verdict.stats import (
    Interval,
    chances_to_decide,
    min_pairs,
    nearest_rank,
    paired_ratio_interval,
    rank_sum_interval,
    ratio_interval,
    signed_rank_interval,
)


def test_nearest_rank_matches_the_seeds_ranks():
    values = list(range(1, 251))
    assert [nearest_rank(values, q) for q in (0.5, 0.95, 0.99, 1.0)] == [125, 238, 248, 250]
    assert nearest_rank([5, 1, 7, 3, 2, 6, 4], 0.95) == 7  # p95 of 7 samples is the slowest
    assert nearest_rank([], 0.5) is None


def test_signed_rank_interval_exact_small_case():
    # 8 pairs: P(T+ <= 3) = 5/256 <= 0.025 < P(T+ <= 4), so the 95 % interval runs from the 4th
    # smallest to the 4th largest of the 36 Walsh averages
    iv = signed_rank_interval([1, 2, 3, 4, 5, 6, 7, 8], 0.05)
    assert iv.estimate == 4.5
    assert (iv.low, iv.high) == (2.0, 7.0)
    assert iv.confidence == pytest.approx(1 - 2 * 5 / 256)


def test_too_few_pairs_give_no_interval():
    assert min_pairs(0.05) == 6
    assert signed_rank_interval([0.1] * 5, 0.05) is None
    assert signed_rank_interval([0.1] * 6, 0.05) is not None


def test_coverage_is_at_least_nominal_on_skewed_noise():
    rng = random.Random(7)
    for n in (9, 30):
        covered = 0
        for _ in range(400):
            d = [rng.expovariate(1) - rng.expovariate(1) for _ in range(n)]  # symmetric, heavy-ish
            iv = signed_rank_interval(d, 0.05)
            covered += iv.low <= 0 <= iv.high
        assert covered / 400 >= 0.92
    hits = sum(
        rank_sum_interval(
            [rng.lognormvariate(0, 1) for _ in range(7)], [rng.lognormvariate(0, 1) for _ in range(9)]
        ).low
        <= 0
        for _ in range(300)
    )
    assert hits / 300 >= 0.9


def test_ratio_intervals_on_the_log_scale():
    iv = paired_ratio_interval([10.0] * 9, [20.0] * 9)
    assert iv.estimate == pytest.approx(2.0) and iv.low == pytest.approx(2.0)
    two = ratio_interval([1.0, 1.1, 0.9, 1.0, 1.05, 0.95, 1.0], [2.0, 2.2, 1.8, 2.0, 2.1, 1.9, 2.0])
    assert 1.8 < two.low <= two.estimate <= two.high < 2.3


def test_chances_to_decide_follow_the_distance_from_the_threshold():
    alpha = 0.05 / 6
    near = Interval(0.887, 0.838, 0.939, 41, 0.99, "x")  # 0.887x against a 0.90x throughput gate
    to_fail, to_pass = chances_to_decide(near, 0.90, "below", 62, alpha)
    assert to_fail < 0.05 and to_pass < 0.001
    early = Interval(0.887, 0.80, 0.98, 8, 0.99, "x")  # the same estimate after 8 pairs: may move
    assert sum(chances_to_decide(early, 0.90, "below", 62, alpha)) > 0.2
    far = Interval(0.99, 0.80, 1.22, 8, 0.99, "x")  # an A/A-like interval, the gate 0.80x
    to_fail, to_pass = chances_to_decide(far, 0.80, "below", 62, alpha)
    assert to_pass > 0.8 and to_fail < 0.001
    # the same distance on the other side of a p95 gate ("above" is worse) swaps the two chances
    mirrored = Interval(1 / 0.99, 1 / 1.22, 1 / 0.80, 8, 0.99, "x")
    assert chances_to_decide(mirrored, 1 / 0.80, "above", 62, alpha) == pytest.approx(
        chances_to_decide(far, 0.80, "below", 62, alpha)
    )
    assert chances_to_decide(near, 0.90, "below", 41, alpha) == (0.0, 0.0)  # no pairs to come


def _stopped_early(true_ratio: float, runs: int = 300) -> tuple[int, int, int]:
    """Simulated paired looks (log-normal noise) at the paired method's pair counts against a
    0.90x gate: (runs decided at 62 pairs, runs the futility rule stops, stopped runs that 62
    pairs would have decided)."""
    rng = random.Random(12)
    alpha, gate = 0.05 / 6, 0.90
    decidable = stopped = lost = 0
    for _ in range(runs):
        ratios = [math.exp(math.log(true_ratio) + rng.gauss(0, 0.08)) for _ in range(62)]
        last = paired_ratio_interval([1.0] * 62, ratios, alpha)
        assert last is not None
        decided = not last.low < gate < last.high
        decidable += decided
        for n in (8, 12, 18, 27, 41):
            now = paired_ratio_interval([1.0] * n, ratios[:n], alpha)
            assert now is not None
            if not now.low < gate < now.high:
                break
            if sum(chances_to_decide(now, gate, "below", 62, alpha)) < 0.05:
                stopped += 1
                lost += decided
                break
    return decidable, stopped, lost


def test_the_futility_rule_stops_the_undecidable_and_keeps_real_regressions():
    decidable, stopped, lost = _stopped_early(0.891)  # 1 % past the gate: 62 pairs rarely decide
    assert decidable < 30 and stopped > 150 and lost <= 3
    decidable, stopped, lost = _stopped_early(0.86)  # 4.4 % past it: a regression 62 pairs find
    assert decidable > 250 and lost <= 0.05 * decidable


def test_decisions_three_ways():
    iv = Interval(1.0, 0.95, 1.05, 9, 0.99, "test")
    assert decide("p95", iv, 1.25, "above").verdict == PASS
    assert decide("p95", Interval(1.5, 1.3, 1.7, 9, 0.99, "t"), 1.25, "above").verdict == FAIL
    assert decide("p95", Interval(1.2, 1.1, 1.4, 9, 0.99, "t"), 1.25, "above").verdict == INCONCLUSIVE
    assert decide("tp", Interval(0.7, 0.6, 0.79, 9, 0.99, "t"), 0.8, "below").verdict == FAIL
    assert decide("tp", None, 0.8, "below").verdict == INCONCLUSIVE
    assert combine([PASS, INCONCLUSIVE, PASS]) == INCONCLUSIVE
    assert combine([INCONCLUSIVE, FAIL]) == FAIL and combine([]) == PASS
    assert [exit_code(v) for v in (PASS, FAIL, INCONCLUSIVE)] == [0, 1, 3]
    assert not math.isnan(decide("tp", iv, 0.8, "below").estimate)


# -- verdict.files / verdict.entry ---------------------------------------------------------------
def test_write_atomic_replaces_the_name_never_a_link_target(tmp_path):
    from verdict.files import write_atomic

    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    target = tmp_path / "out.json"
    target.symlink_to(victim)
    write_atomic(target, "new\n", 0o600)
    assert victim.read_text() == "precious\n" and not target.is_symlink()
    assert target.read_text() == "new\n" and stat.S_IMODE(target.stat().st_mode) == 0o600
    write_atomic(target, b"\x00bytes")
    umask = os.umask(0)
    os.umask(umask)
    assert target.read_bytes() == b"\x00bytes" and stat.S_IMODE(target.stat().st_mode) == 0o666 & ~umask
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.json", "victim"]  # no temporary left


def test_write_atomic_leaves_the_old_file_when_the_write_fails(tmp_path, monkeypatch):
    from verdict import files

    target = tmp_path / "out.txt"
    target.write_text("old")

    def no_space(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(files.os, "fsync", no_space)
    with pytest.raises(OSError):
        files.write_atomic(target, "new")
    assert target.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["out.txt"]


def test_an_interrupt_while_the_command_line_is_imported_is_one_line(monkeypatch, capsys):
    from verdict import entry

    def interrupted(name):
        raise KeyboardInterrupt

    monkeypatch.setattr(entry.importlib, "import_module", interrupted)
    with pytest.raises(SystemExit) as info:
        entry.run("dbbench", "dbbench.cli")
    assert info.value.code == 130 and capsys.readouterr().err == "dbbench: error: interrupted\n"
