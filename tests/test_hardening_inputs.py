"""Hostile and malformed inputs are one-line errors with bounded work (issue 13, items 5 and 7):
result files, scenario files, deep plans, the dbbench home, unexpected errors and output paths."""

from __future__ import annotations

import json
import os
import shutil
import stat
import tempfile
import time
from pathlib import Path

import pytest

from dbbench.dialects import mysql, postgresql
from dbbench.dialects.plan import MAX_DEPTH, PlanNode
from dbbench.document import store
from dbbench.errors import DbbenchError, PrerequisiteError
from dbbench.servers.base import Home, InstanceState
from httpbench.config import scenarios
from httpbench.errors import HttpbenchError
from tests.conftest import run_cli
from tests.db import connection
from tests.httpbench.http_fixtures import run_httpbench

DOWN_TARGETS = ("--target", "a=http://127.0.0.1:9", "--target", "b=http://127.0.0.1:9")  # nobody on port 9


# -- plans from the servers' EXPLAIN output --------------------------------------------------------
def deep_pg_plan(depth: int) -> list:
    leaf: dict = {"Node Type": "Result", "Plan Rows": 1, "Actual Rows": 1, "Actual Loops": 1}
    node = leaf
    for _ in range(depth - 1):
        node = {"Node Type": "Result", "Parent Relationship": "InitPlan", "Plans": [node]}
    return [{"Plan": node, "Execution Time": 0.1}]


def deep_mysql_tree(depth: int) -> str:
    return (
        "\n".join(
            "    " * i + "-> Filter: (x = 1)  (cost=1 rows=1) (actual time=0.1..0.1 rows=1 loops=1)"
            for i in range(depth)
        )
        + "\n"
    )


@pytest.mark.servers
def test_plans_nested_3000_deep_are_a_one_line_error():
    for parse, doc in (
        (postgresql.parse_plan, deep_pg_plan(3000)),
        (mysql.parse_plan, deep_mysql_tree(3000)),
    ):
        with pytest.raises(DbbenchError) as info:
            parse(doc)
        assert "nested more than" in str(info.value) and str(MAX_DEPTH) in str(info.value)


def test_plans_at_the_depth_bound_parse():
    tree, _ = postgresql.parse_plan(deep_pg_plan(MAX_DEPTH))
    nodes = list(tree.walk())
    assert len(nodes) == MAX_DEPTH and all(n.in_subquery for n in nodes[1:])
    json.dumps(tree.to_dict())
    tree, _ = mysql.parse_plan(deep_mysql_tree(MAX_DEPTH))
    assert len(list(tree.walk())) == MAX_DEPTH and tree.kind == "filter"


def test_mysql_json_accesses_walk_a_5000_deep_document_without_recursion():
    doc: dict = {"table_name": "t", "access_type": "const", "key": "PRIMARY"}
    for _ in range(5000):
        doc = {"nested_loop": [doc]}
    assert mysql.json_accesses(doc, {}) == [("t", "PRIMARY", "const")]


@pytest.fixture()
def pg_conn(local_servers):
    with connection("postgresql") as conn:
        yield conn


def test_a_deeply_nested_query_on_the_real_postgresql_is_a_one_line_error(pg_conn):
    sql = "SELECT 1"
    for i in range(500):
        sql = f"SELECT ({sql}) AS c{i}"
    with pytest.raises(DbbenchError) as info:
        postgresql.run_explain(pg_conn, sql, {}, 10_000)
    assert "nested more than" in str(info.value)
    # the connection is still usable and a normal plan still parses
    _raw, tree, ms = postgresql.run_explain(pg_conn, "SELECT (SELECT (SELECT 1))", {}, 10_000)
    assert tree.kind == "result" and ms >= 0


def result_doc(samples="[1.0, 2.0]", p50="1.0", plan="null") -> str:
    return (
        '{"schema": "dbbench.explain/1", "results": [{"shape": "s", "dialect": "postgresql", "ok": true, '
        f'"remediated": {{"samples_ms": {samples}, "p50_ms": {p50}, "p95_ms": 2.0, "plan": {plan}}}}}]}}'
    )


def deep_plan_json(depth: int) -> str:
    node = '{"kind": "full_scan", "label": "x", "children": ['
    return node * depth + "]}" * depth


# -- store.load ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "needle"),
    [
        (result_doc(samples="[" + "1" * 5000 + "]"), "too many digits"),
        (result_doc(samples="[" + "1" * 400 + ".5]"), "too many digits"),
        (result_doc(samples="[1e309]"), "not a finite number"),
        (result_doc(samples="[-1e400, 2.0]"), "not a finite number"),
        (result_doc(p50="1e309"), "not a finite number"),
        (result_doc(samples="[true, false]"), "results[0].remediated.samples_ms"),
        (result_doc(p50="true"), "results[0].remediated.p50_ms"),
        (
            '{"schema": "dbbench.explain/1", "x": ' + "[" * 100_000 + "]" * 100_000 + ', "results": []}',
            "nested more than",
        ),
        (
            '{"schema": "dbbench.explain/1", "x": '
            + '{"a": ' * 5_000
            + "1"
            + "}" * 5_000
            + ', "results": []}',
            "nested more than",
        ),
        (result_doc(plan=deep_plan_json(3000)), "nested more than"),
        (result_doc(plan=deep_plan_json(MAX_DEPTH + 1)), "results[0].remediated.plan"),
    ],
)
def test_hostile_result_files_are_one_line_errors(tmp_path, text, needle):
    path = tmp_path / "r.json"
    path.write_text(text)
    with pytest.raises(store.ResultFileError) as info:
        store.load(path)
    message = str(info.value)
    assert message.startswith(f"{path}: ") and needle in message, message
    assert "\n" not in message and len(message) < 400


def test_a_plan_at_the_depth_bound_still_loads_and_renders(tmp_path):
    path = tmp_path / "r.json"
    path.write_text(result_doc(plan=deep_plan_json(MAX_DEPTH)))
    doc = store.load(path)
    tree = PlanNode.from_dict(doc["results"][0]["remediated"]["plan"])
    assert sum(1 for _ in tree.walk()) == MAX_DEPTH
    assert len(tree.render().splitlines()) == MAX_DEPTH
    assert tree.to_dict()["children"][0]["children"][0]["kind"] == "full_scan"
    # brackets and escapes inside strings are not nesting
    path.write_text(result_doc(plan='{"kind": "k", "label": "[[[[{{{{\\"[[[", "children": []}'))
    assert store.load(path)["results"][0]["remediated"]["plan"]["label"] == '[[[[{{{{"[[['


@pytest.mark.servers
def test_dbbench_report_and_diff_on_a_hostile_file_print_one_line(tmp_path):
    path = tmp_path / "r.json"
    path.write_text(result_doc(plan=deep_plan_json(3000)))
    for args in (["report", str(path)], ["diff", str(path), str(path)]):
        run = run_cli(*args)
        assert run.code == 2, run.output
        lines = run.stderr.strip().splitlines()
        assert len(lines) == 1 and "nested more than" in lines[0], run.stderr


# -- scenario files ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("scenario = [1]\n", "scenario 1"),
        ("scenario = [[1, 2]]\n", "scenario 1"),
        ("gates = 1\n", "gates"),
        ("gates = [1]\n", "gates"),
        ("[gates]\npayload = 1\n", "gates.payload"),
        ("[[scenario]]\npath = '/x'\nheader = 1\n", "header"),
        ("[[scenario]]\npath = '/x'\nheader = [1]\n", "header"),
        ("[[scenario]]\npath = '/x'\nheaders = {a = {b = 1}}\n", "headers"),
        ("[[scenario]]\npath = '/x'\nname = [1]\n", "name"),
        ("[[scenario]]\npath = ['/x']\n", "path"),
        ("[[scenario]]\npath = '/x'\nstatus = 1e400\n", "status"),
        ("[[scenario]]\npath = '/x'\nstatus = true\n", "status"),
        ("[gates.payload]\nmin_throughput_ratio = inf\n", "gates.payload"),
        ("[gates.payload]\nmax_p95_ratio = true\n", "gates.payload"),
    ],
)
def test_malformed_scenario_files_are_one_line_errors_naming_file_and_key(tmp_path, text, needle):
    path = tmp_path / "s.toml"
    path.write_text(text)
    with pytest.raises(HttpbenchError) as info:
        scenarios.load_file(str(path))
    message = str(info.value)
    assert str(path) in message and needle in message, message
    assert "\n" not in message


@pytest.mark.servers
def test_httpbench_compare_with_a_malformed_scenario_file_is_one_line(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text("scenario = [1]\n")
    run = run_httpbench("compare", *DOWN_TARGETS, "--scenarios", str(path))
    assert run.code == 2, run.output
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and str(path) in lines[0] and "Traceback" not in run.output, run.stderr


# -- the dbbench home ---------------------------------------------------------------------------------
@pytest.fixture()
def open_dir():
    """A directory every user can enter (pytest's own tmp_path is 0700), removed afterwards."""
    d = Path(tempfile.mkdtemp(prefix="dbbench-home-", dir="/tmp"))
    d.chmod(0o755)
    yield d
    shutil.rmtree(d, ignore_errors=True)


NOBODY = 65534


def test_prepare_keeps_the_mode_of_an_existing_shared_directory(open_dir):
    shared = open_dir / "tmp"
    shared.mkdir()
    shared.chmod(0o1777)  # what /tmp is: --home /tmp must not break it
    home = Home(shared, "x")
    home.prepare(0)
    assert stat.S_IMODE(shared.stat().st_mode) == 0o1777
    for created in (shared / "instances", home.instance_dir, home.downloads):
        assert created.is_dir()
        if os.geteuid() == 0:  # created here: traversable by the service user
            assert stat.S_IMODE(created.stat().st_mode) == 0o755


@pytest.mark.skipif(os.geteuid() != 0, reason="chown needs root")
def test_prepare_refuses_a_home_directory_owned_by_another_user(open_dir):
    shared = open_dir / "tmp"
    shared.mkdir()
    shared.chmod(0o1777)
    planted = shared / "instances"
    planted.mkdir()
    os.chown(planted, NOBODY, NOBODY)  # another user got there first
    with pytest.raises(PrerequisiteError) as info:
        Home(shared, "x").prepare(0)
    assert str(planted) in str(info.value) and "another user" in str(info.value)


def planted_state(home: Home) -> Path:
    home.instance_dir.mkdir(parents=True)
    decoy = home.root / "decoy.json"
    decoy.write_text(json.dumps({"password": "chosen-by-someone-else", "servers": {}}))
    return decoy


def test_state_file_behind_a_symlink_is_refused(open_dir):
    home = Home(open_dir, "x")
    decoy = planted_state(home)
    home.state_file.symlink_to(decoy)
    with pytest.raises(PrerequisiteError) as info:
        home.load()
    assert "symbolic link" in str(info.value) and str(home.state_file) in str(info.value)


@pytest.mark.skipif(os.geteuid() != 0, reason="chown needs root")
def test_state_file_owned_by_another_user_is_refused(open_dir):
    home = Home(open_dir, "x")
    decoy = planted_state(home)
    decoy.rename(home.state_file)
    os.chown(home.state_file, NOBODY, NOBODY)
    with pytest.raises(PrerequisiteError) as info:
        home.load()
    assert "another user" in str(info.value)


def test_saving_state_never_writes_through_a_planted_link(open_dir):
    home = Home(open_dir, "x")
    victim = open_dir / "victim"
    victim.write_text("precious\n")
    home.instance_dir.mkdir(parents=True)
    home.state_file.with_suffix(".tmp").symlink_to(victim)
    home.state_file.symlink_to(victim)
    home.save(InstanceState(password="pw"))
    assert victim.read_text() == "precious\n"
    assert not home.state_file.is_symlink() and home.load().password == "pw"
    assert stat.S_IMODE(home.state_file.stat().st_mode) == 0o600


def test_the_initdb_password_file_is_never_written_through_a_planted_link(open_dir):
    from dbbench.servers.postgres import PostgresServer

    home = Home(open_dir, "x")
    home.instance_dir.mkdir(parents=True)
    victim = open_dir / "victim"
    victim.write_text("precious\n")
    (home.instance_dir / ".pg-password").symlink_to(victim)
    server = PostgresServer(home)
    server.install_dir = open_dir / "no-postgresql-here"  # initdb is missing: fails after the write
    with pytest.raises(PrerequisiteError):
        server._initdb("s3cret-password", None, lambda _: None)
    assert victim.read_text() == "precious\n"
    assert not (home.instance_dir / ".pg-password").exists()


# -- unexpected errors are not dressed up as bad input ------------------------------------------------
def run_httpbench_main(monkeypatch, capsys, failure: BaseException, tmp_path) -> tuple[int, str]:
    from httpbench import cli

    def broken(path):
        raise failure

    monkeypatch.setattr(scenarios, "load_file", broken)
    with pytest.raises(SystemExit) as info:
        cli.main(["compare", *DOWN_TARGETS, "--scenarios", str(tmp_path / "s.toml")])
    return int(info.value.code), capsys.readouterr().err


def test_a_bug_in_httpbench_shows_its_traceback(monkeypatch, capsys, tmp_path):
    code, stderr = run_httpbench_main(monkeypatch, capsys, ZeroDivisionError("division by zero"), tmp_path)
    assert code == 2
    assert "Traceback (most recent call last)" in stderr and "ZeroDivisionError" in stderr, stderr
    assert stderr.strip().splitlines()[-1].startswith("httpbench: error: internal error"), stderr


def test_an_os_error_from_the_environment_stays_one_line(monkeypatch, capsys, tmp_path):
    code, stderr = run_httpbench_main(
        monkeypatch, capsys, PermissionError(13, "Permission denied", "/x/s.toml"), tmp_path
    )
    assert code == 2
    assert stderr.strip().splitlines() == ["httpbench: error: /x/s.toml: Permission denied"], stderr


# -- output paths are checked before any work ---------------------------------------------------------
def one_line(run, prefix: str, *needles: str) -> str:
    lines = run.stderr.strip().splitlines()
    assert run.code == 2 and len(lines) == 1 and "Traceback" not in run.output, run.output
    assert lines[0].startswith(prefix) and all(n in lines[0] for n in needles), lines[0]
    return lines[0]


def test_dbbench_explain_checks_every_output_path_before_running_the_catalog(tmp_path, local_urls):
    bad = tmp_path / "no-such-dir" / "x"
    for option in ("--output", "--junit", "--github-summary"):
        started = time.monotonic()
        run = run_cli("explain", "--only", "postgresql", option, str(bad))
        one_line(run, "dbbench: error: ", option, str(bad), "does not exist")
        assert run.stdout == "" and time.monotonic() - started < 15, run.stdout  # nothing was measured
    run = run_cli(
        "explain", "--only", "postgresql", "--output", "/proc/self/x.json"
    )  # a real refusal, as root
    one_line(run, "dbbench: error: ", "--output /proc/self/x.json: cannot be written")
    assert run.stdout == ""


@pytest.mark.servers
def test_dbbench_diff_report_and_baseline_check_output_paths_first(tmp_path):
    bad = tmp_path / "no-such-dir" / "x"
    missing_result = tmp_path / "absent.json"  # would be the first error if outputs were checked late
    for option in ("--markdown", "--output", "--save-result", "--junit", "--github-summary"):
        run = run_cli("diff", str(missing_result), option, str(bad))
        one_line(run, "dbbench: error: ", option, str(bad))
    for option in ("--html", "--output"):
        run = run_cli("report", str(missing_result), option, str(bad))
        one_line(run, "dbbench: error: ", option, str(bad))
    run = run_cli("baseline", "save", str(bad), "--from", str(missing_result))
    one_line(run, "dbbench: error: ", str(bad))
    assert not bad.parent.exists()


def test_a_writable_output_path_is_left_as_it_was(tmp_path):
    from verdict.outputs import unwritable

    existing = tmp_path / "kept.json"
    existing.write_text("old\n")
    assert unwritable(existing) is None and existing.read_text() == "old\n"
    assert unwritable(tmp_path / "new.json") is None and not (tmp_path / "new.json").exists()
    assert unwritable(tmp_path) == "is a directory"
    assert unwritable("/dev/null") is None


@pytest.mark.servers
def test_httpbench_compare_checks_output_paths_before_any_round(tmp_path):
    bad = tmp_path / "no-such-dir" / "x"
    for option in ("--output", "--junit", "--github-summary"):
        # the targets are down: checked late, the error would be about them instead
        run = run_httpbench("compare", *DOWN_TARGETS, "--scenario", "/f", option, str(bad))
        one_line(run, "httpbench: error: ", option, str(bad.parent))
    run = run_httpbench("compare", *DOWN_TARGETS, "--scenario", "/f", "--junit", "/proc/self/x.xml")
    one_line(run, "httpbench: error: ", "--junit /proc/self/x.xml: cannot be written")
