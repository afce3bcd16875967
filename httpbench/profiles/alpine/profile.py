"""``--profile alpine``: an Alpine APK v2 repository's hot paths, checked as apk-tools would.

Scenarios (the Alpine baseline's six): the signed ``APKINDEX.tar.gz`` by GET, HEAD and conditional
GET (304), and one package by GET, ``Range: bytes=0-65535`` and HEAD.

Preflight, on every target and before any timing (each failure is one line naming the target):

* the package bytes equal ``--package-sha256`` everywhere (so they are identical across targets);
  HEAD announces the same ``Content-Length``; the Range answer is 206 with exactly the package's
  first 65,536 bytes and ``Content-Range: bytes 0-65535/<size>``;
* the package is a well-formed v2 package (its ``datahash`` matches its data); its own signature
  is verified with ``--public-key`` and recorded (a failure there is a note: the package is the
  user's artifact and the same on every target);
* the index is a signed v2 index whose RSA signature verifies with ``--public-key`` (the key of
  the same file name as the ``.SIGN.*`` entry, as apk looks it up: no other key is tried); every record parses and carries
  P, V, S, I and a well-formed ``C:``; the sorted (P, V, S, I) multisets are equal across targets
  (the error names what is missing or extra where); the package's record exists with ``S:`` equal
  to its size;
* ``C:`` is compared with the package's identity (Q1 of its control member) and across targets,
  but only reported in the notes: a repository may compute it differently (Nexus 3.94 does for an
  unsigned direct upload) and that is not a transport property.
"""

from __future__ import annotations

import hashlib
import posixpath
import re
from collections import Counter
from pathlib import Path
from typing import Any

import httpx

from httpbench.errors import HttpbenchError
from httpbench.model import Scenario, Target
from httpbench.profiles import Context, Defaults, Option, Profile, Section
from httpbench.profiles.alpine import apk

RANGE_BYTES = 65536
RANGE_HEADER = f"bytes=0-{RANGE_BYTES - 1}"
_SHA256 = re.compile(r"^[0-9a-fA-F]{64}$")


class AlpineProfile(Profile):
    name = "alpine"
    description = (
        "Alpine APK v2: signed APKINDEX.tar.gz GET/HEAD/304 and package GET/Range/HEAD, "
        "with signature, identity and package-set checks"
    )
    options = (
        Option(
            "--package-path",
            "Path of the benchmark .apk under each base URL, e.g. "
            "v3.23/main/x86_64/NAME-1.0-r0.apk (required with --profile alpine).",
            metavar="PATH",
        ),
        Option(
            "--index-path",
            "Path of the signed index under each base URL. [default: the "
            "package's directory + /APKINDEX.tar.gz]",
            metavar="PATH",
        ),
        Option(
            "--package-sha256", "SHA-256 of the package every target must serve (required).", metavar="HEX"
        ),
        Option(
            "--public-key",
            "RSA public key (PEM) that signed the index, named as under "
            "/etc/apk/keys (e.g. builder.rsa.pub); repeat (at least one required).",
            kind="path",
            multiple=True,
            metavar="FILE",
        ),
    )
    defaults = Defaults(warmups=32, requests=250, concurrency=16, rounds=3)

    def __init__(self, **options: Any):
        super().__init__(**options)
        package_path = (options.get("package_path") or "").strip().lstrip("/")
        if not package_path:
            raise HttpbenchError("--profile alpine needs --package-path (the .apk under each base URL)")
        sha = (options.get("package_sha256") or "").strip()
        if not _SHA256.match(sha):
            raise HttpbenchError("--profile alpine needs --package-sha256 (64 hex digits)")
        key_files = tuple(options.get("public_key") or ())
        if not key_files:
            raise HttpbenchError("--profile alpine needs --public-key (the index signer's PEM public key)")
        index_path = (options.get("index_path") or "").strip().lstrip("/")
        self.package_path = "/" + package_path
        self.index_path = "/" + (
            index_path or posixpath.join(posixpath.dirname(package_path), "APKINDEX.tar.gz")
        )
        self.package_sha256 = sha.lower()
        self.public_keys = _read_keys(key_files)
        self._size: int | None = None
        self._slice: bytes | None = None

    def options_json(self) -> dict[str, Any]:
        out = super().options_json()
        out["index_path"] = self.index_path.lstrip("/")
        return out

    # -- scenarios -----------------------------------------------------------------------------

    def scenarios(self) -> list[Scenario]:
        """After preflight the package's length and the Range slice's digest are exact too."""
        sliced = self._slice
        return [
            # each repository signs its own index: the preflight compares contents, not bytes
            Scenario("signed index GET", self.index_path, same_body=False),
            Scenario("signed index HEAD", self.index_path, method="HEAD", same_body=False),
            Scenario("signed index 304", self.index_path, conditional=True, same_body=False),
            Scenario(
                "package GET",
                self.package_path,
                klass="payload",
                sha256=self.package_sha256,
                length=self._size,
            ),
            Scenario(
                "package Range 64 KiB",
                self.package_path,
                headers=(("Range", RANGE_HEADER),),
                klass="payload",
                length=None if sliced is None else len(sliced),
                sha256=None if sliced is None else hashlib.sha256(sliced).hexdigest(),
            ),
            Scenario("package HEAD", self.package_path, method="HEAD"),
        ]

    # -- preflight -----------------------------------------------------------------------------

    def preflight(self, ctx: Context) -> Section:
        section = Section()
        data = b""
        for target in ctx.targets:
            data = self._package_bytes(ctx, target)
        package = _read_package(data, self.package_path)
        self._size, self._slice = len(data), data[:RANGE_BYTES]
        package_record = self._package_record(package, section)
        per_target: dict[str, dict[str, Any]] = {}
        indexes: dict[str, apk.SignedIndex] = {}
        for target in ctx.targets:
            self._check_head(ctx, target, len(data))
            content_range = self._check_range(ctx, target, data)
            indexes[target.name] = self._index(ctx, target)
            per_target[target.name] = {
                "package_head_content_length": len(data),
                "range_content_range": content_range,
            }
            ctx.progress(f"alpine preflight: {target.name}: package, Range, HEAD and signed index ok")
        self._compare_sets(ctx.targets, indexes)
        for target in ctx.targets:
            per_target[target.name].update(self._index_record(target, indexes[target.name], package, section))
        section.notes += _identity_differences(ctx.targets, indexes)
        section.notes += _signature_differences(ctx.targets, indexes)
        section.records = {
            "package": package_record,
            "index_path": self.index_path.lstrip("/"),
            "targets": per_target,
        }
        return section

    def _package_bytes(self, ctx: Context, target: Target) -> bytes:
        resp = _expect(ctx, target, "GET", self.package_path, {}, 200, "package GET")
        body = resp.content
        digest = hashlib.sha256(body).hexdigest()
        if digest != self.package_sha256:
            raise HttpbenchError(
                f"preflight: target {target.name!r}: package GET {self.package_path}: "
                f"body ({len(body):,} bytes, SHA-256 {digest[:16]}…) differs from "
                f"--package-sha256 {self.package_sha256[:16]}…"
            )
        return body

    def _check_head(self, ctx: Context, target: Target, size: int) -> None:
        resp = _expect(ctx, target, "HEAD", self.package_path, {}, 200, "package HEAD")
        length = resp.headers.get("content-length")
        if length != str(size):
            raise HttpbenchError(
                f"preflight: target {target.name!r}: package HEAD {self.package_path}: "
                f"Content-Length {length or 'missing'}, expected {size}"
            )

    def _check_range(self, ctx: Context, target: Target, data: bytes) -> str:
        where = f"preflight: target {target.name!r}: package Range {RANGE_HEADER}"
        resp = _expect(
            ctx,
            target,
            "GET",
            self.package_path,
            {"Range": RANGE_HEADER},
            206,
            f"package Range {RANGE_HEADER}",
        )
        expected = data[:RANGE_BYTES]
        want = f"bytes 0-{len(expected) - 1}/{len(data)}"
        got = resp.headers.get("content-range", "")
        if got != want:
            raise HttpbenchError(f"{where}: Content-Range {got or 'missing'!r}, expected {want!r}")
        body = resp.content
        if len(body) != len(expected):
            raise HttpbenchError(f"{where}: {len(body):,} bytes, expected {len(expected):,}")
        if body != expected:
            raise HttpbenchError(f"{where}: {_range_mismatch(body, expected, data)}")
        return want

    def _index(self, ctx: Context, target: Target) -> apk.SignedIndex:
        resp = _expect(ctx, target, "GET", self.index_path, {}, 200, "index GET")
        body = resp.content
        try:
            index = apk.parse_index(body, self.public_keys)
        except apk.ApkError as exc:
            reason = str(exc).removeprefix("index: ")
            raise HttpbenchError(
                f"preflight: target {target.name!r}: index {self.index_path}: {reason}"
            ) from None
        head = _expect(ctx, target, "HEAD", self.index_path, {}, 200, "index HEAD")
        length = head.headers.get("content-length")
        if length is not None and length != str(len(body)):
            raise HttpbenchError(
                f"preflight: target {target.name!r}: index HEAD {self.index_path}: "
                f"Content-Length {length}, but GET returned {len(body)} bytes"
            )
        return index

    def _compare_sets(self, targets: list[Target], indexes: dict[str, apk.SignedIndex]) -> None:
        base = targets[0]
        reference = Counter(r.logical for r in indexes[base.name].records)
        for target in targets[1:]:
            other = Counter(r.logical for r in indexes[target.name].records)
            missing, extra = sorted((reference - other).elements()), sorted((other - reference).elements())
            if missing or extra:
                parts = ([f"missing {_packages(missing)}"] if missing else []) + (
                    [f"extra {_packages(extra)}"] if extra else []
                )
                raise HttpbenchError(
                    f"preflight: target {target.name!r}: index package set (P/V/S/I) "
                    f"differs from baseline {base.name!r}: {'; '.join(parts)}"
                )

    def _index_record(
        self, target: Target, index: apk.SignedIndex, package: apk.Package, section: Section
    ) -> dict[str, Any]:
        record = index.find(package.name, package.version)
        label = f"{package.name}-{package.version}"
        where = f"preflight: target {target.name!r}: index {self.index_path}"
        if record is None:
            raise HttpbenchError(f"{where}: no record for {label}, the package at --package-path")
        if record.size != package.size:
            raise HttpbenchError(
                f"{where}: {label} has S:{record.size}, but the package is {package.size} bytes"
            )
        if record.installed_size != package.installed_size:
            section.notes.append(
                f"target {target.name!r}: index I:{record.installed_size} for {label} "
                f"differs from .PKGINFO size {package.installed_size}"
            )
        matches = record.identity == package.identity
        if not matches:
            section.notes.append(
                f"target {target.name!r}: C:{record.identity} for {label} is not the "
                f"package's identity {package.identity} (Q1 of its control member; "
                "apk checks downloads against C:)"
            )
        kinds = Counter(apk.parse_identity(r.identity).kind for r in index.records)
        if kinds.get("Q2"):
            section.notes.append(
                f"target {target.name!r}: {kinds['Q2']} record(s) carry Q2 (SHA-256) identities"
            )
        sig = index.signature
        return {
            "index_sha256": index.sha256,
            "index_bytes": index.size,
            "description": index.description,
            "signature_algorithm": sig.algorithm,
            "signature_digest": sig.digest,
            "key_name": sig.key_name,
            "verified_with": sig.verified_with,
            "verified": index.verified,
            "records": len(index.records),
            "identity_kinds": dict(sorted(kinds.items())),
            "package_identity": record.identity,
            "package_identity_matches": matches,
        }

    def _package_record(self, package: apk.Package, section: Section) -> dict[str, Any]:
        signature: dict[str, Any] | None = None
        try:
            verified = apk.verify_package(package, self.public_keys)
            signature = {
                "algorithm": verified.algorithm,
                "key_name": verified.key_name,
                "verified_with": verified.verified_with,
            }
        except apk.ApkError as exc:
            section.notes.append(f"package signature not verified with --public-key: {exc}")
            if package.signatures:
                first = package.signatures[0]
                signature = {"algorithm": first.algorithm, "key_name": first.key_name, "verified_with": None}
        return {
            "path": self.package_path.lstrip("/"),
            "name": package.name,
            "version": package.version,
            "arch": package.arch,
            "size": package.size,
            "installed_size": package.installed_size,
            "sha256": package.sha256,
            "identity": package.identity,
            "signature": signature,
            "signature_verified": bool(signature and signature["verified_with"]),
            "range_sha256": hashlib.sha256(package.data[:RANGE_BYTES]).hexdigest(),
        }


PROFILE = AlpineProfile


def _read_keys(paths: tuple[str, ...]) -> dict[str, bytes]:
    """Public keys by file name (how apk-tools names them); each must be an RSA PEM public key."""
    keys: dict[str, bytes] = {}
    for raw in paths:
        path = Path(raw)
        try:
            pem = path.read_bytes()
        except OSError as exc:
            raise HttpbenchError(f"--public-key {raw}: cannot read ({exc.strerror})") from None
        try:
            apk.load_public_key(pem, path.name)
        except apk.ApkError as exc:
            raise HttpbenchError(f"--public-key {raw}: {exc}") from None
        if path.name in keys and keys[path.name] != pem:
            raise HttpbenchError(f"--public-key: two different keys are named {path.name!r}")
        keys[path.name] = pem
    return keys


def _read_package(data: bytes, path: str) -> apk.Package:
    try:
        return apk.read_package(data)
    except apk.ApkError as exc:
        reason = str(exc).removeprefix("package: ")
        raise HttpbenchError(f"preflight: package {path} is not a valid APK v2 package: {reason}") from None


def _expect(
    ctx: Context, target: Target, method: str, path: str, headers: dict[str, str], status: int, what: str
) -> httpx.Response:
    # identity: a server that adds Content-Encoding must not be decoded into matching bytes
    resp = ctx.fetch(target, path, method, {"Accept-Encoding": "identity", **headers})
    if resp.status_code != status:
        hint = f" (redirect to {resp.headers['location']})" if "location" in resp.headers else ""
        raise HttpbenchError(
            f"preflight: target {target.name!r}: {what} {path} returned "
            f"{resp.status_code}, expected {status}{hint}"
        )
    if method == "HEAD" and resp.content:
        raise HttpbenchError(f"preflight: target {target.name!r}: {what} {path} has a body")
    return resp


def _range_mismatch(body: bytes, expected: bytes, data: bytes) -> str:
    first = next(i for i, (a, b) in enumerate(zip(body, expected)) if a != b)
    found = data.find(body[:64]) if len(body) >= 64 else -1
    shifted = f"; the bytes are the package's from offset {found}" if found > 0 else ""
    return f"body differs from the package's first {len(expected):,} bytes at offset {first}{shifted}"


def _packages(items: list[tuple[str, str, int, int]], limit: int = 5) -> str:
    shown = [f"{p}-{v} (S:{s} I:{i})" for p, v, s, i in items[:limit]]
    more = f" and {len(items) - limit} more" if len(items) > limit else ""
    return ", ".join(shown) + more


def _identity_differences(targets: list[Target], indexes: dict[str, apk.SignedIndex]) -> list[str]:
    """``C:`` values that differ between the baseline and a candidate for the same P/V/S/I."""
    base = targets[0].name
    reference = {r.logical: r.identity for r in indexes[base].records}
    notes = []
    for target in targets[1:]:
        differing = [
            (key, reference[key], r.identity)
            for r in indexes[target.name].records
            for key in [r.logical]
            if key in reference and reference[key] != r.identity
        ]
        if differing:
            (p, v, _, _), ours, theirs = differing[0]
            more = f" (and {len(differing) - 1} more)" if len(differing) > 1 else ""
            notes.append(
                f"C: differs between {base!r} and {target.name!r} for {len(differing)} "
                f"package(s): {p}-{v} {ours} vs {theirs}{more}; not compared (a repository "
                "may compute the identity differently)"
            )
    return notes


def _signature_differences(targets: list[Target], indexes: dict[str, apk.SignedIndex]) -> list[str]:
    base = indexes[targets[0].name].signature
    notes = []
    for target in targets[1:]:
        sig = indexes[target.name].signature
        if (sig.algorithm, sig.key_name) != (base.algorithm, base.key_name):
            notes.append(
                f"index signature entry differs: {targets[0].name!r} {base.entry_name}, "
                f"{target.name!r} {sig.entry_name}"
            )
    return notes
