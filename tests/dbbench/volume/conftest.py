"""The volume tests' namespaces: their own names, dropped (with their roles) afterwards."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.db import drop_namespaces

ROOT = Path(__file__).resolve().parents[3]
MARKET = ROOT / "examples" / "market"


@pytest.fixture
def owned(local_servers):
    """Namespaces a test names through ``owned(name)``, dropped when it ends."""
    names: list[str] = []

    def own(name: str) -> str:
        names.append(name)
        return name

    yield own
    drop_namespaces(*names)


@pytest.fixture
def market(tmp_path: Path) -> Path:
    """A copy of examples/market (its spec is written there, not into the repository)."""
    folder = tmp_path / "market"
    shutil.copytree(MARKET, folder, ignore=shutil.ignore_patterns("data"))
    return folder
