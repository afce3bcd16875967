"""The heavy real clients (``hf_models`` marker): tests that need both client lines' environments
(CPU-only torch, Transformers, Diffusers; made by ``httpbench demo huggingface --prepare``, which
``.ci/run`` runs in one step).

Where they are missing, a developer's run leaves those tests out and says so in its summary (the
default run stays fast); under CI (``CI`` set) they are never left out: a missing environment
fails them, so CI cannot pass without running them.
"""

from __future__ import annotations

import os

import pytest

from httpbench.profiles.huggingface.models import lines

MARK = "hf_models"
PREPARE = "httpbench demo huggingface --prepare"
_left_out: list[str] = []


def envs_ready() -> bool:
    return all(lines.env(line).ready() for line in lines.LINES)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", f"{MARK}: needs both client lines' environments ({PREPARE})")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    heavy = [item for item in items if item.get_closest_marker(MARK)]
    if not heavy or os.environ.get("CI") or envs_ready():
        return
    config.hook.pytest_deselected(items=heavy)
    items[:] = [item for item in items if not item.get_closest_marker(MARK)]
    _left_out.extend(item.nodeid for item in heavy)


def pytest_terminal_summary(terminalreporter) -> None:
    if _left_out:
        terminalreporter.write_line(
            f"{len(_left_out)} test(s) of the heavy model clients left out: the client lines are not "
            f"installed here (run `{PREPARE}`; CI runs them): {', '.join(_left_out)}",
            yellow=True,
        )


@pytest.fixture(scope="session")
def client_lines() -> dict[str, lines.LineEnv]:
    """Both client lines' environments; a missing one fails the test (never a skip)."""
    envs = {line: lines.env(line) for line in lines.LINES}
    missing = [line for line, env in envs.items() if not env.ready()]
    if missing:
        pytest.fail(
            f"client line(s) {', '.join(missing)} not installed: run `{PREPARE}` first (.ci/run does)"
        )
    return envs
