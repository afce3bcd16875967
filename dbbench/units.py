"""How dbbench writes its numbers, the same in every table, reason and message: milliseconds and
factors. A base module: the stages (a diff's reasons) and the renderers both use it."""

from __future__ import annotations


def fmt_ms(value: float | None) -> str:
    """Milliseconds: three places (up to six below 0.01, as many as the value holds: MySQL's
    ``61e-6`` is ``0.000061``, PostgreSQL's ``0.007`` stays ``0.007``), then thousands separators
    from 100."""
    if value is None:
        return "—"
    if value < 0.01:
        whole, _, places = f"{value:.6f}".partition(".")
        return f"{whole}.{places.rstrip('0').ljust(3, '0')}"
    if value < 1:
        return f"{value:.3f}"
    return f"{value:.3f}" if value < 100 else f"{value:,.1f}"


def fmt_factor(factor: float) -> str:
    return f"{factor:,.0f}x" if factor >= 100 else f"{factor:.1f}x"


def size_label(n: int) -> str:
    """A size of the growth ladder as its namespaces and tables name it: 10k, 1m, 2500."""
    if n % 1_000_000 == 0:
        return f"{n // 1_000_000}m"
    if n % 1_000 == 0:
        return f"{n // 1_000}k"
    return str(n)
