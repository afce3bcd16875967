"""``httpbench peers``: the programs httpbench starts or drives, found or installed."""

from __future__ import annotations

import click

from httpbench.cli.app import say


@click.group()
def peers() -> None:
    """The programs httpbench starts or drives (nginx, caddy, wrk): status, install."""


@peers.command("status")
def peers_status() -> None:
    """Each program: where it is, or missing, and the Debian package that provides it."""
    from tabulate import tabulate

    from httpbench.peers import programs

    click.echo(tabulate(programs.status(), headers="keys"))


@peers.command("install")
@click.argument("names", nargs=-1, type=click.Choice(["nginx", "caddy", "wrk"]))
def peers_install(names) -> None:
    """Install the missing ones (all three by default) from the system's packages (root, apt-get);
    the package scripts are kept from starting system-wide services."""
    from httpbench.peers import programs

    installed = programs.install(names or programs.ALL, say)
    say(f"installed {', '.join(installed)}" if installed else "nothing to install")
    peers_status.callback()  # type: ignore[misc]
