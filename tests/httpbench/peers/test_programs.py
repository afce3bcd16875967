"""``httpbench peers``: the programs the HTTP tests and demos need are found or installed, never
skipped over; and the test session itself fails when any test skips."""

from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from httpbench.errors import HttpbenchError
from httpbench.peers import programs
from tests.httpbench.http_fixtures import run_httpbench

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.servers
def test_peers_install_leaves_every_program_found_and_status_names_its_path(peer_programs):
    assert set(peer_programs) == {"nginx", "caddy", "wrk"}
    run = run_httpbench("peers", "install", timeout=900)
    assert run.code == 0, run.output
    assert "nothing to install" in run.stderr  # the session fixture installed them already
    status = run_httpbench("peers", "status")
    assert status.code == 0, status.output
    for name, path in peer_programs.items():
        assert os.access(path, os.X_OK)
        line = next(ln for ln in status.stdout.splitlines() if ln.startswith(name))
        assert path in line and "missing" not in line


def test_a_missing_program_names_the_command_that_installs_it():
    assert str(programs.not_found("caddy")) == (
        "caddy not found (`httpbench peers install caddy` installs Debian's caddy)"
    )
    with pytest.raises(HttpbenchError, match="unknown program 'lighttpd'"):
        programs.find("lighttpd")
    run = run_httpbench("peers", "install", "lighttpd")
    assert run.code == 2 and "Invalid value" in run.stderr and "Traceback" not in run.output


def test_installing_as_an_ordinary_user_is_one_line_naming_the_packages(monkeypatch):
    # wrk looked for on an empty PATH and in no other place, by a process that is not root
    monkeypatch.setitem(programs.PROGRAMS, "wrk", dataclasses.replace(programs.PROGRAMS["wrk"], places=()))
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.setattr(
        programs.shutil, "which", lambda name: "/usr/bin/apt-get" if name == "apt-get" else None
    )
    monkeypatch.setattr(programs.os, "geteuid", lambda: 1000)
    assert programs.missing() == ["wrk"]
    with pytest.raises(HttpbenchError) as info:
        programs.install(["wrk"])
    assert str(info.value) == "wrk not found; installing them needs root: install wrk"


def test_a_session_with_a_skipped_test_fails_and_names_it(tmp_path):
    shutil.copy(ROOT / "tests" / "conftest.py", tmp_path / "conftest.py")
    (tmp_path / "test_one.py").write_text(
        "import pytest\n\ndef test_runs():\n    assert True\n\n"
        "def test_skips():\n    pytest.skip('a tool is missing')\n"
    )
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:dbbench.pytest_plugin",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=120,
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "1 passed, 1 skipped" in proc.stdout
    assert "1 test(s) skipped, which proves nothing: test_one.py::test_skips" in proc.stdout
