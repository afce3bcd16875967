"""A catalog as the command line names it: the directory or file ``--catalog`` points at, and the
files in it that are the catalog's own inputs (which no output may replace)."""

from __future__ import annotations

from pathlib import Path

from dbbench.catalog.entries import SETUP_DIR, resolve
from dbbench.errors import DbbenchError

__all__ = ["locate", "reads"]


def locate(value: str | Path) -> Path | None:
    """The catalog ``value`` names (a directory, an entry file, a name under ``sql/catalog/``), or
    None when it names none (the command says so in its own words)."""
    try:
        return resolve(str(value))
    except DbbenchError:
        return None


def reads(relative: Path) -> bool:
    """Whether a file at ``relative`` (to the catalog's directory) is one the catalog reads: its
    entries (``.toml``, ``.sql``), its setup SQL folder and its ``data/`` (the data spec)."""
    return relative.suffix in (".toml", ".sql") or relative.parts[:1] in ((SETUP_DIR,), ("data",))
