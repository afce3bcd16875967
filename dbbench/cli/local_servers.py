"""``dbbench servers up / down / status``: the local loopback servers."""

from __future__ import annotations

import click

from dbbench.cli.app import err, say
from dbbench.cli.options import DIALECT_CHOICE
from dbbench.output.commands import render_status
from dbbench.workflow import local
from dbbench.workflow.local import Home
from verdict.cli import port


@click.group("servers")
def servers_group() -> None:
    """Local loopback PostgreSQL 12.22 and MySQL servers (the embedded default)."""


def _which(names: tuple[str, ...]):
    return list(dict.fromkeys(names)) or None


def _print_status(rows, as_json: bool) -> None:
    click.echo(render_status(rows, as_json))


@servers_group.command("up")
@click.argument("which", nargs=-1, type=DIALECT_CHOICE)
@click.option("--pg-port", type=port(), help="Port for a newly started PostgreSQL (default 55432).")
@click.option("--mysql-port", type=port(), help="Port for a newly started MySQL (default 53306).")
@click.option("--json", "as_json", is_flag=True, help="Print the status as JSON.")
@click.pass_obj
def servers_up(home: Home, which, pg_port, mysql_port, as_json) -> None:
    """Install (first time), start and wait for the local servers; reuse running ones."""
    rows = local.up(_which(which), home=home, ports={"postgresql": pg_port, "mysql": mysql_port}, say=say)
    _print_status(rows, as_json)
    for r in rows:
        if r.server == "MySQL" and r.version and not r.version.startswith("8.0"):
            err(
                f"note: local MySQL is {r.version} (no 8.0 build is installable here; same "
                "optimizer lineage). Use --mysql-url for a real 8.0 server."
            )


@servers_group.command("down")
@click.argument("which", nargs=-1, type=DIALECT_CHOICE)
@click.pass_obj
def servers_down(home: Home, which) -> None:
    """Stop the local servers that `up` started (by pid)."""
    stopped = local.down(_which(which), home=home)
    click.echo("stopped: " + (", ".join(stopped) if stopped else "nothing was running"))


@servers_group.command("status")
@click.argument("which", nargs=-1, type=DIALECT_CHOICE)
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
@click.pass_obj
def servers_status(home: Home, which, as_json) -> None:
    """Versions, ports, pids, data directories and URLs (without passwords)."""
    _print_status(local.status(_which(which), home=home), as_json)
