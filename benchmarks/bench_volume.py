#!/usr/bin/env python3
"""Is ``dbbench fill`` as fast as the servers' own bulk load of the same rows?

    .venv/bin/python benchmarks/bench_volume.py [--scale 100000] [--catalog examples/market] [--only postgresql|mysql]
        [--before]

Builds the catalog's schema (its setup SQL) in a scratch namespace, writes the starter spec
``dbbench init`` would (every table ``:scale`` rows), then measures in one run, both servers at once:

* **floor**: the spec's rows made and encoded beforehand (not timed), loaded from files by the
  fill's own loaders (``COPY FROM STDIN`` / ``LOAD DATA LOCAL``, the deferred foreign keys of the
  cycle included): the servers' own work (:mod:`dbbench.bench.volume_floor`);
* **fill**: :func:`dbbench.volume.fill`, rows made while they load (``generate+load``), and its
  whole wall with ANALYZE, checks and fingerprints.

Prints rows/s per server for both, the ratio, peak memory, and whether the fingerprints agree.
``--before`` first measures both again the way they loaded before issue 38 (MySQL: every index
kept and filled row by row, only the foreign keys of tables loaded before their parents set aside;
PostgreSQL: ``COPY`` without ``FREEZE``), so the two ways print side by side from one run.
Nothing is timed in a test: this prints numbers to compare, measured in the same run.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from dbbench import dialects  # noqa: E402
from dbbench.access.isolation import drop_namespace  # noqa: E402
from dbbench.access.targets import open_targets  # noqa: E402
from dbbench.bench import volume_floor  # noqa: E402 (after the sys.path line)
from dbbench.setup import loader  # noqa: E402
from dbbench.volume import load, schema, spec, starter  # noqa: E402

NAMESPACE = "dbbench_bench_volume"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=int, default=100_000, help="rows of every table (:scale)")
    ap.add_argument("--catalog", default=str(ROOT / "examples" / "market"))
    ap.add_argument("--only", choices=["postgresql", "mysql"])
    ap.add_argument("--before", action="store_true", help="measure the former loads first, side by side")
    args = ap.parse_args()
    targets = open_targets({}, args.only)
    try:
        loader.load(targets, args.catalog, namespace=NAMESPACE)
        with targets[0].all_or_nothing() as conn:
            tables = schema.read(conn, targets[0].dialect, NAMESPACE)
            conn.rollback()
        with tempfile.TemporaryDirectory() as tmp:
            file = Path(tmp) / "spec.toml"
            file.write_text(starter.starter(tables, source="bench_volume"))
            sp = spec.read(file)
            recipe = load.prepare(targets, NAMESPACE, sp, args.scale)
            rows = recipe.rows
            start = time.perf_counter()
            files = volume_floor.write_files(recipe, targets, Path(tmp))
            made = time.perf_counter() - start
            print(
                f"spec: {len(recipe.tables)} tables, {rows:,} rows (scale {args.scale:,}); rows made and encoded "
                f"alone: {made:.1f} s ({rows / made:,.0f} rows/s, one core); "
                f"{'both servers loading at once' if len(targets) > 1 else targets[0].dialect}"
            )
            print(
                f"{'way':<7} {'server':<11} {'floor':>9} {'floor rows/s':>13} {'fill':>9} {'fill rows/s':>12} "
                f"{'ratio':>6} {'fill wall':>10}"
            )
            for way in ["before", "now"] if args.before else ["now"]:
                with _way(way):
                    floor = volume_floor.floor(recipe, targets, NAMESPACE, files)
                    start = time.perf_counter()
                    results = load.fill(targets, NAMESPACE, sp, scale=args.scale)
                    wall = time.perf_counter() - start
                for r, f in zip(results, floor):
                    fill_s = r.seconds["generate+load"]
                    print(
                        f"{way:<7} {r.dialect:<11} {f:>7.1f} s {rows / f:>13,.0f} {fill_s:>7.1f} s "
                        f"{rows / fill_s:>12,.0f} {fill_s / f:>5.2f}x {wall:>8.1f} s"
                    )
                agree = all(len({r.fingerprints[t] for r in results}) == 1 for t in results[0].fingerprints)
                if not agree:
                    print(f"{way}: fingerprints DIFFERENT across servers")
        print(
            f"fill wall: with ANALYZE, checks and fingerprints; faker {results[0].faker}; "
            f"peak memory {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:,.0f} MB"
        )
    finally:
        for t in targets:
            drop_namespace(t, NAMESPACE)  # the namespace and its role, as `dbbench bench seed` does
            t.dispose()


@contextlib.contextmanager
def _way(way: str):
    """``before``: the loaders as they were before issue 38: MySQL's keeps every index
    (``defer_constraints(indexes=False)``), PostgreSQL's copies without ``FREEZE``."""
    my, pg = dialects.get("mysql"), dialects.get("postgresql")
    now_defer, now_copy = my.defer_constraints, pg.stream_load
    if way == "before":
        my.defer_constraints = functools.partial(now_defer, indexes=False)
        pg.stream_load = lambda *args, emptied=False: now_copy(*args)
    try:
        yield
    finally:
        my.defer_constraints, pg.stream_load = now_defer, now_copy


if __name__ == "__main__":
    main()
