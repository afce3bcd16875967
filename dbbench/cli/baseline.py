"""``dbbench baseline save`` and ``dbbench diff``: a run kept as a baseline, and a later run compared with it."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from dbbench import defaults, workflow
from dbbench.cli.app import _connect, err
from dbbench.cli.measure import _measure
from dbbench.cli.options import (
    OutputPath,
    catalog_option,
    github_summary_option,
    isolate,
    namespace_option,
    output_file,
    target_options,
)
from dbbench.errors import DbbenchError
from dbbench.servers import Home
from dbbench.workflow import Run
from verdict.cli import Float
from verdict.files import write_output


@click.group("baseline")
def baseline_group() -> None:
    """Baselines: a run's normalized plans and timings, in a file meant to be committed."""


@baseline_group.command("save")
@click.argument("file", type=OutputPath())
@target_options
@click.option(
    "--from",
    "source",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Save this result file (dbbench explain --output) instead of running the catalog.",
)
@catalog_option("Catalog directory, entry file or name.")
@click.option("--shape", "shapes", multiple=True, help="Run only this shape (repeatable).")
@namespace_option("The seeded schema / database.")
@click.option(
    "--timeout",
    "timeout_s",
    default=defaults.TIMEOUT_S,
    show_default=True,
    type=Float(*defaults.TIMEOUT_RANGE_S),
)
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
def baseline_save(home: Home, file, pg_url, mysql_url, only, source, allow_failures, fmt, **sampled) -> None:
    """Run the catalog (or take --from RESULT.json) and write its baseline to FILE."""
    from dbbench.document import baseline
    from dbbench.document import store as results
    from dbbench.document.model import Document, as_document
    from dbbench.output import explain as report
    from dbbench.output import table_format

    doc: Document
    if source:
        doc = results.load_document(source)
    else:
        run = Run(**sampled, command="baseline save", isolate=isolate())
        doc = as_document(_measure(home, pg_url, mysql_url, only, run), "this run")
        click.echo(report.shape_table(doc, table_format(fmt)))
    problems = report.failures(doc)
    if problems and not allow_failures:
        for line in problems:
            click.echo(line, err=True)
        err(
            f"error: not saving a baseline in which {len(doc.failures or problems)} assertion(s) fail "
            "(fix them, or pass --allow-failures)"
        )
        sys.exit(1)
    digest = baseline.save(file, doc, source=str(source) if source else "run")
    click.echo(f"\nbaseline: {file} ({len(doc.results)} shape/dialect entries; SHA-256 {digest})")


# (option, default, lower bound, help) of diff.Thresholds, in its order
THRESHOLDS = (
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
        "p50 slower by more than this fraction of the baseline p50 (1.0: doubled) is a regression …",
    ),
    ("--noise-ms", 0.5, 0, "… and only if it is slower by more than this many milliseconds."),
)


def threshold_options(fn):
    """--rows-factor, --rows-min, --slower and --noise-ms (:data:`THRESHOLDS`)."""
    for name, default, low, text in reversed(THRESHOLDS):
        fn = click.option(name, default=default, show_default=True, type=Float(low, None), help=text)(fn)
    return fn


@click.command("diff")
@click.argument("baseline_file", metavar="BASELINE", type=click.Path(dir_okay=False, path_type=Path))
@click.argument(
    "result_file", metavar="[RESULT]", required=False, type=click.Path(dir_okay=False, path_type=Path)
)
@target_options
@click.option(
    "--catalog", default=None, help="Catalog to run when RESULT is not given [default: the baseline's]."
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
@output_file(
    "--markdown", "markdown_file", help="Also write the Markdown (a pull-request comment) to this file."
)
@output_file("--output", help="Write the diff as JSON here.")
@output_file("--save-result", help="When RESULT is not given: write the new run's result document here.")
@output_file("--junit", help="JUnit XML: one test case per shape and dialect, failed when it regressed.")
@github_summary_option("Append the Markdown here (default: $GITHUB_STEP_SUMMARY when set).")
@click.pass_obj
def diff_cmd(
    home: Home,
    baseline_file,
    result_file,
    pg_url,
    mysql_url,
    only,
    catalog,
    namespace,
    warmups,
    runs,
    timeout_s,
    rows_factor,
    rows_min,
    slower,
    noise_ms,
    stability,
    self_control,
    fmt,
    markdown_file,
    output,
    save_result,
    junit,
    github_summary,
) -> None:
    """Compare a run with a baseline, node by node; exit 0 pass, 1 fail (a regression), 3 inconclusive
    (the noise is larger than a threshold at these samples), 2 bad input.

    Without RESULT the baseline's catalog is run now (same namespace, warm-ups and runs unless
    overridden) and compared."""
    from dbbench import diff
    from dbbench.document import baseline
    from dbbench.document import store as results
    from dbbench.document.model import as_document
    from dbbench.output import append_summary
    from dbbench.output import diff as render
    from verdict import exit_code

    base = baseline.load(baseline_file)
    thresholds = diff.Thresholds(rows_factor, rows_min, slower, noise_ms)
    plans = None
    aa = None
    if result_file and (stability or self_control):
        raise DbbenchError("--stability and --self-control measure now: give no RESULT file")
    if result_file:
        new = results.load_document(result_file)
        result_name = str(result_file)
    else:
        run = Run.from_config(
            base.config,
            catalog=catalog,
            namespace=namespace,
            timeout_s=timeout_s,
            warmups=warmups,
            runs=runs,
            isolate=isolate(),
        )
        if stability:
            plans = workflow.stability(_connect(home, pg_url, mysql_url, only), run, times=stability)
        live = _measure(home, pg_url, mysql_url, only, run)
        if self_control:
            aa = diff.compare(live, _measure(home, pg_url, mysql_url, only, run), thresholds)
        result_name = "this run"
        if save_result:
            results.write(save_result, live)
            result_name = str(save_result)
        new = as_document(live, result_name)
    report = diff.compare(
        base, new, thresholds, baseline_name=str(baseline_file), result_name=result_name, stability=plans
    )
    if aa is not None:
        diff.apply_self_control(report, aa)
    if not any(s.base and s.result for s in report.shapes):
        raise DbbenchError(
            f"nothing to compare: {result_name} measured none of the shapes in {baseline_file}"
        )
    md = render.to_markdown(report)
    click.echo(md if fmt == "markdown" else render.to_text(report))
    if markdown_file:
        write_output(markdown_file, md)
    if output:
        results.write(output, report.to_dict())
    if junit:
        write_output(junit, render.junit_xml(report))
    if github_summary:
        append_summary(github_summary, md)
    sys.exit(exit_code(report.verdict))
