"""``httpbench bench-client``: is the timing client fast enough (wrk and httpbench on one nginx)."""

from __future__ import annotations

import click

from httpbench.cli.app import say
from verdict.cli import Float


@click.command("bench-client")
@click.option(
    "--requests",
    "requests_",
    type=click.IntRange(1000, 5_000_000),
    default=200_000,
    show_default=True,
    help="httpbench timed requests.",
)
@click.option("--duration", type=Float(1, 60), default=5.0, show_default=True, help="wrk run seconds.")
@click.option("--concurrency", type=click.IntRange(1, 1024), default=16, show_default=True)
@click.option("--wrk-threads", type=click.IntRange(1, 64), default=1, show_default=True)
@click.option(
    "--size",
    type=click.IntRange(0, 64 << 20),
    default=1024,
    show_default=True,
    help="Bytes of the served file.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def bench_client(requests_, duration, concurrency, wrk_threads, size, as_json) -> None:
    """Start a local nginx, run wrk and httpbench against it, print both and the ratio."""
    from httpbench.bench import wrk
    from httpbench.report import bench

    result = wrk.run(requests_, duration, concurrency, wrk_threads, size, progress=say)
    click.echo(bench.render(result, as_json))
