"""`dbbench seed`: load a dataset into each target's dbbench-owned namespace, then verify it.

Per target: refuse a namespace that exists and is not dbbench's; (re)create it; create tables with
primary keys only; bulk-load (PostgreSQL ``COPY``, MySQL ``LOAD DATA LOCAL``); build the secondary
indexes and foreign keys; ``ANALYZE``; count every table and each special cardinality with real
queries; fingerprint every table the same way on both servers; mark the dataset complete.
Targets are loaded concurrently.
"""

from __future__ import annotations

import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Callable

from dbbench import dataset as datasets
from dbbench import dialects
from dbbench.dataset import PRIMARY_KEYS, TABLE_ORDER, Dataset, Table
from dbbench.errors import DbbenchError
from dbbench.targets import Target

DEFAULT_NAMESPACE = "dbbench"
Progress = Callable[[str, str, int], None]  # (dialect, step, rows done)


class NotOurs(DbbenchError):
    pass


class VerificationFailed(DbbenchError):
    exit_code = 1


@dataclass
class Check:
    name: str
    expected: int
    actual: int

    @property
    def ok(self) -> bool:
        return self.expected == self.actual


@dataclass
class SeedResult:
    dialect: str
    server_version: str
    namespace: str
    seconds: dict[str, float] = field(default_factory=dict)
    checks: list[Check] = field(default_factory=list)
    fingerprints: dict[str, str] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.checks)

    @property
    def total_seconds(self) -> float:
        return sum(self.seconds.values())

    @property
    def rows(self) -> int:
        return sum(c.actual for c in self.checks if c.name.startswith("rows in "))


def column_kinds(table: Table) -> dict[str, str]:
    kinds = {}
    for i, col in enumerate(table.columns):
        sample = next((r[i] for r in table.rows if r[i] is not None), None)
        kinds[col] = ("bytes" if isinstance(sample, bytes) else "datetime" if isinstance(sample, datetime)
                      else "bool" if isinstance(sample, bool) else "int" if isinstance(sample, int)
                      else "text")
    return kinds


def fingerprint(conn, dialect: str, table: Table) -> str:
    """Order-independent digest of a table's content, computed by the server, equal across dialects."""
    d = dialects.get(dialect)
    kinds = column_kinds(table)
    row_text = d.concat([d.canonical(c, kinds[c]) for c in table.columns])
    with conn.cursor() as cur:
        cur.execute(d.fingerprint_sql(table.name, row_text))
        count, total = cur.fetchone()
    return f"{int(count)}:{int(total):x}"


def _pyformat(sql: str) -> str:
    """``:name`` parameters (portable, readable in data files) to the drivers' ``%(name)s``."""
    sql = sql.replace("%", "%%")
    return re.sub(r"(?<![:\w]):([A-Za-z_]\w*)", r"%(\1)s", sql)


def run_checks(conn, ds: Dataset, dialect: str) -> list[Check]:
    checks = []
    params = ds.params()
    with conn.cursor() as cur:
        for table, expected in ds.expected_counts.items():
            cur.execute(f"SELECT COUNT(*) FROM {table}")
            checks.append(Check(f"rows in {table}", expected, int(cur.fetchone()[0])))
        for entry in ds.verify:
            sql = entry.get(f"sql_{dialect}", entry.get("sql"))
            cur.execute(_pyformat(sql), params)
            expected = datasets.expected_value(ds, entry["expect"])
            checks.append(Check(entry["name"], expected, int(cur.fetchone()[0])))
    return checks


def seed_target(target: Target, ds: Dataset, tables: list[Table], namespace: str,
                progress: Progress | None = None, cancel: threading.Event | None = None) -> SeedResult:
    d = dialects.get(target.dialect)
    result = SeedResult(target.dialect, target.version_text, namespace)
    table_sql, index_sql = dialects.schema_statements(target.dialect)
    report = progress or (lambda *_: None)
    raw = target.engine.raw_connection()
    conn = raw.driver_connection
    clock = time.perf_counter

    def step(name: str, fn: Callable[[], Any]) -> Any:
        if cancel is not None and cancel.is_set():
            raise KeyboardInterrupt
        report(target.dialect, name, 0)
        start = clock()
        value = fn()
        result.seconds[name] = result.seconds.get(name, 0.0) + clock() - start
        return value

    try:
        state = d.namespace_state(conn, namespace)
        if state == "foreign":
            raise NotOurs(
                f"{target.label} {d.NAMESPACE_KIND} {namespace!r} exists and is not dbbench's "
                f"(no dbbench_meta marker); nothing was changed. Choose another name with "
                f"--namespace or remove it yourself"
            )
        meta = {"dataset": ds.name, "seed": str(ds.seed), "started_at": datetime.now().isoformat()}
        step("schema", lambda: (d.begin_reload(conn, namespace, meta), d.execute(conn, table_sql)))
        for table in tables:
            kinds = column_kinds(table)
            binary = frozenset(c for c, k in kinds.items() if k == "bytes")
            data = step("encode", lambda: d.encode(table.rows, list(kinds.values())))
            if target.dialect == "mysql":
                step("load", lambda: d.bulk_load(conn, table.name, table.columns, data, binary))
            else:
                step("load", lambda: d.bulk_load(conn, table.name, table.columns, data))
            report(target.dialect, f"load {table.name}", len(table.rows))
        step("indexes", lambda: d.execute(conn, index_sql))
        step("analyze", lambda: d.analyze(conn, TABLE_ORDER))
        result.checks = step("verify", lambda: run_checks(conn, ds, target.dialect))
        result.fingerprints = step("fingerprint", lambda: {t.name: fingerprint(conn, target.dialect, t) for t in tables})
        if result.ok:
            d.write_meta(conn, namespace, {"state": "complete", "finished_at": datetime.now().isoformat(),
                                           **{f"fingerprint.{k}": v for k, v in result.fingerprints.items()}})
        step("commit", lambda: d.commit(conn))
    except BaseException:
        try:
            conn.rollback()
        finally:
            raw.invalidate()
        raise
    raw.close()
    return result


def seed(targets: list[Target], dataset: str | Dataset = "alpine-100k", *, namespace: str = DEFAULT_NAMESPACE,
         progress: Progress | None = None) -> tuple[Dataset, list[SeedResult], float]:
    """Seed every target concurrently. Returns the dataset, one result per target, generation seconds."""
    if not re.fullmatch(r"[a-z_][a-z0-9_]{0,62}", namespace):
        raise DbbenchError(f"namespace {namespace!r}: use lower-case letters, digits and _ (max 63)")
    ds = datasets.load(dataset) if isinstance(dataset, str) else dataset
    start = time.perf_counter()
    tables = datasets.generate(ds)
    generated = time.perf_counter() - start
    cancel = threading.Event()  # Ctrl-C reaches the main thread only: tell the loaders to stop
    with ThreadPoolExecutor(max_workers=len(targets) or 1) as pool:
        futures = [pool.submit(seed_target, t, ds, tables, namespace, progress, cancel) for t in targets]
        try:
            results = [f.result() for f in futures]
        except BaseException:
            cancel.set()
            raise
    return ds, results, generated


def fingerprints_agree(results: list[SeedResult]) -> dict[str, bool]:
    tables = results[0].fingerprints.keys() if results else []
    return {t: len({r.fingerprints.get(t) for r in results}) == 1 for t in tables}
