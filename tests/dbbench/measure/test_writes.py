"""Writes are queries too (issue 36): the built-in write paths, what they lock, what they cascade
into, and proof that nothing changed, on the real servers.

Every sample of a write runs in a transaction that is rolled back; the result keeps its lock
footprint (``remediated.locks``) and the fingerprints of every table it could change, before the
first and after the last run (``unchanged``).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from dbbench import dialects
from dbbench.measure import writes
from dbbench.setup.loader import table_fingerprint
from tests.conftest import run_cli, shape_toml
from tests.db import connection, execute, indexes, seeded_without, sql

NS = f"dbbench_t_writes_{os.getpid()}"
ROOT = Path(__file__).resolve().parents[3]
WRITES = ("orphan group stage deletion", "snapshot cleanup deletion", "relation token rewrite")
TABLES = ("package", "package_relation", "snapshot", "suite_state", "group_snapshot_stage", "group_binding")


@pytest.fixture(scope="module")
def seeded(local_servers):
    """The CI-size dataset in a namespace of this module's own, dropped after."""
    with seeded_without(NS) as targets:
        yield targets


def _fingerprints(targets, ns: str) -> dict[str, dict[str, str]]:
    out = {}
    for dialect, t in targets.items():
        with connection(t, namespace=ns) as conn:
            out[dialect] = {name: table_fingerprint(conn, dialect, ns, name) for name in TABLES}
    return out


def _explain(ns: str, tmp_path: Path, *args: str):
    out = tmp_path / "explain.json"
    run = run_cli("explain", "--namespace", ns, "--warmups", "1", "--runs", "3", "--output", str(out), *args)
    results = json.loads(out.read_text())["results"] if out.exists() else []
    return run, {(r["shape"], r["dialect"]): r for r in results}


def _orphan_bindings(target, ns: str) -> int:
    (count,) = sql(
        target,
        "SELECT COUNT(*) FROM group_binding b JOIN group_snapshot_stage g ON g.group_repository_id = "
        "b.group_repository_id AND g.distribution_name = b.distribution_name AND g.snapshot_revision = "
        "b.snapshot_revision AND g.binding_token = b.binding_token WHERE g.created_at < '2026-08-01'",
        namespace=ns,
    )[0]
    return int(count)


def test_the_built_in_write_paths_pass_on_both_servers_with_their_lock_footprint(seeded, tmp_path):
    before = _fingerprints(seeded, NS)
    only = [a for shape in WRITES for a in ("--shape", shape)]
    run, results = _explain(NS, tmp_path, *only)
    assert run.code == 0, run.output
    assert len(results) == 6 and all(r["ok"] for r in results.values()), run.output
    for dialect, target in seeded.items():
        bindings = _orphan_bindings(target, NS)
        assert bindings > 0
        orphan = results[("orphan group stage deletion", dialect)]
        locks = orphan["remediated"]["locks"]
        by_table = {t["table"]: t for t in locks["tables"]}
        # the stage by its key, and its bindings through the FK cascade: exactly those rows
        assert by_table["group_snapshot_stage"]["rows"] == 1
        assert by_table["group_binding"]["rows"] == bindings
        assert locks["affected"] == 1 and orphan["remediated"]["rows"] == 1
        (cascade,) = locks["cascades"]
        assert (cascade["child"], cascade["constraint"], cascade["index"]) == (
            "group_binding",
            "fk_binding_stage",
            "ix_binding_page",
        )
        if dialect == "postgresql":  # the RI trigger's own time, and the rows it deleted
            assert cascade["ms"] > 0 and cascade["calls"] == 1 and cascade["child_full_scans"] == 0
            assert by_table["group_binding"]["changed"] == {"deleted": bindings}
        else:  # InnoDB's record locks through the child's FK index
            assert "ix_binding_page" in by_table["group_binding"]["indexes"]
        assert orphan["unchanged"] == {
            "tables": ["group_binding", "group_snapshot_stage"],
            "equal": True,
            "changed": [],
        }
        cleanup = results[("snapshot cleanup deletion", dialect)]
        assert cleanup["remediated"]["rows"] == 32 and cleanup["remediated"]["locks"]["affected"] == 32
        rewrite = results[("relation token rewrite", dialect)]["remediated"]
        assert rewrite["locks"]["rows"] == rewrite["rows"] == 100
    assert "orphan group stage deletion" in run.stdout
    assert _fingerprints(seeded, NS) == before


def test_a_dao_change_that_drops_the_update_index_fails_on_both_servers_naming_the_locked_rows(
    local_servers, tmp_path
):
    ns = f"{NS}_noidx"
    with seeded_without(ns, "ix_relation_lookup") as targets:
        before, schema = _fingerprints(targets, ns), {d: indexes(t, ns) for d, t in targets.items()}
        run, results = _explain(ns, tmp_path, "--shape", "relation token rewrite")
        # which index fixes it: built, measured and dropped again inside the namespace
        advice = run_cli("advise", "--namespace", ns, "--shape", "relation token rewrite")
        after = _fingerprints(targets, ns)
        assert {d: indexes(t, ns) for d, t in targets.items()} == schema
    assert advice.code == 0, advice.output
    assert (
        advice.stdout.count("advice: build package_relation (repository_id, relation_kind, token_sha256)")
        == 2
    )
    assert run.code == 1, run.output
    mysql = results[("relation token rewrite", "mysql")]
    problems = " | ".join(mysql["verdict"]["problems"])
    # InnoDB locks every row its full scan reads, not only the 100 it changes
    (relations,) = {
        t["rows"] for t in mysql["remediated"]["locks"]["tables"] if t["table"] == "package_relation"
    }
    assert relations > 1000
    assert (
        f"UPDATE locks {relations:,} rows, more than max_locked_rows 256 (package_relation: {relations:,}"
        in (problems)
    )
    pg = results[("relation token rewrite", "postgresql")]
    problems = " | ".join(pg["verdict"]["problems"])
    # PostgreSQL locks only the rows it changes: the plan fails, and names them
    assert "expected index ix_relation_lookup on package_relation is not used" in problems
    assert "UPDATE package_relation locked 100 rows (package_relation 100)" in problems
    assert "locks" in run.output and before == after


PACKAGE_DELETE = shape_toml(
    "package removal",
    "one package and its relations",
    params="repository_id = 1",
    sql="""DELETE FROM package WHERE repository_id = :repository_id AND id = :package_id""",
    postgresql='expect = { table = "package", index = "uq_package_repository_id" }\nforbid = ["sort"]',
    mysql='expect = { table = "package", index = "PRIMARY" }\nforbid = ["sort"]',
).replace(
    "\n[query]",
    '\n[[setup]]\nsql = "SELECT package_id FROM package_relation WHERE repository_id = 1 '
    'ORDER BY package_id LIMIT 1"\n\n[query]',
)


def test_deleting_a_parent_whose_child_fk_has_no_index_fails_naming_the_child_table(seeded, tmp_path):
    """package_relation's foreign key (repository_id, package_id) leads no index on PostgreSQL: the
    relation lookup index starts with repository_id, relation_kind. MySQL made one for the key
    (InnoDB keeps an index for every foreign key), so there the cascade has an index to use."""
    (tmp_path / "catalog").mkdir()
    (tmp_path / "catalog" / "package.toml").write_text(PACKAGE_DELETE)
    before = _fingerprints(seeded, NS)
    run, results = _explain(NS, tmp_path, "--catalog", str(tmp_path / "catalog"))
    assert run.code == 1, run.output
    pg = results[("package removal", "postgresql")]
    assert not pg["ok"]
    assert any(
        p.startswith(
            "DELETE on package: child table package_relation has no index on its foreign key "
            "fk_relation_package (repository_id, package_id), so every parent row changed reads "
            "package_relation"
        )
        for p in pg["verdict"]["problems"]
    ), pg["verdict"]["problems"]
    assert "package_relation" in run.output
    mysql = results[("package removal", "mysql")]
    assert mysql["ok"], mysql["verdict"]
    (cascade,) = mysql["remediated"]["locks"]["cascades"]
    assert cascade["child"] == "package_relation" and cascade["index"] == "fk_relation_package"
    assert _fingerprints(seeded, NS) == before


def _writing(dialect: str, ns: str) -> bool:
    """Whether a session of the namespace's role is inside a transaction that changed rows now."""
    if dialect == "postgresql":
        rows = sql(
            "postgresql",
            "SELECT COUNT(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation "
            f"WHERE c.relname = 'group_binding' AND c.relnamespace = '{ns}'::regnamespace "
            "AND l.mode = 'RowExclusiveLock' AND l.pid <> pg_backend_pid()",
        )
    else:
        rows = sql(
            "mysql",
            "SELECT COUNT(*) FROM performance_schema.data_locks WHERE OBJECT_SCHEMA = "
            f"'{ns}' AND OBJECT_NAME = 'group_binding' AND LOCK_TYPE = 'RECORD'",
        )
    return int(rows[0][0]) > 0


@pytest.mark.parametrize("dialect", ["postgresql", "mysql"])
def test_a_kill_9_in_the_middle_of_a_write_run_leaves_nothing_changed(seeded, dialect):
    """The CLI killed while a sample's delete (and its cascade) is inside its transaction: the
    server rolls the transaction back when the connection drops; every table is as it was."""
    before = _fingerprints(seeded, NS)[dialect]
    args = ["explain", "--namespace", NS, "--only", dialect, "--shape", "orphan group stage deletion"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "dbbench", *args, "--warmups", "1000", "--runs", "1"],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 120
        while not _writing(dialect, NS):  # bounded: the run writes within seconds of its start
            assert proc.poll() is None and time.monotonic() < deadline, "the run never wrote"
            time.sleep(0.005)
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(30)
    deadline = time.monotonic() + 60
    while _writing(dialect, NS):  # the server ends the dropped session's transaction
        assert time.monotonic() < deadline, "the killed run's transaction is still open"
        time.sleep(0.05)
    assert _fingerprints(seeded, NS)[dialect] == before
    with connection(dialect, namespace=NS) as conn:  # and no lock is left on the stage rows
        locked = execute(conn, "SELECT snapshot_revision FROM group_snapshot_stage FOR UPDATE NOWAIT")
        assert len(locked) == 2
        conn.rollback()


@pytest.mark.parametrize("dialect", ["postgresql", "mysql"])
def test_the_guard_moves_with_a_committed_change_and_not_with_a_rolled_back_one(seeded, dialect):
    """The guard's per-server fingerprint: a delete rolled back in another session leaves it equal;
    a committed one changes it, naming the table; on PostgreSQL also a committed update that writes
    the same values. The row is put back after, as it was."""
    d = dialects.get(dialect)
    delete, same = "DELETE FROM group_binding WHERE id = %s", "UPDATE group_binding SET id = id WHERE id = %s"
    target = seeded[dialect]
    with connection(target, namespace=NS) as own, connection(target, namespace=NS) as other:

        def guarded(statement: str, row_id: int, end) -> dict:
            with writes.guard(own, d, NS, statement) as record:
                with other.cursor() as cur:
                    cur.execute(statement, (row_id,))
                end()
            return record

        row = execute(own, "SELECT * FROM group_binding ORDER BY id LIMIT 1")[0]
        own.rollback()
        kept = {"tables": ["group_binding"], "equal": True, "changed": []}
        assert guarded(delete, row[0], other.rollback) == kept
        try:
            changed = guarded(delete, row[0], other.commit)
            assert changed["equal"] is False and changed["changed"] == ["group_binding"], changed
            assert "table(s) group_binding hold other rows" in (writes.unchanged_problem(changed) or "")
        finally:
            with other.cursor() as cur:
                cur.execute(f"INSERT INTO group_binding VALUES ({', '.join(['%s'] * len(row))})", row)
            other.commit()
        if dialect == "postgresql":  # a new row version, the same values
            rewritten = guarded(same, row[0], other.commit)
            assert rewritten["changed"] == ["group_binding"], rewritten
            d.settle_writes(own, NS, rewritten["settle"])  # as explain does after an update
    assert _binding(target, row[0]) == [tuple(row)]


def _binding(target, row_id: int) -> list[tuple]:
    return [
        tuple(r) for r in sql(target, f"SELECT * FROM group_binding WHERE id = {int(row_id)}", namespace=NS)
    ]


REFUSED = shape_toml(
    "package version cleared",
    "one package",
    params="repository_id = 1",
    sql="UPDATE package SET version = NULL WHERE repository_id = :repository_id AND id = :package_id",
    postgresql='expect = { table = "package", index = "uq_package_repository_id" }',
    mysql='expect = { table = "package", index = "PRIMARY" }',
).replace(
    "\n[query]",
    '\n[[setup]]\nsql = "SELECT MIN(package_id) AS package_id FROM package_relation WHERE repository_id = 1"\n\n[query]',
)


def test_a_write_the_server_refuses_fails_that_shape_by_name_and_the_run_goes_on(seeded, tmp_path):
    """NOT NULL refuses the UPDATE on both servers: that shape fails, saying what the server said;
    the next shape is measured as always."""
    (tmp_path / "catalog").mkdir()
    (tmp_path / "catalog" / "a.toml").write_text(REFUSED)
    (tmp_path / "catalog" / "b.toml").write_text(PACKAGE_DELETE)
    run, results = _explain(NS, tmp_path, "--catalog", str(tmp_path / "catalog"), "--only", "mysql")
    assert run.code == 1, run.output
    refused = results[("package version cleared", "mysql")]
    assert refused["remediated"]["timeout"].startswith(
        "the server refused it: Column 'version' cannot be null"
    )
    assert refused["verdict"]["actual"] == "refused" and not refused["ok"]
    assert "refused" in run.stdout and "Traceback" not in run.output
    assert results[("package removal", "mysql")]["ok"]
    run, results = _explain(NS, tmp_path, "--catalog", str(tmp_path / "catalog"), "--only", "postgresql")
    refused = results[("package version cleared", "postgresql")]
    assert 'null value in column "version"' in refused["remediated"]["timeout"], refused
    assert ("package removal", "postgresql") in results  # measured after the refusal
