"""Round scheduling: the target order of each round (rotated, so no target always runs first)."""

from __future__ import annotations


def round_order(names: list[str], scenario_index: int, round_index: int) -> list[str]:
    """Target order of one round: rotated by (scenario + round), so with two targets it alternates
    every round and the first round of consecutive scenarios starts with a different target."""
    k = (scenario_index + round_index) % len(names)
    return names[k:] + names[:k]
