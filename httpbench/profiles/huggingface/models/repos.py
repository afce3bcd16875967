"""The tiny model repositories the Hub fixture serves besides its default content: a BERT for
Transformers (``httpbench/tiny-bert``) and a Stable Diffusion pipeline for Diffusers
(``httpbench/tiny-sd``), made by :mod:`generate` in a client line's environment.

Their bytes are pinned: ``pinned.json`` beside this file holds every file's SHA-256 and size and the
versions that made them. The fixture serves a directory of them only when every file matches (so
the preflight and the clients can check every byte), and the preflight checks the same pins.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path, PurePosixPath
from typing import Any

from httpbench.errors import HttpbenchError

PINNED = Path(__file__).with_name("pinned.json")
ORG = "httpbench"
BERT, SD = "tiny-bert", "tiny-sd"
# files the Hub keeps in Git LFS (served with X-Linked-Etag = SHA-256, ETag = SHA-256)
LFS_SUFFIXES = (".safetensors", ".bin", ".pt", ".ckpt", ".h5", ".msgpack", ".onnx")


def is_lfs(path: str) -> bool:
    return path.endswith(LFS_SUFFIXES)


def repo_id(name: str) -> str:
    return f"{ORG}/{name}"


def model_name(repo: str) -> str | None:
    """The model a repository id serves: ``ORG/tiny-bert`` and ``ORG/tiny-bert-ANYTHING`` (fresh
    repositories for cold samples) serve ``tiny-bert``; None for the default content."""
    name = repo.partition("/")[2]
    for model in (BERT, SD):
        if name == model or name.startswith(model + "-"):
            return model
    return None


def load_manifest(path: Path | None = None) -> dict[str, Any]:
    """A manifest (``pinned.json`` by default): {"versions": {...}, "repos": {name: {file: {sha256, size}}}}."""
    return _load(str(path or PINNED))


@lru_cache(maxsize=8)
def _load(path: str) -> dict[str, Any]:
    try:
        doc = json.loads(Path(path).read_text())
    except OSError as exc:
        raise HttpbenchError(f"model manifest {path}: {exc.strerror}") from None
    except ValueError:
        raise HttpbenchError(f"model manifest {path}: not JSON") from None
    repos = doc.get("repos") if isinstance(doc, dict) else None
    if not isinstance(repos, dict) or not repos or not all(isinstance(v, dict) and v for v in repos.values()):
        raise HttpbenchError(f"model manifest {path}: no repos with files")
    return doc


def read_models(directory: Path, manifest: dict[str, Any]) -> dict[str, dict[str, bytes]]:
    """Every pinned repository's files from ``directory/NAME/``, checked against the manifest: a
    missing, extra or different file is refused naming it and the versions that made the pins."""
    import hashlib

    made_by = ", ".join(f"{k} {v}" for k, v in sorted((manifest.get("versions") or {}).items()))
    out: dict[str, dict[str, bytes]] = {}
    for name, pins in manifest["repos"].items():
        folder = directory / name
        found = {p.relative_to(folder).as_posix(): p for p in sorted(folder.rglob("*")) if p.is_file()}
        if not found:
            raise HttpbenchError(f"model repository {folder}: no files")
        missing, extra = sorted(set(pins) - set(found)), sorted(set(found) - set(pins))
        if missing or extra:
            raise HttpbenchError(
                f"model repository {name}: files differ from the pinned ones (missing {missing}, extra {extra})"
            )
        files = {}
        for rel, path in found.items():
            data = path.read_bytes()
            if hashlib.sha256(data).hexdigest() != pins[rel]["sha256"]:
                raise HttpbenchError(
                    f"model repository {name}: {rel} is not the pinned bytes (SHA-256 "
                    f"{hashlib.sha256(data).hexdigest()[:12]}…, pinned {pins[rel]['sha256'][:12]}…; "
                    f"the pins were made with {made_by or 'unrecorded versions'})"
                )
            files[str(PurePosixPath(rel))] = data
        out[name] = files
    return out
