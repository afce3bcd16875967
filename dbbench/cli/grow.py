"""``dbbench grow``: the catalog at a ladder of sizes; how each shape's work grows (exit 1 when a
shape grows worse than its catalog entry declares)."""

from __future__ import annotations

import sys

import click

from dbbench import defaults
from dbbench.cli.app import _connect, err
from dbbench.cli.options import isolate, output_file, target_options
from dbbench.measure import grow
from dbbench.servers import Home
from verdict.cli import Float
from verdict.files import write_output


@click.command("grow")
@target_options
@click.option(
    "--catalog", default="alpine", show_default=True, help="Catalog directory or name under sql/catalog/."
)
@click.option(
    "--sizes",
    default="10k,100k,1m",
    show_default=True,
    help="The ladder: package counts (alpine datasets) or the :scale of a catalog's setup SQL.",
)
@click.option("--shape", "shapes", multiple=True, help="Only this shape (repeatable).")
@click.option(
    "--namespace",
    default="dbbench_grow",
    show_default=True,
    help="Prefix of the namespaces, one per size (NS_10k, …): kept and reused while they hold that size.",
)
@click.option("--warmups", default=1, show_default=True, type=click.IntRange(0, 100))
@click.option("--runs", default=3, show_default=True, type=click.IntRange(1, 100))
@click.option(
    "--timeout",
    "timeout_s",
    default=60.0,
    show_default=True,
    type=Float(*defaults.TIMEOUT_RANGE_S),
    help="Seconds per EXPLAIN ANALYZE.",
)
@click.option("--format", "fmt", type=click.Choice(["table", "markdown"]), default="table", show_default=True)
@output_file("--output", help="Write the JSON result (dbbench.grow/1) here.")
@output_file("--html", "html_file", help="Write a page with a log-log chart of work against N per shape.")
@click.pass_obj
def grow_cmd(
    home: Home,
    pg_url,
    mysql_url,
    only,
    catalog,
    sizes,
    shapes,
    namespace,
    warmups,
    runs,
    timeout_s,
    fmt,
    output,
    html_file,
) -> None:
    """Seed each size, run every shape (both spellings), fit work ~ N^k; exit 1 on a worse growth than declared."""
    from dbbench.catalog import entries as catalogs
    from dbbench.cli.progress import grow_progress
    from dbbench.document import store as results
    from dbbench.output import grow as render
    from dbbench.output import table_format

    ladder_sizes = grow.parse_sizes(sizes)
    picked = list(shapes) or None
    cat = catalogs.open_catalog(catalog, picked)
    with _connect(home, pg_url, mysql_url, only)() as targets:
        with grow_progress(grow.progress_steps(targets, cat, ladder_sizes, picked)) as progress:
            ladder = grow.run(
                targets,
                cat,
                sizes=ladder_sizes,
                namespace=namespace,
                warmups=warmups,
                runs=runs,
                timeout_ms=int(timeout_s * 1000),
                only=picked,
                cache_dir=home.root / "datasets",
                isolate=isolate(),
                progress=progress,
            )
        doc = grow.document(ladder, targets)
    tablefmt = table_format(fmt)
    click.echo(render.growth_table(doc, tablefmt))
    if any(g["spelling"] == "natural" for g in doc["growth"]):
        click.echo("")
        click.echo(render.ratio_table(doc, tablefmt))
    click.echo("")
    click.echo("time: " + ", ".join(f"{k} {v:.1f} s" for k, v in doc["seconds"].items()))
    if output:
        results.write(output, doc)
        click.echo(f"wrote {output}")
    if html_file:
        from dbbench.output import grow_html

        write_output(html_file, grow_html.page(doc))
        click.echo(f"wrote {html_file}")
    if doc["problems"]:
        for line in doc["problems"]:
            err(f"growth: {line}")
        sys.exit(1)
