"""``dbbench init`` (a starter data spec from a live schema) and ``dbbench fill`` (load a spec)."""

from __future__ import annotations

import contextlib
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

from dbbench import defaults, workflow
from dbbench.cli.app import _connect, say, write_file, write_json
from dbbench.cli.options import CATALOG, INPUT_FILE, isolate, namespace_option, output_file, target_options
from dbbench.errors import DbbenchError
from dbbench.output.volume import render_fill
from dbbench.workflow.local import Home
from dbbench.workflow.volume import LONG_FILL_ROWS, MAX_SCALE, SPEC_FILE, TOTAL


def _spec_path(catalog: str | None, spec: Path | None) -> tuple[Path, Path]:
    """The spec file and the directory the files it names must be in (the catalog's)."""
    if spec is not None:
        return spec, spec.parent
    if catalog is None:
        raise click.UsageError("give --catalog DIR (its data/spec.toml) or --spec FILE")
    return Path(catalog) / SPEC_FILE, Path(catalog)


@click.command("init")
@target_options
@namespace_option(
    "The PostgreSQL schema / MySQL database to read (built by `dbbench seed --catalog`, or your own)."
)
@click.option("--catalog", type=CATALOG, metavar="DIR", help="Write the spec as DIR/data/spec.toml.")
@output_file("--output", help="Write the spec here instead (default with no --catalog: standard output).")
@click.option("--force", is_flag=True, help="Replace a spec that exists.")
@click.pass_obj
def init_cmd(home: Home, pg_url, mysql_url, only, namespace, catalog, output, force) -> None:
    """Write a starter data spec from a live schema: generators from types, names, keys, enums and
    checks, row counts from the tables (else :scale). It fills the schema without edits."""
    dialect = workflow.starter_dialect(only, pg_url, mysql_url)
    path = output or (Path(catalog) / SPEC_FILE if catalog else None)
    if path is not None and path.exists() and not force:
        raise DbbenchError(f"{path} exists; pass --force to replace it")
    text = workflow.init(_connect(home, pg_url, mysql_url, dialect), namespace).text
    if path is None:
        click.echo(text, nl=False)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    write_file(path, text, tell=say)


FILL_RATE = 50_000  # rows/s per server a fill estimate assumes (docs/volume.md: 55,000-236,000)
PROGRESS_EVERY_S = 10.0  # a progress line this often when stderr is no terminal


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:,.1f} h"


def estimate(total: int) -> str:
    """What a fill of ``total`` rows says before it starts (when it is long)."""
    return (
        f"fill: {total:,} rows to make and load into each server; at about {FILL_RATE:,} rows/s "
        f"that takes about {_duration(total / FILL_RATE)} (Ctrl-C stops it)"
    )


def _lines() -> Callable[[str, int, int], None]:
    """Progress as lines on stderr (no terminal): the estimate, then every PROGRESS_EVERY_S and at
    each table's end, for a long fill only."""
    state = {"total": 0, "done": 0, "long": False, "last": time.monotonic()}
    made: dict[str, int] = {}

    def update(table: str, done: int, total: int) -> None:
        if table == TOTAL:
            state.update(total=total, long=total >= LONG_FILL_ROWS)
            if state["long"]:
                say(estimate(total))
            return
        made[table] = done
        if not state["long"]:
            return
        now = time.monotonic()
        if done == total or now - state["last"] >= PROGRESS_EVERY_S:
            state["last"] = now
            overall = sum(made.values())
            say(f"fill: {table} {done:,} of {total:,} rows ({overall:,} of {state['total']:,} in all)")

    return update


@contextlib.contextmanager
def fill_bars() -> Iterator:
    """One bar per table on stderr, fed from the generating thread; when stderr is no terminal,
    lines for a long fill (:func:`_lines`). A long fill says its estimate first."""
    console = Console(stderr=True)
    if not console.is_terminal:
        yield _lines()
        return
    bars = Progress(
        TextColumn("{task.description:<32}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
    )
    tasks: dict[str, TaskID] = {}
    lock = threading.Lock()
    with bars:

        def update(table: str, done: int, total: int) -> None:
            if table == TOTAL:
                if total >= LONG_FILL_ROWS:
                    console.print(estimate(total), highlight=False)
                return
            with lock:
                if table not in tasks:
                    tasks[table] = bars.add_task(table, total=total or 1)
                bars.update(tasks[table], completed=done)

        yield update


@click.command("fill")
@target_options
@click.option("--catalog", type=CATALOG, metavar="DIR", help="The catalog whose data/spec.toml to load.")
@click.option("--spec", type=INPUT_FILE, help="A data spec file instead.")
@namespace_option("The namespace `dbbench seed --catalog` built (its tables are filled).")
@click.option(
    "--scale",
    type=click.IntRange(1, MAX_SCALE),
    default=None,
    help=f":scale of the spec's row counts [default: the spec's scale, else {defaults.SCALE:,}].",
)
@output_file("--output", help="Write the JSON result here.")
@click.pass_obj
def fill_cmd(home: Home, pg_url, mysql_url, only, catalog, spec, namespace, scale, output) -> None:
    """Load a data spec into the tables of a namespace on each target: the same rows on both,
    bulk-loaded, then analyzed, checked and fingerprinted."""
    file, root = _spec_path(catalog, spec)
    connect = _connect(home, pg_url, mysql_url, only)  # a bad spec is refused before it connects
    filled = workflow.fill(connect, file, root, namespace, scale=scale, isolate=isolate(), progress=fill_bars)
    sys.stderr.flush()
    click.echo(render_fill(filled))
    if output:
        write_json(output, filled.json)
    workflow.require_filled(filled)
