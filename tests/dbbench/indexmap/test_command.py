"""``dbbench indexes`` on both real servers, on the built-in catalog: every index a remediated shape
expects is needed by it (hiding it fails the shape's check or raises its work), an index no plan
reads is unused, a constraint's index is never called droppable; the namespace is exactly as it was
afterwards, also after a kill -9 in the middle; bad input is one line, exit 2."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from dbbench.catalog import entries
from dbbench.dataset import definition, loadfiles, seed
from tests.conftest import run_cli
from tests.db import connection, execute, indexes, seeded_without, sql

pytestmark = pytest.mark.servers

NS = "i35_map"
ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def seeded(local_servers):
    with seeded_without(NS) as targets:
        yield targets


def state(target) -> dict:
    """What the map must leave as it was: every index with its definition (MySQL: its visibility),
    each table's fingerprint, the statistics plans are made from, dbbench_meta."""
    tables, _, _ = loadfiles.prepare(definition.load("alpine-ci"), [target.dialect], seed.default_cache())
    key = "key" if target.dialect == "postgresql" else "`key`"
    with connection(target, namespace=NS) as conn:
        if target.dialect == "postgresql":
            statistics = execute(
                conn,
                # dbbench_meta's own statistics are left out (on both servers): the server may
                # recalculate them whenever dbbench records something there; no plan reads it
                "SELECT relname, relpages, reltuples, pg_relation_size(oid) FROM pg_class "
                f"WHERE relnamespace = '{NS}'::regnamespace AND relname NOT LIKE 'dbbench\\_meta%%' ORDER BY 1",
            )
        else:
            statistics = execute(
                conn,
                f"SELECT table_name, index_name, stat_name, stat_value FROM mysql.innodb_index_stats "
                f"WHERE database_name = '{NS}' AND table_name <> 'dbbench_meta' ORDER BY 1, 2, 3",
            )
        found = {
            "meta": execute(conn, f"SELECT {key}, value FROM dbbench_meta ORDER BY 1"),
            "fingerprints": {t.name: seed.fingerprint_table(conn, target.dialect, t) for t in tables},
            "statistics": statistics,
        }
        conn.rollback()
    return found | {"indexes": indexes(target, NS)}


@pytest.fixture(scope="module")
def mapped(seeded, tmp_path_factory):
    """One run of the map on both servers: (its JSON, stdout, the HTML page, the state before)."""
    out = tmp_path_factory.mktemp("map")
    before = {d: state(t) for d, t in seeded.items()}
    r = run_cli(
        "indexes", "--namespace", NS, "--write-rows", "200",
        "--output", str(out / "map.json"), "--html", str(out / "map.html"),
    )  # fmt: skip
    assert r.code == 0, r.stderr
    assert "Traceback" not in r.stderr
    return json.loads((out / "map.json").read_text()), r.stdout, (out / "map.html").read_text(), before


def by_index(doc: dict, dialect: str) -> dict[tuple[str, str], dict]:
    (t,) = [t for t in doc["targets"] if t["dialect"] == dialect]
    return {(i["table"], i["index"]): i for i in t["indexes"]}


def test_the_namespace_is_exactly_as_it_was(seeded, mapped):
    before = mapped[3]
    after = {d: state(t) for d, t in seeded.items()}
    for d in after:
        for k in after[d]:
            assert after[d][k] == before[d][k], (d, k)


@pytest.mark.parametrize("dialect", ["postgresql", "mysql"])
def test_every_index_a_shape_expects_is_needed_by_it(mapped, dialect):
    doc = mapped[0]
    found = by_index(doc, dialect)
    catalog = entries.open_catalog("alpine")
    checked = 0
    for shape in catalog.shapes:
        v = shape.variants[dialect]
        if not v.expect_index:
            continue
        entry = found[(v.expect_table, v.expect_index)]
        if entry["verdict"] == "not hidden":  # MySQL cannot hide a primary key: which plans read it
            assert dialect == "mysql" and v.expect_index == "PRIMARY", entry
            assert shape.name in entry["read_by_unhidden"]
            continue
        assert entry["verdict"] == "needed", (shape.name, entry)
        (mine,) = [e for e in entry["needed_by"] if e["shape"] == shape.name]
        assert mine["reasons"], mine
        checked += 1
    assert checked >= 7


@pytest.mark.parametrize("dialect", ["postgresql", "mysql"])
def test_an_index_no_plan_reads_is_unused_and_a_constraint_is_kept(mapped, dialect):
    doc, stdout = mapped[0], mapped[1]
    found = by_index(doc, dialect)
    full = found[("package", "ix_package_full")]  # the catalog's shapes all prefer ix_package_namespace
    assert full["verdict"] == "unused" and full["constraint"] is None
    assert full["shapes_measured"] >= 2 and full["needed_by"] == [] and full["taken_over"] == []
    assert full["size_bytes"] > 0
    bound = [i for i in found.values() if i["verdict"] in ("unused", "redundant") and i["constraint"]]
    assert bound, "a constraint's index the catalog does not need"
    for i in bound:
        assert f"{i['table']}.{i['index']} is {i['verdict']} by this catalog but backs" in stdout
        assert f"{i['table']}.{i['index']} is {i['verdict']} by this catalog (" not in stdout
    if dialect == "postgresql":
        # the relation lookup reads package by its primary key or by (repository_id, id): either serves
        pkey = found[("package", "package_pkey")]
        assert pkey["verdict"] == "redundant" and pkey["constraint"] == "primary key"
        (over,) = pkey["taken_over"]
        assert over["shape"] == "relation lookup"
        assert over["rows_examined"]["before"] == over["rows_examined"]["after"]
        assert any("uq_package_repository_id" in i for i in over["instead"])
    else:
        assert found[("package", "uq_package_repository_id")]["constraint"] == "unique"
    # the same write batch on a copy of the table with every index, then on one without this one
    assert full["write"]["with"]["rows"] == full["write"]["without"]["rows"] == 200
    assert full["write"]["with"]["inserted"] == 200 and full["write"]["ratio"] > 0
    assert found[("package", "PRIMARY" if dialect == "mysql" else "package_pkey")]["write"][
        "note"
    ].startswith("not measured: a primary key")


def test_each_shape_gets_the_indexes_it_needs(mapped):
    doc = mapped[0]
    for t in doc["targets"]:
        shapes = {s["shape"]: s for s in t["shapes"]}
        assert "ix_relation_lookup" in shapes["relation lookup"]["needs"]
        assert shapes["exact asset path"]["needs"] == ["uq_package_path"]
    assert doc["summary"]["needed"] >= 12 and doc["summary"]["indexes"] >= 25


def test_the_terminal_and_html_views(mapped):
    _, stdout, html, _ = mapped
    for label in ("PostgreSQL", "MySQL"):
        assert f"{label} ({NS}): " in stdout
        assert f"{label}: what each shape needs" in stdout
    assert "package_relation.ix_relation_lookup" in stdout and "needed" in stdout
    assert "<table>" in html and "ix_relation_lookup" in html and "what each shape needs" in html


def test_markdown_for_a_pull_request_comment(seeded, tmp_path):
    summary = tmp_path / "summary.md"
    r = run_cli(
        "indexes", "--namespace", NS, "--only", "postgresql", "--shape", "exact asset path",
        "--write-rows", "0", "--format", "markdown", "--github-summary", str(summary),
    )  # fmt: skip
    assert r.code == 0, r.stderr
    assert r.stdout.startswith(f"### PostgreSQL ({NS}): ")
    assert "| package.uq_package_path | needed |" in r.stdout
    assert summary.read_text() == r.stdout.rstrip("\n") + "\n"


def hiding(target) -> bool:
    """Whether an index of NS is hidden right now: MySQL, one is invisible; PostgreSQL, another
    session holds the lock a DROP INDEX takes on one of NS's tables."""
    if target.dialect == "mysql":
        return bool(
            sql(
                target,
                "SELECT 1 FROM information_schema.statistics WHERE table_schema = "
                f"'{NS}' AND is_visible = 'NO' LIMIT 1",
            )
        )
    return bool(
        sql(
            target,
            "SELECT 1 FROM pg_locks l JOIN pg_class c ON c.oid = l.relation WHERE l.mode = 'AccessExclusiveLock' "
            f"AND l.granted AND c.relnamespace = '{NS}'::regnamespace AND l.pid <> pg_backend_pid() LIMIT 1",
        )
    )


def copying(target) -> bool:
    """Whether MySQL holds the copy of a table a write batch without an index writes to."""
    return bool(
        sql(
            target,
            f"SELECT 1 FROM information_schema.tables WHERE table_schema = '{NS}' AND table_name = 'dbbench_adv_write'",
        )
    )


@pytest.mark.parametrize("dialect", ["postgresql", "mysql"])
def test_a_map_killed_while_an_index_is_hidden_leaves_nothing_after_the_next_command(seeded, dialect):
    """SIGKILL while an index is hidden (MySQL: invisible for real, recorded first; PostgreSQL:
    dropped in a transaction the server rolls back), then any dbbench command: all as before."""
    killed_while(seeded[dialect], hiding, "--write-rows", "0", "--runs", "20")


def test_a_map_killed_while_mysql_copies_a_table_for_its_write_batch_leaves_nothing(seeded):
    killed_while(seeded["mysql"], copying, "--write-rows", "2000")


def killed_while(target, seen_now, *args: str) -> None:
    """``dbbench indexes ARGS`` on ``target`` killed (SIGKILL) as soon as ``seen_now(target)``,
    then any dbbench command: the namespace is as it was."""
    dialect = target.dialect
    before = state(target)
    proc = subprocess.Popen(
        [sys.executable, "-m", "dbbench", "indexes", "--only", dialect, "--namespace", NS, *args],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline, seen = time.monotonic() + 120, False
        while not seen and proc.poll() is None and time.monotonic() < deadline:
            seen = seen_now(target)
        os.kill(proc.pid, signal.SIGKILL)
        assert proc.wait(timeout=30) == -signal.SIGKILL
        assert seen, f"{seen_now.__name__}: never seen"
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate(timeout=30)
    r = run_cli(
        "explain",
        "--only",
        dialect,
        "--namespace",
        NS,
        "--shape",
        "exact asset path",
        "--runs",
        "1",
        "--warmups",
        "0",
    )
    assert r.code in (0, 1), r.output
    assert state(target) == before


def errors(stderr: str) -> list[str]:
    assert "Traceback" not in stderr
    return [line for line in stderr.splitlines() if line.startswith("dbbench: error:")]


def test_bad_input_is_one_line_and_changes_nothing(seeded):
    before = {d: state(t) for d, t in seeded.items()}
    for args, words in (
        (["--shape", "no such shape"], "no such shape"),
        (["--namespace", "i35_map_absent"], "i35_map_absent"),
        (["--namespace", "mysql", "--only", "mysql"], "mysql"),
    ):
        r = run_cli("indexes", "--namespace", NS, *args)
        assert r.code == 2, (args, r.stdout, r.stderr)
        assert len(errors(r.stderr)) == 1, r.stderr
        assert words in r.stderr
    assert {d: state(t) for d, t in seeded.items()} == before


@pytest.fixture(scope="module")
def duplicated(local_servers):
    """A namespace where the relation lookup's index was made twice under other names (an
    upstream mistake, as in MediaWiki's user_newtalk): hiding either, the other one serves."""
    with seeded_without("i35_dup", "ix_relation_lookup") as targets:
        for t in targets.values():
            for name in ("ix_relation_a", "ix_relation_b"):
                sql(
                    t,
                    f"CREATE INDEX {name} ON package_relation (repository_id, relation_kind, token_sha256, package_id)",
                    namespace="i35_dup",
                )
        yield targets


@pytest.mark.parametrize("dialect", ["postgresql", "mysql"])
def test_of_two_twin_indexes_one_may_go_and_the_set_is_verified_by_hiding_it(duplicated, dialect, tmp_path):
    out = tmp_path / "map.json"
    r = run_cli(
        "indexes", "--namespace", "i35_dup", "--only", dialect, "--shape", "relation lookup",
        "--write-rows", "0", "--output", str(out),
    )  # fmt: skip
    assert r.code == 0, r.stderr
    (t,) = json.loads(out.read_text())["targets"]
    found = {i["index"]: i for i in t["indexes"] if i["table"] == "package_relation"}
    a, b = found["ix_relation_a"], found["ix_relation_b"]
    # the one the plan reads is redundant (its twin takes over, the same rows examined); the
    # other is unused or redundant too: each alone is a candidate
    (read,) = [i for i in (a, b) if i["taken_over"]]
    twin = b if read is a else a
    assert read["verdict"] == "redundant" and twin["verdict"] in ("unused", "redundant"), (a, b)
    (over,) = read["taken_over"]
    assert over["rows_examined"]["before"] == over["rows_examined"]["after"]
    assert any(twin["index"] in how for how in over["instead"])
    # but only one of them may go: the set keeps the other, and hiding the set proves it
    ds = t["drop_set"]
    names = {("package_relation", "ix_relation_a"), ("package_relation", "ix_relation_b")}
    assert len({(i["table"], i["index"]) for i in ds["indexes"]} & names) == 1 and ds["verified"], ds
    (stays,) = [k for k in ds["kept"] if (k["table"], k["index"]) in names]
    assert "take over for each other" in stays["why"]
    assert f"{stays['table']}.{stays['index']} stays: " in r.stdout


@pytest.mark.parametrize("dialect", ["postgresql", "mysql"])
def test_the_values_probes_read_are_handed_to_the_connection_that_hides_an_index(seeded, dialect):
    """An index hidden changes no value: the hottest and rarest values the first connection read
    are taken by the next (probes.assume_values), not read again there."""
    from dbbench import dialects
    from dbbench.measure import probes

    col = probes.Column("package", "version", "eq")
    d = dialects.get(dialect)
    with (
        connection(seeded[dialect], namespace=NS) as first,
        connection(seeded[dialect], namespace=NS) as second,
    ):
        read = probes.extremes(first, d, col)
        assert read is not None and read[2] == 4096
        assumed = {("package", "version"): (("assumed", 1), ("assumed", 1), 1)}
        probes.assume_values(second, {**probes.values_read(first), **assumed})
        assert probes.extremes(second, d, col) == (("assumed", 1), ("assumed", 1), 1)  # not read again
        assert probes.values_read(second)[("package", "version")] != read
