"""``dbbench bench``: ratios measured side by side in one run."""

from __future__ import annotations

import click

from dbbench import defaults
from dbbench.cli.app import _connect
from dbbench.cli.options import target_options
from dbbench.output.commands import render_bench_seed
from dbbench.workflow.local import Home, bench_seed


@click.group("bench")
def bench_group() -> None:
    """Benchmarks: ratios measured side by side in one run."""


@bench_group.command("seed")
@target_options
@click.option("--dataset", default=defaults.DATASET, show_default=True)
@click.option(
    "--repeat",
    default=1,
    show_default=True,
    type=click.IntRange(1, 10),
    help="Runs of floor + seed; the best of each is reported.",
)
@click.pass_obj
def bench_seed_cmd(home: Home, pg_url, mysql_url, only, dataset, repeat) -> None:
    """Seed time next to the raw floor (the servers' own bulk load + the same indexes)."""
    rows, floor_wall, seed_wall = bench_seed(
        _connect(home, pg_url, mysql_url, only), dataset, home.root / "datasets", repeat
    )
    click.echo(render_bench_seed(rows, floor_wall, seed_wall))
