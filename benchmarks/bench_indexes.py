#!/usr/bin/env python3
"""How long does `dbbench indexes` map the built-in catalog, and how does it grow with indexes × shapes?

    .venv/bin/python benchmarks/bench_indexes.py [--dataset alpine-100k] [--namespace bench_indexes]
                                                 [--shapes 1,3,5,9] [--repeat 1] [--reseed] [--drop]
    .venv/bin/python benchmarks/bench_indexes.py --quick   # alpine-ci, 1 and 2 shapes: seconds

Seeds DATASET into NAMESPACE on every local server (or reuses it when it already holds a complete
seed of that dataset; ``--reseed`` seeds it again), then maps the built-in catalog (``alpine``)
with its first 1, 3, 5 and 9 shapes (``--shapes``), each subset twice, side by side: once with no
write batch (``write_rows`` 0: the shapes' profiles only) and once with the default batch of
:data:`dbbench.advise.trial.DEFAULT_WRITE_ROWS` rows (what ``dbbench indexes`` does by default).

The map's work is counted in *profiles*: each shape is profiled once with every index present,
then again for every index of a table it reads while that index is hidden (a *re-run*; an index
the server cannot hide, MySQL's primary keys, re-runs nothing). It prints, per dialect and subset:
shapes, indexes of the tables they read, indexes hidden, re-runs, seconds without and with the
write batches, seconds per re-run (the part of the map spent with an index hidden, over its
re-runs: hiding, re-profiling, showing it again), and what the write batches cost: their share
of the default map, seconds per index timed, and how many indexes were timed (a primary key or
an index the batch cannot be timed for is not: "not timed" when none was); then a
straight line ``seconds = fixed + per_profile × profiles`` fitted to the subsets (least squares,
with R²), the slowest indexes of the whole catalog, and the whole map's time. The dialects are
mapped one after the other, as ``dbbench indexes`` maps them, after one untimed map of one shape
(cold caches and connection pools). Issue 35 asks for these numbers.

Every loop is bounded: at most 9 subsets, ``--repeat`` at most 5 (each row then shows the median);
at 100k rows the whole run takes a few minutes.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from dbbench import defaults  # noqa: E402 (after the sys.path line)
from dbbench.access import isolation  # noqa: E402
from dbbench.access.targets import Target, open_targets  # noqa: E402
from dbbench.advise.trial import DEFAULT_WRITE_ROWS  # noqa: E402
from dbbench.catalog import entries  # noqa: E402
from dbbench.dataset import seed  # noqa: E402
from dbbench.errors import DbbenchError  # noqa: E402
from dbbench.indexmap.run import MapOptions, TargetMap, map_catalog  # noqa: E402
from dbbench.measure.explain import MeasureOptions, NotSeeded, dataset_params, require_seeded  # noqa: E402

CATALOG = "alpine"
QUICK_DATASET = "alpine-ci"
QUICK_SIZES = (1, 2)
MAX_SUBSETS = 9
MAX_REPEAT = 5


@dataclass(frozen=True)
class Row:
    """One map of one subset on one dialect."""

    dialect: str
    shapes: int
    indexes: int
    hidden: int
    reruns: int
    seconds: float  # the whole map of this dialect
    hide_seconds: float  # the part spent with an index hidden (its re-runs and write batches)
    writes: int  # indexes whose write batch was timed (none without a batch)

    @property
    def profiles(self) -> int:
        return self.shapes + self.reruns


def row(found: TargetMap) -> Row:
    hidden = [e for e in found.indexes if not e.not_hidden]
    return Row(
        found.dialect,
        len(found.profiles),
        len(found.indexes),
        len(hidden),
        sum(len(e.effects) for e in found.indexes),
        found.seconds,
        sum(e.seconds for e in found.indexes),
        sum(1 for e in found.indexes if e.write_with is not None),
    )


def prepare(targets: list[Target], dataset: str, namespace: str, reseed: bool) -> str:
    """Seed ``dataset`` into ``namespace`` unless every target holds a complete seed of it already."""
    if not reseed:
        try:
            if all(require_seeded(t, namespace).get("dataset") == dataset for t in targets):
                return f"reused {dataset} in {namespace}"
        except NotSeeded:
            pass
    start = time.perf_counter()
    _, results, _ = seed.seed(targets, dataset, namespace=namespace)
    for r in results:
        if not r.ok:
            raise DbbenchError(f"{r.dialect}: the seed of {dataset} into {namespace} did not verify")
    return f"seeded {dataset} into {namespace}: {time.perf_counter() - start:.1f} s"


def parse_sizes(text: str, most: int) -> list[int]:
    """``1,3,5,9`` -> the subset sizes, each 1..``most``, sorted, at most :data:`MAX_SUBSETS`."""
    try:
        sizes = sorted({int(x) for x in text.split(",") if x.strip()})
    except ValueError:
        raise DbbenchError(f"--shapes {text!r}: a comma-separated list of numbers") from None
    if not sizes or sizes[0] < 1 or sizes[-1] > most or len(sizes) > MAX_SUBSETS:
        raise DbbenchError(f"--shapes {text!r}: 1 to {MAX_SUBSETS} sizes, each from 1 to {most}")
    return sizes


def fit(points: list[tuple[float, float]]) -> tuple[float, float, float] | None:
    """Least squares ``y = a + b·x``: (a, b, R²); None with fewer than two distinct x."""
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    if len(set(xs)) < 2:
        return None
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    b = sum((x - mx) * (y - my) for x, y in points) / sxx
    a = my - b * mx
    ss = sum((y - my) ** 2 for y in ys)
    r2 = 1 - sum((y - a - b * x) ** 2 for x, y in points) / ss if ss else 1.0
    return a, b, r2


def median_row(rows: list[Row]) -> Row:
    """The counts of one subset (equal across repeats) with the median seconds."""
    first = rows[0]
    return Row(
        first.dialect,
        first.shapes,
        first.indexes,
        first.hidden,
        first.reruns,
        statistics.median(r.seconds for r in rows),
        statistics.median(r.hide_seconds for r in rows),
        first.writes,
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default=defaults.DATASET)
    ap.add_argument("--namespace", default="bench_indexes")
    ap.add_argument("--shapes", default="1,3,5,9", help="subset sizes: the catalog's first N shapes")
    ap.add_argument("--repeat", type=int, default=1, help=f"maps of each subset and batch (1..{MAX_REPEAT})")
    ap.add_argument("--timeout", type=float, default=defaults.TIMEOUT_S, help="per-statement timeout (s)")
    ap.add_argument(
        "--reseed", action="store_true", help="seed again even when the namespace holds the dataset"
    )
    ap.add_argument("--drop", action="store_true", help="drop the namespace (and its role) at the end")
    ap.add_argument("--quick", action="store_true", help=f"{QUICK_DATASET}, {QUICK_SIZES} shapes: for a test")
    a = ap.parse_args()
    try:
        run(a)
    except DbbenchError as exc:
        sys.exit(f"bench_indexes: {exc}")


def run(a: argparse.Namespace) -> None:
    if not 1 <= a.repeat <= MAX_REPEAT:
        raise DbbenchError(f"--repeat {a.repeat}: from 1 to {MAX_REPEAT}")
    if not defaults.valid_namespace(a.namespace):
        raise DbbenchError(f"--namespace {a.namespace!r}: {defaults.NAMESPACE_RULE}")
    cat = entries.open_catalog(CATALOG)
    names = [s.name for s in cat.shapes]
    dataset = QUICK_DATASET if a.quick else a.dataset
    sizes = list(QUICK_SIZES) if a.quick else parse_sizes(a.shapes, len(names))
    batches = (0, DEFAULT_WRITE_ROWS)
    measure = MeasureOptions(namespace=a.namespace, timeout_ms=int(a.timeout * 1000), natural=False)
    targets = open_targets({})
    wall = time.perf_counter()
    try:
        print(prepare(targets, dataset, a.namespace, a.reseed), flush=True)
        base = dataset_params(dataset)
        # untimed: the first map of a run pays for cold caches and pools (seconds at CI size)
        map_catalog(targets, cat, measure, MapOptions(write_rows=0), only=names[:1], base=base)
        found: dict[tuple[str, int, int], list[Row]] = {}
        slowest: dict[str, list[tuple[float, str, int]]] = {}
        for r in range(a.repeat):
            for size in sizes:
                # the two batches alternate which goes first: drift over the run falls on both
                for write_rows in batches if (r + size) % 2 == 0 else batches[::-1]:
                    done = map_catalog(
                        targets, cat, measure, MapOptions(write_rows=write_rows), only=names[:size], base=base
                    )
                    for t in done.targets:
                        found.setdefault((t.dialect, size, write_rows), []).append(row(t))
                        if size == sizes[-1] and write_rows == batches[1] and r == 0:
                            slowest[t.dialect] = sorted(
                                ((e.seconds, f"{e.table}.{e.index}", len(e.effects)) for e in t.indexes),
                                reverse=True,
                            )
                    print(
                        f"  mapped {size} shape(s), write_rows {write_rows}: {done.seconds:.1f} s",
                        file=sys.stderr,
                        flush=True,
                    )
    finally:
        if a.drop:
            for t in targets:
                isolation.drop_namespace(t, a.namespace)
        for t in targets:
            t.dispose()
    report(found, slowest, sizes, batches, dataset, a.repeat, time.perf_counter() - wall)


def report(
    found: dict[tuple[str, int, int], list[Row]],
    slowest: dict[str, list[tuple[float, str, int]]],
    sizes: list[int],
    batches: tuple[int, int],
    dataset: str,
    repeat: int,
    wall: float,
) -> None:
    none, default = batches
    said = f"median of {repeat}" if repeat > 1 else "one map each"
    print(f"\ndbbench indexes on the {CATALOG} catalog, {dataset} ({said}; write batch {default} rows)")
    head = (
        f"{'dialect':<11}{'shapes':>7}{'indexes':>8}{'hidden':>7}{'re-runs':>8}{'profiles':>9}"
        f"{'s, no write':>12}{'s/re-run':>9}{'s, write':>9}  write batches: share, s each (timed)"
    )
    print(head)
    print("-" * len(head))
    dialects = list(dict.fromkeys(k[0] for k in found))
    for dialect in dialects:
        for size in sizes:
            plain = median_row(found[(dialect, size, none)])
            writes = median_row(found[(dialect, size, default)])
            extra = writes.seconds - plain.seconds
            share = (
                f"{extra / writes.seconds:>6.0%}, {extra / writes.writes:5.2f} s ({writes.writes})"
                if writes.writes and writes.seconds
                else "not timed"
            )
            per = f"{plain.hide_seconds / plain.reruns:9.2f}" if plain.reruns else f"{'—':>9}"
            print(
                f"{dialect:<11}{plain.shapes:>7}{plain.indexes:>8}{plain.hidden:>7}{plain.reruns:>8}"
                f"{plain.profiles:>9}{plain.seconds:>12.1f}{per}{writes.seconds:>9.1f}  {share}"
            )
    print("\nhow the time grows: seconds = fixed + per_profile × profiles (least squares over the subsets)")
    for dialect in dialects:
        for write_rows in batches:
            rows = [median_row(found[(dialect, size, write_rows)]) for size in sizes]
            line = fit([(r.profiles, r.seconds) for r in rows])
            pairs = ", ".join(f"{r.seconds / r.profiles:.2f}" for r in rows)
            said = (
                "too few subsets to fit"
                if line is None
                else (f"fixed {line[0]:6.2f} s + {line[1]:.3f} s × profiles (R² {line[2]:.3f})")
            )
            print(f"  {dialect:<11}write_rows {write_rows:>5}: {said}; s per profile by subset: {pairs}")
    for dialect in dialects:
        top = slowest.get(dialect, [])[:3]
        print(
            f"  {dialect:<11}slowest indexes ({sizes[-1]} shapes, write {default}): "
            + "; ".join(f"{name} {s:.1f} s / {n} re-run(s)" for s, name, n in top)
        )
    whole = [median_row(found[(d, sizes[-1], default)]) for d in dialects]
    print(
        f"whole map, {sizes[-1]} shapes, write batch {default}: "
        + " + ".join(f"{r.dialect} {r.seconds:.1f} s" for r in whole)
        + f" = {sum(r.seconds for r in whole):.1f} s; the benchmark ran {wall:.0f} s"
    )


if __name__ == "__main__":
    main()
