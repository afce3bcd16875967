"""The command-line pieces both tools share (click types): a number option is a finite number in its range.

click's own ``FloatRange`` lets ``nan`` through every bound (no comparison with NaN is true) and
``inf`` through an open one; :class:`Float` refuses both, so ``--timeout nan`` is one line at
parse time, not a traceback or a silently infinite wait later.
"""

from __future__ import annotations

import math
from typing import Any

import click


class Float(click.FloatRange):
    """A finite float in ``[min, max]`` (``min_open`` / ``max_open`` exclude a bound)."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = click.FLOAT.convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number.", param, ctx)
        return super().convert(number, param, ctx)


def port() -> click.IntRange:
    """A TCP port number, 1 to 65535."""
    return click.IntRange(1, 65535)
