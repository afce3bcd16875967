"""Prepared load files: a dataset's rows encoded once per dialect and cached on disk.

The dataset is deterministic, so its encoded form is too: the first seed generates and encodes the
rows (a few seconds of Python), later seeds of the same definition stream the cached files straight
into ``COPY`` / ``LOAD DATA``. The cache key covers the definition, the word pool and the code that
generates and encodes rows, so any change to them produces a new cache entry.
"""

from __future__ import annotations

import glob
import hashlib
import json
import os
import shutil
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from dbbench import dialects
from dbbench.dataset import definition, generate
from dbbench.dataset.definition import Dataset, Table
from dbbench.dialects import encode

FORMAT = 1
PARTIAL = ".partial-"  # NAME-KEY.partial-PID: the folder a process writes before renaming it to NAME-KEY


@dataclass
class PreparedTable:
    name: str
    columns: list[str]
    kinds: list[str]
    rows: int
    files: dict[str, Path]

    @property
    def binary_columns(self) -> frozenset[str]:
        return frozenset(c for c, k in zip(self.columns, self.kinds) if k == "bytes")


def column_kinds(table: Table) -> list[str]:
    kinds = []
    for i in range(len(table.columns)):
        sample = next((r[i] for r in table.rows if r[i] is not None), None)
        kinds.append(
            "bytes"
            if isinstance(sample, bytes)
            else "datetime"
            if isinstance(sample, datetime)
            else "bool"
            if isinstance(sample, bool)
            else "int"
            if isinstance(sample, int)
            else "text"
        )
    return kinds


def cache_key(ds: Dataset) -> str:
    h = hashlib.sha256()
    h.update(json.dumps(ds.raw, sort_keys=True, default=str).encode())
    h.update("\n".join(definition.word_pool(ds)).encode())
    for module in (definition, generate, encode, dialects.postgresql, dialects.mysql):
        assert module.__file__ is not None  # loaded from their source files
        h.update(Path(module.__file__).read_bytes())
    h.update(str(FORMAT).encode())
    return h.hexdigest()[:16]


def prepare(
    ds: Dataset, dialect_names: list[str], cache_root: Path
) -> tuple[list[PreparedTable], float, bool]:
    """The dataset's load files for ``dialect_names``: (tables, seconds spent, whether cached)."""
    start = time.perf_counter()
    entry = cache_root / f"{ds.name}-{cache_key(ds)}"
    manifest = entry / "manifest.json"
    if manifest.exists():
        tables = _read_manifest(entry)
        if all(all(d in t.files and t.files[d].exists() for d in dialect_names) for t in tables):
            return tables, time.perf_counter() - start, True
    _remove_abandoned(cache_root, ds.name)
    partial = entry.with_name(entry.name + f"{PARTIAL}{os.getpid()}")
    shutil.rmtree(partial, ignore_errors=True)
    try:
        partial.mkdir(parents=True)
        _write(ds, partial)
        shutil.rmtree(entry, ignore_errors=True)
        os.replace(partial, entry)
    except BaseException:  # Ctrl-C included: no half-written folder is left behind
        shutil.rmtree(partial, ignore_errors=True)
        raise
    for stale in cache_root.glob(f"{ds.name}-*"):  # keep one entry per dataset name
        if stale != entry and PARTIAL not in stale.name:
            shutil.rmtree(stale, ignore_errors=True)
    return _read_manifest(entry), time.perf_counter() - start, False


def _write(ds: Dataset, folder: Path) -> None:
    """Generate the dataset's rows and write its load files and manifest into ``folder``."""
    out = []
    for table in generate.generate(ds):
        kinds = column_kinds(table)
        files = {}
        for d in dialects.MODULES:
            path = folder / f"{table.name}.{d}.tsv"
            path.write_text(dialects.get(d).encode(table.rows, kinds))
            files[d] = path
        out.append(PreparedTable(table.name, table.columns, kinds, len(table.rows), files))
    (folder / "manifest.json").write_text(
        json.dumps(
            [{"name": t.name, "columns": t.columns, "kinds": t.kinds, "rows": t.rows} for t in out], indent=1
        )
    )


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def _remove_abandoned(cache_root: Path, name: str) -> None:
    """Remove the folders of ``name`` a killed process left half-written (``NAME-KEY.partial-PID``
    whose process is gone); a live process's folder is its own."""
    for folder in cache_root.glob(f"{glob.escape(name)}-*{PARTIAL}*"):
        pid = folder.name.rpartition(PARTIAL)[2]
        if pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(folder, ignore_errors=True)


def _read_manifest(entry: Path) -> list[PreparedTable]:
    items = json.loads((entry / "manifest.json").read_text())
    return [
        PreparedTable(
            i["name"],
            i["columns"],
            i["kinds"],
            i["rows"],
            {d: entry / f"{i['name']}.{d}.tsv" for d in dialects.MODULES},
        )
        for i in items
    ]
