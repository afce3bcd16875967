"""The formatters every table of httpbench's output shares: numbers, milliseconds, ratios, intervals."""

from __future__ import annotations

from typing import Any

Table = tuple[str, list[str], list[list[str]]]  # (title, headers, rows)


def _f(value: float | None, digits: int = 2) -> str:
    return "—" if value is None else f"{value:,.{digits}f}"


def _ms(value: float | None, grouped: bool = False) -> str:
    """Milliseconds with three decimals (``grouped``: with thousands separators)."""
    if value is None:
        return "—"
    return f"{value:,.3f} ms" if grouped else f"{value:.3f} ms"


def _x(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}x"


def _rt(r: dict[str, Any]) -> str:
    vals = [r.get(k) for k in ("p50_ms", "p95_ms", "p99_ms", "max_ms")]
    return " / ".join("—" if v is None else f"{v:.3f}" for v in vals)


def _iv(d: dict[str, Any] | None) -> str:
    if d is None or d.get("estimate") is None:
        return "—"
    return f"{d['estimate']:.3f}x [{d['low']:.3f}, {d['high']:.3f}]"


def _by_metric(decisions: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {d["metric"]: d for d in decisions}
