"""One JSON result schema for every command, written strictly (no NaN/Infinity, no secrets)."""

from __future__ import annotations

import json
import platform
from dataclasses import asdict
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from dbbench import __version__
from dbbench.seed import SeedResult
from dbbench.dataset import Dataset
from dbbench.targets import Target

SCHEMA_VERSION = 1


def envelope(kind: str, targets: list[Target]) -> dict[str, Any]:
    return {
        "schema": f"dbbench.{kind}/{SCHEMA_VERSION}",
        "generated_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "tool": {"name": "dbbench", "version": __version__},
        "host": {"machine": platform.machine(), "python": platform.python_version()},
        "servers": [{"dialect": t.dialect, "version": t.version_text, "url": t.safe_url} for t in targets],
    }


def seed_document(ds: Dataset, targets: list[Target], results: list[SeedResult], generated: float,
                  agree: dict[str, bool]) -> dict[str, Any]:
    doc = envelope("seed", targets)
    doc["dataset"] = {"name": ds.name, "seed": ds.seed, "definition": ds.path.name}
    doc["generate_seconds"] = round(generated, 4)
    doc["targets"] = [{
        "dialect": r.dialect,
        "namespace": r.namespace,
        "seconds": {k: round(v, 4) for k, v in r.seconds.items()},
        "total_seconds": round(r.total_seconds, 4),
        "cardinalities": [asdict(c) | {"ok": c.ok} for c in r.checks],
        "fingerprints": r.fingerprints,
        "ok": r.ok,
    } for r in results]
    doc["fingerprints_equal"] = agree
    return doc


def write(path: Path, doc: dict[str, Any]) -> None:
    path.write_text(json.dumps(doc, indent=2, allow_nan=False, default=str) + "\n")
