"""``dbbench capture`` and ``dbbench catalog propose`` / ``accept``: catalogs from where the
queries live (the servers' statement statistics, annotated SQL files)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from dbbench.cli.app import Targets
from dbbench.cli.options import CATALOG, INPUT_FILE, OutputPath, isolate, namespace_option, target_options
from dbbench.workflow.local import Home

if TYPE_CHECKING:
    from dbbench.document.capture import Proposals


@click.command("capture")
@target_options
@click.option(
    "--catalog",
    type=CATALOG,
    default=None,
    metavar="DIR",
    help="The catalog captured shapes belong to: each one it has is checked against it, new ones "
    "are written to DIR/captured.sql (or --output).",
)
@namespace_option("The namespace the application ran in (MySQL: its default database), with the data loaded.")
@click.option(
    "--output",
    type=OutputPath(updates=True),  # read, then written again on purpose (check.existing says which)
    help="Append the new shapes to this annotated .sql file (a new one, or one capture wrote).",
)
@click.option(
    "--reset", is_flag=True, help="Only clear the servers' statement statistics (before the run to capture)."
)
@click.option(
    "--accept-scans",
    is_flag=True,
    help="Accept new shapes whose plan uses no index: written for the dialects where an index serves "
    "them (a shape no index serves is not written: there is nothing to expect), and the capture "
    "does not fail for them.",
)
@click.pass_obj
def capture_cmd(
    home: Home,
    catalog: str | None,
    namespace: str,
    output: Path | None,
    reset: bool,
    accept_scans: bool,
    **given,
) -> None:
    """Read the statements clients ran from pg_stat_statements and MySQL's performance_schema
    digests, check each shape on the loaded data, and write the new ones as a catalog."""
    from dbbench.output.capture import lines
    from dbbench.workflow.capture import capture_shapes, reset_statistics

    connect = Targets.take(given).connect(home)
    out = output or (_beside(Path(catalog)) if catalog else None)
    if out is None and not reset:
        raise click.UsageError("give --catalog DIR or --output FILE.sql")
    if reset:
        click.echo("cleared the statement statistics of " + ", ".join(reset_statistics(connect)))
        return
    report = capture_shapes(
        connect, namespace, catalog=catalog, out=out, isolate=isolate(), accept_scans=accept_scans
    )
    for line in lines(report):
        click.echo(line)
    if report.failed:
        sys.exit(1)


def _beside(catalog: Path) -> Path:
    """The catalog's captured.sql: in its directory (beside it, for a catalog of one file)."""
    return (catalog if catalog.is_dir() or catalog.suffix != ".sql" else catalog.parent) / "captured.sql"


@click.group("catalog")
def catalog_group() -> None:
    """Annotated SQL catalogs: expectations proposed from the observed plans, and written down."""


def _show(found: Proposals) -> None:
    from dbbench.output.capture import proposed

    for line in proposed(found):
        click.echo(line)


# catalog propose / accept: the annotated SQL files they read (and accept rewrites)
SQL_CATALOG = click.option(
    "--catalog",
    type=CATALOG,
    required=True,
    metavar="DIR",
    help="Directory (or file) of annotated .sql files.",
)


@catalog_group.command("propose")
@target_options
@SQL_CATALOG
@namespace_option("The seeded namespace the plans are observed in.")
@click.pass_obj
def catalog_propose(home: Home, catalog: str, namespace: str, **given) -> None:
    """Print the expectation each block without one would get from its plan on the loaded data."""
    from dbbench.workflow.capture import propose

    _show(propose(Targets.take(given).connect(home), catalog, namespace, isolate=isolate()))


@catalog_group.command("accept")
@target_options
@SQL_CATALOG
@namespace_option("The seeded namespace the plans are observed in.")
@click.option(
    "--advice",
    type=INPUT_FILE,
    default=None,
    help="Take each block's expectation from this dbbench advise --output file (its verified index) "
    "instead of the plan on the loaded data.",
)
@click.pass_obj
def catalog_accept(home: Home, catalog: str, namespace: str, advice: Path | None, **given) -> None:
    """Write the proposed expectations into the .sql files (after each block's name line)."""
    from dbbench.output.capture import written
    from dbbench.workflow.capture import accept

    found = accept(
        Targets.take(given).connect(home),
        catalog,
        namespace,
        isolate=isolate(),
        proposed=_show,
        advice=advice,
    )
    click.echo(written(found))
