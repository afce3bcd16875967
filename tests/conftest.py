"""Shared fixtures: the real local servers and a way to run the real command line.

The session starts the local servers through the library (a no-op when `.ci/run` or the README's
first command already did), so every test talks to real PostgreSQL and MySQL.
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from dbbench import servers


@dataclass
class CliResult:
    code: int
    stdout: str
    stderr: str

    @property
    def output(self) -> str:
        return self.stdout + self.stderr


def run_program(program: str, *args: str, env: dict[str, str] | None = None, timeout: float = 600) -> CliResult:
    """Run ``python -m PROGRAM ARGS`` as a real process (real exit code, real stderr)."""
    proc = subprocess.run([sys.executable, "-m", program, *args], capture_output=True, text=True,
                          timeout=timeout, cwd=Path(__file__).resolve().parent.parent,
                          env={**os.environ, **(env or {})})
    return CliResult(proc.returncode, proc.stdout, proc.stderr)


def run_cli(*args: str, env: dict[str, str] | None = None, timeout: float = 600) -> CliResult:
    """Run ``python -m dbbench ARGS``."""
    return run_program("dbbench", *args, env=env, timeout=timeout)


@pytest.fixture(scope="session")
def local_servers():
    """Status rows of the running local servers, keyed by dialect."""
    rows = servers.up()
    return dict(zip(("postgresql", "mysql"), rows))


@pytest.fixture(scope="session")
def local_urls(local_servers):
    return {d: servers.local_url(d) for d in ("postgresql", "mysql")}
