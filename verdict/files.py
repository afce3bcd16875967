"""The one atomic file writer both tools use: a file is either the old one or the new one, never
half written, and the write never lands anywhere but at the name given."""

from __future__ import annotations

import contextlib
import os
import secrets
from pathlib import Path


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_atomic(
    path: Path | str, data: str | bytes, mode: int | None = None, *, owner: tuple[int, int] | None = None
) -> None:
    """Write ``data`` (text as UTF-8) to ``path`` atomically.

    A temporary file is created exclusively (``O_EXCL | O_NOFOLLOW``: a planted file or symbolic
    link at any name is never written through) in the same directory, written, fsynced and renamed
    over ``path`` (a rename replaces a link at the name, never its target). ``mode`` is the new
    file's permission bits (default: an ordinary file, 0666 less the umask); ``owner`` is
    ``(uid, gid)`` to give it before it appears."""
    target = Path(path)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    tmp = target.with_name(f".{target.name}.{secrets.token_hex(6)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        with os.fdopen(fd, "wb") as fh:
            os.fchmod(fh.fileno(), 0o666 & ~_umask() if mode is None else mode)
            if owner is not None:
                os.fchown(fh.fileno(), *owner)
            fh.write(payload)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
