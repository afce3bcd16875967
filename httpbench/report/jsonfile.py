"""The JSON result: strict JSON (non-finite numbers as null), written atomically."""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from httpbench.model import finite_or_none


def dumps(doc: dict[str, Any]) -> str:
    return json.dumps(finite_or_none(doc), indent=2, allow_nan=False) + "\n"


def write_json(doc: dict[str, Any], path: str) -> None:
    """Atomic write (temp file + rename) so a half-written result never replaces a good one."""
    target = Path(path)
    text = dumps(doc)
    directory = target.parent if str(target.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(prefix=".httpbench-", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes 0600; a result file is an ordinary file
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
