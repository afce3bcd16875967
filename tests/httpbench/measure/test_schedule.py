"""Round order: the target order rotates every round and every scenario."""

from __future__ import annotations

from httpbench.measure.schedule import round_order


def test_target_order_alternates_between_rounds():
    names = ["nexus", "kkrepo"]
    assert [round_order(names, 0, r) for r in range(4)] == [
        ["nexus", "kkrepo"],
        ["kkrepo", "nexus"],
        ["nexus", "kkrepo"],
        ["kkrepo", "nexus"],
    ]
    assert round_order(names, 1, 0) == ["kkrepo", "nexus"]  # next scenario starts the other way
    three = [round_order(["a", "b", "c"], 0, r)[0] for r in range(3)]
    assert three == ["a", "b", "c"]  # everyone goes first once
