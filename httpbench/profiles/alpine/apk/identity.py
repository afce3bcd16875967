"""Package identities: the ``C:`` value of an APKINDEX record, ``Q1`` + base64(SHA-1) or ``Q2`` +
base64(SHA-256) of a package's compressed control member, which ``apk`` checks a download against."""

from __future__ import annotations

import base64
import binascii
import hashlib
from dataclasses import dataclass

from httpbench.errors import ApkError

IDENTITY_KINDS = {"Q1": ("sha1", 20), "Q2": ("sha256", 32)}


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
