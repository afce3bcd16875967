"""The JSON result: strict JSON (non-finite numbers as null), written with the one output writer."""

from __future__ import annotations

import json
from typing import Any

from httpbench.model import finite_or_none
from verdict.files import write_output


def dumps(doc: dict[str, Any]) -> str:
    return json.dumps(finite_or_none(doc), indent=2, allow_nan=False) + "\n"


def write_json(doc: dict[str, Any], path: str) -> None:
    """Write ``doc`` to ``path`` with :func:`verdict.files.write_output`: an ordinary file is replaced
    atomically (a half-written result never replaces a good one); a device, FIFO or symbolic link is
    written through, never replaced. A failed write is an :class:`OSError` naming ``path``."""
    write_output(path, dumps(doc))
