"""``dbbench baseline save`` and ``dbbench diff``: a run kept as a baseline, and a later run compared with it."""

from __future__ import annotations

import functools
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from dbbench import defaults, workflow
from dbbench.cli.app import Targets, append_summary, err, write_file, write_json
from dbbench.cli.options import (
    CATALOG,
    INPUT_FILE,
    OutputPath,
    catalog_option,
    github_summary_option,
    isolate,
    namespace_option,
    output_file,
    target_options,
    timeout_option,
)
from dbbench.workflow import Comparison, Run
from dbbench.workflow.local import Home
from verdict.cli import Float

if TYPE_CHECKING:
    from dbbench.document.diff import DiffReport
    from dbbench.document.model import Document


@click.group("baseline")
def baseline_group() -> None:
    """Baselines: a run's normalized plans and timings, in a file meant to be committed."""


@baseline_group.command("save")
@click.argument("file", type=OutputPath())
@target_options
@click.option(
    "--from",
    "source",
    type=INPUT_FILE,
    help="Save this result file (dbbench explain --output) instead of running the catalog.",
)
@catalog_option("Catalog directory, entry file or name.")
@click.option("--shape", "shapes", multiple=True, help="Run only this shape (repeatable).")
@namespace_option("The seeded schema / database.")
@timeout_option()
@click.option(
    "--warmups", default=defaults.WARMUPS, show_default=True, type=click.IntRange(*defaults.WARMUPS_RANGE)
)
@click.option("--runs", default=defaults.RUNS, show_default=True, type=click.IntRange(*defaults.RUNS_RANGE))
@click.option(
    "--natural/--no-natural",
    default=True,
    show_default=True,
    help="Also measure the natural spellings (kept in the baseline for reports; diff ignores them).",
)
@click.option("--allow-failures", is_flag=True, help="Save even when a catalog assertion fails.")
@click.option("--format", "fmt", type=click.Choice(["table", "markdown"]), default="table", show_default=True)
@click.pass_obj
def baseline_save(home: Home, **given: Any) -> None:
    """Run the catalog (or take --from RESULT.json) and write its baseline to FILE."""
    from dbbench.cli.progress import explain_progress

    opts = SaveOptions.parse(given)
    saved = workflow.save_baseline(
        opts.targets.connect(home),
        opts.file,
        opts.source,
        allow_failures=opts.allow_failures,
        show=functools.partial(_show_baseline, opts),
        progress=explain_progress,
        warn=err,
    )
    click.echo(
        f"\nbaseline: {opts.file} ({len(saved.document.results)} shape/dialect entries; SHA-256 {saved.digest})"
    )


@dataclass(frozen=True)
class SaveOptions:
    """``dbbench baseline save``'s options: the targets, the baseline ``file``, what is saved (a
    result file, or the run measured now) and how it is shown."""

    targets: Targets
    file: Path
    source: Run | Path
    allow_failures: bool
    fmt: str

    @classmethod
    def parse(cls, given: dict[str, Any]) -> SaveOptions:
        targets = Targets.take(given)
        file, result_file = given.pop("file"), given.pop("source")
        allow_failures, fmt = given.pop("allow_failures"), given.pop("fmt")
        source = result_file or Run(**given, command="baseline save", isolate=isolate())
        return cls(targets, file, source, allow_failures, fmt)


def _show_baseline(opts: SaveOptions, doc: Document) -> None:
    """A run's shape table; the failures on stderr when they refuse the baseline."""
    from dbbench.output import explain, table_format

    if isinstance(opts.source, Run):
        click.echo(explain.shape_table(doc, table_format(opts.fmt)))
    if not opts.allow_failures:
        for line in explain.failures(doc):
            click.echo(line, err=True)


# (option, default, lower bound, help) of diff.Thresholds
THRESHOLDS = (
    (
        "--work-factor",
        2.0,
        1,
        "Rows examined (at a plan node or in total) up by more than this factor is a regression …",
    ),
    ("--work-min", 1000.0, 0, "… and only if up by at least this many rows."),
    (
        "--buffers-min",
        100.0,
        0,
        "PostgreSQL's shared buffers (at a plan node or in total) up by more than --work-factor and by "
        "at least this many pages is a regression too.",
    ),
    (
        "--rows-factor",
        10.0,
        1,
        "A node's rows misestimated by more than this factor is a regression (if it was not before).",
    ),
    ("--rows-min", 100.0, 0, "…only where the larger of estimate and actual is at least this many rows."),
    (
        "--slower",
        1.0,
        0,
        "Timing (advisory unless --gate-timing): p50 slower by more than this fraction of the baseline "
        "p50 (1.0: doubled) …",
    ),
    ("--noise-ms", 0.5, 0, "… and by more than this many milliseconds."),
)

THRESHOLD_KEYS = tuple(name[2:].replace("-", "_") for name, *_ in THRESHOLDS)  # Thresholds' fields
TIMING_THRESHOLDS = ("--slower", "--noise-ms")  # what one sample (check) cannot judge
WORK_KEYS = tuple(
    k for (name, *_), k in zip(THRESHOLDS, THRESHOLD_KEYS, strict=True) if name not in TIMING_THRESHOLDS
)


def work_threshold_options(fn):
    """The thresholds of the deterministic evidence (plan work and estimates), for ``check
    --baseline``: :data:`THRESHOLDS` but the timing ones."""
    for name, default, low, text in reversed(THRESHOLDS):
        if name not in TIMING_THRESHOLDS:
            fn = click.option(name, default=default, show_default=True, type=Float(low, None), help=text)(fn)
    return fn


def threshold_options(fn):
    """--work-factor, --work-min, --buffers-min, --rows-factor, --rows-min, --slower and --noise-ms
    (:data:`THRESHOLDS`), and --gate-timing."""
    fn = click.option(
        "--gate-timing",
        is_flag=True,
        help="Let timing decide too (else it is advisory): the run is measured twice now, and the "
        "interval is widened by the two runs' spread (needs a live run).",
    )(fn)
    for name, default, low, text in reversed(THRESHOLDS):
        fn = click.option(name, default=default, show_default=True, type=Float(low, None), help=text)(fn)
    return fn


@click.command("diff")
@click.argument("baseline_file", metavar="BASELINE", type=INPUT_FILE)
@click.argument("result_file", metavar="[RESULT]", required=False, type=INPUT_FILE)
@target_options
@click.option(
    "--catalog",
    type=CATALOG,
    default=None,
    help="Catalog to run when RESULT is not given [default: the baseline's].",
)
@click.option("--namespace", default=None, help="Namespace to run in [default: the baseline's].")
@click.option(
    "--warmups", default=None, type=click.IntRange(*defaults.WARMUPS_RANGE), help="[default: the baseline's]"
)
@click.option(
    "--runs", default=None, type=click.IntRange(*defaults.RUNS_RANGE), help="[default: the baseline's]"
)
@click.option(
    "--timeout",
    "timeout_s",
    default=None,
    type=Float(*defaults.TIMEOUT_RANGE_S),
    help="[default: the baseline's]",
)
@threshold_options
@click.option(
    "--stability",
    type=click.IntRange(2, 100),
    default=None,
    metavar="N",
    help="First re-ANALYZE and re-plan every shape N times: each plan stable or unstable; a plan "
    "change that re-ANALYZE alone reproduces is equivalent, not a regression (needs a live run).",
)
@click.option(
    "--self-control",
    is_flag=True,
    help="Measure twice now and diff the two runs first (A/A): the noise floor beside each verdict; "
    "a shape whose A/A fails is at most inconclusive (needs a live run).",
)
@click.option("--format", "fmt", type=click.Choice(["table", "markdown"]), default="table", show_default=True)
@click.option(
    "--color",
    type=click.Choice(["auto", "always", "never"]),
    default="auto",
    show_default=True,
    help="Colour the aligned plans of the table format (auto: on a terminal, unless NO_COLOR is set).",
)
@output_file(
    "--markdown", "markdown_file", help="Also write the Markdown (a pull-request comment) to this file."
)
@output_file("--html", "html_file", help="Also write the diff as one HTML page: the two plans side by side.")
@output_file("--output", help="Write the diff as JSON here.")
@output_file("--save-result", help="When RESULT is not given: write the new run's result document here.")
@output_file("--junit", help="JUnit XML: one test case per shape and dialect, failed when it regressed.")
@github_summary_option("Append the Markdown here (default: $GITHUB_STEP_SUMMARY when set).")
@click.pass_obj
def diff_cmd(home: Home, **given: Any) -> None:
    """Compare a run with a baseline, node by node, on plan shape and work (rows examined); timing is
    advisory unless --gate-timing. Exit 0 pass, 1 fail (a regression), 3 inconclusive (the evidence
    cannot decide), 2 bad input.

    Without RESULT the baseline's catalog is run now (same namespace, warm-ups and runs unless
    overridden) and compared."""
    from dbbench.cli.progress import explain_progress

    opts = DiffOptions.parse(given)
    report = workflow.diff(opts.targets.connect(home), opts.comparison, progress=explain_progress, warn=err)
    _render_diff(opts, report)


@dataclass(frozen=True)
class DiffOptions:
    """``dbbench diff``'s options: the targets, what is compared (:class:`dbbench.workflow.Comparison`),
    the format printed and the files written."""

    targets: Targets
    comparison: Comparison
    fmt: str
    color: str
    markdown_file: Path | None
    html_file: Path | None
    output: Path | None
    junit: Path | None
    github_summary: Path | None

    @classmethod
    def parse(cls, given: dict[str, Any]) -> DiffOptions:
        from dbbench.document.diff import Thresholds

        comparison = Comparison(
            given["baseline_file"],
            given["result_file"],
            Thresholds(**{key: given[key] for key in THRESHOLD_KEYS}, gate_timing=given["gate_timing"]),
            catalog=given["catalog"],
            namespace=given["namespace"],
            warmups=given["warmups"],
            runs=given["runs"],
            timeout_s=given["timeout_s"],
            isolate=isolate(),
            stability=given["stability"],
            self_control=given["self_control"],
            save_result=given["save_result"],
        )
        files = ("markdown_file", "html_file", "output", "junit", "github_summary")
        return cls(
            Targets.take(given), comparison, given["fmt"], given["color"], *(given[name] for name in files)
        )


def _render_diff(opts: DiffOptions, report: DiffReport) -> None:
    """Print the diff, write the requested files, exit with the verdict's code."""
    from dbbench.output import diff
    from verdict import exit_code

    md = diff.to_markdown(report)
    if opts.fmt == "markdown":
        click.echo(md)
    else:
        from dbbench.cli.styled import echo_diff

        echo_diff(report, opts.color)
    if opts.markdown_file:
        write_file(opts.markdown_file, md)
    if opts.html_file:
        from dbbench.output import diff_html

        write_file(opts.html_file, diff_html.page(report))
    if opts.output:
        write_json(opts.output, report.to_dict())
    if opts.junit:
        write_file(opts.junit, diff.junit_xml(report))
    if opts.github_summary:
        append_summary(opts.github_summary, md)
    sys.exit(exit_code(report.verdict))
