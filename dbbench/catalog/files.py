"""Reading a catalog's own files: every entry file and annotated SQL file is read whole, so each is
bounded in size (:data:`CATALOG_FILE_LIMIT`) before it is parsed, refused unless it is an ordinary
file (a device such as ``/dev/zero``, a FIFO -- which never blocks the read -- a directory), and,
inside a catalog directory, refused when it leads outside it (a symbolic link to another place):
the files a catalog names stay inside it. The setup SQL is streamed (:mod:`dbbench.setup`), never
read whole; :func:`inside` is checked for it too.

Every refusal is an :class:`OSError` whose ``filename`` is the file, as
:func:`verdict.files.read_bounded` raises them; :func:`problem` is its one line.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from verdict.files import MiB, not_regular, read_text_bounded, resolves_inside

# An entry file or annotated SQL file larger than this is refused before it is parsed (a catalog
# file holds shapes: an application's whole set of queries is a few hundred KiB), and so is a
# catalog whose files hold more than CATALOG_LIMIT together. Reading, checking and normalizing
# SQL text costs up to about 10 s per MiB of the densest hostile text, so both bounds are time too.
CATALOG_FILE_LIMIT = 2 * MiB
CATALOG_LIMIT = 16 * MiB


class Budget:
    """The bytes a catalog's files may still hold together (:data:`CATALOG_LIMIT`)."""

    def __init__(self, limit: int = CATALOG_LIMIT):
        self.limit, self.left = limit, limit

    def take(self, path: Path, size: int) -> None:
        self.left -= size
        if self.left < 0:
            raise OSError(
                errno.EFBIG,
                f"the catalog's files hold more than {self.limit / MiB:,.0f} MiB together; "
                "this one is past it",
                str(path),
            )


def inside(path: Path, root: Path | None, *, regular: bool = True) -> None:
    """Refuse ``path`` (an :class:`OSError`) when it leads outside the directory ``root`` (itself,
    or a folder on its way, a symbolic link to another place), or, when ``regular``, when it is
    not an ordinary file (checked without opening it: a FIFO does not block)."""
    if root is not None and not resolves_inside(path, root):
        raise OSError(
            errno.EXDEV,
            "a symbolic link leading outside the catalog directory (the files a catalog names stay inside it)",
            str(path),
        )
    if regular:
        try:
            mode = os.stat(path).st_mode
        except OSError as exc:
            raise OSError(exc.errno or errno.EIO, exc.strerror or "cannot be read", str(path)) from None
        if not stat.S_ISREG(mode):
            raise OSError(errno.EINVAL, not_regular(mode, "catalog file"), str(path))


def read_text(path: Path, root: Path | None = None, budget: Budget | None = None) -> str:
    """The UTF-8 text of the catalog file ``path`` (inside ``root`` when given), at most
    :data:`CATALOG_FILE_LIMIT` bytes (and what is left of ``budget``, the catalog's). Raises
    :class:`OSError` naming the file."""
    inside(path, root, regular=False)
    text = read_text_bounded(path, limit=CATALOG_FILE_LIMIT, what="catalog file")
    if budget is not None:
        budget.take(path, len(text))
    return text


def is_empty(path: Path) -> bool:
    """Whether a file (a catalog's setup SQL) holds nothing but whitespace, read until it does
    not. Raises :class:`OSError` naming the file."""
    with path.open("rb") as f:
        while piece := f.read(1 << 16):
            if piece.strip():
                return False
    return True


def problem(exc: OSError) -> str:
    """The one line an :class:`OSError` of :func:`read_text` / :func:`inside` is reported as."""
    return f"{exc.filename}: {exc.strerror or exc}"
