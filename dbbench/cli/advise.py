"""``dbbench advise``: which index fixes a failing or slow shape, verified on the data: each
candidate built for real in the namespace dbbench owns, measured, costed and removed again."""

from __future__ import annotations

from pathlib import Path
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
from dbbench.workflow.advise import advise, options, refuse_migrations_over, write_migrations
from dbbench.workflow.local import Home
from dbbench.workflow.runs import Run, parse_sizes
from verdict.cli import Float


@click.command("advise")
@target_options
@catalog_option()
@click.option("--shape", "shapes", multiple=True, help="Advise this shape whatever its state (repeatable).")
@namespace_option("The seeded PostgreSQL schema / MySQL database the candidates are built in.")
@timeout_option("Per-statement timeout in seconds.")
@output_file("--output", help="Write the JSON result (dbbench.advise/1) here.")
@github_summary_option("Append the advice as Markdown here (default: $GITHUB_STEP_SUMMARY when set).")
@click.option("--format", "fmt", type=click.Choice(["table", "markdown"]), default="table", show_default=True)
@click.option(
    "--most",
    default=3,
    show_default=True,
    type=click.IntRange(1, 20),
    help="Candidates built per shape and dialect, best first.",
)
@click.option(
    "--write-rows",
    default=1000,
    show_default=True,
    type=click.IntRange(0, 100_000),
    help="Rows in the write batch (INSERTs, then an UPDATE of the indexed columns, rolled back) timed "
    "with and without each candidate; 0: not measured.",
)
@click.option(
    "--max-write-ratio",
    default=5.0,
    show_default=True,
    type=Float(1.0, 1000.0),
    help="A candidate that makes the write batch more than this many times slower is rejected.",
)
@click.option(
    "--no-side-effects",
    is_flag=True,
    help="Do not measure the rest of the catalog with each verified candidate present.",
)
@click.option(
    "--growth",
    "growth_size",
    default=None,
    metavar="SIZE",
    help="Also build each verified index at this smaller size of the ladder (10k: dbbench grow's "
    "namespace, loaded or reused) and reject one whose work grows worse than the shape claims.",
)
@click.option("--no-set", is_flag=True, help="Do not propose and verify the whole-catalog set.")
@click.option(
    "--write",
    "write_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Write one migration file per dialect here (dbbench-advise-DIALECT.sql; never replaced).",
)
@output_file("--html", "html_file", help="Write the advice as one HTML page.")
@click.option("--warmups", default=1, show_default=True, type=click.IntRange(*defaults.WARMUPS_RANGE))
@click.option("--runs", default=3, show_default=True, type=click.IntRange(*defaults.RUNS_RANGE))
@click.pass_obj
def advise_cmd(home: Home, **given: Any) -> None:
    """Build, measure and cost candidate indexes for every shape whose check fails or whose natural
    spelling is slower (--shape: these shapes); nothing is left behind."""
    from dbbench.output import table_format
    from dbbench.output.advise import page, to_text

    growth_size = _size(given.pop("growth_size"))
    chosen = options(
        growth_size=growth_size,
        most=given.pop("most"),
        write_rows=given.pop("write_rows"),
        max_write_ratio=given.pop("max_write_ratio"),
        side_effects=not given.pop("no_side_effects"),
        whole_set=not given.pop("no_set"),
    )
    write_dir, html_file = given.pop("write_dir"), given.pop("html_file")
    if write_dir is not None and write_dir.exists() and not write_dir.is_dir():
        raise click.UsageError(f"--write {write_dir}: not a directory")
    if write_dir is not None:
        refuse_migrations_over(write_dir, catalog=given["catalog"])
    output, summary, fmt = given.pop("output"), given.pop("github_summary"), given.pop("fmt")
    targets = Targets.take(given)
    run = Run(**given, natural=True, command="advise", isolate=isolate())
    doc = advise(targets.connect(home), run, chosen, say=err, cache_dir=home.root / "datasets")
    click.echo(to_text(doc, table_format(fmt)))
    if output:
        write_json(output, doc, tell=click.echo)
    if html_file:
        write_file(html_file, page(doc), tell=click.echo)
    if summary:
        write_file(summary, to_text(doc, "markdown"), append=True)
    if write_dir is not None:
        for path in write_migrations(doc, write_dir):
            click.echo(f"wrote {path}")


def _size(text: str | None) -> int | None:
    """--growth: one size of the ladder (10k, 100000 …)."""
    if text is None:
        return None
    sizes = parse_sizes(text, option="--growth", at_least=1)
    if len(sizes) != 1:
        raise click.BadParameter(f"{text!r}: one size (10k, 100k …)", param_hint="--growth")
    return sizes[0]
