"""The two layers of a v2 file: concatenated gzip members, split at their true boundaries under a
bound on what they decompress to, and the tar entries inside them, written deterministically and
read back."""

from __future__ import annotations

import gzip
import io
import tarfile
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field

from httpbench.errors import ApkError

GZIP_MAGIC = b"\x1f\x8b"
BLOCK = 512
EOF_BLOCKS = b"\0" * (2 * BLOCK)
# Bound on what a v2 file may decompress to (see decompressed_limit). Real files are far below it:
# the APKINDEX of a large Alpine repository is a few MiB compressed and a few times that as text,
# and package payloads (binaries, libraries) compress 2-5x; a gzip bomb inflates about 1000x.
MAX_DECOMPRESSED_RATIO = 16
MAX_DECOMPRESSED_FLOOR = 64 << 20
_FIRST_SLICE, _MAX_SLICE = 512, 1 << 20  # compressed bytes fed to a decompressor at a time


# ---------------------------------------------------------------------------------------------
# gzip members


@dataclass(frozen=True)
class GzipMember:
    """One gzip member of a v2 file: where it starts, its compressed bytes, its content."""

    offset: int
    raw: bytes = field(repr=False)
    content: bytes = field(repr=False)


def gzip_member(content: bytes) -> bytes:
    """One deterministic gzip member (level 9, mtime 0), as ``gzip -n -9`` would write."""
    return gzip.compress(content, compresslevel=9, mtime=0)


def decompressed_limit(compressed_size: int) -> int:
    """The default bound on what a v2 file may decompress to: :data:`MAX_DECOMPRESSED_RATIO` times
    its compressed size, and never less than :data:`MAX_DECOMPRESSED_FLOOR`."""
    return max(MAX_DECOMPRESSED_FLOOR, MAX_DECOMPRESSED_RATIO * compressed_size)


def split_members(data: bytes, max_size: int | None = None) -> list[GzipMember]:
    """Split concatenated gzip members at their true boundaries (each member is decompressed on
    its own; what the decompressor leaves unused starts the next member).

    ``max_size`` bounds the decompressed bytes of all members together (default:
    :func:`decompressed_limit` of ``len(data)``); past it this raises :class:`ApkError` without
    inflating further, so a gzip bomb costs at most that much. Input is fed to each member's
    decompressor in growing slices, so what is copied per member is proportional to the member
    and splitting many members is linear in the input."""
    if not data:
        raise ApkError("not gzip: empty input")
    limit = decompressed_limit(len(data)) if max_size is None else max_size
    if limit < 0:
        raise ApkError(f"max_size must be >= 0, got {max_size}")
    members: list[GzipMember] = []
    view = memoryview(data)
    offset = produced = 0
    while offset < len(data):
        member = _next_member(data, view, offset, len(members) + 1, limit - produced, limit)
        members.append(member)
        offset += len(member.raw)
        produced += len(member.content)
    return members


def _next_member(
    data: bytes, view: memoryview, offset: int, number: int, budget: int, limit: int
) -> GzipMember:
    if data[offset : offset + 2] != GZIP_MAGIC:
        if number == 1:
            raise ApkError("not gzip: the data does not start with the gzip magic 1f 8b")
        raise ApkError(
            f"{len(data) - offset} trailing bytes at offset {offset} after gzip member "
            f"{number - 1} are not a gzip member"
        )
    inflater = zlib.decompressobj(wbits=31)
    parts: list[bytes] = []
    produced = 0
    position, step = offset, _FIRST_SLICE
    while not inflater.eof:
        if position >= len(data):
            raise ApkError(f"gzip member {number} at offset {offset} is truncated")
        piece = view[position : position + step]
        position += len(piece)
        step = min(step * 2, _MAX_SLICE)
        try:
            # at most one byte past the budget: enough to know it is exceeded
            out = inflater.decompress(piece, budget - produced + 1)
        except zlib.error as exc:
            raise ApkError(f"gzip member {number} at offset {offset} is corrupt ({exc})") from None
        produced += len(out)
        if produced > budget:
            raise ApkError(
                f"gzip member {number} at offset {offset}: the gzip members decompress to "
                f"more than {limit:,} bytes, the limit (max_size; default "
                f"{MAX_DECOMPRESSED_RATIO}x the compressed size, at least "
                f"{MAX_DECOMPRESSED_FLOOR >> 20} MiB)"
            )
        parts.append(out)
    end = position - len(inflater.unused_data)
    return GzipMember(offset, data[offset:end], b"".join(parts))


# ---------------------------------------------------------------------------------------------
# tar


@dataclass(frozen=True)
class TarEntry:
    """One tar entry as read back: name, type flag, content, PAX records."""

    name: str
    type: bytes
    data: bytes = field(repr=False)
    pax: Mapping[str, str] = field(default_factory=dict)


def tar_file(
    name: str, data: bytes, *, mtime: int, mode: int = 0o644, pax: Mapping[str, str] | None = None
) -> bytes:
    """A regular-file tar entry (header, content, zero padding to 512), owner root (numeric)."""
    info = _tarinfo(name, mtime, mode)
    info.size = len(data)
    if pax:
        info.pax_headers = dict(pax)
    header = info.tobuf(tarfile.PAX_FORMAT if pax else tarfile.USTAR_FORMAT, "utf-8", "strict")
    return header + data + b"\0" * (-len(data) % BLOCK)


def tar_directory(name: str, *, mtime: int, mode: int = 0o755) -> bytes:
    info = _tarinfo(name, mtime, mode)
    info.type = tarfile.DIRTYPE
    return info.tobuf(tarfile.USTAR_FORMAT, "utf-8", "strict")


def _tarinfo(name: str, mtime: int, mode: int) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.mtime, info.mode = mtime, mode
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    return info


def read_tar(content: bytes, what: str) -> list[TarEntry]:
    """Entries of a tar stream, with or without end-of-archive blocks."""
    entries: list[TarEntry] = []
    try:
        with tarfile.open(fileobj=io.BytesIO(content), mode="r:") as tar:
            for member in tar:
                body = tar.extractfile(member).read() if member.isfile() else b""  # type: ignore[union-attr]
                entries.append(TarEntry(member.name, member.type, body, dict(member.pax_headers)))
    except (tarfile.TarError, EOFError) as exc:
        raise ApkError(f"{what} is not a valid tar archive ({exc})") from None
    return entries


def tar_is_cut(content: bytes) -> bool:
    """True when the tar stream ends right after its last entry (no end-of-archive blocks), as
    every v2 member but the last must: a reader of the concatenation stops at those blocks."""
    try:
        with tarfile.open(fileobj=io.BytesIO(content), mode="r:") as tar:
            tar.getmembers()
            return tar.offset >= len(content)
    except (tarfile.TarError, EOFError):
        return False


def require_cut(member: GzipMember, what: str) -> None:
    """Raise unless the member's tar stream is cut (:func:`tar_is_cut`), as a v2 member but the last must be."""
    if not tar_is_cut(member.content):
        raise ApkError(
            f"{what} keeps its tar end-of-archive blocks, so a reader of the whole "
            "stream (apk) stops before the next member"
        )


def entry_text(data: bytes, what: str) -> str:
    """A tar entry's content as UTF-8 text; the error names the entry."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ApkError(f"{what} is not UTF-8 text (byte {exc.start})") from None
