"""dbbench.advise.verify on both real servers: an index held against a shape. The built-in
"relation lookup" shape without its index (PostgreSQL: dropped in the test's scratch namespace;
MySQL: made invisible) and then with an index under trial (PostgreSQL: a copy under another name;
MySQL: the index made visible again): it serves the plan and every probe, and the rows examined
fall. The index definitions are as before afterwards."""

from __future__ import annotations

import pytest

from dbbench import dialects
from dbbench.access.targets import open_targets
from dbbench.advise import trial, verify
from dbbench.catalog.entries import open_catalog
from dbbench.dataset import seed
from dbbench.measure.explain import MeasureOptions, dataset_params
from tests.db import SHARED_100K, connection, drop_namespaces, execute, indexes, seeded_without, sql

pytestmark = pytest.mark.servers

NS = "i34_verify"
INDEX, TABLE = "ix_relation_lookup", "package_relation"
TRIAL = "dbbench_adv_trial_lookup"


@pytest.fixture(scope="module")
def seeded(local_servers):
    targets = open_targets({})
    seed.seed(targets, "alpine-ci", namespace=NS)
    yield {t.dialect: t for t in targets}
    for t in targets:
        t.dispose()
    drop_namespaces(NS)


@pytest.mark.parametrize("dialect", ["postgresql", "mysql"])
def test_an_index_under_trial_serves_the_shape_and_every_probe(seeded, dialect):
    target = seeded[dialect]
    shape = next(s for s in open_catalog("alpine").shapes if s.name == "relation lookup")
    options = MeasureOptions(namespace=NS, warmups=0, runs=1)
    base = dataset_params("alpine-ci")
    before_indexes = indexes(dialect, NS)
    if dialect == "postgresql":  # dropped and re-created for real: the scratch namespace is the test's
        (indexdef,) = [d for n, d in before_indexes if n == INDEX]
        try:
            sql(target, f"DROP INDEX {INDEX}", namespace=NS)
            with connection(target, namespace=NS) as conn:
                without = verify.measure(target, conn, shape, options, base)
            sql(target, indexdef.replace(INDEX, TRIAL), namespace=NS)
            with connection(target, namespace=NS) as conn:
                evidence = verify.compare(target, conn, shape, TABLE, TRIAL, without, options, base)
        finally:
            sql(
                target,
                [f"DROP INDEX IF EXISTS {TRIAL}", f"DROP INDEX IF EXISTS {INDEX}", indexdef],
                namespace=NS,
            )
    else:
        with connection(target, namespace=NS) as conn:
            try:
                execute(conn, f"ALTER TABLE {TABLE} ALTER INDEX {INDEX} INVISIBLE")
                without = verify.measure(target, conn, shape, options, base)
                execute(conn, f"ALTER TABLE {TABLE} ALTER INDEX {INDEX} VISIBLE")
                evidence = verify.compare(target, conn, shape, TABLE, INDEX, without, options, base)
            finally:
                execute(conn, f"ALTER TABLE {TABLE} ALTER INDEX {INDEX} VISIBLE")
    assert INDEX not in without.remediated._tree.to_dict().__repr__()  # the plan without it
    assert evidence.used and evidence.probes == () and evidence.serves, evidence
    before, after = evidence.work
    assert before is not None and after is not None and after * 2 < before, (
        evidence.work
    )  # PostgreSQL: 2,448 → 600
    assert evidence.plan.endswith(evidence.index), evidence.plan
    # PostgreSQL's buffers, reported both ways (at 2,048 rows the package probes dominate them:
    # 328 before, 333 with the index; the rows examined are the evidence); MySQL has none
    assert all((b is not None) == (dialect == "postgresql") for b in evidence.buffers), evidence.buffers
    assert indexes(dialect, NS) == before_indexes  # nothing left changed


@pytest.mark.parametrize("dialect", ["postgresql", "mysql"])
def test_an_index_the_plan_does_not_use_is_named_with_each_probe(seeded, dialect):
    target = seeded[dialect]
    shape = next(s for s in open_catalog("alpine").shapes if s.name == "relation lookup")
    options = MeasureOptions(namespace=NS, warmups=0, runs=1)
    base = dataset_params("alpine-ci")
    with connection(target, namespace=NS) as conn:
        without = verify.measure(target, conn, shape, options, base)
        # the primary key of package is present, but the lookup never reads package_relation with it
        evidence = verify.compare(target, conn, shape, TABLE, "no_such_index", without, options, base)
    assert not evidence.used and not evidence.serves
    assert evidence.probes and all("no_such_index" in p for p in evidence.probes), evidence.probes
    assert INDEX in evidence.plan


# -- the planner's estimate beside execution -------------------------------------------------------
EST = "i34_est_lookup"
LOOKUP = "repository_id, relation_kind, token_sha256, package_id"  # ix_relation_lookup's columns


@pytest.fixture(scope="module")
def lost_lookup(local_servers):
    """A scratch namespace where the lookup's index is gone (dropped for real)."""
    with seeded_without(EST, INDEX) as targets:
        yield targets


def _statements(dialect: str, name: str, columns: str) -> tuple[str, str, str]:
    if dialect == "postgresql":
        return f"CREATE INDEX {name} ON {TABLE} ({columns})", f"DROP INDEX {name}", name
    return f"ALTER TABLE {TABLE} ADD INDEX {name} ({columns})", f"ALTER TABLE {TABLE} DROP INDEX {name}", name


@pytest.mark.parametrize("dialect", ["postgresql", "mysql"])
def test_the_planner_estimate_without_and_with_an_index_under_trial(lost_lookup, dialect):
    target = lost_lookup[dialect]
    shape = next(s for s in open_catalog("alpine").shapes if s.name == "relation lookup")
    base = dataset_params("alpine-ci")
    before_indexes = indexes(dialect, EST)
    with connection(target, namespace=EST) as conn:
        without = verify.estimate(target, conn, shape, TABLE, TRIAL, base)
    with trial.present(target, EST, *_statements(dialect, TRIAL, LOOKUP)) as conn:
        with_index = verify.estimate(target, conn, shape, TABLE, TRIAL, base)
        # plain EXPLAIN, undone to the trial's savepoint: the index is still there for execution
        assert verify.estimate(target, conn, shape, TABLE, TRIAL, base) == with_index
        tree = verify.measure(target, conn, shape, MeasureOptions(namespace=EST, warmups=0, runs=1), base)
        assert TRIAL in verify._access(tree.remediated._tree, TABLE)
    assert indexes(dialect, EST) == before_indexes
    assert (without.shape, without.dialect, without.spelling) == ("relation lookup", dialect, "remediated")
    assert not without.used and TRIAL not in without.plan, without
    assert with_index.used and with_index.plan.endswith(TRIAL), with_index
    assert without.cost is not None and with_index.cost is not None
    assert 0 < with_index.cost < without.cost, (without.cost, with_index.cost)
    concluded = verify.estimate_only(without, with_index)
    assert concluded.cost == (without.cost, with_index.cost) and concluded.saving is not None
    # at alpine-ci's 2,048 packages the estimates disagree with execution on PostgreSQL, where the
    # index cuts the rows examined 2,448 → 600 (test above): a full scan 178.8 → the index 144.9,
    # -19%, which Dexter's rule skips; MySQL: fk_relation_package 209.0 → the index 48.8, -77%
    if dialect == "postgresql":
        assert concluded.verdict == "skip" and concluded.saving < verify.DEXTER_SAVING, concluded
        assert concluded.reason.endswith("less than the 50% saving asked"), concluded.reason
    else:
        assert concluded.verdict == "suggest" and concluded.saving >= verify.DEXTER_SAVING, concluded
        assert concluded.reason.startswith("the planner uses it: estimated cost "), concluded.reason


@pytest.mark.parametrize("dialect", ["postgresql", "mysql"])
def test_the_estimate_executes_nothing(lost_lookup, dialect):
    """No actuals in the plan (never ANALYZE); a shape's natural spelling is asked for by name."""
    target = lost_lookup[dialect]
    shape = next(s for s in open_catalog("alpine").shapes if s.name == "relation lookup")
    with connection(target, namespace=EST) as conn:
        tree = dialects.get(dialect).estimate_plan(
            conn, "SELECT COUNT(*) FROM package WHERE version <> %(v)s", {"v": "x"}, 10_000
        )[0]
        assert all(n.actual_rows is None and n.actual_ms is None for n in tree.walk()), tree.to_dict()
        assert tree.est_rows is not None or any(n.est_rows is not None for n in tree.walk())
        if shape.variants[dialect].natural is None:
            with pytest.raises(ValueError, match="no natural spelling"):
                verify.estimate(target, conn, shape, TABLE, TRIAL, dataset_params("alpine-ci"), natural=True)


def _estimate(used: bool, cost: float | None, plan: str = "full_scan") -> verify.Estimate:
    return verify.Estimate("s", "postgresql", "remediated", "t", "i", used, cost, plan)


def test_what_an_estimate_only_advisor_concludes():
    """Dexter's rule: the planner uses the index and its estimated cost falls by half or more."""
    concluded = verify.estimate_only(_estimate(False, 1000.0), _estimate(True, 12.5, "index_range i"))
    assert (concluded.verdict, concluded.reason, concluded.saving) == (
        "suggest",
        "the planner uses it: estimated cost 1,000.0 → 12.5 (-99%)",
        0.9875,
    )
    assert verify.estimate_only(_estimate(False, 1000.0), _estimate(True, 600.0)) == verify.EstimateOnly(
        "skip", "estimated cost 1,000.0 → 600.0 (-40%), less than the 50% saving asked", (1000.0, 600.0), 0.4
    )
    unused = verify.estimate_only(_estimate(False, 1000.0), _estimate(False, 1000.0))
    assert (
        unused.verdict == "skip" and unused.reason == "the planner does not use it (it reads t by full_scan)"
    )
    assert verify.estimate_only(_estimate(False, None), _estimate(True, 1.0)).reason == (
        "the planner gives no estimated cost to compare"
    )
    assert (
        verify.estimate_only(_estimate(False, 100.0), _estimate(True, 60.0), min_saving=0.3).verdict
        == "suggest"
    )


EST_100K = SHARED_100K


@pytest.fixture(scope="module")
def postgresql_100k(alpine_100k_pool):
    """The 100k dataset on PostgreSQL, as seeded (the namespace this module shares)."""
    with alpine_100k_pool.lent() as targets:
        yield targets["postgresql"]


def test_an_index_the_estimate_suggests_and_execution_rejects(postgresql_100k):
    """At 100k rows the lookup's index with ``token`` added to its key: the planner estimates the
    lookup 95% cheaper with it (743.3 → 38.1) and uses it, so an estimate-only advisor suggests
    it; executed, it examines the rows ix_relation_lookup does (400 → 400): rejected."""
    from dbbench.advise.shape import judge

    target = postgresql_100k
    shape = next(s for s in open_catalog("alpine").shapes if s.name == "relation lookup")
    base = dataset_params("alpine-100k")
    options = MeasureOptions(namespace=EST_100K, warmups=1, runs=3)
    name = "dbbench_adv_lookup_token"
    statements = _statements(
        "postgresql", name, "repository_id, relation_kind, token_sha256, token, package_id"
    )
    before_indexes = indexes("postgresql", EST_100K)
    with connection(target, namespace=EST_100K) as conn:
        without = verify.estimate(target, conn, shape, TABLE, name, base)
        before = verify.measure(target, conn, shape, options, base)
    with trial.present(target, EST_100K, *statements) as conn:
        with_index = verify.estimate(target, conn, shape, TABLE, name, base)
        evidence = verify.compare(target, conn, shape, TABLE, name, before, options, base)
    assert indexes("postgresql", EST_100K) == before_indexes
    assert without.plan == f"index_range {INDEX}" and with_index.plan == f"index_range {name}"
    concluded = verify.estimate_only(without, with_index)
    assert concluded.verdict == "suggest" and concluded.saving is not None and concluded.saving > 0.9, (
        concluded
    )
    assert evidence.used and evidence.work[0] == evidence.work[1], evidence
    assert judge(evidence) == (
        "rejected",
        f"no less work: {evidence.work[0]:,.0f} → {evidence.work[1]:,.0f} rows examined",
    )
