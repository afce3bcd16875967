"""The ``httpbench`` command: parse the options, make one library call, render the result.

The group and :func:`main` are here; what the commands share (the one error handler, progress
lines) is :mod:`~httpbench.cli.app`, how they declare options :mod:`~httpbench.cli.options`. The
commands by concern: :mod:`~httpbench.cli.compare` (``compare`` and its option table),
:mod:`~httpbench.cli.bench` (``bench-client``), :mod:`~httpbench.cli.peers` (``peers``),
:mod:`~httpbench.cli.fixture` (``fixture``), :mod:`~httpbench.cli.demo` (``demo``),
:mod:`~httpbench.cli.apk_client` (``apk-client``) and :mod:`~httpbench.cli.report` (``report``).
"""

from __future__ import annotations

import sys

import click

from httpbench import __version__
from httpbench.cli.apk_client import apk_client
from httpbench.cli.app import run
from httpbench.cli.bench import bench_client
from httpbench.cli.compare import compare
from httpbench.cli.demo import demo
from httpbench.cli.fixture import fixture
from httpbench.cli.peers import peers
from httpbench.cli.report import report
from httpbench.errors import HttpbenchError
from verdict.cli import guard_paths


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="httpbench")
def cli() -> None:
    """Same-host A/B HTTP benchmarks: a candidate against a baseline."""


cli.add_command(compare)
cli.add_command(bench_client)
cli.add_command(peers)
cli.add_command(fixture)
cli.add_command(demo)
cli.add_command(apk_client)
cli.add_command(report)
guard_paths(cli, HttpbenchError)  # an output never replaces an input, nor another output


def main(argv: list[str] | None = None) -> None:
    """Console entry point (:mod:`httpbench.entry`): the command line, with the one error handler."""
    run(cli, sys.argv[1:] if argv is None else argv)
