"""Signatures and keys: the ``.SIGN.<algorithm>.<key name>`` entry of a package or index, RSA
PKCS#1 v1.5 over the bytes it covers, checked with the trusted key of the name the entry gives, as
apk-tools does."""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa

from httpbench.errors import ApkError
from httpbench.profiles.alpine.apk.archive import TarEntry, gzip_member, tar_file

SIGN_PREFIX = ".SIGN."
# signature entry kind -> digest signed (apk-tools also knows DSA, long unused)
SIGNATURE_DIGESTS: dict[str, type[hashes.HashAlgorithm]] = {
    "RSA": hashes.SHA1,
    "RSA256": hashes.SHA256,
    "RSA512": hashes.SHA512,
}

PublicKeys = Mapping[str, bytes]
"""Public keys by file name (as under ``/etc/apk/keys``, e.g. ``builder.rsa.pub``) -> PEM bytes."""


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


def signatures_in(entries: Sequence[TarEntry], what: str) -> list[Signature]:
    """The signature entries of a first member; [] when the member holds no ``.SIGN.`` entry."""
    found = [(e, parse_signature_name(e.name)) for e in entries]
    signatures = [Signature(p[0], p[1], e.data) for e, p in found if p is not None]
    if signatures and len(signatures) != len(entries):
        other = next(e.name for e, p in found if p is None)
        raise ApkError(f"{what}: signature member also holds {other!r}")
    return signatures
