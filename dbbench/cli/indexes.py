"""``dbbench indexes``: which index serves which query. Each index of the tables the catalog reads
is hidden in turn in the namespace dbbench owns and every shape reading its table measured again:
needed (by which shapes, with the work each would lose), redundant (another index takes over) or
unused, with its size, write cost and the constraint that binds it."""

from __future__ import annotations

from typing import Any

import click

from dbbench import defaults
from dbbench.cli.app import Targets, err, write_file, write_json
from dbbench.cli.options import (
    catalog_option,
    github_summary_option,
    isolate,
    namespace_option,
    output_file,
    target_options,
    timeout_option,
)
from dbbench.workflow.indexes import index_map, options
from dbbench.workflow.local import Home
from dbbench.workflow.runs import Run


@click.command("indexes")
@target_options
@catalog_option()
@click.option("--shape", "shapes", multiple=True, help="Map with these shapes only (repeatable).")
@namespace_option("The seeded PostgreSQL schema / MySQL database whose indexes are hidden in turn.")
@timeout_option("Per-statement timeout in seconds.")
@output_file("--output", help="Write the JSON result (dbbench.indexes/1) here.")
@github_summary_option("Append the map as Markdown here (default: $GITHUB_STEP_SUMMARY when set).")
@click.option("--format", "fmt", type=click.Choice(["table", "markdown"]), default="table", show_default=True)
@click.option(
    "--write-rows",
    default=1000,
    show_default=True,
    type=click.IntRange(0, 100_000),
    help="Rows in the write batch (INSERTs, then an UPDATE of the index's columns, rolled back) timed "
    "with and without each index (PostgreSQL); 0: not measured.",
)
@output_file("--html", "html_file", help="Write the map as one HTML page.")
@click.option("--warmups", default=1, show_default=True, type=click.IntRange(*defaults.WARMUPS_RANGE))
@click.option("--runs", default=1, show_default=True, type=click.IntRange(*defaults.RUNS_RANGE))
@click.pass_obj
def indexes_cmd(home: Home, **given: Any) -> None:
    """Hide each index of the tables the catalog reads, in turn, and measure every shape again:
    which shapes need it, which index takes over, what it costs; nothing is left changed."""
    from dbbench.output import table_format
    from dbbench.output.indexes import page, to_text

    chosen = options(write_rows=given.pop("write_rows"), runs=given["runs"], warmups=given["warmups"])
    html_file = given.pop("html_file")
    output, summary, fmt = given.pop("output"), given.pop("github_summary"), given.pop("fmt")
    targets = Targets.take(given)
    run = Run(**given, natural=False, command="indexes", isolate=isolate())
    doc = index_map(targets.connect(home), run, chosen, say=err)
    click.echo(to_text(doc, table_format(fmt)))
    if output:
        write_json(output, doc, tell=click.echo)
    if html_file:
        write_file(html_file, page(doc), tell=click.echo)
    if summary:
        write_file(summary, to_text(doc, "markdown"), append=True)
