"""``dbbench grow``: the catalog at a ladder of sizes; how each shape's work grows (exit 1 when a
shape grows worse than its catalog entry declares)."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from dbbench import defaults, workflow
from dbbench.cli.app import Targets, err, write_file, write_json
from dbbench.cli.options import CATALOG, isolate, output_file, target_options
from dbbench.workflow.local import Home
from dbbench.workflow.runs import LadderOptions, parse_sizes
from verdict.cli import Float


@click.command("grow")
@target_options
@click.option(
    "--catalog",
    type=CATALOG,
    default=defaults.CATALOG,
    show_default=True,
    help="Catalog directory or name under sql/catalog/.",
)
@click.option(
    "--sizes",
    default=defaults.GROW_SIZES,
    show_default=True,
    help="The ladder: package counts (alpine datasets) or the :scale of a catalog's setup SQL and data spec.",
)
@click.option("--shape", "shapes", multiple=True, help="Only this shape (repeatable).")
@click.option(
    "--namespace",
    default=defaults.GROW_NAMESPACE,
    show_default=True,
    help="Prefix of the namespaces, one per size (NS_10k, …): kept and reused while they hold that size.",
)
@click.option("--warmups", default=defaults.GROW_WARMUPS, show_default=True, type=click.IntRange(0, 100))
@click.option("--runs", default=defaults.GROW_RUNS, show_default=True, type=click.IntRange(1, 100))
@click.option(
    "--timeout",
    "timeout_s",
    default=defaults.GROW_TIMEOUT_S,
    show_default=True,
    type=Float(*defaults.TIMEOUT_RANGE_S),
    help="Seconds per EXPLAIN ANALYZE.",
)
@click.option("--format", "fmt", type=click.Choice(["table", "markdown"]), default="table", show_default=True)
@output_file("--output", help="Write the JSON result (dbbench.grow/1) here.")
@output_file("--html", "html_file", help="Write a page with a log-log chart of work against N per shape.")
@click.pass_obj
def grow_cmd(home: Home, **given: Any) -> None:
    """Seed each size, run every shape (both spellings), fit work ~ N^k; exit 1 on a worse growth than declared."""
    from dbbench.cli.progress import grow_progress

    opts = GrowOptions.parse(given)
    doc = workflow.grow(
        opts.targets.connect(home),
        opts.catalog,
        opts.ladder,
        shapes=opts.shapes,
        cache_dir=home.root / "datasets",
        progress=grow_progress,
    )
    _render_grow(opts, doc)


@dataclass(frozen=True)
class GrowOptions:
    """``dbbench grow``'s options: the targets, the catalog (``shapes`` of it), the ladder
    (:class:`dbbench.measure.grow.LadderOptions`), the format printed and the files written."""

    targets: Targets
    catalog: str
    shapes: tuple[str, ...]
    ladder: LadderOptions
    fmt: str
    output: Path | None
    html_file: Path | None

    @classmethod
    def parse(cls, given: dict[str, Any]) -> GrowOptions:
        ladder = LadderOptions(
            sizes=tuple(parse_sizes(given["sizes"])),
            namespace=given["namespace"],
            warmups=given["warmups"],
            runs=given["runs"],
            timeout_ms=int(given["timeout_s"] * 1000),
            isolate=isolate(),
        )
        return cls(
            Targets.take(given),
            given["catalog"],
            given["shapes"],
            ladder,
            given["fmt"],
            given["output"],
            given["html_file"],
        )


def _render_grow(opts: GrowOptions, doc: dict[str, Any]) -> None:
    """Print the growth tables, write the requested files, exit 1 on a growth worse than declared."""
    from dbbench.output import grow, table_format

    tablefmt = table_format(opts.fmt)
    click.echo(grow.growth_table(doc, tablefmt))
    if any(g["spelling"] == "natural" for g in doc["growth"]):
        click.echo("")
        click.echo(grow.ratio_table(doc, tablefmt))
    click.echo("")
    click.echo("time: " + ", ".join(f"{k} {v:.1f} s" for k, v in doc["seconds"].items()))
    if opts.output:
        write_json(opts.output, doc, tell=click.echo)
    if opts.html_file:
        from dbbench.output import grow_html

        write_file(opts.html_file, grow_html.page(doc), tell=click.echo)
    if doc["problems"]:
        for line in doc["problems"]:
            err(f"growth: {line}")
        sys.exit(1)
