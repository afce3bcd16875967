"""The ``httpbench`` command (the compare engine lands with its own issue)."""

import click

from httpbench import __version__


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="httpbench")
def cli() -> None:
    """Same-host A/B HTTP benchmarks: a candidate against a baseline."""


def main() -> None:
    cli(prog_name="httpbench")
