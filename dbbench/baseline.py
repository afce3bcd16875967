"""Baselines: a run's normalized plans and timings in a file meant to be committed.

A baseline is an explain result document (schema ``dbbench.explain/1``, see ``docs/results.md``)
without the servers' raw plan output, with ``baseline`` saying when and from what it was saved.
``dbbench diff BASELINE [RESULT]`` (:mod:`dbbench.diff`) compares a later run with it.
"""

from __future__ import annotations

import copy
import hashlib
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from dbbench import results


def from_result(doc: dict[str, Any], source: str = "run") -> dict[str, Any]:
    """A baseline from a result document: raw plans dropped (the normalized ``plan`` trees stay)."""
    out = copy.deepcopy(doc)
    for r in out["results"]:
        for spelling in ("remediated", "natural"):
            if r.get(spelling):
                r[spelling].pop("raw_plan", None)
    out["baseline"] = {"saved_at": datetime.now(UTC).isoformat(timespec="seconds"), "from": source}
    return out


def save(path: Path | str, doc: dict[str, Any], source: str = "run") -> str:
    """Write the baseline of ``doc`` to ``path``; returns the file's SHA-256."""
    path = Path(path)
    if path.parent and not path.parent.exists():
        path.parent.mkdir(parents=True)
    results.write(path, from_result(doc, source))
    return hashlib.sha256(path.read_bytes()).hexdigest()


def load(path: Path | str) -> dict[str, Any]:
    return results.load(path, "explain")
