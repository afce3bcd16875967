"""``dbbench info``, ``seed``, ``validate`` and ``report``: the commands around a measurement."""

from __future__ import annotations

import click

from dbbench import defaults, workflow
from dbbench.cli.app import _connect, say, write_file, write_json
from dbbench.cli.options import (
    CATALOG,
    INPUT_FILE,
    catalog_option,
    isolate,
    namespace_option,
    no_isolation_option,
    output_file,
    target_options,
)
from dbbench.output.commands import render_info, render_seed, render_setup, render_validate
from dbbench.workflow.local import Home
from dbbench.workflow.volume import MAX_SCALE


@click.command("info")
@target_options
@click.pass_obj
def info(home: Home, pg_url, mysql_url, only) -> None:
    """Connect to each target and report its server version."""
    click.echo(render_info(workflow.info(_connect(home, pg_url, mysql_url, only))))


# -- seed --------------------------------------------------------------------------------------
@click.command("seed")
@target_options
@click.option(
    "--dataset",
    default=None,
    help=f"Dataset name under seeds/ or a path to a dataset .toml [default: {defaults.DATASET}].",
)
@click.option(
    "--catalog",
    type=CATALOG,
    default=None,
    metavar="DIR",
    help="Instead of a dataset: run this catalog's own setup SQL (setup.sql / setup.<dialect>.sql).",
)
@namespace_option(
    "The PostgreSQL schema / MySQL database dbbench owns (refused if it exists and is not dbbench's)."
)
@click.option(
    "--scale",
    type=click.IntRange(1, MAX_SCALE),
    default=None,
    help=":scale of a catalog's setup SQL and data spec (data/spec.toml) [default: 10,000 in the "
    "setup SQL; the spec's own scale, else 10,000].",
)
@output_file("--output", help="Write the JSON result here.")
@click.pass_obj
def seed_cmd(home: Home, pg_url, mysql_url, only, dataset, catalog, namespace, scale, output) -> None:
    """Load the deterministic dataset (or a catalog's setup SQL, then its data spec) into each
    target and verify it."""
    from dbbench.cli.progress import seed_progress, setup_progress
    from dbbench.cli.volume import fill_bars
    from dbbench.output.volume import render_seeded

    if catalog and dataset:
        raise click.UsageError("give --dataset or --catalog, not both")
    if scale is not None and not catalog:
        raise click.UsageError("--scale is for --catalog (a dataset has its own size)")
    name = dataset or defaults.DATASET
    rows = 0 if catalog else workflow.dataset_rows(name)  # a bad definition: said before connecting
    with _connect(home, pg_url, mysql_url, only)() as targets:
        if catalog:
            setup = workflow.seed_catalog(
                targets,
                catalog,
                namespace=namespace,
                isolate=isolate(),
                scale=scale,
                progress=lambda: setup_progress(targets),
                fill_progress=fill_bars,
            )
            click.echo(render_setup(setup))
            if setup.filled:
                click.echo(render_seeded(setup.filled))
            if output:
                write_json(output, setup.json)
            workflow.require_filled(setup.filled)
            return
        seeded = workflow.seed_dataset(
            targets,
            name,
            namespace=namespace,
            cache_dir=home.root / "datasets",
            progress=lambda: seed_progress(targets, rows),
        )
        click.echo(render_seed(seeded))
        if output:
            write_json(output, seeded.json)
    if seeded.problems:
        raise workflow.DatasetUnverified("verification failed: " + "; ".join(seeded.problems))


# -- validate ----------------------------------------------------------------------------------
@click.command("validate")
@catalog_option()
@namespace_option("Namespace the setup SQL would run into (its statements are checked against it).")
@no_isolation_option(
    "Check the setup SQL as `seed --no-isolation` runs it (any name outside the namespace refused)."
)
def validate_cmd(catalog, namespace) -> None:
    """Check a catalog (every entry, field, setup statement and its data spec) without touching a database."""
    from dbbench.output.volume import render_spec

    valid = workflow.validate(catalog, namespace, isolate=isolate())
    click.echo(render_validate(valid))
    if valid.spec is not None:
        click.echo(render_spec(valid.spec))


@click.command("report")
@click.argument("result_file", metavar="RESULT.json", type=INPUT_FILE)
@output_file(
    "--html", "html_file", help="Also write a self-contained HTML page with a chart of every timed sample."
)
@output_file("--output", help="Write the Markdown here too.")
@click.option("--title", default=None, help="Title of the HTML page.")
@click.option(
    "--baseline",
    "baseline_file",
    type=INPUT_FILE,
    default=None,
    help="Also compare the result with this baseline (as `dbbench diff BASELINE RESULT`): its "
    "verdicts, and each changed plan beside the baseline's.",
)
def report_cmd(result_file, html_file, output, title, baseline_file) -> None:
    """A result file as a write-up's Markdown tables: p50 / p95 per shape and dialect with the
    access path, and natural vs remediated spellings; --html adds a chart of every sample;
    --baseline adds the diff against a baseline, the two plans side by side in the HTML."""
    from dbbench.document import store
    from dbbench.output import diff, explain, html

    doc = store.load_document(result_file)
    against = None if baseline_file is None else workflow.compare_files(baseline_file, result_file)
    md = explain.markdown(doc, result_file)
    if against is not None:
        md += "\n" + diff.to_markdown(against)
    click.echo(md, nl=False)
    if output:
        write_file(output, md)
    if html_file:
        write_file(html_file, html.html(doc, result_file, title, against), tell=say)
