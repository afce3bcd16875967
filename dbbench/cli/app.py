"""The ``dbbench`` click group and what every command shares: errors as one line on stderr,
the ``--home`` / ``--instance`` options, and the targets the options name."""

from __future__ import annotations

import sys
from contextlib import AbstractContextManager
from pathlib import Path

import click
import psycopg
import pymysql
from sqlalchemy.exc import SQLAlchemyError

from dbbench.access.targets import Target
from dbbench.defaults import VERSION as __version__
from dbbench.errors import DbbenchError
from dbbench.servers import Home
from dbbench.workflow import Connect, opened


def err(message: str) -> None:
    click.echo(f"dbbench: {message}", err=True)


class Cli(click.Group):
    """Turns every :class:`DbbenchError` into one line on stderr and its exit code."""

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except DbbenchError as exc:
            err(f"error: {exc}")
            sys.exit(exc.exit_code)
        except KeyboardInterrupt:
            err("interrupted")
            sys.exit(130)
        except (psycopg.Error, pymysql.err.Error, SQLAlchemyError) as exc:
            # A server refused a statement mid-run: say which, in one line, without secrets.
            first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            err(f"error: the database server reported: {first[:300]}")
            sys.exit(2)
        except OSError as exc:
            if exc.filename is None:
                raise
            # An output file that cannot be written (or an input that cannot be read): say which.
            err(f"error: {exc.filename}: {exc.strerror or exc}")
            sys.exit(2)


@click.group(cls=Cli, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="dbbench")
@click.option(
    "--home",
    type=click.Path(path_type=Path),
    envvar="DBBENCH_HOME",
    help="Where local servers are installed and kept (env DBBENCH_HOME).",
)
@click.option(
    "--instance",
    default="default",
    envvar="DBBENCH_INSTANCE",
    show_default=True,
    help="Name of the local server set (env DBBENCH_INSTANCE).",
)
@click.pass_context
def cli(ctx: click.Context, home: Path | None, instance: str) -> None:
    """Index-regression checks for SQL query catalogs on PostgreSQL and MySQL."""
    ctx.obj = Home(home, instance)


def say(message: str) -> None:
    err(message)


def _connect(home: Home, pg_url: str | None, mysql_url: str | None, only: str | None) -> Connect:
    """The targets the options name, opened for a ``with`` block (their warnings said on stderr)."""

    def connect(*, warn: bool = True) -> AbstractContextManager[list[Target]]:
        return opened({"postgresql": pg_url, "mysql": mysql_url}, only, home=home, warn=err if warn else None)

    return connect
