"""Alpine APK v2 packages and signed ``APKINDEX.tar.gz`` indexes, built and checked as bytes.

The v2 format is a concatenation of gzip members that, once decompressed back to back, read as one
tar stream. That is why every member except the last has its tar end-of-archive blocks cut off.

A package (``.apk``), as abuild writes it::

    [signature]  gzip( tar: ".SIGN.RSA.<key file name>"  )   EOF blocks cut
    [control]    gzip( tar: ".PKGINFO" (+ install scripts) ) EOF blocks cut
    [data]       gzip( tar: the installed files )             EOF blocks kept

* The signature entry holds an RSA PKCS#1 v1.5 signature over the *compressed bytes of the control
  member*: SHA-1 for ``.SIGN.RSA.``, SHA-256 for ``.SIGN.RSA256.``, SHA-512 for ``.SIGN.RSA512.``.
  The rest of the entry name is the file name of the public key under ``/etc/apk/keys``
  (conventionally ``<name>.rsa.pub``); apk-tools looks the key up by that name.
* ``.PKGINFO`` is ``key = value`` lines (``pkgname``, ``pkgver``, ``arch``, ``size`` = installed
  size, …) and ``datahash`` = SHA-256 hex of the *compressed* data member(s), which is how the
  signature over the control member extends to the payload.
* The data tar carries, per regular file, a PAX record ``APK-TOOLS.checksum.SHA1`` (hex SHA-1 of
  the file), as ``abuild-tar --hash`` adds.
* The package identity apk-tools writes into the index as ``C:`` is ``Q1`` + base64(SHA-1 of the
  compressed control member). ``apk`` checks a downloaded package against it, so a wrong ``C:``
  makes installs fail. ``Q2`` + base64(SHA-256) is the 32-byte form.

A signed index (``APKINDEX.tar.gz``)::

    [signature]  gzip( tar: ".SIGN.RSA.<key file name>" )    EOF blocks cut
    [index]      gzip( tar: "DESCRIPTION", "APKINDEX" )      EOF blocks kept

The signature covers every byte after the signature member (``abuild-sign`` signs the unsigned
index file, then prepends the signature member). ``APKINDEX`` holds one record per package:
``K:value`` lines, records separated by a blank line (``C`` identity, ``P`` name, ``V`` version,
``A`` arch, ``S`` .apk size, ``I`` installed size, ``T`` description, ``U`` url, ``L`` license,
``o`` origin, ``m`` maintainer, ``t`` build time, ``c`` commit, ``D``/``p``/``i``/``k`` relations).

Everything here works on bytes in memory; nothing reads or writes files. Every defect raises
:class:`~httpbench.errors.ApkError` with a one-line reason.
"""

from __future__ import annotations

import base64
import binascii
import functools
import gzip
import hashlib
import io
import posixpath
import re
import tarfile
import zlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa

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
SIGN_PREFIX = ".SIGN."
# signature entry kind -> digest signed (apk-tools also knows DSA, long unused)
SIGNATURE_DIGESTS: dict[str, type[hashes.HashAlgorithm]] = {
    "RSA": hashes.SHA1,
    "RSA256": hashes.SHA256,
    "RSA512": hashes.SHA512,
}
IDENTITY_KINDS = {"Q1": ("sha1", 20), "Q2": ("sha256", 32)}
CHECKSUM_PAX_KEY = "APK-TOOLS.checksum.SHA1"
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

PublicKeys = Mapping[str, bytes]
"""Public keys by file name (as under ``/etc/apk/keys``, e.g. ``builder.rsa.pub``) -> PEM bytes."""


# ---------------------------------------------------------------------------------------------
# identities


@dataclass(frozen=True)
class Identity:
    """A decoded package identity: ``kind`` ``Q1`` (SHA-1, 20 bytes) or ``Q2`` (SHA-256, 32 bytes)."""

    kind: str
    digest: bytes

    @property
    def algorithm(self) -> str:
        return IDENTITY_KINDS[self.kind][0]

    @property
    def text(self) -> str:
        return self.kind + base64.b64encode(self.digest).decode("ascii")


def parse_identity(text: str) -> Identity:
    """Decode ``Q1…``/``Q2…``: known prefix, strict canonical base64, exact digest length."""
    kind, encoded = text[:2], text[2:]
    if kind not in IDENTITY_KINDS:
        raise ApkError(f"identity {text!r} does not start with Q1 (SHA-1) or Q2 (SHA-256)")
    try:
        digest = base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError):
        raise ApkError(f"identity {text!r}: {kind} payload is not valid base64") from None
    name, size = IDENTITY_KINDS[kind]
    if len(digest) != size:
        raise ApkError(f"identity {text!r}: {kind} must decode to {size} bytes ({name}), got {len(digest)}")
    if base64.b64encode(digest).decode("ascii") != encoded:
        raise ApkError(f"identity {text!r}: {kind} payload is not canonical base64")
    return Identity(kind, digest)


def identity_of(control_member: bytes, kind: str = "Q1") -> Identity:
    """The identity apk-tools derives from a package's compressed control member."""
    if kind not in IDENTITY_KINDS:
        raise ApkError(f"unknown identity kind {kind!r} (known: Q1, Q2)")
    return Identity(kind, hashlib.new(IDENTITY_KINDS[kind][0], control_member).digest())


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


def _require_cut(member: GzipMember, what: str) -> None:
    if not tar_is_cut(member.content):
        raise ApkError(
            f"{what} keeps its tar end-of-archive blocks, so a reader of the whole "
            "stream (apk) stops before the next member"
        )


# ---------------------------------------------------------------------------------------------
# signatures and keys


@dataclass(frozen=True)
class Signature:
    """One ``.SIGN.<algorithm>.<key name>`` entry; ``verified_with`` names the key that verified it."""

    algorithm: str
    key_name: str
    value: bytes = field(repr=False)
    verified_with: str | None = None

    @property
    def entry_name(self) -> str:
        return f"{SIGN_PREFIX}{self.algorithm}.{self.key_name}"

    @property
    def digest(self) -> str:
        return SIGNATURE_DIGESTS[self.algorithm]().name


def parse_signature_name(name: str) -> tuple[str, str] | None:
    """``(algorithm, key name)`` of a signature entry name, None when it is not ``.SIGN.*``."""
    if not name.startswith(SIGN_PREFIX):
        return None
    algorithm, dot, key_name = name[len(SIGN_PREFIX) :].partition(".")
    if algorithm not in SIGNATURE_DIGESTS:
        raise ApkError(
            f"signature entry {name!r} uses an unsupported algorithm {algorithm!r} "
            f"(known: {', '.join(SIGNATURE_DIGESTS)})"
        )
    if not dot or not key_name:
        raise ApkError(f"signature entry {name!r} names no key")
    return algorithm, key_name


def generate_private_key(bits: int = 2048) -> bytes:
    """A new RSA private key as unencrypted PKCS#8 PEM (what ``abuild-keygen`` makes)."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=bits)
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def public_key_pem(private_key: bytes) -> bytes:
    """The SubjectPublicKeyInfo PEM (``-----BEGIN PUBLIC KEY-----``) that apk-tools reads."""
    return (
        _private_key(private_key)
        .public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    )


def load_public_key(pem: bytes, name: str) -> rsa.RSAPublicKey:
    """Parse one public key PEM; the error names the key."""
    try:
        key = serialization.load_pem_public_key(pem)
    except (ValueError, TypeError) as exc:
        raise ApkError(f"public key {name!r} is not a PEM public key ({exc})") from None
    if not isinstance(key, rsa.RSAPublicKey):
        raise ApkError(f"public key {name!r} is not an RSA key")
    return key


@functools.lru_cache(maxsize=8)
def _private_key(pem: bytes) -> rsa.RSAPrivateKey:
    """Loading checks the key (tens of milliseconds), so loaded keys are kept."""
    try:
        key = serialization.load_pem_private_key(pem, password=None)
    except (ValueError, TypeError) as exc:
        raise ApkError(f"signing key is not an unencrypted PEM private key ({exc})") from None
    if not isinstance(key, rsa.RSAPrivateKey):
        raise ApkError("signing key is not an RSA private key")
    return key


def sign(signed: bytes, private_key: bytes, key_name: str, algorithm: str = "RSA") -> Signature:
    """RSA PKCS#1 v1.5 signature over ``signed`` with the digest the algorithm name implies."""
    if algorithm not in SIGNATURE_DIGESTS:
        raise ApkError(f"unsupported signature algorithm {algorithm!r}")
    if not key_name or "/" in key_name:
        raise ApkError(f"bad key name {key_name!r}: a file name such as 'builder.rsa.pub'")
    value = _private_key(private_key).sign(signed, padding.PKCS1v15(), SIGNATURE_DIGESTS[algorithm]())
    return Signature(algorithm, key_name, value)


def verify(signature: Signature, signed: bytes, public_keys: PublicKeys) -> Signature:
    """Verify with the trusted key of the file name the entry names, the only key apk-tools uses
    (it opens ``/etc/apk/keys/<key name>``): an entry naming a key that is not among
    ``public_keys`` fails, whatever other keys are given, even one that would verify. Returns the
    signature with ``verified_with`` set; raises on failure."""
    if not public_keys:
        raise ApkError(f"cannot verify {signature.entry_name}: no public key given")
    if signature.key_name not in public_keys:
        raise ApkError(
            f"untrusted signature: {signature.entry_name} names the key "
            f"{signature.key_name!r}, which is not any given public key "
            f"({', '.join(sorted(public_keys))}); apk looks the key up by that name"
        )
    key = load_public_key(public_keys[signature.key_name], signature.key_name)
    try:
        key.verify(signature.value, signed, padding.PKCS1v15(), SIGNATURE_DIGESTS[signature.algorithm]())
    except InvalidSignature:
        raise ApkError(
            f"bad signature: {signature.entry_name} does not verify with the public key of that name"
        ) from None
    return replace(signature, verified_with=signature.key_name)


def signature_member(signature: Signature, *, mtime: int) -> bytes:
    """The gzip member holding one signature entry, tar end blocks cut (``abuild-tar --cut``)."""
    return gzip_member(tar_file(signature.entry_name, signature.value, mtime=mtime))


def _signatures(entries: Sequence[TarEntry], what: str) -> list[Signature]:
    """The signature entries of a first member; [] when the member holds no ``.SIGN.`` entry."""
    found = [(e, parse_signature_name(e.name)) for e in entries]
    signatures = [Signature(p[0], p[1], e.data) for e, p in found if p is not None]
    if signatures and len(signatures) != len(entries):
        other = next(e.name for e, p in found if p is None)
        raise ApkError(f"{what}: signature member also holds {other!r}")
    return signatures


# ---------------------------------------------------------------------------------------------
# packages


@dataclass(frozen=True)
class PackageMeta:
    """What ``.PKGINFO`` says about a package besides its size and data hash."""

    name: str
    version: str
    arch: str = "x86_64"
    description: str = "httpbench APK v2 benchmark package"
    url: str = "https://example.invalid/httpbench"
    license: str = "MIT"
    origin: str = ""
    maintainer: str = "httpbench <httpbench@example.invalid>"
    packager: str = "httpbench"
    build_date: int = 1767225600  # 2026-01-01T00:00:00Z: fixed, so builds are deterministic
    commit: str = ""


@dataclass(frozen=True)
class Package:
    """A v2 package as bytes plus what was read back from it.

    ``control`` is the compressed control member (identity and signature are over it);
    ``signatures`` are unverified until :func:`verify_package` returns one with ``verified_with``.
    """

    data: bytes = field(repr=False)
    name: str
    version: str
    arch: str
    installed_size: int
    identity: str
    datahash: str | None
    pkginfo: tuple[tuple[str, str], ...] = field(repr=False)
    signatures: tuple[Signature, ...]
    control: bytes = field(repr=False)
    control_offset: int = field(default=0, repr=False)  # where the control member starts in data

    @property
    def size(self) -> int:
        return len(self.data)

    @property
    def data_members(self) -> bytes:
        """The compressed data member(s): every byte after the control member."""
        return self.data[self.control_offset + len(self.control) :]

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()

    @property
    def file_name(self) -> str:
        return f"{self.name}-{self.version}.apk"

    def info(self, key: str) -> str | None:
        """The first ``.PKGINFO`` value of ``key``."""
        return next((v for k, v in self.pkginfo if k == key), None)


def payload(size: int, seed: int) -> bytes:
    """Deterministic, incompressible, non-repeating bytes (SHAKE-256 of the seed): every 64 KiB
    slice differs, so a wrong Range offset is visible. A shorter payload is a prefix of a longer."""
    if size < 0:
        raise ApkError(f"payload size must be >= 0, got {size}")
    return hashlib.shake_256(f"httpbench-apk-payload:{seed}".encode()).digest(size)


def pkginfo_text(meta: PackageMeta, installed_size: int, datahash: str) -> str:
    pairs = [
        ("pkgname", meta.name),
        ("pkgver", meta.version),
        ("pkgdesc", meta.description),
        ("url", meta.url),
        ("builddate", str(meta.build_date)),
        ("packager", meta.packager),
        ("size", str(installed_size)),
        ("arch", meta.arch),
        ("origin", meta.origin or meta.name),
        ("commit", meta.commit),
        ("maintainer", meta.maintainer),
        ("license", meta.license),
        ("datahash", datahash),
    ]
    lines = ["# Generated by httpbench (APK v2 benchmark fixture)"]
    lines += [f"{k} = {v}" for k, v in pairs if v]
    return "\n".join(lines) + "\n"


def data_member(files: Mapping[str, bytes], *, mtime: int) -> bytes:
    """The data member: parent directories, then each file with its SHA-1 PAX record; EOF kept."""
    parts: list[bytes] = []
    seen: set[str] = set()
    for path in sorted(files):
        _check_member_path(path)
        for directory in _parents(path):
            if directory not in seen:
                seen.add(directory)
                parts.append(tar_directory(directory, mtime=mtime))
        checksum = hashlib.sha1(files[path]).hexdigest()
        parts.append(tar_file(path, files[path], mtime=mtime, pax={CHECKSUM_PAX_KEY: checksum}))
    return gzip_member(b"".join(parts) + EOF_BLOCKS)


def _parents(path: str) -> list[str]:
    parts = path.split("/")[:-1]
    return ["/".join(parts[: i + 1]) for i in range(len(parts))]


def _check_member_path(path: str) -> None:
    if not path or path.startswith(("/", ".")) or posixpath.normpath(path) != path or ".." in path.split("/"):
        raise ApkError(f"bad file path in package: {path!r} (relative, normalized, not hidden)")


def build_package(
    files: Mapping[str, bytes],
    meta: PackageMeta,
    *,
    private_key: bytes | None,
    key_name: str = "",
    algorithm: str = "RSA",
) -> Package:
    """Build a signed v2 package (unsigned when ``private_key`` is None), byte-for-byte
    deterministic for the same inputs and key, and read it back."""
    return read_package(_assemble(files, meta, private_key, key_name, algorithm))


def _assemble(
    files: Mapping[str, bytes], meta: PackageMeta, private_key: bytes | None, key_name: str, algorithm: str
) -> bytes:
    if not files:
        raise ApkError("a package needs at least one file")
    data = data_member(files, mtime=meta.build_date)
    installed = sum(len(v) for v in files.values())
    text = pkginfo_text(meta, installed, hashlib.sha256(data).hexdigest())
    control = gzip_member(tar_file(".PKGINFO", text.encode(), mtime=meta.build_date))
    signed = b""
    if private_key is not None:
        signed = signature_member(sign(control, private_key, key_name, algorithm), mtime=meta.build_date)
    return signed + control + data


def build_sized_package(
    total_size: int,
    meta: PackageMeta,
    *,
    seed: int,
    private_key: bytes | None,
    key_name: str = "",
    path: str | None = None,
) -> Package:
    """A package of one pseudo-random payload file whose ``.apk`` is ``total_size`` bytes, or within
    a few bytes of it: read ``Package.size`` for the exact size.

    The framing overhead (about 1 KiB plus 5 bytes per 16 KiB) is not constant: the compressed
    ``.PKGINFO`` text and deflate block boundaries move it by a few bytes, and some totals are not
    reachable at all. So the payload length is corrected by the size difference, then a dozen
    neighbouring lengths are tried; the closest build wins (the shorter payload on a tie)."""
    path = path or f"usr/share/{meta.name}/payload.bin"
    source = payload(total_size + 8192, seed)  # shorter payloads are prefixes of this one
    sizes: dict[int, int] = {}

    def size_for(length: int) -> int:
        if length not in sizes:
            sizes[length] = len(_assemble({path: source[:length]}, meta, private_key, key_name, "RSA"))
        return sizes[length]

    length = max(total_size - 2048, 0)
    for _ in range(4):
        step = total_size - size_for(length)
        if step == 0 or length + step < 0:
            break
        length += step
    for delta in (0, *(d for i in range(1, 7) for d in (i, -i))):
        if length + delta >= 0 and size_for(length + delta) == total_size:
            length += delta
            break
    else:
        length = min(sizes, key=lambda n: (abs(sizes[n] - total_size), n))
    return read_package(_assemble({path: source[:length]}, meta, private_key, key_name, "RSA"))


def parse_pkginfo(text: str) -> tuple[tuple[str, str], ...]:
    """``key = value`` lines; ``#`` comments and blank lines skipped; keys may repeat (depend)."""
    pairs = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line or line.startswith("#"):
            continue
        key, sep, value = line.partition(" = ")
        if not sep or not key:
            raise ApkError(f".PKGINFO line {number} is not 'key = value': {line[:60]!r}")
        pairs.append((key, value))
    return tuple(pairs)


def read_package(data: bytes, max_size: int | None = None) -> Package:
    """Read a v2 package: optional signature member, control member with ``.PKGINFO``, data
    member(s) whose SHA-256 must equal ``datahash``. Signatures are not verified here.
    ``max_size``: the decompressed bound of :func:`split_members`."""
    members = split_members(data, max_size)
    first = read_tar(members[0].content, "package: first gzip member")
    signatures = _signatures(first, "package")
    control_at = 1 if signatures else 0
    if len(members) < control_at + 2:
        raise ApkError(
            f"package has {len(members)} gzip member(s): expected "
            f"{'signature, ' if signatures else ''}control and data"
        )
    control = members[control_at]
    if signatures:
        _require_cut(members[0], "package: signature member")
    _require_cut(control, "package: control member")
    entries = first if control_at == 0 else read_tar(control.content, "package: control member")
    info = next((e for e in entries if e.name == ".PKGINFO"), None)
    if info is None:
        raise ApkError("package: control member has no .PKGINFO")
    pairs = parse_pkginfo(_text(info.data, ".PKGINFO"))
    values = dict(reversed(pairs))
    datahash = values.get("datahash")
    rest = data[members[control_at + 1].offset :]
    if datahash is not None and hashlib.sha256(rest).hexdigest() != datahash.lower():
        raise ApkError("package: datahash in .PKGINFO does not match the SHA-256 of the data member")
    for key in ("pkgname", "pkgver"):
        if not values.get(key):
            raise ApkError(f"package: .PKGINFO has no {key}")
    return Package(
        data,
        values["pkgname"],
        values["pkgver"],
        values.get("arch", ""),
        _int(values.get("size", "0"), ".PKGINFO size"),
        identity_of(control.raw).text,
        datahash,
        pairs,
        tuple(signatures),
        control.raw,
        control.offset,
    )


def verify_package(package: Package, public_keys: PublicKeys) -> Signature:
    """Verify the package's signature as apk-tools does. The first ``.SIGN.*`` entry naming a
    trusted key is the one checked (entries naming other keys are skipped: apk cannot open them);
    none naming a trusted key fails. The signature covers the control member, whose ``datahash``
    covers the data. A package without ``datahash`` (the older v2 form) must be signed over the
    control *and* data members, as apk then verifies it, so no data member passes under a signature
    of the control member alone. Raises when the package is unsigned or does not verify."""
    if not package.signatures:
        raise ApkError("package is unsigned (no .SIGN.* entry)")
    if not public_keys:
        raise ApkError(f"package: cannot verify {package.signatures[0].entry_name}: no public key given")
    chosen = next((s for s in package.signatures if s.key_name in public_keys), None)
    if chosen is None:
        entries = ", ".join(s.entry_name for s in package.signatures)
        raise ApkError(
            f"package signature is untrusted: {entries} names no given public key "
            f"({', '.join(sorted(public_keys))}); apk looks the key up by that name"
        )
    if package.datahash is not None:
        try:
            return verify(chosen, package.control, public_keys)
        except ApkError as exc:
            raise ApkError(f"package {exc}") from None
    try:
        return verify(chosen, package.control + package.data_members, public_keys)
    except ApkError as exc:
        raise ApkError(
            f"package: .PKGINFO has no datahash, so the signature must cover the control "
            f"and data members (as apk verifies such a package): {exc}"
        ) from None


# version suffixes in apk's order; a version without a suffix sorts between rc and cvs
_SUFFIX_RANK = {"alpha": 0, "beta": 1, "pre": 2, "rc": 3, "cvs": 5, "svn": 6, "git": 7, "hg": 8, "p": 9}
_NO_SUFFIX = 4
_VERSION = re.compile(r"(\d+(?:\.\d+)*)([a-z]?)((?:_[a-z]+\d*)*)(?:~[0-9a-f]+)?(?:-r(\d+))?")


def version_key(version: str) -> tuple:
    """A sort key ordering versions as apk does: numeric components, then an optional letter,
    then suffixes (``_alpha`` < ``_beta`` < ``_pre`` < ``_rc`` < none < ``_cvs`` … < ``_p``),
    then the package release ``-rN``. A version apk would reject sorts before every valid one."""
    m = _VERSION.fullmatch(version)
    if m is None:
        return (0, version)
    numbers = tuple(int(part) for part in m.group(1).split("."))
    suffixes = tuple(
        (_SUFFIX_RANK.get(name, -1), int(num or 0)) for name, num in re.findall(r"_([a-z]+)(\d*)", m.group(3))
    ) + ((_NO_SUFFIX, 0),)
    return (1, numbers, m.group(2), suffixes, int(m.group(4) or 0))


def package_identity(data: bytes, max_size: int | None = None) -> str:
    """``Q1`` identity of a package's bytes (what ``apk index`` writes as ``C:``)."""
    return read_package(data, max_size).identity


# ---------------------------------------------------------------------------------------------
# indexes


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
    signatures = _signatures(first, "index")
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
    _require_cut(members[0], "index: signature member")
    signed = data[members[1].offset :]
    signature = verify(signatures[0], signed, public_keys) if public_keys is not None else signatures[0]
    entries = read_tar(b"".join(m.content for m in members[1:]), "index: index member")
    return SignedIndex(
        signature, _description(entries), _index_records(entries), hashlib.sha256(data).hexdigest(), len(data)
    )


def _description(entries: Sequence[TarEntry]) -> str | None:
    entry = next((e for e in entries if e.name == "DESCRIPTION"), None)
    return None if entry is None else _text(entry.data, "DESCRIPTION").strip()


def _index_records(entries: Sequence[TarEntry]) -> tuple[IndexRecord, ...]:
    hidden = next((e.name for e in entries if e.name.startswith(".")), None)
    if hidden is not None:
        raise ApkError(f"index: index member holds {hidden!r} (a package entry, not an index)")
    entry = next((e for e in entries if e.name == "APKINDEX"), None)
    if entry is None:
        raise ApkError("index: missing APKINDEX entry in the index member")
    return parse_records(_text(entry.data, "APKINDEX"))


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
    return _int(fields[key], f"{where} {key}:") if key in _INT_FIELDS else fields[key]


def _int(text: str, what: str) -> int:
    if not text.isascii() or not text.isdigit():
        raise ApkError(f"{what} is not a non-negative integer: {text[:30]!r}")
    return int(text)


def _text(data: bytes, what: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ApkError(f"{what} is not UTF-8 text (byte {exc.start})") from None
