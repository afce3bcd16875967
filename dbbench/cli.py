"""The ``dbbench`` command: a thin layer over the library (every command maps to one call)."""

from __future__ import annotations

import sys
from contextlib import AbstractContextManager
from pathlib import Path

import click
import psycopg
import pymysql
from sqlalchemy.exc import SQLAlchemyError

from dbbench import __version__, defaults, servers, workflow
from dbbench.errors import DbbenchError
from dbbench.options import (
    DIALECT_CHOICE,
    OutputPath,
    explain_options,
    isolate,
    sampling_options,
    target_options,
)
from dbbench.output.commands import (
    render_bench_seed,
    render_info,
    render_seed,
    render_setup,
    render_status,
    render_validate,
)
from dbbench.servers import Home
from dbbench.targets import Target
from dbbench.workflow import Connect, Run, opened


def err(message: str) -> None:
    click.echo(f"dbbench: {message}", err=True)


class Cli(click.Group):
    """Turns every :class:`DbbenchError` into one line on stderr and its exit code."""

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except DbbenchError as exc:
            err(f"error: {exc}")
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


# -- servers -----------------------------------------------------------------------------------
@cli.group("servers")
def servers_group() -> None:
    """Local loopback PostgreSQL 12.22 and MySQL servers (the embedded default)."""


def _which(names: tuple[str, ...]):
    return list(dict.fromkeys(names)) or None


def _print_status(rows, as_json: bool) -> None:
    click.echo(render_status(rows, as_json))


@servers_group.command("up")
@click.argument("which", nargs=-1, type=DIALECT_CHOICE)
@click.option("--pg-port", type=int, help="Port for a newly started PostgreSQL (default 55432).")
@click.option("--mysql-port", type=int, help="Port for a newly started MySQL (default 53306).")
@click.option("--json", "as_json", is_flag=True, help="Print the status as JSON.")
@click.pass_obj
def servers_up(home: Home, which, pg_port, mysql_port, as_json) -> None:
    """Install (first time), start and wait for the local servers; reuse running ones."""
    rows = servers.up(_which(which), home=home, ports={"postgresql": pg_port, "mysql": mysql_port}, say=say)
    _print_status(rows, as_json)
    for r in rows:
        if r.server == "MySQL" and r.version and not r.version.startswith("8.0"):
            err(
                f"note: local MySQL is {r.version} (no 8.0 build is installable here; same "
                "optimizer lineage). Use --mysql-url for a real 8.0 server."
            )


@servers_group.command("down")
@click.argument("which", nargs=-1, type=DIALECT_CHOICE)
@click.pass_obj
def servers_down(home: Home, which) -> None:
    """Stop the local servers that `up` started (by pid)."""
    stopped = servers.down(_which(which), home=home)
    click.echo("stopped: " + (", ".join(stopped) if stopped else "nothing was running"))


@servers_group.command("status")
@click.argument("which", nargs=-1, type=DIALECT_CHOICE)
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
@click.pass_obj
def servers_status(home: Home, which, as_json) -> None:
    """Versions, ports, pids, data directories and URLs (without passwords)."""
    _print_status(servers.status(_which(which), home=home), as_json)


def _connect(home: Home, pg_url: str | None, mysql_url: str | None, only: str | None) -> Connect:
    """The targets the options name, opened for a ``with`` block (their warnings said on stderr)."""

    def connect(*, warn: bool = True) -> AbstractContextManager[list[Target]]:
        return opened({"postgresql": pg_url, "mysql": mysql_url}, only, home=home, warn=err if warn else None)

    return connect


# -- info --------------------------------------------------------------------------------------
@cli.command("info")
@target_options
@click.pass_obj
def info(home: Home, pg_url, mysql_url, only) -> None:
    """Connect to each target and report its server version."""
    with _connect(home, pg_url, mysql_url, only)() as targets:
        click.echo(render_info(targets))


# -- seed --------------------------------------------------------------------------------------
@cli.command("seed")
@target_options
@click.option(
    "--dataset",
    default=None,
    help=f"Dataset name under seeds/ or a path to a dataset .toml [default: {defaults.DATASET}].",
)
@click.option(
    "--catalog",
    default=None,
    metavar="DIR",
    help="Instead of a dataset: run this catalog's own setup SQL (setup.sql / setup.<dialect>.sql).",
)
@click.option(
    "--namespace",
    default=defaults.NAMESPACE,
    show_default=True,
    help="The PostgreSQL schema / MySQL database dbbench owns (refused if it exists and is not dbbench's).",
)
@click.option("--output", type=OutputPath(), help="Write the JSON result here.")
@click.pass_obj
def seed_cmd(home: Home, pg_url, mysql_url, only, dataset, catalog, namespace, output) -> None:
    """Load the deterministic dataset (or a catalog's setup SQL) into each target and verify it."""
    from dbbench import results
    from dbbench.progress import seed_progress

    if catalog and dataset:
        raise click.UsageError("give --dataset or --catalog, not both")
    with _connect(home, pg_url, mysql_url, only)() as targets:
        if catalog:
            setup = workflow.seed_catalog(targets, catalog, namespace=namespace, isolate=isolate())
            click.echo(render_setup(setup.catalog, setup.results, setup.agree))
            if output:
                results.write(output, setup.document(targets))
            return
        name = dataset or defaults.DATASET
        seeded = workflow.seed_dataset(
            targets,
            name,
            namespace=namespace,
            cache_dir=home.root / "datasets",
            progress=lambda: seed_progress(targets, name),
        )
        click.echo(render_seed(seeded.results, seeded.agree, seeded.generated))
        if output:
            results.write(output, seeded.document(targets))
    if seeded.problems:
        err("error: verification failed: " + "; ".join(seeded.problems))
        sys.exit(1)


# -- validate ----------------------------------------------------------------------------------
@cli.command("validate")
@click.option(
    "--catalog",
    default=defaults.CATALOG,
    show_default=True,
    help="Catalog directory or entry file (name under sql/catalog/, or a path).",
)
@click.option(
    "--namespace",
    default=defaults.NAMESPACE,
    show_default=True,
    help="Namespace the setup SQL would run into (its statements are checked against it).",
)
def validate_cmd(catalog, namespace) -> None:
    """Check a catalog (every entry, field and setup statement) without touching a database."""
    from dbbench import catalog as catalogs
    from dbbench import setupsql

    cat = catalogs.open_catalog(catalog)
    setup = {d: len(setupsql.statements_for(f, d, namespace)) for d, f in cat.setup.items()}
    click.echo(render_validate(cat, setup))


# -- explain / check ---------------------------------------------------------------------------
def _measure(home: Home, pg_url, mysql_url, only, run: Run) -> dict:
    """Run the catalog on the targets (a spinner on stderr); the result document (dbbench.explain/1)."""
    from dbbench.progress import explain_progress

    return workflow.measure(_connect(home, pg_url, mysql_url, only), run, progress=explain_progress, warn=err)


def _write_json(path: Path, doc: dict) -> None:
    import hashlib

    from dbbench import results

    results.write(path, doc)
    click.echo(f"\nwrote {path} (SHA-256 {hashlib.sha256(path.read_bytes()).hexdigest()})")


def _emit(
    doc: dict, fmt: str, *, output: Path | None, junit: Path | None, github_summary: Path | None, command: str
) -> None:
    """Print the tables, write the requested files, exit 1 on a failed assertion."""
    from dbbench.output import append_summary, table_format
    from dbbench.output import explain as report

    tablefmt = table_format(fmt)
    click.echo(report.shape_table(doc, tablefmt))
    if report.has_remediation(doc):
        click.echo("")
        click.echo(report.remediation_table(doc, tablefmt))
    if output:
        _write_json(output, doc)
    if junit:
        junit.write_text(report.junit_xml(doc, f"dbbench.{command}"))
    if github_summary:
        append_summary(github_summary, report.github_summary(doc, f"dbbench {command}"))
    problems = report.failures(doc)
    if problems:
        for line in problems:
            click.echo(line, err=True)
        sys.exit(1)


@cli.command("explain")
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
def explain_cmd(
    home: Home,
    pg_url,
    mysql_url,
    only,
    catalog,
    shapes,
    namespace,
    timeout_s,
    output,
    junit,
    github_summary,
    fmt,
    warmups,
    runs,
    natural,
) -> None:
    """Warmed EXPLAIN ANALYZE sets per shape; exit 1 when an expected index is not used."""
    run = Run(
        catalog=catalog,
        shapes=shapes,
        namespace=namespace,
        timeout_s=timeout_s,
        warmups=warmups,
        runs=runs,
        natural=natural,
        command="explain",
        isolate=isolate(),
    )
    doc = _measure(home, pg_url, mysql_url, only, run)
    _emit(doc, fmt, output=output, junit=junit, github_summary=github_summary, command="explain")


@cli.command("check")
@target_options
@explain_options
@click.option(
    "--dataset",
    default=None,
    help="Scratch dataset seeded first [default: the catalog's setup SQL if "
    f"it has one, else {defaults.CHECK_DATASET}].",
)
@click.pass_obj
def check_cmd(
    home: Home,
    pg_url,
    mysql_url,
    only,
    catalog,
    shapes,
    namespace,
    timeout_s,
    output,
    junit,
    github_summary,
    fmt,
    dataset,
) -> None:
    """CI gate: seed a scratch dataset (or the catalog's setup), run every shape once, assert the plans."""
    from dbbench.progress import explain_progress

    run = Run(catalog=catalog, shapes=shapes, namespace=namespace, timeout_s=timeout_s, isolate=isolate())
    doc = workflow.check(
        _connect(home, pg_url, mysql_url, only),
        run,
        dataset=dataset,
        cache_dir=home.root / "datasets",
        progress=explain_progress,
        warn=err,
    )
    _emit(doc, fmt, output=output, junit=junit, github_summary=github_summary, command="check")


# -- baseline / diff ---------------------------------------------------------------------------
@cli.group("baseline")
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
@click.option(
    "--catalog", default=defaults.CATALOG, show_default=True, help="Catalog directory, entry file or name."
)
@click.option("--shape", "shapes", multiple=True, help="Run only this shape (repeatable).")
@click.option(
    "--namespace", default=defaults.NAMESPACE, show_default=True, help="The seeded schema / database."
)
@click.option(
    "--timeout", "timeout_s", default=defaults.TIMEOUT_S, show_default=True, type=click.FloatRange(0.1, 3600)
)
@click.option("--warmups", default=defaults.WARMUPS, show_default=True, type=click.IntRange(0, 1000))
@click.option("--runs", default=defaults.RUNS, show_default=True, type=click.IntRange(1, 1000))
@click.option(
    "--natural/--no-natural",
    default=True,
    show_default=True,
    help="Also measure the natural spellings (kept in the baseline for reports; diff ignores them).",
)
@click.option("--allow-failures", is_flag=True, help="Save even when a catalog assertion fails.")
@click.option("--format", "fmt", type=click.Choice(["table", "markdown"]), default="table", show_default=True)
@click.pass_obj
def baseline_save(
    home: Home,
    file,
    pg_url,
    mysql_url,
    only,
    source,
    catalog,
    shapes,
    namespace,
    timeout_s,
    warmups,
    runs,
    natural,
    allow_failures,
    fmt,
) -> None:
    """Run the catalog (or take --from RESULT.json) and write its baseline to FILE."""
    from dbbench import baseline, results
    from dbbench.output import explain as report
    from dbbench.output import table_format

    if source:
        doc = results.load(source)
    else:
        run = Run(
            catalog=catalog,
            shapes=shapes,
            namespace=namespace,
            timeout_s=timeout_s,
            warmups=warmups,
            runs=runs,
            natural=natural,
            command="baseline save",
            isolate=isolate(),
        )
        doc = _measure(home, pg_url, mysql_url, only, run)
        click.echo(report.shape_table(doc, table_format(fmt)))
    problems = report.failures(doc)
    if problems and not allow_failures:
        for line in problems:
            click.echo(line, err=True)
        err(
            f"error: not saving a baseline in which {len(doc['failures'] or problems)} assertion(s) fail "
            "(fix them, or pass --allow-failures)"
        )
        sys.exit(1)
    digest = baseline.save(file, doc, source=str(source) if source else "run")
    click.echo(f"\nbaseline: {file} ({len(doc['results'])} shape/dialect entries; SHA-256 {digest})")


@cli.command("diff")
@click.argument("baseline_file", metavar="BASELINE", type=click.Path(dir_okay=False, path_type=Path))
@click.argument(
    "result_file", metavar="[RESULT]", required=False, type=click.Path(dir_okay=False, path_type=Path)
)
@target_options
@click.option(
    "--catalog", default=None, help="Catalog to run when RESULT is not given [default: the baseline's]."
)
@click.option("--namespace", default=None, help="Namespace to run in [default: the baseline's].")
@click.option("--warmups", default=None, type=click.IntRange(0, 1000), help="[default: the baseline's]")
@click.option("--runs", default=None, type=click.IntRange(1, 1000), help="[default: the baseline's]")
@click.option(
    "--timeout", "timeout_s", default=None, type=click.FloatRange(0.1, 3600), help="[default: the baseline's]"
)
@click.option(
    "--rows-factor",
    default=10.0,
    show_default=True,
    type=click.FloatRange(1, None),
    help="A node's rows misestimated by more than this factor is a regression (if it was not before).",
)
@click.option(
    "--rows-min",
    default=100.0,
    show_default=True,
    type=click.FloatRange(0, None),
    help="…only where the larger of estimate and actual is at least this many rows.",
)
@click.option(
    "--slower",
    default=1.0,
    show_default=True,
    type=click.FloatRange(0, None),
    help="p50 slower by more than this fraction of the baseline p50 (1.0: doubled) is a regression …",
)
@click.option(
    "--noise-ms",
    default=0.5,
    show_default=True,
    type=click.FloatRange(0, None),
    help="… and only if it is slower by more than this many milliseconds.",
)
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
    "--markdown",
    "markdown_file",
    type=OutputPath(),
    help="Also write the Markdown (a pull-request comment) to this file.",
)
@click.option("--output", type=OutputPath(), help="Write the diff as JSON here.")
@click.option(
    "--save-result",
    type=OutputPath(),
    help="When RESULT is not given: write the new run's result document here.",
)
@click.option(
    "--junit",
    type=OutputPath(),
    help="JUnit XML: one test case per shape and dialect, failed when it regressed.",
)
@click.option(
    "--github-summary",
    type=OutputPath(),
    envvar="GITHUB_STEP_SUMMARY",
    metavar="FILE",
    help="Append the Markdown here (default: $GITHUB_STEP_SUMMARY when set).",
)
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
    from dbbench import baseline, diff, results
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
        new = results.load(result_file)
        result_name = str(result_file)
    else:
        run = Run.from_config(
            base.get("config") or {},
            catalog=catalog,
            namespace=namespace,
            timeout_s=timeout_s,
            warmups=warmups,
            runs=runs,
            isolate=isolate(),
        )
        if stability:
            plans = workflow.stability(_connect(home, pg_url, mysql_url, only), run, times=stability)
        new = _measure(home, pg_url, mysql_url, only, run)
        if self_control:
            aa = diff.compare(new, _measure(home, pg_url, mysql_url, only, run), thresholds)
        result_name = "this run"
        if save_result:
            results.write(save_result, new)
            result_name = str(save_result)
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
        markdown_file.write_text(md)
    if output:
        results.write(output, report.to_dict())
    if junit:
        junit.write_text(render.junit_xml(report))
    if github_summary:
        append_summary(github_summary, md)
    sys.exit(exit_code(report.verdict))


# -- report ------------------------------------------------------------------------------------
@cli.command("report")
@click.argument("result_file", metavar="RESULT.json", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--html",
    "html_file",
    type=OutputPath(),
    help="Also write a self-contained HTML page with a chart of every timed sample.",
)
@click.option("--output", type=OutputPath(), help="Write the Markdown here too.")
@click.option("--title", default=None, help="Title of the HTML page.")
def report_cmd(result_file, html_file, output, title) -> None:
    """A result file as a write-up's Markdown tables: p50 / p95 per shape and dialect with the
    access path, and natural vs remediated spellings; --html adds a chart of every sample."""
    from dbbench import results
    from dbbench.output import explain, html

    doc = results.load(result_file)
    md = explain.markdown(doc, result_file)
    click.echo(md, nl=False)
    if output:
        output.write_text(md)
    if html_file:
        html_file.write_text(html.html(doc, result_file, title))
        err(f"wrote {html_file}")


# -- bench -------------------------------------------------------------------------------------
@cli.group("bench")
def bench_group() -> None:
    """Benchmarks: ratios measured side by side in one run."""


@bench_group.command("seed")
@target_options
@click.option("--dataset", default=defaults.DATASET, show_default=True)
@click.option(
    "--repeat",
    default=1,
    show_default=True,
    type=click.IntRange(1, 10),
    help="Runs of floor + seed; the best of each is reported.",
)
@click.pass_obj
def bench_seed(home: Home, pg_url, mysql_url, only, dataset, repeat) -> None:
    """Seed time next to the raw floor (the servers' own bulk load + the same indexes)."""
    from dbbench.bench import seed as bench

    with _connect(home, pg_url, mysql_url, only)(warn=False) as targets:
        rows, floor_wall, seed_wall = bench.run(targets, dataset, home.root / "datasets", repeat)
    click.echo(render_bench_seed(rows, floor_wall, seed_wall))


def main() -> None:
    cli(prog_name="dbbench")


if __name__ == "__main__":
    main()
