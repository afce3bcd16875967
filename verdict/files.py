"""The one output writer both tools use.

:func:`write_output` is how every result, report, JUnit file and summary reaches the disk: an
ordinary file is replaced atomically (it is either the old one or the new one, never half
written); a name that is not an ordinary file -- a device such as ``/dev/stdout``, a FIFO, a
symbolic link such as ``/proc/self/fd/1`` -- is written *through*, never replaced by a file of
ours. A write that fails (no space left, a read-only file system) is an :class:`OSError` that
names the file, which both command lines print as one line.

:func:`write_atomic` is the primitive for files a tool owns (the local servers' state file): it
never follows a link at the name.
"""

from __future__ import annotations

import contextlib
import errno as errno_mod
import os
import re
import secrets
import stat
import time
import tomllib
from pathlib import Path
from typing import Any


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


def writes_through(path: Path | str) -> bool:
    """True when ``path`` names something that is not an ordinary file of its own: a symbolic
    link, a character or block device, a FIFO or a socket. Such a name is written through."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return False
    return not stat.S_ISREG(info.st_mode)


FIFO_READER_WAIT_S = 10.0  # how long an output FIFO may wait for a process to read it


def _write_through(path: Path, payload: bytes, append: bool) -> None:
    flags = os.O_WRONLY | os.O_CLOEXEC | (os.O_APPEND | os.O_CREAT if append else os.O_CREAT | os.O_TRUNC)
    fd = _open_fifo(path, flags) if _is_fifo(path) else os.open(path, flags, 0o666)
    with os.fdopen(fd, "wb") as fh:  # a buffered writer: write() takes all of it, or raises
        fh.write(payload)


def _is_fifo(path: Path) -> bool:
    try:
        return stat.S_ISFIFO(os.stat(path).st_mode)
    except OSError:
        return False


def _open_fifo(path: Path, flags: int) -> int:
    """A FIFO opened for writing once a process reads it (waiting up to FIFO_READER_WAIT_S; a plain
    open would block for ever when none ever does), then written to blocking, as a pipe is."""
    deadline = time.monotonic() + FIFO_READER_WAIT_S
    while True:
        try:
            fd = os.open(path, flags | os.O_NONBLOCK)
        except OSError as exc:
            if exc.errno != errno_mod.ENXIO or time.monotonic() > deadline:
                if exc.errno == errno_mod.ENXIO:
                    raise OSError(
                        errno_mod.ENXIO,
                        f"a FIFO no process read within {FIFO_READER_WAIT_S:.0f} s",
                        str(path),
                    ) from None
                raise
            time.sleep(0.05)
            continue
        os.set_blocking(fd, True)
        return fd


def write_output(path: Path | str, data: str | bytes, *, append: bool = False) -> None:
    """Write a command's output file ``path`` (text as UTF-8).

    ``append`` adds to the end (a GitHub step summary). Otherwise an ordinary or new file is
    replaced atomically, and anything else (:func:`writes_through`) is written through. A failure
    is an :class:`OSError` whose ``filename`` is ``path``; a partly written temporary file is
    removed, and the old file is left as it was."""
    target = Path(path)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    try:
        if append or writes_through(target):
            _write_through(target, payload, append)
        else:
            write_atomic(target, payload)
    except OSError as exc:
        code = exc.errno if exc.errno is not None else errno_mod.EIO
        raise OSError(code, exc.strerror or os.strerror(code), str(target)) from None


# -- reading inputs --------------------------------------------------------------------------------
MiB = 1024 * 1024
DEFAULT_READ_LIMIT = 64 * MiB  # a result, catalog file or spec is far smaller; a dump is streamed


def read_bounded(path: Path | str, *, limit: int = DEFAULT_READ_LIMIT, what: str = "file") -> bytes:
    """The bytes of the regular file ``path``, refused when it holds more than ``limit`` bytes.

    Opened without blocking (a FIFO with no writer does not hang), refused unless it is an
    ordinary file (a device such as ``/dev/zero``, a FIFO, a directory), and read at most
    ``limit + 1`` bytes (a file that grows while read, or that ``/proc`` reports as empty, is
    still bounded). Every refusal is an :class:`OSError` whose ``filename`` is ``path``, which
    both command lines print as one line: ``PATH: not a regular file (a FIFO)``."""
    target = Path(path)
    try:
        fd = os.open(target, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        code = exc.errno if exc.errno is not None else errno_mod.EIO
        raise OSError(code, exc.strerror or os.strerror(code), str(target)) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            reason = not_regular(info.st_mode, what)
            raise OSError(errno_mod.EINVAL, reason, str(target))
        if info.st_size > limit:
            raise OSError(errno_mod.EFBIG, _too_large(info.st_size, limit, what), str(target))
    except BaseException:
        os.close(fd)
        raise
    with os.fdopen(fd, "rb") as fh:
        data = fh.read(limit + 1)
    if len(data) > limit:
        raise OSError(errno_mod.EFBIG, _too_large(None, limit, what), str(target))
    return data


def read_text_bounded(path: Path | str, *, limit: int = DEFAULT_READ_LIMIT, what: str = "file") -> str:
    """:func:`read_bounded` decoded as UTF-8. Bytes that are not UTF-8 are an :class:`OSError`
    naming the file and where: ``PATH: not UTF-8 text (byte 0xff at line 3, column 7)``."""
    data = read_bounded(path, limit=limit, what=what)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise OSError(errno_mod.EILSEQ, not_utf8(data, exc), str(path)) from None


def loads_toml(text: str) -> dict[str, Any]:
    """``tomllib.loads``, where arrays or tables nested past the parser's recursion are a
    :class:`tomllib.TOMLDecodeError` as any other malformed TOML (``x = [[[[…]]]]`` 100k deep ended
    in a RecursionError traceback)."""
    try:
        return tomllib.loads(text)
    except RecursionError:
        raise tomllib.TOMLDecodeError("arrays or tables nested too deeply") from None


def not_utf8(data: bytes, exc: UnicodeDecodeError) -> str:
    """Where ``data`` stops being UTF-8, as a user reads it (the byte, its line and column)."""
    line = data.count(b"\n", 0, exc.start) + 1
    column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
    return f"not UTF-8 text (byte 0x{data[exc.start]:02x} at line {line}, column {column})"


MESSAGE_WIDTH = 1000  # the longest line an error prints: a value quoted in full never floods a terminal


def clip_lines(message: str, width: int = MESSAGE_WIDTH) -> str:
    """``message`` with each of its lines cut at ``width`` characters (``… (N more characters)``):
    the last guard of both command lines' one error handler, whatever a message quotes."""
    return "\n".join(
        line if len(line) <= width else f"{line[:width]}… ({len(line) - width:,} more characters)"
        for line in message.split("\n")
    )


def not_regular(mode: int, what: str) -> str:
    """Why a file of ``mode`` is refused where a ``what`` (an ordinary file) is expected."""
    return f"not a regular file ({file_kind(mode)}); give a {what}"


def file_kind(mode: int) -> str:
    """What a file of ``mode`` is, as a message says it: ``a FIFO``, ``a character device`` …"""
    for test, name in (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return name
    return "not an ordinary file"


def resolves_inside(path: Path | str, root: Path | str) -> bool:
    """Whether ``path``, its symbolic links followed (in every folder on its way), is ``root`` or
    below it: how a file a catalog or spec names is kept inside its directory. A loop of links is
    outside."""
    try:
        return Path(path).resolve().is_relative_to(Path(root).resolve())
    except (OSError, RuntimeError):
        return False


def _too_large(size: int | None, limit: int, what: str) -> str:
    held = size_text(size) if size is not None else "more"
    return f"{what} holds {held}; at most {size_text(limit)} is read"


def size_text(n: int) -> str:
    """A byte count as a person reads it: ``512 bytes``, ``64 KiB``, ``4.8 MiB``."""
    if n < 1024:
        return f"{n:,} bytes"
    if n < MiB:
        return f"{n / 1024:,.1f}".removesuffix(".0") + " KiB"
    return f"{n / MiB:,.1f}".removesuffix(".0") + " MiB"


def excerpt(text: str, limit: int = 80) -> str:
    """``text`` as a message quotes it: one line, at most ``limit`` characters (``…`` where cut),
    so a 50 MB name comes back as a short excerpt, never in full."""
    one_line = " ".join(text.split()) if ("\n" in text or "\r" in text) else text
    return one_line if len(one_line) <= limit else one_line[: limit - 1] + "…"


# A string is skipped whole (possessive runs: the engine keeps no backtracking state, so a 50-million
# character string costs its own size, not gigabytes), then a bracket is a token.
_JSON_TOKEN = re.compile(r'"(?:[^"\\]++|\\.)*+"|[\[\]{}]')


def text_depth_exceeds(text: str | bytes, limit: int) -> bool:
    """Whether JSON ``text`` opens more than ``limit`` nested lists/objects, counted without
    decoding (so a hostile document cannot exhaust the decoder's recursion first)."""
    if isinstance(text, (bytes, bytearray, memoryview)):
        text = bytes(text).decode("utf-8", "replace")
    depth = 0
    for m in _JSON_TOKEN.finditer(text):
        ch = m.group()
        if ch in "[{":
            depth += 1
            if depth > limit:
                return True
        elif ch in "]}":
            depth -= 1
    return False
