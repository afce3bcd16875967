"""``dbbench explain`` and ``check``: measure the catalog, print its tables, write the requested files."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from dbbench import defaults, workflow
from dbbench.cli.app import Targets, append_summary, err, write_file, write_json
from dbbench.cli.options import explain_options, isolate, sampling_options, split_report, target_options
from dbbench.servers import Home
from dbbench.workflow import Run


def _emit(
    doc: dict, fmt: str, *, output: Path | None, junit: Path | None, github_summary: Path | None, command: str
) -> None:
    """Print the tables, write the requested files, exit 1 on a failed assertion."""
    from dbbench.document.model import as_document
    from dbbench.output import explain as report
    from dbbench.output import table_format

    typed = as_document(doc, "this run")
    tablefmt = table_format(fmt)
    click.echo(report.shape_table(typed, tablefmt))
    if report.has_remediation(typed):
        click.echo("")
        click.echo(report.remediation_table(typed, tablefmt))
    if output:
        write_json(output, doc, tell=lambda line: click.echo("\n" + line), digest=True)
    if junit:
        write_file(junit, report.junit_xml(typed, f"dbbench.{command}"))
    if github_summary:
        append_summary(github_summary, report.github_summary(typed, f"dbbench {command}"))
    problems = report.failures(typed)
    if problems:
        for line in problems:
            click.echo(line, err=True)
        sys.exit(1)


@click.command("explain")
@target_options
@explain_options
@sampling_options
@click.option(
    "--natural/--no-natural",
    default=True,
    show_default=True,
    help="Also measure the natural (pre-remediation) spellings.",
)
@click.pass_obj
def explain_cmd(home: Home, **options) -> None:
    """Warmed EXPLAIN ANALYZE sets per shape; exit 1 when an expected index is not used."""
    from dbbench.cli.progress import explain_progress

    targets = Targets.take(options)
    sampled, reported = split_report(options)
    run = Run(**sampled, command="explain", isolate=isolate())
    doc = workflow.measure(targets.connect(home), run, progress=explain_progress, warn=err)
    _emit(doc, command="explain", **reported)


@click.command("check")
@target_options
@explain_options
@click.option(
    "--dataset",
    default=None,
    help="Scratch dataset seeded first [default: the catalog's setup SQL if "
    f"it has one, else {defaults.CHECK_DATASET}].",
)
@click.pass_obj
def check_cmd(home: Home, dataset, **options) -> None:
    """CI gate: seed a scratch dataset (or the catalog's setup), run every shape once, assert the plans."""
    from dbbench.cli.progress import explain_progress

    targets = Targets.take(options)
    selected, reported = split_report(options)
    doc = workflow.check(
        targets.connect(home),
        Run(**selected, isolate=isolate()),
        dataset=dataset,
        cache_dir=home.root / "datasets",
        progress=explain_progress,
        warn=err,
    )
    _emit(doc, command="check", **reported)
