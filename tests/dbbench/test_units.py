"""How dbbench writes milliseconds (issue 32): as many places as the server's value holds, never
trailing zeros it did not measure (PostgreSQL's 0.007 ms was printed 0.007000)."""

from __future__ import annotations

import pytest

from dbbench.units import fmt_ms


@pytest.mark.parametrize(
    "value,shown",
    [
        (0.007, "0.007"),  # PostgreSQL reports to the microsecond
        (0.000061, "0.000061"),  # MySQL 9.7's 61e-6
        (0.0001, "0.0001"),
        (0.0095, "0.0095"),
        (0.0, "0.000"),
        (0.01, "0.010"),
        (0.5, "0.500"),
        (99.9994, "99.999"),
        (1234.5, "1,234.5"),
        (None, "—"),
    ],
)
def test_milliseconds_hold_the_places_the_value_has(value, shown):
    assert fmt_ms(value) == shown
