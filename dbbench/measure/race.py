"""The two-session check of a shape with ``[race]`` (filled in by the race work of issue 36)."""

from __future__ import annotations

from typing import Any


def check(target, admin, conn, shape, params: dict, options) -> dict[str, Any]:
    """Placeholder: not checked yet."""
    return {"holder": shape.race["holder"] if shape.race else None, "ok": True, "checked": False}
