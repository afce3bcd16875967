"""``dbbench servers up / down / status`` (the local loopback servers, :mod:`dbbench.servers`) and
``dbbench bench seed`` (:mod:`dbbench.bench.seed_floor`), as library calls."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from dbbench import servers
from dbbench.defaults import Dialect
from dbbench.servers import Home, ServerStatus
from dbbench.workflow.connect import Connect

__all__ = ["Home", "ServerStatus", "bench_seed", "down", "status", "up"]


def up(
    which: Iterable[Dialect] | None,
    *,
    home: Home,
    ports: dict[str, int | None],
    say: Callable[[str], None],
) -> list[ServerStatus]:
    """Install (first time), start and wait for the local servers (``which``: all when None)."""
    return servers.up(which, home=home, ports=ports, say=say)


def down(which: Iterable[Dialect] | None, *, home: Home) -> list[str]:
    """Stop the local servers ``up`` started; the names of those stopped."""
    return servers.down(which, home=home)


def status(which: Iterable[Dialect] | None, *, home: Home) -> list[ServerStatus]:
    return servers.status(which, home=home)


def bench_seed(
    connect: Connect, dataset: str, cache_dir: Path, repeat: int
) -> tuple[list[Any], float, float]:
    """``dbbench bench seed``: per server the seed next to its raw bulk-load floor (best of
    ``repeat``), and the floor's and the seed's walls for all servers at once."""
    from dbbench.bench import seed_floor

    with connect(warn=False) as targets:
        return seed_floor.run(targets, dataset, cache_dir, repeat)
