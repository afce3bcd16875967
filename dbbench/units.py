"""How dbbench writes its numbers, the same in every table, reason and message: milliseconds and
factors. A base module: the stages (a diff's reasons) and the renderers both use it."""

from __future__ import annotations


def fmt_ms(value: float | None) -> str:
    """Milliseconds: six places below 0.01, three below 100, then thousands separators."""
    if value is None:
        return "—"
    if value < 0.01:
        return f"{value:.6f}"
    if value < 1:
        return f"{value:.3f}"
    return f"{value:.3f}" if value < 100 else f"{value:,.1f}"


def fmt_factor(factor: float) -> str:
    return f"{factor:,.0f}x" if factor >= 100 else f"{factor:.1f}x"
