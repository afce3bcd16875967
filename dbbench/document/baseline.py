"""Baselines: a run's normalized plans and timings in a file meant to be committed.

A baseline is an explain result document (schema ``dbbench.explain/2``, see ``docs/results.md``)
without the servers' raw plan output, with ``baseline`` saying when and from what it was saved.
Everything else of a result stays, the evidence ``dbbench diff BASELINE [RESULT]``
(:mod:`dbbench.diff`) judges a later run on: the normalized plans, the samples and, for a write or
a locking read, each spelling's lock footprint (``locks``), the write's fingerprints before and
after (``unchanged``) and a ``[race]`` shape's two-session check (``race``). A baseline saved
before footprints were recorded has none and still loads: the diff then gives no verdict on locks.
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from dbbench.document import store
from dbbench.document.model import Document, as_document


def from_result(doc: Document | dict[str, Any], source: str = "run") -> Document:
    """A baseline from a result document: raw plans dropped (the normalized ``plan`` trees, the
    lock footprints and every other field stay)."""
    saved_at = datetime.now(UTC).isoformat(timespec="seconds")
    return as_document(doc, source).as_baseline(saved_at, source)


def save(path: Path | str, doc: Document | dict[str, Any], source: str = "run") -> str:
    """Write the baseline of ``doc`` to ``path``; returns the file's SHA-256."""
    path = Path(path)
    if path.parent and not path.parent.exists():
        path.parent.mkdir(parents=True)
    store.write(path, from_result(doc, source).to_json())
    return hashlib.sha256(path.read_bytes()).hexdigest()


def load(path: Path | str) -> Document:
    return store.load_document(path, "explain")
