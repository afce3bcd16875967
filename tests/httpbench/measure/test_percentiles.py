"""The descriptive numbers: nearest rank, percentiles, medians of rounds, safe ratios."""

from __future__ import annotations

from httpbench.measure.percentiles import median_or_none, nearest_rank, percentiles, ratio


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


def test_ratios_with_a_zero_or_missing_baseline_are_none():
    assert ratio(5.0, 0.0) is None and ratio(None, 1.0) is None and ratio(1.0, None) is None
    assert ratio(3.0, 2.0) == 1.5


def test_a_median_skips_what_is_missing():
    assert median_or_none([]) is None
    assert median_or_none([None, 3.0, 1.0]) == 2.0
