"""`dbbench bench seed`: the seed's wall time next to the raw floor, measured in the same run.

The floor is each server's own bulk load of the same rows from the prepared files (``COPY FROM
STDIN`` / ``LOAD DATA LOCAL INFILE``) followed by building the same indexes, both servers at once,
into a scratch namespace dbbench owns. Nothing else: no verification, no fingerprints, no ANALYZE.
The seed is the full `dbbench seed` (warm load-file cache), also both servers at once.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from dbbench import dialects
from dbbench.access.isolation import drop_namespace, refuse_foreign
from dbbench.access.targets import Target
from dbbench.dataset import definition, loadfiles, seed

FLOOR_NAMESPACE = "dbbench_floor"
BENCH_NAMESPACE = "dbbench_bench"


@dataclass
class BenchRow:
    dialect: str
    rows: int
    floor_seconds: float
    seed_seconds: float

    @property
    def ratio(self) -> float:
        return self.seed_seconds / self.floor_seconds if self.floor_seconds else float("nan")


def _floor(target: Target, tables: list[loadfiles.PreparedTable]) -> float:
    """The server's own bulk load of ``tables`` plus the indexes, on the seeder's loader connection
    (on MySQL the only one allowed ``LOAD DATA LOCAL``, for the prepared files only)."""
    d = dialects.get(target.dialect)
    table_sql, index_sql = seed.schema_statements(target.dialect)
    with target.loader() as conn:
        refuse_foreign(target, conn, FLOOR_NAMESPACE)
        d.begin_reload(conn, FLOOR_NAMESPACE, {"dataset": "floor"})
        d.execute(conn, table_sql)
        d.commit(conn)
        d.use(conn, FLOOR_NAMESPACE)
        start = time.perf_counter()
        for table in tables:
            d.bulk_load(conn, table)
        d.execute(conn, index_sql)
        d.commit(conn)
        return time.perf_counter() - start


def run(
    targets: list[Target], dataset: str, cache_dir: Path, repeat: int = 1
) -> tuple[list[BenchRow], float, float]:
    """Returns per-server rows (best of ``repeat``), and the floor and seed walls for all servers."""
    ds = definition.load(dataset)
    tables, _, _ = loadfiles.prepare(ds, [t.dialect for t in targets], cache_dir)
    rows_total = sum(t.rows for t in tables)
    best: dict[str, BenchRow] = {}
    floor_wall = seed_wall = float("inf")
    try:
        for _ in range(repeat):
            start = time.perf_counter()
            with ThreadPoolExecutor(len(targets)) as pool:
                floors = list(pool.map(lambda t: _floor(t, tables), targets))
            floor_wall = min(floor_wall, time.perf_counter() - start)
            for t in targets:
                drop_namespace(t, FLOOR_NAMESPACE)
            start = time.perf_counter()
            _, results, _ = seed.seed(targets, ds, namespace=BENCH_NAMESPACE, cache_dir=cache_dir)
            seed_wall = min(seed_wall, time.perf_counter() - start)
            for t, f, r in zip(targets, floors, results):
                row = BenchRow(t.dialect, rows_total, f, r.total_seconds)
                if t.dialect not in best or row.seed_seconds < best[t.dialect].seed_seconds:
                    best[t.dialect] = row
    finally:
        for t in targets:
            drop_namespace(t, FLOOR_NAMESPACE)
            drop_namespace(t, BENCH_NAMESPACE)
    return list(best.values()), floor_wall, seed_wall
