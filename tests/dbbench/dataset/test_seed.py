"""`dbbench seed` against the real servers: exact, deterministic, identical across dialects, safe."""

from __future__ import annotations

import json

import pytest

from dbbench import dialects
from dbbench.access.targets import open_targets
from dbbench.dataset import seed
from tests.conftest import run_cli
from tests.db import connection, sql, statistics

# Recorded from a real run: a change here means the dataset changed for every user.
GOLDEN_100K = {
    "repository": "5:25d85af20649ad15",
    "package": "100000:c3a5ce1bec1469e00bc",
    "package_relation": "100000:c359b1f62c3fcd4eaab",
    "suite_state": "10000:13959b441b93af7e4da",
    "snapshot": "100001:c32b5fef23f21d19c15",
    "group_snapshot_stage": "2:11e99d5666f214cf",
    "group_binding": "100000:c393de6b53b7a8b5820",
}


@pytest.fixture(scope="module")
def targets(local_servers):
    ts = open_targets({})
    yield ts
    for t in ts:
        t.dispose()


def test_100k_dataset_is_exact_and_identical_on_both_servers(targets, tmp_path):
    out = tmp_path / "seed.json"
    result = run_cli("seed", "--output", str(out))
    assert result.code == 0, result.output
    doc = json.loads(out.read_text())
    for t in doc["targets"]:
        got = {c["name"]: c["actual"] for c in t["cardinalities"]}
        assert got["rows in package"] == 100_000
        assert got["rows in package_relation"] == 100_000
        assert got["rows in suite_state"] == 10_000
        assert got["rows in snapshot"] == 100_001
        assert got["rows in group_binding"] == 100_000
        assert got["rows in group_snapshot_stage"] == 2
        assert got["relations matching the lookup token"] == 100
        assert got["pending suite states"] == 100
        assert got["snapshot cleanup candidates (retain 3)"] == 32
        assert t["fingerprints"] == GOLDEN_100K, t["dialect"]
    assert all(doc["fingerprints_equal"].values())
    assert "***" in json.dumps(doc["servers"])


def test_reseed_is_stable_and_replaces_only_our_namespace(targets):
    _, first, _ = seed.seed(targets, "alpine-ci", namespace="dbbench_t_reseed")
    _, second, _ = seed.seed(targets, "alpine-ci", namespace="dbbench_t_reseed")
    assert all(r.ok for r in first + second)
    assert [r.fingerprints for r in first] == [r.fingerprints for r in second]
    assert first[0].fingerprints == first[1].fingerprints  # PostgreSQL == MySQL


def _make_foreign(target, ns: str) -> None:
    q = dialects.get(target.dialect).quote
    kind = "SCHEMA" if target.dialect == "postgresql" else "DATABASE"
    sql(
        target,
        [
            f"DROP {kind} IF EXISTS {q(ns)}" + (" CASCADE" if kind == "SCHEMA" else ""),
            f"CREATE {kind} {q(ns)}",
            f"CREATE TABLE {q(ns)}.precious (id int PRIMARY KEY, note varchar(50))",
            f"INSERT INTO {q(ns)}.precious VALUES (1, 'keep me'), (2, 'and me')",
        ],
    )


def _snapshot_of(target, ns: str):
    q = dialects.get(target.dialect).quote
    tables, rows = sql(
        target,
        [
            f"SELECT table_name FROM information_schema.tables WHERE table_schema = '{ns}' ORDER BY 1",
            f"SELECT id, note FROM {q(ns)}.precious ORDER BY id",
        ],
        fetch="each",
    )
    return [r[0] for r in tables], rows


@pytest.mark.parametrize("dialect", ["postgresql", "mysql"])
def test_foreign_namespace_is_refused_and_left_untouched(targets, dialect):
    target = next(t for t in targets if t.dialect == dialect)
    _make_foreign(target, "not_dbbench")
    before = _snapshot_of(target, "not_dbbench")
    result = run_cli("seed", "--only", dialect, "--dataset", "alpine-ci", "--namespace", "not_dbbench")
    assert result.code == 2, result.output
    assert "exists and is not dbbench's" in result.stderr
    assert "Traceback" not in result.output
    assert _snapshot_of(target, "not_dbbench") == before == (["precious"], [(1, "keep me"), (2, "and me")])


def test_interrupted_seed_keeps_old_data_or_marks_it_incomplete(targets):
    ns = "dbbench_t_interrupt"
    _, done, _ = seed.seed(targets, "alpine-ci", namespace=ns)

    import threading

    mysql_reloading = threading.Event()

    def interrupt(dialect, step, rows):
        # Each loader stops at its own relation load. PostgreSQL waits until MySQL has begun its
        # reload: otherwise its interrupt can cancel MySQL before MySQL touched anything (its
        # loader connection is slower to open), and there would be nothing incomplete to see.
        if dialect == "mysql" and step.startswith("load"):  # its schema step (the reload) is done
            mysql_reloading.set()
        if step == "load package_relation":
            if dialect == "postgresql":
                assert mysql_reloading.wait(60), "MySQL never began its reload"
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        seed.seed(targets, "alpine-ci", namespace=ns, progress=interrupt)
    states = {}
    for t in targets:
        with connection(t) as conn:
            states[t.dialect] = dialects.get(t.dialect).namespace_state(conn, ns)
    assert states == {"postgresql": "complete", "mysql": "incomplete"}
    pg = next(t for t in targets if t.dialect == "postgresql")
    with connection(pg, namespace=ns) as conn:
        package = seed.fingerprint_table(conn, "postgresql", _table("package", "alpine-ci"))
    assert package == done[0].fingerprints["package"]
    _, again, _ = seed.seed(targets, "alpine-ci", namespace=ns)  # the next seed replaces the incomplete one
    assert [r.fingerprints for r in again] == [r.fingerprints for r in done]


def _table(name: str, dataset_name: str):
    from dbbench.dataset import definition, loadfiles

    tables, _, _ = loadfiles.prepare(definition.load(dataset_name), ["postgresql"], seed.default_cache())
    return next(t for t in tables if t.name == name)


@pytest.mark.servers
def test_verification_mismatch_exits_1(tmp_path):
    bad = tmp_path / "wrong.toml"
    bad.write_text(
        'extends = "alpine-ci"\nname = "wrong"\n[[verify]]\nname = "stages"\nexpect = 5\n'
        'sql = "SELECT COUNT(*) FROM group_snapshot_stage"\n'
    )
    result = run_cli("seed", "--dataset", str(bad), "--namespace", "dbbench_t_wrong")
    assert result.code == 1, result.output
    assert "verification failed" in result.stderr and "stages = 2, expected 5" in result.stderr


@pytest.mark.servers
def test_bad_dataset_definition_is_one_line(tmp_path):
    broken = tmp_path / "broken.toml"
    broken.write_text("name = [unclosed\n")
    result = run_cli("seed", "--dataset", str(broken))
    assert result.code == 2 and "not valid TOML" in result.stderr and "Traceback" not in result.output
    result = run_cli("seed", "--dataset", "no-such-dataset")
    assert result.code == 2 and "no dataset 'no-such-dataset'" in result.stderr


def test_the_statistics_stay_as_the_seed_analyzed_them_past_innodbs_recalculation_interval(targets):
    """MySQL queues a table for a background recalculation of its persisted statistics once 10 %
    of it changed, and runs it 10 s after the last one, whatever the table's STATS_AUTO_RECALC
    says by then: a seed freezes every table before its first row (the dataset's after its
    CREATE TABLE, a setup SQL's at each CREATE TABLE it runs), and dbbench_meta (whose records
    runs write and remove) from its creation. The seed's ANALYZE is then the last word."""
    import time

    dataset_ns, setup_ns = "dbbench_t_seed_recalc", "dbbench_t_setup_recalc"
    (mysql,) = [t for t in targets if t.dialect == "mysql"]

    try:
        _, results, _ = seed.seed([mysql], "alpine-ci", namespace=dataset_ns)
        assert all(r.ok for r in results)
        seeded = run_cli("seed", "--catalog", "examples/shop", "--namespace", setup_ns, "--only", "mysql")
        assert seeded.code == 0, seeded.output
        before = {ns: statistics(mysql, ns) for ns in (dataset_ns, setup_ns)}  # index rows, then table rows
        assert {r[1] for r in before[dataset_ns][0]} >= {"dbbench_meta", "package", "group_binding"}
        assert {r[1] for r in before[setup_ns][0]} >= {"dbbench_meta", "orders", "order_items"}
        with connection(mysql) as conn:  # what an advise trial records and removes, 20 times
            d = dialects.get("mysql")
            for ns in before:
                for i in range(20):
                    d.write_meta(conn, ns, {f"advise.t{i}": "x"})
                    conn.commit()
                    sql(mysql, f"DELETE FROM {ns}.dbbench_meta WHERE `key` = 'advise.t{i}'")
        time.sleep(21)  # twice InnoDB's MIN_RECALC_INTERVAL (10 s): no event to wait on
        assert {ns: statistics(mysql, ns) for ns in before} == before
    finally:
        sql(mysql, [f"DROP DATABASE IF EXISTS {ns}" for ns in (dataset_ns, setup_ns)])
