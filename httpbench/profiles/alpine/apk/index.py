"""Signed indexes (``APKINDEX.tar.gz``): the record ``apk index`` writes per package, the index
built and signed, and parsed back with every record checked and the signature verified."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from httpbench.errors import ApkError
from httpbench.profiles.alpine.apk.archive import (
    EOF_BLOCKS,
    TarEntry,
    entry_text,
    gzip_member,
    read_tar,
    require_cut,
    split_members,
    tar_file,
)
from httpbench.profiles.alpine.apk.identity import parse_identity
from httpbench.profiles.alpine.apk.package import Package, PackageMeta, non_negative_int
from httpbench.profiles.alpine.apk.signing import (
    PublicKeys,
    Signature,
    sign,
    signature_member,
    signatures_in,
    verify,
)

REQUIRED_INDEX_KEYS = ("P", "V", "S", "I", "C")
# APKINDEX field letter -> IndexRecord attribute, in the order apk-tools writes them
_INDEX_FIELDS = (
    ("C", "identity"),
    ("P", "name"),
    ("V", "version"),
    ("A", "arch"),
    ("S", "size"),
    ("I", "installed_size"),
    ("T", "description"),
    ("U", "url"),
    ("L", "license"),
    ("o", "origin"),
    ("m", "maintainer"),
    ("t", "build_time"),
    ("c", "commit"),
)
_INT_FIELDS = {"S", "I", "t"}


@dataclass(frozen=True)
class IndexRecord:
    """One APKINDEX record. ``other`` keeps any further ``K:value`` lines (D, p, i, k, …) in order."""

    name: str  # P
    version: str  # V
    size: int  # S: .apk file size
    installed_size: int  # I
    identity: str  # C
    arch: str = ""  # A
    description: str = ""  # T
    url: str = ""  # U
    license: str = ""  # L
    origin: str = ""  # o
    maintainer: str = ""  # m
    build_time: int | None = None  # t
    commit: str = ""  # c
    other: tuple[tuple[str, str], ...] = ()

    @property
    def logical(self) -> tuple[str, str, int, int]:
        """``(P, V, S, I)``: what must match across repositories serving the same packages."""
        return (self.name, self.version, self.size, self.installed_size)

    @property
    def label(self) -> str:
        return f"{self.name}-{self.version}"

    def to_text(self) -> str:
        lines = []
        for key, attr in _INDEX_FIELDS:
            value = getattr(self, attr)
            if value is not None and value != "":
                lines.append(f"{key}:{value}")
        lines += [f"{k}:{v}" for k, v in self.other]
        return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class SignedIndex:
    """A parsed ``APKINDEX.tar.gz``: its signature, description and records."""

    signature: Signature
    description: str | None
    records: tuple[IndexRecord, ...]
    sha256: str
    size: int

    @property
    def verified(self) -> bool:
        return self.signature.verified_with is not None

    def find(self, name: str, version: str) -> IndexRecord | None:
        return next((r for r in self.records if r.name == name and r.version == version), None)


def record_for(package: Package) -> IndexRecord:
    """The record ``apk index`` writes for a package."""
    build = package.info("builddate")
    return IndexRecord(
        package.name,
        package.version,
        package.size,
        package.installed_size,
        package.identity,
        package.arch,
        package.info("pkgdesc") or "",
        package.info("url") or "",
        package.info("license") or "",
        package.info("origin") or "",
        package.info("maintainer") or "",
        int(build) if build and build.isdigit() else None,
        package.info("commit") or "",
    )


def index_text(records: Iterable[IndexRecord]) -> str:
    """APKINDEX content: each record followed by a blank line."""
    return "".join(r.to_text() + "\n" for r in records)


def build_index(
    records: Sequence[IndexRecord],
    *,
    private_key: bytes,
    key_name: str,
    description: str = "",
    mtime: int = PackageMeta.build_date,
    algorithm: str = "RSA",
) -> bytes:
    """A signed v2 ``APKINDEX.tar.gz``: signature member + index member (DESCRIPTION, APKINDEX)."""
    tar = (
        tar_file("DESCRIPTION", description.encode(), mtime=mtime)
        + tar_file("APKINDEX", index_text(records).encode(), mtime=mtime)
        + EOF_BLOCKS
    )
    index = gzip_member(tar)
    return signature_member(sign(index, private_key, key_name, algorithm), mtime=mtime) + index


def parse_index(
    data: bytes, public_keys: PublicKeys | None = None, max_size: int | None = None
) -> SignedIndex:
    """Parse and check a signed v2 index; with ``public_keys`` the signature must verify.
    ``max_size``: the decompressed bound of :func:`split_members`."""
    members = split_members(data, max_size)
    first = read_tar(members[0].content, "index: first gzip member")
    signatures = signatures_in(first, "index")
    if not signatures:
        names = ", ".join(repr(e.name) for e in first[:3]) or "nothing"
        raise ApkError(
            f"index: missing signature member (first gzip member holds {names}, not a .SIGN.* entry)"
        )
    if len(signatures) > 1:
        raise ApkError(
            f"index: {len(signatures)} signature entries "
            f"({', '.join(s.entry_name for s in signatures)}), expected exactly one"
        )
    if len(members) < 2:
        raise ApkError("index: nothing follows the signature member (no APKINDEX)")
    require_cut(members[0], "index: signature member")
    signed = data[members[1].offset :]
    signature = verify(signatures[0], signed, public_keys) if public_keys is not None else signatures[0]
    entries = read_tar(b"".join(m.content for m in members[1:]), "index: index member")
    return SignedIndex(
        signature, _description(entries), _index_records(entries), hashlib.sha256(data).hexdigest(), len(data)
    )


def _description(entries: Sequence[TarEntry]) -> str | None:
    entry = next((e for e in entries if e.name == "DESCRIPTION"), None)
    return None if entry is None else entry_text(entry.data, "DESCRIPTION").strip()


def _index_records(entries: Sequence[TarEntry]) -> tuple[IndexRecord, ...]:
    hidden = next((e.name for e in entries if e.name.startswith(".")), None)
    if hidden is not None:
        raise ApkError(f"index: index member holds {hidden!r} (a package entry, not an index)")
    entry = next((e for e in entries if e.name == "APKINDEX"), None)
    if entry is None:
        raise ApkError("index: missing APKINDEX entry in the index member")
    return parse_records(entry_text(entry.data, "APKINDEX"))


_LINE = re.compile(r"^([A-Za-z]):(.*)$")


def parse_records(text: str) -> tuple[IndexRecord, ...]:
    """Parse APKINDEX text; each record must carry P, V, S, I and a well-formed C."""
    records: list[IndexRecord] = []
    block: list[tuple[int, str]] = []
    for number, line in enumerate(text.split("\n"), 1):
        if line:
            block.append((number, line))
        elif block:
            records.append(_record(block, len(records) + 1))
            block = []
    if block:
        records.append(_record(block, len(records) + 1))
    return tuple(records)


def _record(lines: Sequence[tuple[int, str]], number: int) -> IndexRecord:
    fields: dict[str, str] = {}
    other: list[tuple[str, str]] = []
    known = {k for k, _ in _INDEX_FIELDS}
    for line_no, line in lines:
        match = _LINE.match(line)
        if match is None:
            raise ApkError(f"APKINDEX line {line_no} is not 'K:value': {line[:60]!r}")
        key, value = match.groups()
        if key in fields:
            raise ApkError(f"APKINDEX record {number} (line {line_no}) repeats {key}:")
        if key in known:
            fields[key] = value
        else:
            other.append((key, value))
    where = f"APKINDEX record {number} ({fields.get('P', 'no P')}-{fields.get('V', '?')})"
    missing = [k for k in REQUIRED_INDEX_KEYS if not fields.get(k)]
    if missing:
        raise ApkError(f"{where} has no {', '.join(k + ':' for k in missing)}")
    try:
        parse_identity(fields["C"])
    except ApkError as exc:
        raise ApkError(f"{where}: malformed C: {exc}") from None
    values = {attr: _field(fields, key, where) for key, attr in _INDEX_FIELDS if key in fields}
    return IndexRecord(**values, other=tuple(other))  # type: ignore[arg-type]


def _field(fields: Mapping[str, str], key: str, where: str) -> str | int:
    return non_negative_int(fields[key], f"{where} {key}:") if key in _INT_FIELDS else fields[key]
