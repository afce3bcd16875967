"""The volume tests' namespaces: their own names, dropped (with their roles) afterwards."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from dbbench.access import isolation
from dbbench.access.targets import open_targets

ROOT = Path(__file__).resolve().parents[3]
MARKET = ROOT / "examples" / "market"


def drop(namespace: str) -> None:
    targets = open_targets({})
    try:
        for t in targets:
            isolation.drop_namespace(t, namespace)
    finally:
        for t in targets:
            t.dispose()


@pytest.fixture
def owned(local_servers):
    """Namespaces a test names through ``owned(name)``, dropped when it ends."""
    names: list[str] = []

    def own(name: str) -> str:
        names.append(name)
        return name

    yield own
    for name in names:
        drop(name)


@pytest.fixture
def market(tmp_path: Path) -> Path:
    """A copy of examples/market (its spec is written there, not into the repository)."""
    folder = tmp_path / "market"
    shutil.copytree(MARKET, folder, ignore=shutil.ignore_patterns("data"))
    return folder
