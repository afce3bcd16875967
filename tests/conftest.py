"""Shared fixtures: the real local servers and a way to run the real command line.

The session starts the local servers through the library (a no-op when `.ci/run` or the README's
first command already did), so every test talks to real PostgreSQL and MySQL.

Tests that need those servers, or start real server processes (nginx, caddy, HTTP fixtures, the
command line against a database), carry the ``servers`` marker: every test using the
``local_servers`` fixture gets it here, and modules that need servers throughout set it as
``pytestmark``. ``pytest -m "not servers"`` runs the pure tests in seconds, with no server up.

The peer programs the HTTP tests start (nginx, caddy, wrk) are installed by the ``peer_programs``
fixture when missing (:mod:`httpbench.peers.programs`, as ``httpbench peers install`` does), so a
newcomer's run needs no hand step. No test skips: a skipped test proves nothing, so a run with a
skip ends with a nonzero exit and names the skipped tests.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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


ROOT = Path(__file__).resolve().parent.parent
PROGRAMS = {"dbbench": "dbbench.cli", "httpbench": "httpbench.cli"}  # run in this process by default


def run_program(
    program: str,
    *args: str,
    env: dict[str, str] | None = None,
    timeout: float = 600,
    cwd: Path | None = None,
    process: bool = False,
) -> CliResult:
    """Run ``PROGRAM ARGS`` in ``cwd`` (default: the repository's root) and return its exit code,
    stdout and stderr.

    dbbench and httpbench run in this process by default, through the same ``main`` their console
    scripts call (:func:`in_process`): starting a Python and importing the command line costs
    0.6-0.9 CPU-seconds a call, and the suite makes about 800 calls. ``process=True`` (and any
    other program) runs ``python -m PROGRAM ARGS`` as a real process instead, for what only a
    process shows: signals, a hang cut by ``timeout``, its inherited file descriptors, the
    interpreter's start."""
    if program in PROGRAMS and not process:
        return in_process(program, list(args), env=env, timeout=timeout, cwd=cwd)
    proc = subprocess.run(
        [sys.executable, "-m", program, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=cwd or ROOT,
        env={**os.environ, **(env or {})},
    )
    return CliResult(proc.returncode, proc.stdout, proc.stderr)


# The warning filters a fresh interpreter starts with (no -W, no PYTHONWARNINGS): a call in this
# process shows on its stderr what the same command would show as a process, not pytest's.
_PROCESS_WARNINGS = (
    ("default", DeprecationWarning, "__main__"),
    ("ignore", DeprecationWarning, None),
    ("ignore", PendingDeprecationWarning, None),
    ("ignore", ImportWarning, None),
    ("ignore", ResourceWarning, None),
)


def in_process(
    program: str, args: list[str], *, env: dict[str, str] | None, timeout: float, cwd: Path | None
) -> CliResult:
    """``program``'s ``main`` (the one its console script runs) called here with ``args``: stdin
    empty, stdout and stderr captured, ``env`` over this process's environment and ``cwd`` the
    working directory for the call, all put back after. What a process would do on its way out is
    done the same way: ``SystemExit`` is the exit code, an uncaught exception prints its traceback
    and is exit code 1. A call still running after ``timeout`` seconds ends this test process with
    every thread's traceback (a hang fails loudly, as a killed process would)."""
    import faulthandler
    import importlib
    import threading
    import traceback
    import warnings

    from click.testing import CliRunner

    assert threading.current_thread() is threading.main_thread(), "one call at a time: process=True"
    main = importlib.import_module(PROGRAMS[program]).main
    threads = set(threading.enumerate())
    here = os.getcwd()
    code = 0
    with CliRunner().isolation(env=env) as (out, err, _), warnings.catch_warnings():
        warnings.resetwarnings()
        for action, category, module in reversed(_PROCESS_WARNINGS):
            warnings.filterwarnings(action, category=category, module=module or "")
        faulthandler.dump_traceback_later(timeout, exit=True, file=sys.__stderr__)
        try:
            os.chdir(cwd or ROOT)
            _call(program, main, args)
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            if exc.code is not None and not isinstance(exc.code, int):
                print(exc.code, file=sys.stderr)
        except KeyboardInterrupt:
            raise  # the person running the tests pressed Ctrl-C: the session stops
        except BaseException:  # what the interpreter does with an uncaught exception: its traceback
            traceback.print_exc()
            code = 1
        finally:
            faulthandler.cancel_dump_traceback_later()
            os.chdir(here)
            sys.stdout.flush()
            sys.stderr.flush()
        stdout, stderr = out.getvalue().decode(), err.getvalue().decode()
    left = [t for t in threading.enumerate() if t not in threads and t.is_alive() and not t.daemon]
    assert not left, f"{program} {' '.join(args)} left threads running: {left}"
    return CliResult(code, stdout, stderr)


def _call(program: str, main, args: list[str]) -> None:
    if program == "httpbench":
        main(args)
    else:  # dbbench's main() reads sys.argv, as click does
        saved = sys.argv
        sys.argv = [program, *args]
        try:
            main()
        finally:
            sys.argv = saved


def default_sigint() -> None:
    """``preexec_fn`` of a child a test interrupts: SIGINT back to its default, so the child's Python
    installs its KeyboardInterrupt handler even when the tests run with SIGINT ignored (``nohup``,
    a job a script started in the background), which a child would otherwise inherit."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.fixture
def sigint_raises():
    """In this process, SIGINT raises KeyboardInterrupt for the test, however pytest was started
    (an ignored SIGINT is inherited, and Python then installs no handler)."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def run_cli(
    *args: str,
    env: dict[str, str] | None = None,
    timeout: float = 600,
    cwd: Path | None = None,
    process: bool = False,
) -> CliResult:
    """Run ``dbbench ARGS`` (in ``cwd``, default the repository's root): in this process, or as a
    real one with ``process=True`` (:func:`run_program`)."""
    return run_program("dbbench", *args, env=env, timeout=timeout, cwd=cwd, process=process)


SERVER_FIXTURES = frozenset({"local_servers", "local_urls"})


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The ``servers`` marker on every test that uses the local servers (directly or through
    another fixture); the heavy model-client files first, so that with two workers the longest
    file starts at once instead of ending the run alone; then the files of :data:`SHARED_FILES`, in
    its order (xdist sends them as one unit, a long one: not last either)."""
    for item in items:
        if SERVER_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.servers)
    shared = list(SHARED_FILES)

    def order(item: pytest.Item) -> tuple[int, int]:
        where = item.nodeid.split("::", 1)[0]
        if item.get_closest_marker("hf_models") is not None:
            return 0, 0
        return (1, shared.index(where)) if where in shared else (2, 0)

    items.sort(key=order)  # stable


_WORKER: list[str] = []


def worker() -> str | None:
    """The pytest-xdist worker this process is (``gw0``, ``gw1``…), None when not one (a pytest a
    test starts inherits ``PYTEST_XDIST_WORKER`` but is no worker: only xdist's ``workerinput``
    says so)."""
    return _WORKER[0] if _WORKER else None


def pytest_configure(config: pytest.Config) -> None:
    """Each pytest-xdist worker after the first gets its own pair of local servers, a second
    ``--instance`` of the same installs (``DBBENCH_INSTANCE``, which the library and every command a
    test starts read): two workers never share a namespace, a lock, the servers' statistics or a
    server a test stops. The first worker uses the instance the README's first command started."""
    name = getattr(config, "workerinput", {}).get("workerid")
    _WORKER[:] = [name] if name else []
    if name and name != "gw0":
        base = os.environ.get("DBBENCH_INSTANCE") or "default"
        os.environ["DBBENCH_INSTANCE"] = f"{base}-pytest-{name}"


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="session")
def local_servers():
    """Status rows of the running local servers, keyed by dialect."""
    home = servers.Home()
    ports = None
    if worker() not in (None, "gw0") and not home.exists():  # a worker's own pair, on free ports
        ports = {"postgresql": free_port(), "mysql": free_port()}
    rows = servers.up(home=home, ports=ports)
    return dict(zip(("postgresql", "mysql"), rows))


@pytest.fixture(scope="session")
def peer_programs() -> dict[str, str]:
    """nginx, caddy and wrk, installed first when missing: program name -> executable path."""
    from httpbench.peers import programs

    return programs.ensure(programs.ALL, lambda line: print(f"\nhttpbench: {line}", file=sys.stderr))


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """A run in which a test skipped fails: what it was to prove was not proven (fix the cause:
    install what it needs from a fixture, or delete the test)."""
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    skipped = reporter.stats.get("skipped", []) if reporter is not None else []
    if skipped and exitstatus == pytest.ExitCode.OK:
        names = ", ".join(sorted({r.nodeid for r in skipped})[:10])
        reporter.write_line(f"{len(skipped)} test(s) skipped, which proves nothing: {names}", red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


# Modules that read one seeded namespace (tests.db.Shared100k) run on one worker, one after the
# other, so that it is seeded once: pytest-xdist's loadfile with these files as one unit.
# The last of them drops an index at its end (the namespace is seeded again after it, if need be).
SHARED_FILES = {
    "tests/dbbench/advise/test_verify.py": "alpine-100k",
    "tests/dbbench/measure/test_explain.py": "alpine-100k",
    "tests/dbbench/diff/test_work_live.py": "alpine-100k",
}


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``--dist loadfile`` with the files of :data:`SHARED_FILES` sent as one unit (None: xdist's
    own scheduler for any other mode)."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class SharedFixtures(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            scope = super()._split_scope(nodeid)
            return SHARED_FILES.get(scope, scope)

    return SharedFixtures(config, log)


@pytest.fixture(scope="session")
def alpine_100k_pool(local_servers) -> Any:
    """This process's :class:`tests.db.Shared100k`."""
    from tests.db import Shared100k

    return Shared100k()


@pytest.fixture(scope="session")
def local_urls(local_servers):
    return {d: servers.local_url(d) for d in ("postgresql", "mysql")}


@contextlib.contextmanager
def seeded_targets(dataset: str, namespace: str) -> Iterator[list]:
    """Both local servers' targets, ``dataset`` seeded (and verified) into ``namespace``; disposed after."""
    from dbbench.access.targets import open_targets
    from dbbench.dataset import seed

    targets = open_targets({})
    try:
        _, results, _ = seed.seed(targets, dataset, namespace=namespace)
        assert all(r.ok for r in results)
        yield targets
    finally:
        for t in targets:
            t.dispose()


def shape_toml(
    name: str,
    cardinality: str,
    *,
    params: str | None = None,
    sql: str,
    postgresql: str,
    mysql: str | None = None,
    expect_rows: int | None = None,
    sep: str = "",
) -> str:
    """A catalog shape file (``sql/catalog`` format); ``sep`` goes between its sections (no
    ``[params]`` section without ``params``; MySQL's section the same as PostgreSQL's unless
    ``mysql``)."""
    head = f'name = "{name}"\ncardinality = "{cardinality}"\n'
    if expect_rows is not None:
        head += f"expect_rows = {expect_rows}\n"
    sections = [
        *([f"[params]\n{params}\n"] if params is not None else []),
        f'[query]\nsql = "{sql}"\n',
        f"[postgresql]\n{postgresql}\n",
        f"[mysql]\n{postgresql if mysql is None else mysql}\n",
    ]
    return sep.join([head, *sections])
