"""``dbbench capture`` and ``dbbench catalog propose`` / ``accept``: catalogs from where the
queries live (the servers' statement statistics, annotated SQL files)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from dbbench.cli.app import Targets
from dbbench.cli.options import CATALOG, OutputPath, isolate, namespace_option, target_options
from dbbench.defaults import DIALECT_LABEL
from dbbench.workflow.local import Home


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
    from dbbench.capture import check, servers
    from dbbench.output.capture import lines

    targets = Targets.take(given)
    out = output or (_beside(Path(catalog)) if catalog else None)
    if out is None and not reset:
        raise click.UsageError("give --catalog DIR or --output FILE.sql")
    with targets.connect(home)() as opened:
        if reset:
            servers.reset(opened)
            click.echo("cleared the statement statistics of " + ", ".join(t.label for t in opened))
            return
        seen = servers.read(opened, namespace)
        report = check.run(
            opened,
            seen,
            catalog=catalog,
            namespace=namespace,
            out=out,
            isolate=isolate(),
            accept_scans=accept_scans,
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


def _proposals(home: Home, catalog: str, namespace: str, given: dict):
    from dbbench.capture import accept

    with Targets.take(given).connect(home)() as opened:
        return accept.proposals(opened, catalog, namespace, isolate=isolate())


def _show(found) -> None:
    for p in found:
        said = "; ".join(f"{DIALECT_LABEL[d]}: {prop.line}" for d, prop in p.proposals.items())
        click.echo(f"{p.block.name} ({p.block.where}): {said}")
    if not found:
        click.echo("every block has an expectation")


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
    _show(_proposals(home, catalog, namespace, given))


@catalog_group.command("accept")
@target_options
@SQL_CATALOG
@namespace_option("The seeded namespace the plans are observed in.")
@click.pass_obj
def catalog_accept(home: Home, catalog: str, namespace: str, **given) -> None:
    """Write the proposed expectations into the .sql files (after each block's name line)."""
    from dbbench.capture import accept

    found = _proposals(home, catalog, namespace, given)
    _show(found)
    written = accept.accept(found)
    click.echo(f"wrote the expectations of {len(written)} block{'s' if len(written) != 1 else ''}")
