"""``dbbench explain`` and ``check``: measure the catalog, print its tables, write the requested files."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from dbbench import defaults, workflow
from dbbench.cli.app import Targets, append_summary, err, write_file, write_json
from dbbench.cli.baseline import WORK_KEYS, work_threshold_options
from dbbench.cli.options import (
    INPUT_FILE,
    explain_options,
    isolate,
    sampling_options,
    split_report,
    target_options,
)
from dbbench.document.diff import Thresholds
from dbbench.workflow import Run
from dbbench.workflow.local import Home

if TYPE_CHECKING:
    from dbbench.document.diff import DiffReport


def _emit(
    doc: dict,
    fmt: str,
    *,
    output: Path | None,
    junit: Path | None,
    github_summary: Path | None,
    command: str,
    compared: DiffReport | None = None,
) -> None:
    """Print the tables (and the diff against a baseline, ``compared``), write the requested files,
    exit 1 on a failed assertion or a regression."""
    from dbbench.document.model import as_document
    from dbbench.output import explain, table_format

    typed = as_document(doc, "this run")
    tablefmt = table_format(fmt)
    click.echo(explain.shape_table(typed, tablefmt))
    if explain.has_remediation(typed):
        click.echo("")
        click.echo(explain.remediation_table(typed, tablefmt))
    if output:
        write_json(output, doc, tell=lambda line: click.echo("\n" + line), digest=True)
    if junit:
        write_file(junit, explain.junit_xml(typed, f"dbbench.{command}"))
    if github_summary:
        append_summary(github_summary, explain.github_summary(typed, f"dbbench {command}"))
    if compared is not None:
        from dbbench.output import diff

        click.echo("\n" + (diff.to_markdown(compared) if fmt == "markdown" else diff.to_text(compared)))
    problems = explain.failures(typed)
    for line in problems:
        click.echo(line, err=True)
    if problems or (compared is not None and not compared.ok):
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
@click.option(
    "--baseline",
    "baseline_file",
    type=INPUT_FILE,
    default=None,
    help="Also compare with this baseline of a check run (baseline save --from CHECK.json) on plan "
    "shape and work, as diff does; a regression exits 1.",
)
@work_threshold_options
@click.pass_obj
def check_cmd(home: Home, dataset, baseline_file: Path | None, **options) -> None:
    """CI gate: seed a scratch dataset (or the catalog's setup), run every shape once, assert the plans
    (and, with --baseline, compare their work with a baseline's)."""
    from dbbench.cli.progress import explain_progress
    from dbbench.document import baseline

    base = None if baseline_file is None else baseline.load(baseline_file)  # bad input: before any work
    thresholds = Thresholds(**{key: options.pop(key) for key in WORK_KEYS})
    if base is None and thresholds != Thresholds():
        raise click.UsageError("the work thresholds judge a comparison: give --baseline too")
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
    compared = None if base is None else workflow.check_against(base, doc, str(baseline_file), thresholds)
    _emit(doc, command="check", compared=compared, **reported)
