"""Draws a generator makes from its own ``random.Random``: ranks from a Zipf law in O(1) memory,
normal values clamped to a range, and a permutation of a range that is a pure function of the
position (unique values without remembering any)."""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from math import gcd


class Zipf:
    """Ranks 1..n with P(k) ∝ 1 / k**s (s > 0), by rejection-inversion (Hörmann and Derflinger
    1996): a few float operations per draw, no table, so n may be the size of any table."""

    def __init__(self, n: int, s: float) -> None:
        if n < 1 or s <= 0:
            raise ValueError("a Zipf law needs n >= 1 and s > 0")
        self.n, self.s = n, s
        self._x1 = self._h_integral(1.5) - 1.0
        self._hn = self._h_integral(n + 0.5)
        self._cut = 2.0 - self._h_integral_inverse(self._h_integral(2.5) - self._h(2.0))

    def _h(self, x: float) -> float:
        return math.exp(-self.s * math.log(x))

    def _h_integral(self, x: float) -> float:
        log_x = math.log(x)
        return _helper2((1.0 - self.s) * log_x) * log_x

    def _h_integral_inverse(self, x: float) -> float:
        t = max(x * (1.0 - self.s), -1.0)
        return math.exp(_helper1(t) * x)

    def draw(self, rnd: Callable[[], float]) -> int:
        """One rank; ``rnd`` is a ``random.Random().random``."""
        while True:
            u = self._hn + rnd() * (self._x1 - self._hn)
            x = self._h_integral_inverse(u)
            k = min(max(int(x + 0.5), 1), self.n)
            if k - x <= self._cut or u >= self._h_integral(k + 0.5) - self._h(k):
                return k


def _helper1(x: float) -> float:
    return math.log1p(x) / x if abs(x) > 1e-8 else 1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x))


def _helper2(x: float) -> float:
    return math.expm1(x) / x if abs(x) > 1e-8 else 1.0 + x * 0.5 * (1.0 + x / 3.0 * (1.0 + 0.25 * x))


def offsets(rng: random.Random, n: int, span: int, dist: str, s: float, sigma: float | None) -> list[int]:
    """``n`` offsets in ``[0, span)``: ``uniform``, ``normal`` (centred, ``sigma`` of the span, or a
    sixth of it; clamped), or ``zipf`` (offset 0 the most frequent)."""
    rnd = rng.random
    if dist == "uniform":
        return [int(rnd() * span) for _ in range(n)]
    if dist == "zipf":
        z = Zipf(span, s)
        return [z.draw(rnd) - 1 for _ in range(n)]
    mid, sd, top = (span - 1) / 2.0, sigma if sigma is not None else span / 6.0, span - 1
    gauss = rng.gauss
    return [min(max(round(gauss(mid, sd)), 0), top) for _ in range(n)]


class Permutation:
    """Position i -> a distinct offset in ``[0, span)`` for every i < span: ``(a·i + c) mod span``
    with ``a`` coprime to ``span``, drawn from ``rng`` once. Unique values, nothing remembered."""

    def __init__(self, rng: random.Random, span: int) -> None:
        self.span = span
        a = rng.randrange(span // 3 or 1, max(2 * span // 3, 2))
        while gcd(a, span) != 1:
            a += 1
        self.a, self.c = a, rng.randrange(span)

    def at(self, rows) -> list[int]:
        a, c, span = self.a, self.c, self.span
        return [(a * i + c) % span for i in rows]
