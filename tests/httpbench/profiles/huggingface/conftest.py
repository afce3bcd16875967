"""The heavy real clients (``hf_models`` marker): tests that need both client lines' environments
(CPU-only torch, Transformers, Diffusers) and the pinned tiny models.

The ``client_lines`` fixture prepares them when they are missing, as ``httpbench demo huggingface
--prepare`` does (the same library call), the way the ``peer_programs`` fixture installs nginx, caddy
and wrk: the README's test command runs every test on a fresh machine, and never leaves one out.
The first preparation takes about 2 minutes and 2 GB of disk (two virtual environments with a
CPU-only torch each); later runs find them and start at once.
"""

from __future__ import annotations

import sys

import pytest

from httpbench.profiles.huggingface.models import lines
from httpbench.profiles.huggingface.models.prepare import prepare

MARK = "hf_models"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", f"{MARK}: needs both client lines' environments (prepared by the client_lines fixture)"
    )


@pytest.fixture(scope="session")
def client_lines() -> dict[str, lines.LineEnv]:
    """Both client lines' environments and the tiny models, prepared first when missing."""
    prepared = prepare(lambda line: print(f"\nhttpbench: {line}", file=sys.stderr))
    missing = [line for line, env in prepared.envs.items() if not env.ready()]
    assert not missing, f"client line(s) {', '.join(missing)} still not ready after preparing them"
    return prepared.envs
