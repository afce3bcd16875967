"""The local servers, for real: versions, reuse, an isolated start/stop cycle, refusals."""

from __future__ import annotations

import json
import os
import shutil
import socket
from pathlib import Path

import pytest

from dbbench import connect, servers
from dbbench.servers import Home
from dbbench.servers.base import pid_alive
from tests.conftest import free_port, run_cli


def test_status_versions_are_what_the_servers_say(local_servers, local_urls):
    result = run_cli("servers", "status", "--json")
    assert result.code == 0, result.stderr
    rows = {r["server"]: r for r in json.loads(result.stdout)}
    pg = connect(local_urls["postgresql"])
    my = connect(local_urls["mysql"])
    try:
        assert rows["PostgreSQL"]["state"] == "running"
        assert rows["PostgreSQL"]["version"] == "12.22" == pg.version_text
        assert rows["MySQL"]["state"] == "running"
        assert rows["MySQL"]["version"].startswith(my.version_text)
        assert my.version[:2] in ((8, 0), (9, 7))
    finally:
        pg.dispose()
        my.dispose()


def test_status_and_info_never_show_the_password(local_servers):
    password = Home().load().password
    for args in (("servers", "status"), ("servers", "status", "--json"), ("info",)):
        result = run_cli(*args)
        assert result.code == 0, result.stderr
        assert password not in result.output
        assert "dbbench:***@127.0.0.1" in result.output


def test_second_up_reuses_the_running_servers(local_servers):
    before = {r.server: r.pid for r in servers.status()}
    result = run_cli("servers", "up", "--json")
    assert result.code == 0, result.stderr
    after = {r["server"]: r["pid"] for r in json.loads(result.stdout)}
    assert after == before


def _children(pid: int) -> list[int]:
    kids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                kids.append(int(entry.name))
    return kids


@pytest.fixture
def scratch_instance(local_servers):
    """A second instance in the same home (installs are shared), removed afterwards."""
    name = f"pytest-{os.getpid()}"
    home = Home(instance=name)
    yield home
    servers.down(home=home)
    shutil.rmtree(home.instance_dir, ignore_errors=True)
    shutil.rmtree(servers.KINDS["mysql"](home).outer_dir, ignore_errors=True)


def test_up_then_down_leaves_no_process(scratch_instance):
    pg_port, my_port = free_port(), free_port()
    env = {"DBBENCH_INSTANCE": scratch_instance.instance}
    up = run_cli("servers", "up", "--json", "--pg-port", str(pg_port), "--mysql-port", str(my_port), env=env)
    assert up.code == 0, up.stderr
    rows = {r["server"]: r for r in json.loads(up.stdout)}
    assert {r["port"] for r in rows.values()} == {pg_port, my_port}
    pids = [r["pid"] for r in rows.values()]
    postmaster_children = _children(rows["PostgreSQL"]["pid"])
    assert postmaster_children, "a running postmaster has background workers"
    assert all(pid_alive(p) for p in pids + postmaster_children)

    down = run_cli("servers", "down", env=env)
    assert down.code == 0, down.stderr
    assert "postgresql" in down.stdout and "mysql" in down.stdout
    assert not any(pid_alive(p) for p in pids + postmaster_children)
    status = json.loads(run_cli("servers", "status", "--json", env=env).stdout)
    assert [r["state"] for r in status] == ["stopped", "stopped"]
    assert all(r["pid"] is None for r in status)
    for port in (pg_port, my_port):  # nothing listens any more
        with socket.socket() as s:
            assert s.connect_ex(("127.0.0.1", port)) != 0


def test_port_in_use_is_refused_in_one_line(scratch_instance):
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = run_cli(
            "servers",
            "up",
            "postgresql",
            "--pg-port",
            str(port),
            env={"DBBENCH_INSTANCE": scratch_instance.instance},
        )
    assert result.code == 2
    assert result.stderr.strip().count("\n") == 0
    assert f"port {port} on 127.0.0.1 is in use" in result.stderr
    assert "Traceback" not in result.output
