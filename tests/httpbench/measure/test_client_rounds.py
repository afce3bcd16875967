"""Real-client rounds (``--client-command``): one subprocess per sample, alternating order, p95 gate."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from tests.conftest import default_sigint
from tests.httpbench.http_fixtures import (
    FixtureServer,
    Route,
    body_of,
    cli_options,
    compare_args,
    run_httpbench,
    seeded,
)

BODY = body_of(4096, seed=3)
# a real client: downloads the file through its own HTTP stack and checks the length
CLIENT = (
    f'{sys.executable} -c "import sys, urllib.request; '
    "b = urllib.request.urlopen(sys.argv[1] + '/f').read(); sys.exit(0 if len(b) == 4096 else 3)\" {url}"
)


@pytest.fixture()
def pair():
    with FixtureServer({"/f": Route(BODY)}) as a, FixtureServer({"/f": Route(BODY)}) as b:
        yield a, b


def _argv(a, b) -> list[str]:
    """``compare`` of ``ref`` (a) against ``cand`` (b) on ``/f``: one seed round of 20 requests."""
    return compare_args({"ref": a.url, "cand": b.url}, "/f", **seeded(20), q=True)


def _compare(a, b, *extra, env=None):
    return run_httpbench(*_argv(a, b), *extra, env=env)


def _clients(a, b, out, *commands, rounds, env=None, **options):
    """``_compare`` with these ``--client-command``s, ``rounds`` client rounds and ``--output out``."""
    extra = cli_options(client_command=list(commands), client_rounds=rounds, **options, output=out)
    return _compare(a, b, *extra, env=env)


@pytest.mark.servers
def test_client_rounds_alternate_and_are_gated(pair, tmp_path):
    a, b = pair
    out = tmp_path / "r.json"
    gates = {"gate": ["client:0:100", "metadata:0:1000"], "enforce_gates": True}
    run = _clients(a, b, out, CLIENT, rounds=4, **gates)
    assert run.code == 0, run.output
    doc = json.loads(out.read_text())
    sc = doc["clients"]["scenarios"]["real client"]
    assert [s["target"] for s in sc["samples"] if s["position"] == 1] == ["ref", "cand", "ref", "cand"]
    assert all(s["ok"] and s["ms"] > 0 for s in sc["samples"]) and len(sc["samples"]) == 8
    assert (
        sc["summary"]["cand"]["ok"] == 4 and sc["summary"]["ref"]["p95_ms"] >= sc["summary"]["ref"]["p50_ms"]
    )
    assert sc["comparisons"]["cand"]["passed"] is True
    assert "Real client RT" in run.stdout
    # every sample fetched from its own target: 4 client requests + preflight + timed on each fixture
    assert a.routes["/f"].count == b.routes["/f"].count


@pytest.mark.servers
def test_a_failing_client_fails_the_gate_and_names_the_reason(pair, tmp_path):
    a, b = pair
    out = tmp_path / "r.json"
    ref = f"ref={CLIENT.replace('{url}', a.url)}"
    run = _clients(a, b, out, ref, "cand=echo 'no such repository' >&2; exit 4", rounds=2, enforce_gates=True)
    assert run.code == 1, run.output
    doc = json.loads(out.read_text())
    failed = [s for s in doc["clients"]["scenarios"]["real client"]["samples"] if s["target"] == "cand"]
    assert failed and all(s["exit_code"] == 4 and s["error"] == "no such repository" for s in failed)
    assert any("cand had 2 failed sample(s)" in g for g in doc["gate_failures"])


@pytest.mark.servers
def test_a_slower_client_target_fails_the_p95_gate(pair, tmp_path):
    a, b = pair
    out = tmp_path / "r.json"
    run = _clients(a, b, out, "ref=true", "cand=sleep 0.3", rounds=2, enforce_gates=True)
    assert run.code == 1
    doc = json.loads(out.read_text())
    assert any(g.startswith("client real client: cand p95") for g in doc["gate_failures"]), doc[
        "gate_failures"
    ]


@pytest.mark.parametrize(
    "args, message",
    [
        (("--client-command", "ref=true"), "no command for target(s) cand"),
        (("--client-command", "true"), "must use {url}"),
        (("--client-command", "ref=true", "--client-command", "curl {url}"), "not both"),
    ],
)
@pytest.mark.servers
def test_a_client_command_for_only_some_targets_is_refused(pair, args, message):
    a, b = pair
    run = _compare(a, b, *args)
    assert run.code == 2 and message in run.stderr and "Traceback" not in run.output
    assert a.routes["/f"].count == 0, "nothing may be requested before the options are valid"


@pytest.mark.servers
def test_recorded_commands_lose_url_credentials(pair, tmp_path):
    a, b = pair
    out = tmp_path / "r.json"
    run = _clients(a, b, out, "ref=true http://bob:s3cret@127.0.0.1/x", "cand=true", rounds=1)
    assert run.code == 0, run.output
    assert "s3cret" not in out.read_text() and "s3cret" not in run.output


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/status") as fh:
            return "\nState:\tZ" not in fh.read()
    except FileNotFoundError:
        return False


@pytest.mark.servers
def test_a_timed_out_client_leaves_no_process_behind(pair, tmp_path):
    """A sample past its timeout is killed with everything it started: a leftover process would
    keep loading the host (and the targets) during the next samples."""
    from httpbench.measure import client_rounds
    from httpbench.model import Target

    a, _ = pair
    pidfile = tmp_path / "pid"
    target = Target.parse("cand", a.url)[0]
    command = client_rounds.ClientCommand("real client", {"cand": f"sleep 29.5 & echo $! > {pidfile}; wait"})
    sample = client_rounds.run_sample(command, target, 0.5)
    pid = int(pidfile.read_text())
    try:
        assert sample["ok"] is False and sample["error"] == "timed out after 0.5 s"
        assert not _alive(pid), "the client's child outlived its sample"
    finally:
        if _alive(pid):
            os.kill(pid, signal.SIGKILL)


def test_a_malformed_client_command_is_refused_before_anything_runs(pair):
    from httpbench.errors import HttpbenchError
    from httpbench.measure import client_rounds
    from httpbench.model import Target

    targets = [Target.parse(n, t.url)[0] for n, t in zip(("ref", "cand"), pair)]
    with pytest.raises(
        HttpbenchError,
        match=r"^--client-command cand: /bin/sh cannot parse the command "
        r"\(.*[Uu]nterminated",
    ):
        client_rounds.parse_options(("ref=true", 'cand=echo "unterminated'), targets)
    with pytest.raises(HttpbenchError, match="^--client-command: /bin/sh cannot parse"):
        client_rounds.parse_options(("curl {url} | | wc",), targets)


@pytest.mark.servers
def test_ctrl_c_during_client_rounds_is_one_line_and_kills_the_client(pair, tmp_path):
    a, b = pair
    pidfile = tmp_path / "pid"
    client = f"sleep 28.5 & echo $! > {pidfile}; wait # {{url}}"
    proc = subprocess.Popen(
        [sys.executable, "-m", "httpbench", *_argv(a, b), "--client-command", client],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=default_sigint,
    )
    try:
        deadline = time.monotonic() + 20
        while not (pidfile.exists() and pidfile.read_text().strip()) and time.monotonic() < deadline:
            time.sleep(0.05)
        pid = int(pidfile.read_text())
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
    try:
        assert proc.returncode == 130
        assert stderr.splitlines() == ["httpbench: error: interrupted"], stderr
        assert not _alive(pid), "the client outlived Ctrl-C"
    finally:
        if _alive(pid):
            os.kill(pid, signal.SIGKILL)


@pytest.mark.servers
def test_client_commands_get_the_targets_credentials_in_the_environment_only(pair, tmp_path):
    a, b = pair
    out = tmp_path / "r.json"
    ref = 'ref=test -z "$HTTPBENCH_AUTHORIZATION"'
    # compared by digest, so the command text does not hold the secret itself
    cand = (
        'cand=test "$(printf %s "$HTTPBENCH_AUTHORIZATION" | sha256sum '
        f'| cut -c1-16)" = {hashlib.sha256(b"Bearer t0k3n-9f2").hexdigest()[:16]}'
    )
    env = {"CAND_TOKEN": "Bearer t0k3n-9f2"}
    run = _clients(a, b, out, ref, cand, rounds=1, auth="cand=env:CAND_TOKEN", env=env)
    assert run.code == 0, run.output
    doc = json.loads(out.read_text())
    assert all(s["ok"] for s in doc["clients"]["scenarios"]["real client"]["samples"])
    assert "t0k3n" not in out.read_text() and "t0k3n" not in run.output


def _group_alive(pgid: int) -> bool:
    """Whether any process of group ``pgid`` still runs (zombies count as gone)."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except (FileNotFoundError, ProcessLookupError):
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            return True
    return False


def test_ctrl_c_while_the_client_is_being_started_still_kills_it(monkeypatch, sigint_raises):
    """The race behind the flaky Ctrl-C test: under load the client can be running (its pid file
    written) while ``Popen()`` has not returned yet. A SIGINT then raised KeyboardInterrupt inside
    ``Popen()``, before ``run_process`` held the process, so nothing killed its group. Here the
    SIGINT is raised deterministically at that point: right after the child was created."""
    from httpbench.measure import client_rounds

    started: list[int] = []
    original = subprocess.Popen._execute_child

    def execute_then_interrupt(self, *args, **kwargs):
        original(self, *args, **kwargs)
        started.append(self.pid)
        signal.raise_signal(signal.SIGINT)  # Ctrl-C lands while Popen() is still returning

    monkeypatch.setattr(subprocess.Popen, "_execute_child", execute_then_interrupt)
    try:
        with pytest.raises(KeyboardInterrupt):
            client_rounds.run_process(
                ["/bin/sh", "-c", "sleep 30 & wait"], cwd="/", env=dict(os.environ), timeout=60
            )
        monkeypatch.undo()
        assert started, "the client was not started"
        deadline = time.monotonic() + 5
        while _group_alive(started[0]) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _group_alive(started[0]), "the client outlived Ctrl-C"
    finally:
        for pgid in started:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pgid, signal.SIGKILL)
