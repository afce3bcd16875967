"""Output files both tools write, checked before any work: a path that cannot be written is found
in the first second, not after the whole catalog or every round has run."""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path


def unwritable(path: Path | str) -> str | None:
    """Why ``path`` cannot be written as an output file, or None when it can.

    Checked by opening it for appending (created, then removed again, when new), so a missing
    directory, permissions and a read-only file system are found as the real write would find
    them, also as root. An existing device or pipe is left alone (written as given)."""
    path = Path(path)
    try:
        info = os.stat(path)
    except FileNotFoundError:
        info = None
    except OSError as exc:
        return exc.strerror or str(exc)
    if info is not None:
        if stat.S_ISDIR(info.st_mode):
            return "is a directory"
        if not stat.S_ISREG(info.st_mode):
            return None
    elif not path.parent.is_dir():
        return f"directory {path.parent} does not exist"
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o666)
    except OSError as exc:
        return exc.strerror or str(exc)
    os.close(fd)
    if info is None:
        with contextlib.suppress(OSError):
            path.unlink()
    return None
