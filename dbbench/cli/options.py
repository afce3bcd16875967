"""The ``dbbench`` command's shared options: targets, catalog and sampling, output files."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import click

from dbbench import defaults
from dbbench.errors import DbbenchError
from dbbench.workflow import catalog
from verdict.cli import Float, InputFile, InputTree, OutputFile

DIALECT_CHOICE = click.Choice(["postgresql", "mysql"])


class OutputPath(OutputFile):
    """A file a command writes: checked writable when the options are parsed, before any work."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Path:
        from verdict.outputs import unwritable

        what = param.opts[0] if param is not None and param.opts[0].startswith("-") else "output file"
        try:
            path = cast(Path, super().convert(value, param, ctx))  # path_type=Path
        except click.BadParameter as exc:  # click's own checks (a directory): one line, as ours
            raise DbbenchError(f"{what} {value}: cannot be written ({exc.message})") from None
        reason = unwritable(path)
        if reason:
            raise DbbenchError(f"{what} {path}: cannot be written ({reason})")
        return path


class CatalogPath(InputTree):
    """A catalog the command reads: a directory, an entry file, or a name under ``sql/catalog/``.
    An output may be written in its directory (a baseline beside the catalog) but never over a
    file it reads: its entries (``.toml``, ``.sql``), its ``setup/`` and its ``data/``."""

    name = "catalog"

    def locate(self, value: Any) -> Path | None:
        return catalog.locate(value)

    def reads(self, relative: Path) -> bool:
        return catalog.reads(relative)


CATALOG = CatalogPath()
INPUT_FILE = InputFile()


def target_options(fn):
    """--pg-url / --mysql-url / --only, shared by every command that talks to databases."""
    fn = click.option("--only", type=DIALECT_CHOICE, help="Use only this dialect.")(fn)
    fn = click.option(
        "--mysql-url",
        metavar="URL",
        help="mysql+pymysql://USER:PASS@HOST:PORT/ (env DBBENCH_MYSQL_URL; default: local server)",
    )(fn)
    fn = click.option(
        "--pg-url",
        metavar="URL",
        help="postgresql+psycopg://USER:PASS@HOST:PORT/DB (env DBBENCH_PG_URL; default: local server)",
    )(fn)
    return no_isolation_option(
        "Run catalog SQL (setup and shapes) as dbbench's own user instead of the namespace's "
        "own role (for servers where dbbench may not create roles; text checks only, which then "
        "refuse any name outside the namespace)."
    )(fn)


def no_isolation_option(help: str):
    """--no-isolation: catalog SQL runs as dbbench's own user, behind the text checks only (read
    back with :func:`isolate`)."""
    return click.option(
        "--no-isolation",
        is_flag=True,
        expose_value=False,
        is_eager=True,
        callback=lambda ctx, _p, value: ctx.meta.__setitem__("dbbench.isolate", not value),
        help=help,
    )


def isolate() -> bool:
    """False when the command was given --no-isolation (see dbbench.access.isolation)."""
    return bool(click.get_current_context().meta.get("dbbench.isolate", True))


CATALOG_HELP = "Catalog directory or entry file (name under sql/catalog/, or a path)."
REPORT_OPTIONS = ("output", "junit", "github_summary", "fmt")  # the values of report_options


def catalog_option(help: str = CATALOG_HELP):
    return click.option("--catalog", type=CATALOG, default=defaults.CATALOG, show_default=True, help=help)


def namespace_option(help: str):
    """--namespace: the dbbench-owned schema / database (``help`` says what the command does with it)."""
    return click.option("--namespace", default=defaults.NAMESPACE, show_default=True, help=help)


def output_file(*decls: str, help: str, **attrs: Any):
    """An option naming a file the command writes (an :class:`OutputPath`)."""
    return click.option(*decls, type=OutputPath(), help=help, **attrs)


def github_summary_option(help: str):
    """--github-summary FILE, $GITHUB_STEP_SUMMARY when set."""
    return output_file("--github-summary", envvar="GITHUB_STEP_SUMMARY", metavar="FILE", help=help)


def timeout_option(help: str | None = None):
    """--timeout SECONDS: each statement's timeout (``timeout_s``)."""
    return click.option(
        "--timeout",
        "timeout_s",
        default=defaults.TIMEOUT_S,
        show_default=True,
        type=Float(*defaults.TIMEOUT_RANGE_S),
        help=help,
    )


def explain_options(fn):
    fn = catalog_option()(fn)
    fn = click.option("--shape", "shapes", multiple=True, help="Run only this shape (repeatable).")(fn)
    fn = namespace_option("The seeded PostgreSQL schema / MySQL database.")(fn)
    fn = timeout_option("Per-statement timeout in seconds (a pathological plan is reported as timeout).")(fn)
    fn = report_options(fn)
    return fn


def report_options(fn):
    fn = output_file("--output", help="Write the JSON result here.")(fn)
    fn = output_file("--junit", help="Write a JUnit XML report (one test case per shape and dialect).")(fn)
    fn = github_summary_option("Append a Markdown summary here (default: $GITHUB_STEP_SUMMARY when set).")(fn)
    fn = click.option(
        "--format",
        "fmt",
        type=click.Choice(["table", "markdown"]),
        default="table",
        show_default=True,
        help="Terminal tables or Markdown.",
    )(fn)
    return fn


def split_report(options: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """A command's other option values, and those of :func:`report_options` (``REPORT_OPTIONS``)."""
    rest = {k: v for k, v in options.items() if k not in REPORT_OPTIONS}
    return rest, {k: options[k] for k in REPORT_OPTIONS}


def sampling_options(fn):
    """--warmups and --runs: the untimed and the timed EXPLAIN ANALYZE of each spelling."""
    runs_help = "Timed EXPLAIN ANALYZE samples per spelling (p50/p95 by nearest rank)."
    samples = click.IntRange(*defaults.RUNS_RANGE)
    fn = click.option("--runs", default=defaults.RUNS, show_default=True, type=samples, help=runs_help)(fn)
    fn = click.option(
        "--warmups", default=defaults.WARMUPS, show_default=True, type=click.IntRange(*defaults.WARMUPS_RANGE)
    )(fn)
    return fn
