"""The ``dbbench`` command: a thin layer over the library (every command maps to one call)."""

from __future__ import annotations

import json
import sys
from dataclasses import asdict
from pathlib import Path

import click
import psycopg
import pymysql
from sqlalchemy.exc import SQLAlchemyError
from tabulate import tabulate

from dbbench import __version__, servers
from dbbench.errors import DbbenchError
from dbbench.servers import Home
from dbbench.targets import open_targets

DIALECT_CHOICE = click.Choice(["postgresql", "mysql"])


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


@click.group(cls=Cli, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="dbbench")
@click.option("--home", type=click.Path(path_type=Path), envvar="DBBENCH_HOME",
              help="Where local servers are installed and kept (env DBBENCH_HOME).")
@click.option("--instance", default="default", envvar="DBBENCH_INSTANCE", show_default=True,
              help="Name of the local server set (env DBBENCH_INSTANCE).")
@click.pass_context
def cli(ctx: click.Context, home: Path | None, instance: str) -> None:
    """Index-regression checks for SQL query catalogs on PostgreSQL and MySQL."""
    ctx.obj = Home(home, instance)


def target_options(fn):
    """--pg-url / --mysql-url / --only, shared by every command that talks to databases."""
    fn = click.option("--only", type=DIALECT_CHOICE, help="Use only this dialect.")(fn)
    fn = click.option("--mysql-url", metavar="URL",
                      help="mysql+pymysql://USER:PASS@HOST:PORT/ (env DBBENCH_MYSQL_URL; default: local server)")(fn)
    fn = click.option("--pg-url", metavar="URL",
                      help="postgresql+psycopg://USER:PASS@HOST:PORT/DB (env DBBENCH_PG_URL; default: local server)")(fn)
    return fn


def say(message: str) -> None:
    err(message)


# -- servers -----------------------------------------------------------------------------------
@cli.group("servers")
def servers_group() -> None:
    """Local loopback PostgreSQL 12.22 and MySQL servers (the embedded default)."""


def _which(names: tuple[str, ...]):
    return list(dict.fromkeys(names)) or None


def _print_status(rows, as_json: bool) -> None:
    if as_json:
        click.echo(json.dumps([asdict(r) for r in rows], indent=2))
        return
    table = [[r.server, r.state, r.version or "", r.port or "", r.pid or "", r.data_dir or "",
              r.url or ""] for r in rows]
    click.echo(tabulate(table, headers=["server", "state", "version", "port", "pid", "data dir", "url"]))


@servers_group.command("up")
@click.argument("which", nargs=-1, type=DIALECT_CHOICE)
@click.option("--pg-port", type=int, help="Port for a newly started PostgreSQL (default 55432).")
@click.option("--mysql-port", type=int, help="Port for a newly started MySQL (default 53306).")
@click.option("--json", "as_json", is_flag=True, help="Print the status as JSON.")
@click.pass_obj
def servers_up(home: Home, which, pg_port, mysql_port, as_json) -> None:
    """Install (first time), start and wait for the local servers; reuse running ones."""
    rows = servers.up(_which(which), home=home,
                      ports={"postgresql": pg_port, "mysql": mysql_port}, say=say)
    _print_status(rows, as_json)
    for r in rows:
        if r.server == "MySQL" and r.version and not r.version.startswith("8.0"):
            err(f"note: local MySQL is {r.version} (no 8.0 build is installable here; same "
                "optimizer lineage). Use --mysql-url for a real 8.0 server.")


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


# -- info --------------------------------------------------------------------------------------
@cli.command("info")
@target_options
@click.pass_obj
def info(home: Home, pg_url, mysql_url, only) -> None:
    """Connect to each target and report its server version."""
    targets = open_targets({"postgresql": pg_url, "mysql": mysql_url}, only, home=home)
    try:
        for t in targets:
            for w in t.warnings:
                err(f"warning: {w}")
        click.echo(tabulate([[t.label, t.version_text, t.safe_url] for t in targets],
                            headers=["dialect", "version", "url"]))
    finally:
        for t in targets:
            t.dispose()


# -- seed --------------------------------------------------------------------------------------
@cli.command("seed")
@target_options
@click.option("--dataset", default="alpine-100k", show_default=True,
              help="Dataset name under seeds/ or a path to a dataset .toml.")
@click.option("--namespace", default="dbbench", show_default=True,
              help="The PostgreSQL schema / MySQL database dbbench owns (refused if it exists and is not dbbench's).")
@click.option("--output", type=click.Path(dir_okay=False, path_type=Path), help="Write the JSON result here.")
@click.pass_obj
def seed_cmd(home: Home, pg_url, mysql_url, only, dataset, namespace, output) -> None:
    """Load the deterministic dataset into each target and verify what was loaded."""
    from dbbench import results, seed
    from dbbench.progress import seed_progress

    targets = open_targets({"postgresql": pg_url, "mysql": mysql_url}, only, home=home)
    try:
        for t in targets:
            for w in t.warnings:
                err(f"warning: {w}")
        with seed_progress(targets, dataset) as progress:
            ds, res, generated = seed.seed(targets, dataset, namespace=namespace, progress=progress,
                                           cache_dir=home.root / "datasets")
        agree = seed.fingerprints_agree(res)
        click.echo(render_seed(res, agree, generated))
        if output:
            results.write(output, results.seed_document(ds, targets, res, generated, agree))
    finally:
        for t in targets:
            t.dispose()
    bad = [f"{r.dialect}: {c.name} = {c.actual}, expected {c.expected}" for r in res for c in r.checks if not c.ok]
    bad += [f"fingerprint of {t} differs between dialects" for t, ok in agree.items() if not ok]
    if bad:
        err("error: verification failed: " + "; ".join(bad))
        sys.exit(1)


def render_seed(res, agree, generated: float) -> str:
    labels = [{"postgresql": "PostgreSQL", "mysql": "MySQL"}[r.dialect] for r in res]
    names = [c.name for c in res[0].checks] if res else []
    rows = []
    for i, name in enumerate(names):
        cells = [r.checks[i].actual for r in res]
        ok = all(r.checks[i].ok for r in res)
        rows.append([name, f"{res[0].checks[i].expected:,}", *[f"{c:,}" for c in cells], "ok" if ok else "MISMATCH"])
    out = [tabulate(rows, headers=["cardinality", "expected", *labels, "verdict"], colalign=("left", "right"))]
    fp = [[t, *[r.fingerprints[t] for r in res], "equal" if agree[t] else "DIFFERENT"] for t in agree]
    out.append("")
    out.append(tabulate(fp, headers=["table", *[f"{lb} fingerprint" for lb in labels], "across dialects"]))
    timing = [[lb, f"{r.total_seconds:.2f} s", f"{r.rows / r.total_seconds:,.0f}",
               ", ".join(f"{k} {v:.2f}" for k, v in r.seconds.items())] for lb, r in zip(labels, res)]
    out.append("")
    out.append(tabulate(timing, headers=["server", "seed time", "rows/s", "steps (s)"]))
    out.append(f"(load files prepared in {generated:.2f} s; servers loaded concurrently)")
    return "\n".join(out)


# -- explain / check ---------------------------------------------------------------------------
def _explain_options(fn):
    fn = click.option("--catalog", default="alpine", show_default=True,
                      help="Catalog directory or entry file (name under sql/catalog/, or a path).")(fn)
    fn = click.option("--shape", "shapes", multiple=True, help="Run only this shape (repeatable).")(fn)
    fn = click.option("--namespace", default="dbbench", show_default=True,
                      help="The seeded PostgreSQL schema / MySQL database.")(fn)
    fn = click.option("--timeout", "timeout_s", default=30.0, show_default=True, type=click.FloatRange(0.1, 3600),
                      help="Per-statement timeout in seconds (a pathological plan is reported as timeout).")(fn)
    fn = click.option("--output", type=click.Path(dir_okay=False, path_type=Path), help="Write the JSON result here.")(fn)
    fn = click.option("--junit", type=click.Path(dir_okay=False, path_type=Path),
                      help="Write a JUnit XML report (one test case per shape and dialect).")(fn)
    fn = click.option("--format", "fmt", type=click.Choice(["table", "markdown"]), default="table",
                      show_default=True, help="Terminal tables or Markdown.")(fn)
    return fn


def _run_explain(home, pg_url, mysql_url, only, catalog, shapes, namespace, timeout_s, output, junit, fmt,
                 warmups: int, runs: int, natural: bool, command: str, access_only: bool = False) -> None:
    import hashlib

    from dbbench import explain, report, results
    from dbbench.progress import explain_progress

    targets = open_targets({"postgresql": pg_url, "mysql": mysql_url}, only, home=home)
    try:
        for t in targets:
            for w in t.warnings:
                err(f"warning: {w}")
        with explain_progress() as progress:
            _, res, metas = explain.run(targets, catalog, namespace=namespace, warmups=warmups, runs=runs,
                                        timeout_ms=int(timeout_s * 1000), natural=natural,
                                        only=list(shapes) or None, progress=progress, access_only=access_only)
        tablefmt = "github" if fmt == "markdown" else "simple"
        click.echo(report.shape_table(res, tablefmt))
        if any(r.natural for r in res):
            click.echo("")
            click.echo(report.remediation_table(res, tablefmt))
        if output:
            config = {"command": command, "catalog": catalog, "namespace": namespace, "warmups": warmups,
                      "runs": runs, "timeout_s": timeout_s, "natural": natural, "shapes": list(shapes)}
            results.write(output, report.explain_document(targets, res, metas, config))
            digest = hashlib.sha256(output.read_bytes()).hexdigest()
            click.echo(f"\nwrote {output} (SHA-256 {digest})")
        if junit:
            junit.write_text(report.junit_xml(res, f"dbbench.{command}"))
    finally:
        for t in targets:
            t.dispose()
    problems = report.failures(res)
    if problems:
        for line in problems:
            click.echo(line, err=True)
        sys.exit(1)


@cli.command("explain")
@target_options
@_explain_options
@click.option("--warmups", default=3, show_default=True, type=click.IntRange(0, 1000))
@click.option("--runs", default=7, show_default=True, type=click.IntRange(1, 1000),
              help="Timed EXPLAIN ANALYZE samples per spelling (p50/p95 by nearest rank).")
@click.option("--natural/--no-natural", default=True, show_default=True,
              help="Also measure the natural (pre-remediation) spellings.")
@click.pass_obj
def explain_cmd(home: Home, pg_url, mysql_url, only, catalog, shapes, namespace, timeout_s, output, junit, fmt,
                warmups, runs, natural) -> None:
    """Warmed EXPLAIN ANALYZE sets per shape; exit 1 when an expected index is not used."""
    _run_explain(home, pg_url, mysql_url, only, catalog, shapes, namespace, timeout_s, output, junit, fmt,
                 warmups, runs, natural, "explain")


@cli.command("check")
@target_options
@_explain_options
@click.option("--dataset", default="alpine-ci", show_default=True, help="Scratch dataset seeded first.")
@click.pass_obj
def check_cmd(home: Home, pg_url, mysql_url, only, catalog, shapes, namespace, timeout_s, output, junit, fmt,
              dataset) -> None:
    """CI gate: seed a small scratch dataset, run every shape once, assert the access paths."""
    from dbbench import seed

    if namespace == "dbbench":
        namespace = "dbbench_check"
    targets = open_targets({"postgresql": pg_url, "mysql": mysql_url}, only, home=home)
    try:
        _, res, _ = seed.seed(targets, dataset, namespace=namespace, cache_dir=home.root / "datasets")
    finally:
        for t in targets:
            t.dispose()
    bad = [f"{r.dialect}: {c.name}" for r in res for c in r.checks if not c.ok]
    if bad:
        err("error: scratch dataset verification failed: " + "; ".join(bad))
        sys.exit(1)
    _run_explain(home, pg_url, mysql_url, only, catalog, shapes, namespace, timeout_s, output, junit, fmt,
                 0, 1, False, "check", access_only=True)


# -- bench -------------------------------------------------------------------------------------
@cli.group("bench")
def bench_group() -> None:
    """Benchmarks: ratios measured side by side in one run."""


@bench_group.command("seed")
@target_options
@click.option("--dataset", default="alpine-100k", show_default=True)
@click.option("--repeat", default=1, show_default=True, type=click.IntRange(1, 10),
              help="Runs of floor + seed; the best of each is reported.")
@click.pass_obj
def bench_seed(home: Home, pg_url, mysql_url, only, dataset, repeat) -> None:
    """Seed time next to the raw floor (the servers' own bulk load + the same indexes)."""
    from dbbench.bench import seed as bench

    targets = open_targets({"postgresql": pg_url, "mysql": mysql_url}, only, home=home)
    try:
        rows, floor_wall, seed_wall = bench.run(targets, dataset, home.root / "datasets", repeat)
    finally:
        for t in targets:
            t.dispose()
    labels = {"postgresql": "PostgreSQL", "mysql": "MySQL"}
    table = [[labels[r.dialect], f"{r.rows:,}", f"{r.floor_seconds:.2f} s", f"{r.seed_seconds:.2f} s",
              f"{r.ratio:.2f}x", f"{r.rows / r.seed_seconds:,.0f}"] for r in rows]
    table.append(["both (wall)", "", f"{floor_wall:.2f} s", f"{seed_wall:.2f} s",
                  f"{seed_wall / floor_wall:.2f}x", ""])
    click.echo(tabulate(table, headers=["server", "rows", "floor", "seed", "seed/floor", "seed rows/s"]))


def main() -> None:
    cli(prog_name="dbbench")


if __name__ == "__main__":
    main()
