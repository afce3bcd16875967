"""A deterministic Alpine APK v2 repository tree to upload to (or serve as) a repository under test.

``write_tree(DIR)`` writes::

    keys/<key>.rsa                              RSA private key (PKCS#8 PEM, mode 0600)
    keys/<key>.rsa.pub                          its public key, as apk expects under /etc/apk/keys
    <branch>/<repo>/<arch>/<name>-<version>.apk  signed v2 package, pseudo-random payload
    <branch>/<repo>/<arch>/APKINDEX.tar.gz       signed v2 index with the package's record
    manifest.json                               paths, size, SHA-256, Q1 identity, key name, and
                                                the ``httpbench compare --profile alpine`` options

Everything but the key is a pure function of the arguments, and a rerun into the same directory
reuses the key, so reruns are byte-identical. A directory that is not empty and holds no manifest
written by this module is never written to.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from httpbench.errors import HttpbenchError
from httpbench.profiles.alpine import apk

GENERATOR = "httpbench fixture alpine"
MANIFEST = "manifest.json"
DEFAULT_PACKAGE_SIZE = 4_196_328
DEFAULT_KEY_NAME = "httpbench-alpine"
MIN_PACKAGE_SIZE = 4096
_COMPONENT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]*$")


@dataclass(frozen=True)
class Layout:
    """Where the package sits in the tree and what it and its key are called (each a plain path
    component: letters, digits, ``. _ + -``)."""

    branch: str = "v3.23"
    repo: str = "main"
    arch: str = "x86_64"
    name: str = "httpbench-alpine-benchmark"
    version: str = "1.0.0-r0"
    key_name: str = DEFAULT_KEY_NAME

    def check(self) -> None:
        for label, value in (
            ("branch", self.branch),
            ("repo", self.repo),
            ("arch", self.arch),
            ("name", self.name),
            ("version", self.version),
            ("key name", self.key_name),
        ):
            if not _COMPONENT.match(value) or ".." in value:
                raise HttpbenchError(f"fixture alpine: bad {label} {value!r} (letters, digits, . _ + -)")

    @property
    def directory(self) -> str:
        return f"{self.branch}/{self.repo}/{self.arch}"


def write_tree(
    dest: Path, *, package_size: int = DEFAULT_PACKAGE_SIZE, seed: int = 1, layout: Layout = Layout()
) -> dict[str, Any]:
    """Write the tree into ``dest`` (created if missing) and return the manifest."""
    layout.check()
    if package_size < MIN_PACKAGE_SIZE:
        raise HttpbenchError(f"fixture alpine: package size must be at least {MIN_PACKAGE_SIZE} bytes")
    dest = Path(dest)
    try:
        previous = _claim(dest)
        dest.mkdir(parents=True, exist_ok=True)  # fail now, not after building the package
        private = _private_key(dest, layout.key_name)
    except OSError as exc:
        raise _cannot_write(dest, exc) from None
    pub_name = f"{layout.key_name}.rsa.pub"
    meta = apk.PackageMeta(layout.name, layout.version, layout.arch)
    package = apk.build_sized_package(package_size, meta, seed=seed, private_key=private, key_name=pub_name)
    index = apk.build_index(
        [apk.record_for(package)],
        private_key=private,
        key_name=pub_name,
        description=f"{layout.branch}/{layout.repo} httpbench fixture",
        mtime=meta.build_date,
    )
    directory = layout.directory
    files = {
        f"keys/{layout.key_name}.rsa": private,
        f"keys/{pub_name}": apk.public_key_pem(private),
        f"{directory}/{package.file_name}": package.data,
        f"{directory}/APKINDEX.tar.gz": index,
    }
    manifest = _manifest(dest, package, index, files, directory, pub_name, package_size, seed)
    try:
        _remove_stale(dest, previous, set(files))
        for rel, data in files.items():
            _write(dest / rel, data, private=rel.endswith(".rsa"))
        _write(dest / MANIFEST, (json.dumps(manifest, indent=2, sort_keys=True) + "\n").encode())
    except OSError as exc:
        raise _cannot_write(dest, exc) from None
    return manifest


def _cannot_write(dest: Path, exc: OSError) -> HttpbenchError:
    where = f" ({exc.filename})" if exc.filename and str(exc.filename) != str(dest) else ""
    return HttpbenchError(f"fixture alpine: cannot write {dest}: {exc.strerror or exc}{where}")


def _claim(dest: Path) -> dict[str, Any] | None:
    """The previous manifest of ours in ``dest``; refuses foreign or unreadable content."""
    if dest.exists() and not dest.is_dir():
        raise HttpbenchError(f"fixture alpine: {dest} exists and is not a directory")
    if not dest.exists() or not any(dest.iterdir()):
        return None
    try:
        doc = json.loads((dest / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        doc = None
    if not isinstance(doc, dict) or doc.get("generator") != GENERATOR:
        raise HttpbenchError(
            f"fixture alpine: refusing to write into {dest}: it is not empty and "
            f"has no {MANIFEST} written by '{GENERATOR}'"
        )
    return doc


def _private_key(dest: Path, key_name: str) -> bytes:
    """The tree's key: reused when present (so reruns are byte-identical), else a new one."""
    path = dest / "keys" / f"{key_name}.rsa"
    if path.exists():
        pem = path.read_bytes()
        apk.public_key_pem(pem)  # a clear error if the file is not a usable key
        return pem
    return apk.generate_private_key()


def _manifest(
    dest: Path,
    package: apk.Package,
    index: bytes,
    files: dict[str, bytes],
    directory: str,
    pub_name: str,
    requested: int,
    seed: int,
) -> dict[str, Any]:
    package_path = f"{directory}/{package.file_name}"
    public_key = str((dest / "keys" / pub_name).resolve())
    options = [
        "--profile",
        "alpine",
        "--package-path",
        package_path,
        "--package-sha256",
        package.sha256,
        "--public-key",
        public_key,
    ]
    return {
        "generator": GENERATOR,
        "package": {
            "path": package_path,
            "name": package.name,
            "version": package.version,
            "arch": package.arch,
            "size": package.size,
            "requested_size": requested,
            "installed_size": package.installed_size,
            "sha256": package.sha256,
            "identity": package.identity,
            "seed": seed,
        },
        "index": {
            "path": f"{directory}/APKINDEX.tar.gz",
            "size": len(index),
            "sha256": hashlib.sha256(index).hexdigest(),
            "signature": "RSA",
        },
        "key": {
            "name": pub_name,
            "public": f"keys/{pub_name}",
            "private": f"keys/{pub_name.removesuffix('.pub')}",
        },
        "files": sorted(files),
        "compare_options": options,
        "compare_command": shlex.join(
            ["httpbench", "compare", "--target", "baseline=URL", "--target", "candidate=URL", *options]
        ),
    }


def _remove_stale(dest: Path, previous: dict[str, Any] | None, keep: set[str]) -> None:
    """Delete files an earlier run of ours listed and this run does not write."""
    for rel in (previous or {}).get("files", []):
        if isinstance(rel, str) and rel not in keep and ".." not in rel.split("/"):
            path = dest / rel
            if path.is_file():
                path.unlink()


def _write(path: Path, data: bytes, private: bool = False) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists() and path.read_bytes() == data:
        return
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600 if private else 0o644)
    with os.fdopen(fd, "wb") as out:
        out.write(data)
    os.replace(tmp, path)


def summary(manifest: dict[str, Any], dest: Path) -> str:
    pkg = manifest["package"]
    return "\n".join(
        [
            f"wrote {dest}",
            f"  package  {pkg['path']}  {pkg['size']:,} bytes  sha256 {pkg['sha256']}",
            f"  identity C:{pkg['identity']}",
            f"  index    {manifest['index']['path']}  signed .SIGN.RSA.{manifest['key']['name']}",
            f"  key      {manifest['key']['public']} (trust it under /etc/apk/keys/{manifest['key']['name']})",
            "upload the package (and key) to each repository, then run:",
            f"  {manifest['compare_command']}",
        ]
    )
