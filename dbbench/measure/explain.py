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
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from dbbench import defaults, dialects
from dbbench.access import isolation
from dbbench.access.targets import Target
from dbbench.catalog import entries
from dbbench.catalog.entries import Catalog, Shape
from dbbench.catalog.params import to_pyformat
from dbbench.dialects import common
from dbbench.dialects.plan import PlanNode
from dbbench.errors import DbbenchError, server_message
from dbbench.measure import writes
from dbbench.measure.expect import PlanCheck, check
from dbbench.measure.values import resolve_params
from verdict.files import excerpt
from verdict.stats import nearest_rank

REFUSED = "the server refused it"  # what a spelling the server would not run says (Measurement.timeout)


class NotSeeded(DbbenchError):
    """The namespace does not hold a complete dbbench seed (of the catalog's data, when it has setup SQL)."""


@dataclass(frozen=True)
class MeasureOptions:
    """How :func:`run` measures a catalog: in ``namespace``, ``warmups`` untimed then ``runs`` timed
    ``EXPLAIN ANALYZE`` of each spelling under a statement timeout of ``timeout_ms``; the natural
    spellings too (``natural``); only the access path asserted (``access_only``, see :func:`run`);
    the shapes run as the namespace's own role (``isolate``, see :mod:`dbbench.access.isolation`)."""

    namespace: str = defaults.NAMESPACE
    warmups: int = defaults.WARMUPS
    runs: int = defaults.RUNS
    timeout_ms: int = int(defaults.TIMEOUT_S * 1000)
    natural: bool = True
    access_only: bool = False
    isolate: bool = True


@dataclass
class Measurement:
    """One spelling of one shape on one dialect. ``samples_ms`` are the statement's times when
    every sample has one, else the executor's (``timing`` says which, :mod:`dbbench.dialects.timing`)."""

    spelling: str  # remediated | natural
    sql: str
    samples_ms: list[float] = field(default_factory=list)
    rows: float | None = None
    plan: dict | None = None  # normalized tree of the last timed run
    raw_plan: object = None
    timeout: str | None = None
    executor_ms: list[float] = field(default_factory=list)  # the executor's time of every sample
    planning_ms: list[float] | None = None  # PostgreSQL's Planning Time of every sample
    timing: str | None = None  # statement | executor | resolved-while-planning (None: no sample)
    # what a write or a locking read locked and changed in its last timed sample (None: a read)
    locks: dict | None = None
    _tree: PlanNode | None = field(default=None, repr=False)

    @property
    def p50(self) -> float | None:
        return nearest_rank(self.samples_ms, 0.50)

    @property
    def p95(self) -> float | None:
        return nearest_rank(self.samples_ms, 0.95)


@dataclass
class ShapeMeasurement:
    """One shape measured on one dialect: both spellings and the plan check of the remediated one
    (what the result document's entry, :class:`dbbench.document.model.ShapeResult`, is made from)."""

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
    unchanged: dict | None = None  # a write's tables' fingerprints compared (dbbench.measure.writes)
    race: dict | None = None  # the two-session check of a shape with [race] (dbbench.measure.race)

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


def measure(
    conn,
    d,
    spelling: str,
    sql: str,
    params: dict,
    options: MeasureOptions,
    settings: dict | None = None,
    observer=None,
) -> Measurement:
    """One spelling: ``options.warmups`` untimed, then ``options.runs`` timed EXPLAIN ANALYZE (a
    timeout is recorded, not raised). The samples are the statement's times when the server gave
    one for every sample (``observer``: the connection that reads MySQL's performance_schema,
    :func:`dbbench.dialects.mysql.run_sample`), else the executor's, marked
    (:func:`dbbench.dialects.timing.kind_of`): one kind per spelling, never a mix."""
    from dbbench.dialects import timing

    m = Measurement(spelling, sql)
    stmt = to_pyformat(sql)
    statements: list[float | None] = []
    planning: list[float | None] = []
    try:
        for _ in range(options.warmups):
            d.run_sample(conn, stmt, params, options.timeout_ms, settings, observer)
        for run in range(options.runs):
            last = run == options.runs - 1  # its lock footprint is the spelling's
            sample = d.run_sample(conn, stmt, params, options.timeout_ms, settings, observer, last)
            m.executor_ms.append(sample.executor_ms)
            statements.append(sample.statement_ms)
            planning.append(sample.planning_ms)
        tree = sample.tree
        m.raw_plan, m._tree = sample.raw, tree
        m.plan = tree.to_dict()
        m.rows = tree.actual_rows
        m.locks = sample.footprint
        if tree.kind == "modify" and m.locks and m.locks.get("affected") is not None:
            m.rows = float(m.locks["affected"])  # a write's rows are the rows it changed
    except TimeoutError as exc:
        m.timeout = str(exc)
    except Exception as exc:  # a write the server refuses (a foreign key, NOT NULL): this shape fails
        if not (d.is_driver_error(exc) and d.refuses_data(exc)):
            raise
        m.timeout = f"{REFUSED}: {server_message(exc, 300)}"
        m.executor_ms, statements, planning = [], [], []
        m._tree = None
    if m.executor_ms:
        timed = [x for x in statements if x is not None]
        whole = len(timed) == len(m.executor_ms)
        m.timing = timing.kind_of(whole, m._tree)
        m.samples_ms = timed if whole else list(m.executor_ms)
        if all(x is not None for x in planning):
            m.planning_ms = [float(x) for x in planning if x is not None]
    return m


def run_shape(
    target: Target,
    conn,
    shape: Shape,
    options: MeasureOptions = MeasureOptions(),
    *,
    progress: Progress | None = None,
    base_params: dict | None = None,
    admin=None,
) -> ShapeMeasurement:
    """Measure one shape on ``conn``. ``admin``: dbbench's own connection, for the server-wide
    work between measurements (restoring statistics); ``conn`` itself when not given."""
    from dbbench.measure import probes

    d = dialects.get(target.dialect)
    v = shape.variants[target.dialect]
    params = probes.fill(conn, d, shape, v.sql, resolve_params(conn, d, shape, base_params))
    report = progress or (lambda *_: None)
    report(target.dialect, shape.name, "remediated")
    own = admin if admin is not None else conn  # dbbench's own: performance_schema, fingerprints
    # without a connection of dbbench's own, ``conn`` may be inside its caller's transaction (an
    # index under trial, dbbench.advise): nothing here ends that transaction
    separate = admin is not None
    guarded: contextlib.AbstractContextManager[dict[str, Any]] = (
        writes.guard(own, d, options.namespace, v.sql) if separate else contextlib.nullcontext({})
    )
    with guarded as unchanged:
        rem = measure(conn, d, "remediated", v.sql, params, options, v.settings, own)
        if rem._tree is not None:
            require_expected_table(own, d, shape, target.dialect, options, rem._tree)
        verdict = plan_check(shape, target.dialect, rem, access_only=options.access_only)
        if not v.expect_index and entries.inserts_values(v.sql):
            written = [
                i["index"]
                for i in index_definitions(own, d, options.namespace)
                if i["table"] == v.expect_table
            ]
            if separate:
                own.rollback()
            many = "es" if len(written) != 1 else ""
            verdict.actual = (
                f"inserts into {v.expect_table}, writing {len(written)} index{many}: {', '.join(written)}"
            )
        if shape.probes and rem._tree is not None:
            report(target.dialect, shape.name, "every parameter")
            found = probes.run(conn, d, shape, v, params, options.timeout_ms, options.access_only)
            verdict.ok = verdict.ok and not found
            verdict.problems += found
        result = ShapeMeasurement(
            shape.name,
            target.dialect,
            shape.cardinality,
            shape.expect_rows,
            {k: _jsonable(val) for k, val in params.items()},
            rem,
            natural_label=v.natural_label,
            verdict=verdict,
            access_path=shape.access_path,
        )
        if separate and shape.cascade and rem._tree is not None:  # its proof ends a transaction
            result.cascade = prove_cascade(conn, shape.cascade, params)
            if problem := cascade_problem(result.cascade):
                verdict.ok = False
                verdict.problems.append(problem)
        if options.natural and v.natural:
            report(target.dialect, shape.name, "natural")
            result.natural = measure(conn, d, "natural", v.natural, params, options, v.settings, own)
        if separate and shape.race and shape.race_holder is not None and rem._tree is not None:
            from dbbench.measure import race

            report(target.dialect, shape.name, "race")
            result.race = race.check(target, own, conn, shape, params, options)
            if not result.race.get("ok"):
                verdict.ok = False
                verdict.problems.append(str(result.race.get("problem")))
    if common.locks_rows(v.sql) or shape.cascade:
        # rolled-back writes must not leak into later plans (MySQL's in-memory row counts,
        # PostgreSQL's dead row versions)
        d.restore_statistics(own, options.namespace)
        if separate:
            own.commit()
            if settle := unchanged.pop("settle", None):
                d.settle_writes(own, options.namespace, settle)
    if unchanged:
        result.unchanged = unchanged
        if problem := writes.unchanged_problem(unchanged):
            verdict.ok = False
            verdict.problems.append(problem)
    if not verdict.ok and shape.line and v.expect_index:  # an annotated SQL block: say where it is
        captured = f", captured from {shape.source}" if shape.source else ""
        verdict.problems.append(f"shape at {shape.path}:{shape.line}{captured}")
    return result


def require_expected_table(
    conn, d, shape: Shape, dialect: str, options: MeasureOptions, tree: PlanNode
) -> None:
    """Raise :class:`~dbbench.catalog.entries.CatalogError` (bad input, exit code 2, not a failed
    assertion) when the shape's ``expect`` names a table that neither the plan reads nor the
    namespace has: no index could ever be used on it."""
    table = shape.variants[dialect].expect_table
    if not table or any((n.table or "").lower() == table.lower() for n in tree.walk()):
        return
    have = sorted({str(row[0]) for row in d.schema_columns(conn, options.namespace)} - {"dbbench_meta"})
    conn.rollback()
    if table.lower() in {t.lower() for t in have}:
        return
    where = f"{shape.path}:{shape.line}" if shape.line else str(shape.path)
    listed = excerpt(", ".join(have), 200) if have else "none"
    raise entries.CatalogError(
        f"{where}: shape {excerpt(shape.name)!r}: [{dialect}] expect names table {excerpt(table, 60)!r}, "
        f"which the namespace {options.namespace!r} does not have (its tables: {listed})"
    )


def plan_check(shape: Shape, dialect: str, rem: Measurement, *, access_only: bool = False) -> PlanCheck:
    """The remediated spelling's plan against the shape's expectations on ``dialect``: the expected
    index on the expected table, no forbidden feature (``access_only``: no forbidden full scan) and,
    unless ``access_only``, the expected row count. A timed-out spelling fails."""
    v = shape.variants[dialect]
    if rem._tree is None:
        said = "refused" if (rem.timeout or "").startswith(REFUSED) else "timeout"
        return PlanCheck(False, f"{v.expect_table} using {v.expect_index}", said, [rem.timeout or said])
    if not v.expect_index and entries.inserts_values(v.sql):  # no access path to assert
        return PlanCheck(True, "no access path (INSERT … VALUES)", f"inserts into {v.expect_table}", [])
    if not v.expect_index:  # an annotated SQL block without an expectation yet
        from dbbench.measure.propose import propose

        proposal = propose(rem._tree)
        where = f"{shape.path}:{shape.line}" if shape.line else str(shape.path)
        return PlanCheck(
            False,
            "no expectation written",
            proposal.seen,
            [
                f"no expectation in {where}; proposed: {proposal.line} (dbbench catalog accept writes it)"
                if proposal.index
                else f"no expectation in {where}, and no index serves it ({proposal.seen}): add an index "
                "for it, or leave the shape out of the catalog"
            ],
        )
    forbid = [f for f in v.forbid if f.startswith("full_scan")] if access_only else v.forbid
    verdict = check(rem._tree, v.expect_table, v.expect_index, forbid)
    if found := writes.lock_problems(rem.locks, shape.locked_rows_bound(dialect), common.verb(rem.sql)):
        verdict.ok = False
        verdict.problems += found
    elif not verdict.ok and rem.locks:  # a failed write names what it locked
        verdict.problems.append(
            f"{writes.verb_of(rem._tree, rem.sql)} locked {common.footprint_summary(rem.locks)}"
        )
    if (
        not access_only
        and shape.expect_rows is not None
        and rem.rows is not None
        and int(rem.rows) != shape.expect_rows
    ):
        verdict.ok = False
        verdict.problems.append(f"returned {rem.rows:g} rows, expected {shape.expect_rows}")
    return verdict


def cascade_problem(counts: dict) -> str | None:
    """What is wrong with :func:`prove_cascade`'s counts, if anything: the delete must have removed
    some dependent rows and the rollback must have brought all of them back."""
    before, after, restored = counts["before"], counts["after_delete"], counts["after_rollback"]
    if before > 0 and after == 0 and restored == before:
        return None
    return (
        f"cascade: {before} dependent rows, {after} left after the delete, "
        f"{restored} after the rollback (expected >0, 0, {before})"
    )


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


def dataset_params(name: str | None) -> dict:
    """The seeded dataset's catalog values; none for a dataset dbbench does not know by name."""
    from dbbench.dataset import definition

    if not name or name.startswith("setup:"):
        return {}
    try:
        return definition.load(name).params()
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
    options: MeasureOptions = MeasureOptions(),
    *,
    only: list[str] | None = None,
    progress: Progress | None = None,
) -> tuple[list[Shape], list[ShapeMeasurement], dict[Any, dict[str, str]]]:
    """Run the catalog on every target. Returns shapes, results, and each target's dataset meta
    (with the namespace's indexes at run time under :data:`INDEXES_META`).

    ``catalog`` is a name under ``sql/catalog/``, a directory or entry file, or a loaded
    :class:`~dbbench.catalog.entries.Catalog`; ``only``: these shapes of it. A catalog that carries
    its own setup SQL needs a namespace built from it (``dbbench seed --catalog``).
    ``options.access_only`` asserts the access path only (expected index, no forbidden full scan):
    for CI-size datasets, where row counts differ from the catalog's claims and the planner rightly
    sorts a few hundred rows instead of walking an index in order. The shapes run logged in as the
    namespace's own role (``options.isolate`` False: as dbbench's own user), see
    :mod:`dbbench.access.isolation`.
    """
    cat = catalog if isinstance(catalog, Catalog) else entries.open_catalog(catalog, only)
    shapes = [s for s in cat.shapes if not only or s.name in only]
    metas = seeded_metas(targets, cat, options.namespace)
    results: list[ShapeMeasurement] = []
    for target in targets:
        results += _run_target(target, shapes, options, metas[target.dialect], progress)
    return shapes, results, metas


def seeded_metas(targets: list[Target], cat: Catalog, namespace: str) -> dict[Any, dict[str, str]]:
    """Each target's dataset meta (:func:`require_seeded`); for a catalog with setup SQL, the
    namespace must hold that catalog's data, and the advice names ``seed --catalog``."""
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
    return metas


# the key of a run's meta (what :func:`run` returns per target) that holds the namespace's indexes
# when the run measured it, as JSON: the result document's ``datasets.<dialect>.indexes``
INDEXES_META = "run.indexes"


def index_definitions(conn, d, namespace: str) -> list[dict[str, str]]:
    """Every index of ``namespace``'s tables (dbbench's own ``dbbench_meta`` left out) as
    ``{table, index, definition}``, the definition as the dialect states it
    (``index_definitions``) with the namespace's name taken out of it: PostgreSQL qualifies the
    table (``ON ns.t``), and a baseline saved in one namespace is compared with a run in another."""
    out = []
    for table, index, definition in d.index_definitions(conn, namespace):
        if table == "dbbench_meta":
            continue
        for qualified in (f" ON {namespace}.", f' ON "{namespace}".'):
            definition = definition.replace(qualified, " ON ")
        out.append({"table": table, "index": index, "definition": definition})
    return out


def _run_target(
    target: Target,
    shapes: list[Shape],
    options: MeasureOptions,
    meta: dict[str, str],
    progress: Progress | None,
) -> list[ShapeMeasurement]:
    """The shapes that have a variant for ``target``, measured there (from the persisted
    statistics); the namespace's indexes as they are now go into ``meta`` (:data:`INDEXES_META`)."""
    d = dialects.get(target.dialect)
    base = dataset_params(meta.get("dataset"))
    with _connections(target, options.namespace, options.isolate) as (admin, conn):
        meta[INDEXES_META] = json.dumps(index_definitions(admin, d, options.namespace))
        admin.rollback()
        d.restore_statistics(admin, options.namespace)  # start from the persisted statistics
        admin.commit()
        d.recover_settle(admin, options.namespace)  # what a killed run's writes left
        return [
            run_shape(target, conn, shape, options, progress=progress, base_params=base, admin=admin)
            for shape in shapes
            if target.dialect in shape.variants
        ]


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
    options: MeasureOptions = MeasureOptions(),
    *,
    times: int = 5,
    only: list[str] | None = None,
    progress: Progress | None = None,
) -> dict[tuple[str, str], list[str]]:
    """Re-ANALYZE every owned table and re-plan every shape (one EXPLAIN ANALYZE of the remediated
    spelling, in ``options.namespace`` under ``options.timeout_ms``), ``times`` times per target.
    Returns (shape, dialect) -> the plan signature of each round: one distinct signature is a stable
    plan, several mean re-sampling the statistics alone changes the plan. The statistics are left
    as the last ANALYZE sampled them."""
    cat = catalog if isinstance(catalog, Catalog) else entries.open_catalog(catalog, only)
    shapes = [s for s in cat.shapes if not only or s.name in only]
    namespace, once = options.namespace, replace(options, warmups=0, runs=1)
    metas = {t.dialect: require_seeded(t, namespace) for t in targets}
    seen: dict[tuple[str, str], list[str]] = {}
    for target in targets:
        d = dialects.get(target.dialect)
        base = dataset_params(metas[target.dialect].get("dataset"))
        with _connections(target, namespace, options.isolate) as (admin, conn):
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
                    m = measure(conn, d, "remediated", v.sql, params, once, v.settings, admin)
                    sig = "timeout" if m._tree is None else plan_signature(m._tree)
                    seen.setdefault((shape.name, target.dialect), []).append(sig)
    return seen
