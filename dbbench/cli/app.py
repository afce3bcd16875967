"""The ``dbbench`` click group and what every command shares: errors as one line on stderr (the
one error handler, :class:`Cli`), the ``--home`` / ``--instance`` options, the targets the options
name (:class:`Targets`), and the output files (:func:`write_file`, the one writer)."""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click
import psycopg
import pymysql
from sqlalchemy.exc import SQLAlchemyError

from dbbench.defaults import VERSION as __version__
from dbbench.errors import DbbenchError
from dbbench.workflow.connect import Connect, Target, opened
from dbbench.workflow.local import Home
from verdict.files import clip_lines, write_output


def err(message: str) -> None:
    click.echo(f"dbbench: {clip_lines(message)}", err=True)


class Cli(click.Group):
    """Turns every :class:`DbbenchError` into one line on stderr and its exit code."""

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except DbbenchError as exc:
            err(f"error: {exc}")
            sys.exit(exc.exit_code)
        except click.exceptions.NoArgsIsHelpError:
            raise  # a bare group: its help, as click prints it
        except click.UsageError as exc:
            # A bad option or value of a command: one line, as every other bad input (click would
            # print the usage and a hint first); --help still shows the usage.
            where = f" (see {exc.ctx.command_path} --help)" if exc.ctx is not None else ""
            err(f"error: {' '.join(exc.format_message().split())}{where}")
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


@dataclass(frozen=True)
class Targets:
    """The databases a command talks to: ``--pg-url``, ``--mysql-url`` and ``--only``."""

    pg_url: str | None = None
    mysql_url: str | None = None
    only: str | None = None

    @classmethod
    def take(cls, given: dict[str, Any]) -> Targets:
        """The target options, taken out of a command's option values."""
        return cls(given.pop("pg_url"), given.pop("mysql_url"), given.pop("only"))

    def connect(self, home: Home) -> Connect:
        return _connect(home, self.pg_url, self.mysql_url, self.only)


def write_file(
    path: Path,
    text: str,
    *,
    tell: Callable[[str], None] | None = None,
    digest: bool = False,
    append: bool = False,
) -> None:
    """Write one output file a command was asked for, through :func:`verdict.files.write_output`
    (``append``: add to it, as a GitHub step summary). ``tell`` gets ``wrote PATH`` afterwards, with
    the SHA-256 of the bytes written when ``digest`` (a device or a pipe cannot be read back)."""
    write_output(path, text, append=append)
    if tell is not None:
        tell(f"wrote {path}" + (f" (SHA-256 {hashlib.sha256(text.encode()).hexdigest()})" if digest else ""))


def write_json(
    path: Path, doc: dict[str, Any], *, tell: Callable[[str], None] | None = None, digest: bool = False
) -> None:
    """:func:`write_file` of a JSON document, as dbbench writes it (:func:`dbbench.document.store.dumps`)."""
    from dbbench.document import store

    write_file(path, store.dumps(doc), tell=tell, digest=digest)


def append_summary(path: Path, markdown: str) -> None:
    """Add to a GitHub step summary file (GitHub concatenates every step's summary), newline-ended."""
    write_file(path, markdown if markdown.endswith("\n") else markdown + "\n", append=True)
