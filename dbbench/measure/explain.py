"""`dbbench explain`: warmed EXPLAIN ANALYZE sets per shape and dialect, with plan assertions.

Per shape and target: resolve parameters (literal ``[params]``, then each ``[[setup]]`` query's
row); for the remediated spelling and, where the catalog has one, the natural spelling: ``warmups``
untimed runs, then ``runs`` timed ``EXPLAIN ANALYZE`` samples. Every sample runs inside a
transaction that is rolled back, so locking and writing shapes leave the data as it was, and runs
logged in as the namespace's own role (:mod:`dbbench.access.isolation`), so the server refuses anything
a shape would do outside the namespace. The remediated plan is asserted: expected index on the
expected table, no forbidden feature.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from dbbench import defaults, dialects
from dbbench.access import isolation
from dbbench.access.targets import Target
from dbbench.catalog import entries as catalogs
from dbbench.catalog.entries import Catalog, Shape
from dbbench.catalog.params import to_pyformat
from dbbench.dialects.plan import PlanNode
from dbbench.errors import DbbenchError
from dbbench.measure.expect import PlanCheck, check
from verdict.stats import nearest_rank


class NotSeeded(DbbenchError):
    pass


@dataclass
class Measurement:
    """One spelling of one shape on one dialect."""

    spelling: str  # remediated | natural
    sql: str
    samples_ms: list[float] = field(default_factory=list)
    rows: float | None = None
    plan: dict | None = None  # normalized tree of the last timed run
    raw_plan: object = None
    timeout: str | None = None
    _tree: PlanNode | None = field(default=None, repr=False)

    @property
    def p50(self) -> float | None:
        return nearest_rank(self.samples_ms, 0.50)

    @property
    def p95(self) -> float | None:
        return nearest_rank(self.samples_ms, 0.95)


@dataclass
class ShapeResult:
    shape: str
    dialect: str
    cardinality: str
    expect_rows: int | None
    params: dict
    remediated: Measurement
    natural: Measurement | None = None
    natural_label: str | None = None
    verdict: PlanCheck | None = None
    cascade: dict | None = None  # rows counted before / after the delete / after the rollback
    access_path: str | None = None  # the catalog's words for the expected path (reports)

    @property
    def ok(self) -> bool:
        return self.verdict is not None and self.verdict.ok


Progress = Callable[[str, str, str], None]  # (dialect, shape, spelling)


def require_seeded(target: Target, namespace: str) -> dict[str, str]:
    d = dialects.get(target.dialect)
    raw = target.engine.raw_connection()
    try:
        conn: Any = raw.driver_connection
        state = d.namespace_state(conn, namespace)
        if state != "complete":
            if state == "foreign":  # seeding it would be refused too: no advice to seed there
                raise NotSeeded(
                    f"{target.label} {d.NAMESPACE_KIND} {namespace!r} exists and is not dbbench's "
                    "(no dbbench_meta marker); choose another --namespace"
                )
            why = {"absent": "does not exist", "incomplete": "holds an incomplete seed"}[state]
            raise NotSeeded(
                f"{target.label} {d.NAMESPACE_KIND} {namespace!r} {why}: run `dbbench seed` first"
            )
        meta = d.read_meta(conn, namespace)
        conn.rollback()
        return meta
    finally:
        raw.close()


def resolve_params(conn, d, shape: Shape, base: dict | None = None) -> dict:
    """The dataset's values, then the shape's literal ``[params]``, then each setup query's row."""
    params = {**(base or {}), **shape.params}
    for sql in shape.setup:
        row = d.query_row(conn, to_pyformat(sql), params)
        if row is None:
            raise DbbenchError(
                f"{shape.path.name}: setup query returned no row (is the dataset seeded?): "
                f"{' '.join(sql.split())[:120]}"
            )
        params.update({k.lower(): v for k, v in row.items()})
    return params


def measure(
    conn,
    d,
    spelling: str,
    sql: str,
    params: dict,
    warmups: int,
    runs: int,
    timeout_ms: int,
    settings: dict | None = None,
) -> Measurement:
    m = Measurement(spelling, sql)
    stmt = to_pyformat(sql)
    try:
        for _ in range(warmups):
            d.run_explain(conn, stmt, params, timeout_ms, settings)
        for _ in range(runs):
            raw, tree, ms = d.run_explain(conn, stmt, params, timeout_ms, settings)
            m.samples_ms.append(ms)
        m.raw_plan, m._tree = raw, tree
        m.plan = tree.to_dict()
        m.rows = tree.actual_rows
    except TimeoutError as exc:
        m.timeout = str(exc)
    return m


def run_shape(
    target: Target,
    conn,
    shape: Shape,
    *,
    warmups: int,
    runs: int,
    timeout_ms: int,
    natural: bool = True,
    progress: Progress | None = None,
    base_params: dict | None = None,
    access_only: bool = False,
    namespace: str | None = None,
    admin=None,
) -> ShapeResult:
    """Measure one shape on ``conn``. ``admin``: dbbench's own connection, for the server-wide
    work between measurements (restoring statistics); ``conn`` itself when not given."""
    d = dialects.get(target.dialect)
    v = shape.variants[target.dialect]
    params = resolve_params(conn, d, shape, base_params)
    report = progress or (lambda *_: None)
    report(target.dialect, shape.name, "remediated")
    rem = measure(conn, d, "remediated", v.sql, params, warmups, runs, timeout_ms, v.settings)
    result = ShapeResult(
        shape.name,
        target.dialect,
        shape.cardinality,
        shape.expect_rows,
        {k: _jsonable(val) for k, val in params.items()},
        rem,
        natural_label=v.natural_label,
        access_path=shape.access_path,
    )
    if rem._tree is not None:
        forbid = [f for f in v.forbid if f.startswith("full_scan")] if access_only else v.forbid
        result.verdict = check(rem._tree, v.expect_table, v.expect_index, forbid)
        if (
            not access_only
            and shape.expect_rows is not None
            and rem.rows is not None
            and int(rem.rows) != shape.expect_rows
        ):
            result.verdict.ok = False
            result.verdict.problems.append(f"returned {rem.rows:g} rows, expected {shape.expect_rows}")
    else:
        result.verdict = PlanCheck(
            False, f"{v.expect_table} using {v.expect_index}", "timeout", [rem.timeout or "timeout"]
        )
    if shape.cascade and rem._tree is not None:
        result.cascade = prove_cascade(conn, shape.cascade, params)
        if namespace:  # the rolled-back delete must not leak into later plans
            d.restore_statistics(admin if admin is not None else conn, namespace)
            if admin is not None:
                admin.commit()
        c = result.cascade
        if not (c["before"] > 0 and c["after_delete"] == 0 and c["after_rollback"] == c["before"]):
            result.verdict.ok = False
            result.verdict.problems.append(
                f"cascade: {c['before']} dependent rows, {c['after_delete']} left after the delete, "
                f"{c['after_rollback']} after the rollback (expected >0, 0, {c['before']})"
            )
    if natural and v.natural:
        report(target.dialect, shape.name, "natural")
        result.natural = measure(conn, d, "natural", v.natural, params, warmups, runs, timeout_ms, v.settings)
    return result


def prove_cascade(conn, cascade: dict[str, str], params: dict) -> dict:
    """Run the follow-up delete inside a transaction that is rolled back, counting the dependent
    rows before, after the delete (the FK cascade must have removed them) and after the rollback."""
    count_sql, delete_sql = to_pyformat(cascade["count"]), to_pyformat(cascade["delete"])

    def count(cur) -> int:
        cur.execute(count_sql, params)
        return int(cur.fetchone()[0])

    try:
        with conn.cursor() as cur:
            before = count(cur)
            cur.execute(delete_sql, params)
            deleted = cur.rowcount
            after = count(cur)
    finally:
        conn.rollback()
    with conn.cursor() as cur:
        restored = count(cur)
    conn.rollback()
    return {"before": before, "deleted_parents": deleted, "after_delete": after, "after_rollback": restored}


def _dataset_params(name: str | None) -> dict:
    """The seeded dataset's catalog values; none for a dataset dbbench does not know by name."""
    from dbbench.dataset import definition as dataset

    if not name or name.startswith("setup:"):
        return {}
    try:
        return dataset.load(name).params()
    except DbbenchError:
        return {}


def _jsonable(value):
    if isinstance(value, (bytes, bytearray)):
        return "0x" + bytes(value).hex()
    if hasattr(value, "isoformat"):
        return value.isoformat(" ")
    return value


@contextlib.contextmanager
def _connections(target: Target, namespace: str, isolate: bool) -> Iterator[tuple[Any, Any]]:
    """(dbbench's own connection, the connection the catalog's SQL runs on), both using
    ``namespace``. The second is logged in as the namespace's role unless ``isolate`` is False."""
    d = dialects.get(target.dialect)
    with isolation.sandbox(target, namespace, isolate=isolate) as runner:
        admin_raw = target.engine.raw_connection()
        try:
            run_raw = runner.engine.raw_connection()
            try:
                admin: Any = admin_raw.driver_connection
                conn: Any = run_raw.driver_connection
                d.use(admin, namespace)
                d.use(conn, namespace)
                admin.commit()
                conn.commit()
                yield admin, conn
            finally:
                run_raw.close()
        finally:
            admin_raw.close()


def run(
    targets: list[Target],
    catalog: str | Catalog = defaults.CATALOG,
    *,
    namespace: str = defaults.NAMESPACE,
    warmups: int = defaults.WARMUPS,
    runs: int = defaults.RUNS,
    timeout_ms: int = int(defaults.TIMEOUT_S * 1000),
    natural: bool = True,
    only: list[str] | None = None,
    progress: Progress | None = None,
    access_only: bool = False,
    isolate: bool = True,
) -> tuple[list[Shape], list[ShapeResult], dict[Any, dict[str, str]]]:
    """Run the catalog on every target. Returns shapes, results, and each target's dataset meta.

    ``catalog`` is a name under ``sql/catalog/``, a directory or entry file, or a loaded
    :class:`~dbbench.catalog.entries.Catalog`. A catalog that carries its own setup SQL needs a namespace
    built from it (``dbbench seed --catalog``). ``access_only=True`` asserts the access path only
    (expected index, no forbidden full scan): for CI-size datasets, where row counts differ from
    the catalog's claims and the planner rightly sorts a few hundred rows instead of walking an
    index in order. The shapes run logged in as the namespace's own role (``isolate=False``: as
    dbbench's own user), see :mod:`dbbench.access.isolation`.
    """
    cat = catalog if isinstance(catalog, Catalog) else catalogs.open_catalog(catalog, only)
    shapes = [s for s in cat.shapes if not only or s.name in only]
    try:
        metas = {t.dialect: require_seeded(t, namespace) for t in targets}
    except NotSeeded as exc:
        if not cat.has_setup:
            raise
        raise NotSeeded(
            str(exc).replace(
                "run `dbbench seed` first",
                f"run `dbbench seed --catalog {cat.path} --namespace {namespace}` first",
            )
        ) from None
    if cat.has_setup:
        for t in targets:
            have = metas[t.dialect].get("dataset")
            if have != cat.dataset_name:
                raise NotSeeded(
                    f"{t.label} {dialects.get(t.dialect).NAMESPACE_KIND} {namespace!r} holds "
                    f"{have!r}, not the data of catalog {cat.name!r}: run "
                    f"`dbbench seed --catalog {cat.path} --namespace {namespace}` first"
                )
    results = []
    for target in targets:
        d = dialects.get(target.dialect)
        base = _dataset_params(metas[target.dialect].get("dataset"))
        with _connections(target, namespace, isolate) as (admin, conn):
            d.restore_statistics(admin, namespace)  # start from the persisted statistics
            admin.commit()
            for shape in shapes:
                if target.dialect in shape.variants:
                    results.append(
                        run_shape(
                            target,
                            conn,
                            shape,
                            warmups=warmups,
                            runs=runs,
                            timeout_ms=timeout_ms,
                            natural=natural,
                            progress=progress,
                            base_params=base,
                            access_only=access_only,
                            namespace=namespace,
                            admin=admin,
                        )
                    )
    return shapes, results, metas


def plan_signature(tree: PlanNode) -> str:
    """What a plan change is judged by: every table access (kind, table, index) and every sort /
    temporary table, in order -- not costs or timings."""
    from dbbench.dialects.plan import ACCESS_KINDS

    parts = []
    for n in tree.walk():
        if n.kind in ACCESS_KINDS and (n.table or n.index):
            parts.append(f"{n.kind} {n.table or n.alias or '?'}" + (f" using {n.index}" if n.index else ""))
        elif n.kind in ("sort", "temp_table") and not n.in_subquery:
            parts.append(n.kind)
    return "; ".join(parts) or "no table access"


def statistics_warnings(targets: list[Target], namespace: str) -> list[str]:
    """A warning per target whose owned tables still have automatic statistics on: a namespace
    seeded by a dbbench before issue 12, where runs can re-sample the statistics they plan with."""
    out = []
    for target in targets:
        d = dialects.get(target.dialect)
        raw = target.engine.raw_connection()
        try:
            driver: Any = raw.driver_connection
            frozen = d.statistics_frozen(driver, namespace)
            driver.rollback()
        finally:
            raw.close()
        loose = sorted(t for t, ok in frozen.items() if not ok)
        if loose:
            out.append(
                f"{target.label} {d.NAMESPACE_KIND} {namespace!r} predates frozen statistics (automatic "
                f"statistics are on for {', '.join(loose[:3])}{' …' if len(loose) > 3 else ''}): plans may "
                "change between runs; seed it again"
            )
    return out


def stability(
    targets: list[Target],
    catalog: str | Catalog = defaults.CATALOG,
    *,
    namespace: str = defaults.NAMESPACE,
    times: int = 5,
    timeout_ms: int = int(defaults.TIMEOUT_S * 1000),
    only: list[str] | None = None,
    progress: Progress | None = None,
    isolate: bool = True,
) -> dict[tuple[str, str], list[str]]:
    """Re-ANALYZE every owned table and re-plan every shape (one EXPLAIN ANALYZE of the remediated
    spelling), ``times`` times per target. Returns (shape, dialect) -> the plan signature of each
    round: one distinct signature is a stable plan, several mean re-sampling the statistics alone
    changes the plan. The statistics are left as the last ANALYZE sampled them."""
    cat = catalog if isinstance(catalog, Catalog) else catalogs.open_catalog(catalog, only)
    shapes = [s for s in cat.shapes if not only or s.name in only]
    metas = {t.dialect: require_seeded(t, namespace) for t in targets}
    seen: dict[tuple[str, str], list[str]] = {}
    for target in targets:
        d = dialects.get(target.dialect)
        base = _dataset_params(metas[target.dialect].get("dataset"))
        with _connections(target, namespace, isolate) as (admin, conn):
            tables = [d.quote(t) for t in d.statistics_frozen(admin, namespace)]
            admin.commit()
            for _ in range(times):
                d.analyze(admin, tables)
                admin.commit()
                d.restore_statistics(admin, namespace)
                admin.commit()
                for shape in shapes:
                    if target.dialect not in shape.variants:
                        continue
                    if progress:
                        progress(target.dialect, shape.name, "stability")
                    v = shape.variants[target.dialect]
                    params = resolve_params(conn, d, shape, base)
                    m = measure(conn, d, "remediated", v.sql, params, 0, 1, timeout_ms, v.settings)
                    sig = "timeout" if m._tree is None else plan_signature(m._tree)
                    seen.setdefault((shape.name, target.dialect), []).append(sig)
    return seen
