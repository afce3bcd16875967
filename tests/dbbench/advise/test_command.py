"""``dbbench advise`` on both real servers: a namespace where the team's DAO change dropped
ix_relation_lookup gets the lookup's own index back, verified, costed and written as migrations;
the namespace is exactly as it was afterwards; bad input is one line, exit 2, nothing changed."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from dbbench.dataset import definition, loadfiles, seed
from tests.conftest import run_cli
from tests.db import connection, execute, seeded_without, sql

pytestmark = pytest.mark.servers

NS = "i34_cmd"
LOOKUP = ["repository_id", "relation_kind", "token_sha256", "token", "package_id"]


@pytest.fixture(scope="module")
def lost_index(local_servers):
    with seeded_without(NS, "ix_relation_lookup") as targets:  # the DAO change: the lookup's index dropped
        yield targets


def snapshot(target, ns: str = NS) -> dict:
    """The index definitions, each table's fingerprint and dbbench_meta of namespace ``ns``."""
    tables, _, _ = loadfiles.prepare(definition.load("alpine-ci"), [target.dialect], seed.default_cache())
    key = "key" if target.dialect == "postgresql" else "`key`"
    with connection(target, namespace=ns) as conn:
        if target.dialect == "postgresql":
            query = f"SELECT tablename, indexname, indexdef FROM pg_indexes WHERE schemaname = '{ns}' ORDER BY 1, 2"
        else:
            query = (
                "SELECT table_name, index_name, seq_in_index, column_name, expression, sub_part, collation "
                f"FROM information_schema.statistics WHERE table_schema = '{ns}' ORDER BY 1, 2, 3"
            )
        found = {
            "indexes": execute(conn, query),
            "meta": execute(conn, f"SELECT {key}, value FROM dbbench_meta ORDER BY 1"),
            "fingerprints": {t.name: seed.fingerprint_table(conn, target.dialect, t) for t in tables},
        }
        conn.rollback()
    return found


def errors(stderr: str) -> list[str]:
    """The errors a command said on stderr (not its warnings or progress); never a traceback."""
    assert "Traceback" not in stderr
    return [line for line in stderr.splitlines() if line.startswith("dbbench: error:")]


def test_advise_finds_the_lost_index_on_both_servers_and_leaves_nothing_behind(lost_index, tmp_path):
    before = {d: snapshot(t) for d, t in lost_index.items()}
    out, html, migrations = tmp_path / "advice.json", tmp_path / "advice.html", tmp_path / "migrations"
    r = run_cli(
        "advise",
        "--namespace",
        NS,
        "--shape",
        "relation lookup",
        "--most",
        "2",
        "--write-rows",
        "200",
        "--runs",
        "1",
        "--output",
        str(out),
        "--html",
        str(html),
        "--write",
        str(migrations),
    )
    assert r.code == 0, r.stderr
    assert {d: snapshot(t) for d, t in lost_index.items()} == before  # nothing left behind
    doc = json.loads(out.read_text())
    assert doc["schema"] == "dbbench.advise/1"
    for dialect in ("postgresql", "mysql"):
        (advice,) = [a for a in doc["shapes"] if a["dialect"] == dialect and a["spelling"] == "remediated"]
        best = advice["candidates"][0]
        assert best["verdict"] == "verified", best["reason"]
        assert best["candidate"].startswith("package_relation (" + ", ".join(LOOKUP))
        assert best["rows_examined"]["after"] < best["rows_examined"]["before"]
        assert best["size_bytes"] > 0 and best["build_ms"] > 0
        assert best["write"]["without"]["rows"] == 200 and best["write"]["ratio"] > 0
        text = (migrations / f"dbbench-advise-{dialect}.sql").read_text()
        assert best["migration_ddl"] + ";" in text and "serves: relation lookup" in text
        assert "dbbench_adv_" not in text  # every command undoes an index of the trial prefix
    assert "PostgreSQL relation lookup" in r.stdout and "MySQL relation lookup" in r.stdout
    assert "verified" in r.stdout
    assert "relation lookup" in html.read_text()
    # the migrations are never replaced
    again = run_cli(
        "advise", "--namespace", NS, "--shape", "relation lookup", "--no-set", "--write", str(migrations)
    )
    assert again.code == 2 and len(errors(again.stderr)) == 1, again.stderr
    assert "already holds" in again.stderr


def test_bad_input_is_one_line_and_changes_nothing(lost_index):
    before = {d: snapshot(t) for d, t in lost_index.items()}
    for args, words in (
        (["--shape", "no such shape"], "no such shape"),
        (["--namespace", "i34_cmd_absent"], "i34_cmd_absent"),
        (["--namespace", "mysql", "--only", "mysql"], "mysql"),
    ):
        r = run_cli("advise", "--namespace", NS, *args)
        assert r.code == 2, (args, r.stdout, r.stderr)
        assert len(errors(r.stderr)) == 1, r.stderr
        assert words in r.stderr and "Traceback" not in r.stderr
    assert {d: snapshot(t) for d, t in lost_index.items()} == before


def test_a_failing_shape_of_explain_points_at_advise_and_the_command_runs(lost_index):
    r = run_cli("explain", "--namespace", NS, "--shape", "relation lookup", "--runs", "1", "--warmups", "0")
    assert r.code == 1, r.output
    said = [line.strip() for line in r.stderr.splitlines() if line.strip().startswith("advice: ")]
    assert said == [
        f"advice: dbbench advise --only postgresql --shape 'relation lookup' --namespace {NS}",
        f"advice: dbbench advise --only mysql --shape 'relation lookup' --namespace {NS}",
    ]
    words = shlex.split(said[1].removeprefix("advice: "))[1:]
    advised = run_cli(*words, "--most", "1", "--write-rows", "0", "--runs", "1", "--no-set")
    assert advised.code == 0, advised.stderr
    assert "MySQL relation lookup" in advised.stdout and "verified" in advised.stdout


def test_a_server_without_the_privilege_to_create_indexes_is_one_line_and_changes_nothing(lost_index):
    """A PostgreSQL login that may read the namespace but does not own its tables (CREATE INDEX
    needs ownership): the first trial is refused by the server, one line, exit 2."""
    pg = lost_index["postgresql"]
    before = snapshot(pg)
    role = "i34_cmd_reader"
    sql(
        pg,
        [
            f"DROP ROLE IF EXISTS {role}",
            f"CREATE ROLE {role} LOGIN PASSWORD 'reader-pw'",
            f"GRANT USAGE ON SCHEMA {NS} TO {role}",
            f"GRANT SELECT ON ALL TABLES IN SCHEMA {NS} TO {role}",
        ],
    )
    try:
        url = pg.url.set(username=role, password="reader-pw").render_as_string(hide_password=False)
        r = run_cli(
            "advise",
            "--pg-url",
            url,
            "--only",
            "postgresql",
            "--no-isolation",
            "--namespace",
            NS,
            "--shape",
            "relation lookup",
        )
        assert r.code == 2, r.output
        lines = errors(r.stderr)
        assert len(lines) == 1, r.stderr
        line = lines[0]
        assert "must be owner" in line and "reader-pw" not in r.output
    finally:
        sql(pg, [f"DROP OWNED BY {role}", f"DROP ROLE IF EXISTS {role}"])
    assert snapshot(pg) == before


def test_growth_builds_the_verified_index_at_a_second_size_of_the_ladder(lost_index, tmp_path):
    """--growth 10k: the lookup's index built again in dbbench grow's 10k namespace (loaded or
    reused), its work there beside the work here, classed as grow classes it; the lookup claims
    logarithmic growth and its index keeps it bounded."""
    out = tmp_path / "advice.json"
    r = run_cli(
        "advise", "--namespace", NS, "--shape", "relation lookup", "--growth", "10k", "--most", "1",
        "--no-set", "--no-side-effects", "--write-rows", "0", "--runs", "1", "--output", str(out),
    )  # fmt: skip
    assert r.code == 0, r.stderr
    doc = json.loads(out.read_text())
    for a in doc["shapes"]:
        best = a["candidates"][0]
        assert best["verdict"] == "verified", best["reason"]
        g = best["growth"]
        assert g["declared"] == "logarithmic" and g["verdict"] == "bounded", g
        small, large = (int(n) for n in g["rows_examined"])
        assert large > small > 0  # the 10k namespace holds more rows than alpine-ci
    assert "growth of #1: work grows bounded" in r.stdout
    bad = run_cli("advise", "--namespace", NS, "--growth", "10k,100k")
    assert bad.code == 2 and len(errors(bad.stderr)) == 1 and "--growth: '10k,100k': one size" in bad.stderr


@pytest.mark.parametrize("after_s", [0.5, 1.5])
def test_a_killed_advise_leaves_nothing_after_the_next_command(lost_index, after_s):
    """``dbbench advise`` killed with SIGKILL while it builds and measures (``after_s`` seconds
    after its first trial began), then any dbbench command: the namespace is as it was."""
    before = {d: snapshot(t) for d, t in lost_index.items()}
    proc = subprocess.Popen(
        [sys.executable, "-m", "dbbench", "advise", "--namespace", NS, "--most", "3", "--write-rows", "2000"],
        cwd=Path(__file__).resolve().parents[3],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stderr is not None
        deadline = time.monotonic() + 120
        for line in proc.stderr:  # wait for the first trial
            if ": trying " in line or time.monotonic() > deadline:
                break
        time.sleep(after_s)
        os.kill(proc.pid, signal.SIGKILL)
        assert proc.wait(timeout=30) == -signal.SIGKILL
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate(timeout=30)
    r = run_cli("explain", "--namespace", NS, "--shape", "exact asset path", "--runs", "1", "--warmups", "0")
    assert r.code in (0, 1), r.output
    assert {d: snapshot(t) for d, t in lost_index.items()} == before
