"""`dbbench seed`: load a dataset into each target's dbbench-owned namespace, then verify it.

Per target: refuse a namespace that exists and is not dbbench's; (re)create it; create tables with
primary keys only; bulk-load (PostgreSQL ``COPY``, MySQL ``LOAD DATA LOCAL``); build the secondary
indexes and foreign keys; ``ANALYZE``; count every table and each special cardinality with real
queries; fingerprint every table the same way on both servers; mark the dataset complete.
Targets are loaded concurrently.
"""

from __future__ import annotations

import functools
import re
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, cast

from dbbench import defaults, dialects
from dbbench.access import isolation
from dbbench.access.targets import Target
from dbbench.catalog.params import to_pyformat
from dbbench.dataset import definition, loadfiles
from dbbench.dataset.definition import TABLE_ORDER, Dataset
from dbbench.dataset.loadfiles import PreparedTable
from dbbench.errors import DbbenchError
from dbbench.setup.fingerprint import fingerprint
from dbbench.setup.split import split_sql

DEFAULT_NAMESPACE = defaults.NAMESPACE
Progress = Callable[[str, str, int], None]  # (dialect, step, rows done)
SCHEMA_DIR = Path(__file__).resolve().parents[2] / "sql" / "schema"


def schema_statements(dialect: str) -> tuple[list[str], list[str]]:
    """(table statements, index statements) of ``sql/schema/<dialect>.sql``: the parts before and
    after its ``-- indexes`` line, each split by :func:`~dbbench.setup.split.split_sql`."""
    file = SCHEMA_DIR / f"{dialect}.sql"
    tables, indexes = re.split(r"^-- indexes$", file.read_text(), maxsplit=1, flags=re.M)
    table_sql, index_sql = (
        [s.text for s in split_sql(part, dialect, str(file))] for part in (tables, indexes)
    )
    return table_sql, index_sql


def default_cache() -> Path:
    from dbbench.servers import default_home

    return default_home() / "datasets"


@dataclass
class CheckResult:
    """What a check found (``name``: a cardinality or a spec's check, the check to run being
    :class:`dbbench.volume.spec.Check`): the value expected and the one the server counted."""

    name: str
    expected: int
    actual: int

    @property
    def ok(self) -> bool:
        return self.expected == self.actual


class Verified:
    """What every load's result says about itself (a seed's :class:`SeedResult`, a fill's
    :class:`dbbench.volume.load.FillResult`): ``ok`` when every check holds, and its wall time."""

    checks: list[CheckResult]
    seconds: dict[str, float]

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.checks)

    @property
    def total_seconds(self) -> float:
        return sum(self.seconds.values())


@dataclass
class SeedResult(Verified):
    dialect: str
    server_version: str
    namespace: str
    seconds: dict[str, float] = field(default_factory=dict)
    checks: list[CheckResult] = field(default_factory=list)
    fingerprints: dict[str, str] = field(default_factory=dict)

    @property
    def rows(self) -> int:
        return sum(c.actual for c in self.checks if c.name.startswith("rows in "))


def fingerprint_table(conn, dialect: str, table: PreparedTable) -> str:
    """:func:`dbbench.setup.fingerprint.fingerprint` of a prepared table."""
    return fingerprint(conn, dialect, table.name, table.columns, table.kinds)


def fingerprint_all(target: Target, conn, tables: list[PreparedTable], namespace: str) -> dict[str, str]:
    """Fingerprint every table. Where the load is already committed (MySQL: its DDL commits), a
    second session shares the work, using the core the other server's loader has left idle."""
    d = dialects.get(target.dialect)
    if not d.LOAD_COMMITTED_BEFORE_VERIFY:
        return {t.name: fingerprint_table(conn, target.dialect, t) for t in tables}
    big = sorted(tables, key=lambda t: -t.rows)
    halves = [big[0::2], big[1::2]]

    def other_half() -> dict[str, str]:
        raw = target.engine.raw_connection()
        try:
            d.use(raw.driver_connection, namespace)
            return {t.name: fingerprint_table(raw.driver_connection, target.dialect, t) for t in halves[1]}
        finally:
            raw.close()

    with ThreadPoolExecutor(1) as pool:
        second = pool.submit(other_half)
        first = {t.name: fingerprint_table(conn, target.dialect, t) for t in halves[0]}
        first.update(second.result())
    return {t.name: first[t.name] for t in tables}


def run_checks(conn, ds: Dataset, dialect: str, fingerprints: dict[str, str]) -> list[CheckResult]:
    """Row counts of every table (read from the fingerprint pass, which counted them) and each
    special cardinality of the dataset definition, by real queries."""
    checks = [
        CheckResult(f"rows in {table}", expected, int(fingerprints.get(table, "0:").split(":")[0]))
        for table, expected in ds.expected_counts.items()
    ]
    params = ds.params()
    with conn.cursor() as cur:
        for entry in ds.verify:
            sql = cast(str, entry.get(f"sql_{dialect}", entry.get("sql")))
            cur.execute(to_pyformat(sql), params)
            expected = definition.expected_value(ds, entry["expect"])
            checks.append(CheckResult(entry["name"], expected, int(cur.fetchone()[0])))
    return checks


def seed_target(
    target: Target,
    ds: Dataset,
    tables: list[PreparedTable],
    namespace: str,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
) -> SeedResult:
    d = dialects.get(target.dialect)
    result = SeedResult(target.dialect, target.version_text, namespace)
    table_sql, index_sql = schema_statements(target.dialect)
    report = progress or (lambda *_: None)
    clock = time.perf_counter

    def step(name: str, fn: Callable[[], Any]) -> Any:
        if cancel is not None and cancel.is_set():
            raise KeyboardInterrupt
        report(target.dialect, name, 0)
        start = clock()
        value = fn()
        result.seconds[name] = result.seconds.get(name, 0.0) + clock() - start
        return value

    with target.loader() as conn:
        isolation.refuse_foreign(target, conn, namespace)
        meta = {"dataset": ds.name, "seed": str(ds.seed), "started_at": datetime.now().isoformat()}

        # statistics frozen before the first row: MySQL queues a table for a background recalculation
        # once 10 % of it changed, and that runs (re-sampling) 10 s after the ANALYZE below, frozen
        # or not; PostgreSQL's autoanalyze likewise
        def schema() -> None:
            d.begin_reload(conn, namespace, meta)
            d.execute(conn, table_sql)
            d.freeze_statistics(conn, TABLE_ORDER)

        step("schema", schema)
        for table in tables:
            step("load", functools.partial(d.bulk_load, conn, table))
            report(target.dialect, f"load {table.name}", table.rows)
        step("indexes", lambda: d.execute(conn, index_sql))
        step("analyze", lambda: d.analyze(conn, TABLE_ORDER))
        result.fingerprints = step("fingerprint", lambda: fingerprint_all(target, conn, tables, namespace))
        result.checks = step("verify", lambda: run_checks(conn, ds, target.dialect, result.fingerprints))
        if result.ok:
            d.write_meta(
                conn,
                namespace,
                {
                    "state": "complete",
                    "finished_at": datetime.now().isoformat(),
                    **{f"fingerprint.{k}": v for k, v in result.fingerprints.items()},
                },
            )
        step("commit", lambda: d.commit(conn))
    return result


def seed(
    targets: list[Target],
    dataset: str | Dataset = defaults.DATASET,
    *,
    namespace: str = DEFAULT_NAMESPACE,
    progress: Progress | None = None,
    cache_dir: Path | None = None,
) -> tuple[Dataset, list[SeedResult], float]:
    """Seed every target concurrently. Returns the dataset, one result per target, and the seconds
    spent preparing load files (near zero when the cache under ``cache_dir`` already has them)."""
    if not defaults.valid_namespace(namespace):
        raise DbbenchError(f"namespace {namespace!r}: {defaults.NAMESPACE_RULE}")
    ds = definition.load(dataset) if isinstance(dataset, str) else dataset
    tables, generated, _ = loadfiles.prepare(ds, [t.dialect for t in targets], cache_dir or default_cache())
    cancel = threading.Event()  # Ctrl-C reaches the main thread only: tell the loaders to stop
    with ThreadPoolExecutor(max_workers=len(targets) or 1) as pool:
        futures = [pool.submit(seed_target, t, ds, tables, namespace, progress, cancel) for t in targets]
        try:
            results = [f.result() for f in futures]
        except BaseException:
            cancel.set()
            raise
    return ds, results, generated
