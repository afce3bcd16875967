"""The client process the model-client samples are forked from (:class:`WarmClient`, ``client.py
serve``), against a stand-in for a line's Python that speaks the same protocol without torch: a
sample's exit code, stdout and stderr come back as a process's would; a sample that hangs is cut at
its timeout and the next sample starts another process; a process that died answers with its exit
code and stderr; nothing is left running or on disk. The real clients through it: test_model_clients.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from httpbench.model import Target
from httpbench.profiles.huggingface.models.clients import WarmClient

# Stands in for ``LINE_PYTHON client.py serve MODE``: argv[1] is client.py (ignored), argv[3] the mode.
STAND_IN = r"""
import json, os, sys
mode = sys.argv[3]
with open(os.environ["STARTS"], "a") as fh:
    fh.write(f"{os.getpid()}\n")
if mode == "no-import":
    sys.stderr.write("ModuleNotFoundError: No module named 'torch'\n")
    sys.exit(3)
print(json.dumps({"ready": True, "imports_ms": 12.5}), flush=True)
for n, line in enumerate(sys.stdin, 1):
    req = json.loads(line)
    if mode == "hang" and n == 2:
        import time
        time.sleep(3600)
    if mode == "crash" and n == 2:
        os._exit(9)
    with open(req["out"], "w") as out, open(req["err"], "w") as err:
        out.write(json.dumps({"n": n, "repo": req["repo"], "endpoint": os.environ["HF_ENDPOINT"]}) + "\n")
        err.write("a warning\n")
    print(json.dumps({"exit": 0 if n % 3 else 4}), flush=True)
"""


SERVE_WITHOUT_TORCH = """
import os
import sys

from httpbench.profiles.huggingface.models import client


def imports(kind):
    print("a notice a library prints while it imports")
    os.makedirs(os.path.join(os.environ["HF_HOME"], "made-by-imports"))


def sample(kind, repo, rev):
    print(sorted(os.listdir(os.environ["HF_HOME"])), flush=True)
    open(os.path.join(os.environ["HF_HOME"], "downloaded"), "w").close()


def load(repo, rev, steps):  # the priming load: a local directory, before the first sample
    if not os.path.isdir(repo):
        raise OSError(f"no model at {repo}")
    with open(os.path.join(repo, "loaded-by"), "a") as fh:
        fh.write(f"{os.getpid()}\\n")
    open(os.path.join(os.environ["HF_HOME"], "left-by-priming"), "w").close()
    return [1]


client._imports, client._sample, client.transformers_sample = imports, sample, load
client.serve("transformers", *sys.argv[1:])
"""


@pytest.fixture
def line_python(tmp_path: Path, monkeypatch) -> Path:
    script = tmp_path / "stand_in.py"
    script.write_text(STAND_IN)
    python = tmp_path / "python"
    python.write_text(f'#!/bin/sh\nexec {sys.executable} {script} "$@"\n')
    python.chmod(0o755)
    monkeypatch.setenv("STARTS", str(tmp_path / "starts"))
    return python


TARGET, _ = Target.parse("fixture", "http://127.0.0.1:9/")


def starts(python: Path) -> list[int]:
    path = python.parent / "starts"
    return [int(x) for x in path.read_text().split()] if path.exists() else []


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_samples_come_back_as_processes_would_from_one_start(line_python: Path):
    with WarmClient(str(line_python), "ok", TARGET) as warm:
        runs = [warm.sample("org/tiny", "abc", timeout=30) for _ in range(3)]
        tmp = warm.tmp
        assert warm.imports_ms == 12.5
    assert [r.returncode for r in runs] == [0, 0, 4]  # the exit code of each, not of the server
    docs = [json.loads(r.stdout) for r in runs]
    assert [d["n"] for d in docs] == [1, 2, 3] and all(d["repo"] == "org/tiny" for d in docs)
    assert {d["endpoint"] for d in docs} == {TARGET.url}  # the target's, as client_env sets it
    assert all(r.stderr == "a warning\n" for r in runs)
    assert len(starts(line_python)) == 1  # the imports once
    assert not tmp.exists()  # the samples' files and the cache gone with it
    assert not any(alive(pid) for pid in starts(line_python))


def test_a_sample_that_hangs_is_cut_at_its_timeout_and_the_next_starts_again(line_python: Path):
    with WarmClient(str(line_python), "hang", TARGET) as warm:
        assert warm.sample("org/tiny", "abc", timeout=30).returncode == 0
        began = time.monotonic()
        with pytest.raises(subprocess.TimeoutExpired):
            warm.sample("org/tiny", "abc", timeout=1.5)
        assert 1.4 < time.monotonic() - began < 10
        first = starts(line_python)[0]
        assert not alive(first)  # killed with its group, not left sleeping
        again = warm.sample("org/tiny", "abc", timeout=30)
        assert again.returncode == 0 and json.loads(again.stdout)["n"] == 1
    assert len(starts(line_python)) == 2 and not any(alive(pid) for pid in starts(line_python))


def test_a_process_that_died_answers_with_its_exit_code_and_stderr(line_python: Path):
    with WarmClient(str(line_python), "no-import", TARGET) as warm:
        run = warm.sample("org/tiny", "abc", timeout=30)
        assert run.returncode == 3 and "No module named 'torch'" in run.stderr and run.stdout == ""
    with WarmClient(str(line_python), "crash", TARGET) as warm:
        assert warm.sample("org/tiny", "abc", timeout=30).returncode == 0
        crashed = warm.sample("org/tiny", "abc", timeout=30)
        assert crashed.returncode == 9
        assert warm.sample("org/tiny", "abc", timeout=30).returncode == 0  # another process
    assert len(starts(line_python)) == 3  # no-import; crash; the one after the crash


def serve_two_samples(tmp_path: Path, *args: str) -> tuple[subprocess.Popen, list[dict], str]:
    """client.py's own serve loop with its imports, sample and load replaced (no torch here), run
    with ``args`` for two samples: the process, its replies, its stderr."""
    script = tmp_path / "serve.py"
    script.write_text(SERVE_WITHOUT_TORCH)
    requests = "".join(
        json.dumps(
            {"repo": "r", "rev": "v", "out": str(tmp_path / f"{n}.out"), "err": str(tmp_path / f"{n}.err")}
        )
        + "\n"
        for n in (1, 2)
    )
    proc = subprocess.Popen(
        [sys.executable, str(script), *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "HF_HOME": str(tmp_path / "hf-home")},
    )
    out, err = proc.communicate(requests, timeout=60)
    assert proc.returncode == 0, err
    return proc, [json.loads(x) for x in out.splitlines()], err


def test_the_real_serve_gives_each_forked_sample_the_cache_as_the_imports_left_it(tmp_path: Path):
    """client.py's own serve loop, its imports and sample replaced (no torch here): what the
    imports left in HF_HOME is there in every forked sample, what a sample downloaded is not;
    what the imports print on stdout goes to stderr, never into the replies."""
    _, lines, err = serve_two_samples(tmp_path)  # the replies alone
    assert lines[0]["ready"] and lines[1:] == [{"exit": 0}, {"exit": 0}]
    assert "a notice a library prints while it imports" in err
    for n in (1, 2):  # the second sample does not see what the first downloaded
        assert (tmp_path / f"{n}.out").read_text() == "['made-by-imports']\n"
    assert lines[0]["primed_ms"] is None  # no local copy given: nothing loaded before the samples


def test_serve_loads_the_local_copy_once_before_ready_and_the_samples_never_see_its_traces(tmp_path: Path):
    """``serve KIND PRIME_DIR``: the serving process itself loads the local copy once, before it
    says ready (so a forked sample inherits the model classes imported on first use), and what
    that load left in HF_HOME is gone from every sample's cache."""
    local = tmp_path / "tiny-bert"
    local.mkdir()
    proc, lines, _ = serve_two_samples(tmp_path, str(local))
    assert lines[0]["ready"] and lines[0]["primed_ms"] >= 0 and lines[1:] == [{"exit": 0}, {"exit": 0}]
    assert (local / "loaded-by").read_text() == f"{proc.pid}\n"  # once, by the serving process
    for n in (1, 2):
        assert (tmp_path / f"{n}.out").read_text() == "['made-by-imports']\n"


def test_a_local_copy_that_fails_to_load_leaves_the_samples_to_run_unprimed(tmp_path: Path):
    _, lines, err = serve_two_samples(tmp_path, str(tmp_path / "no-such-model"))
    assert lines[0]["ready"] and lines[0]["primed_ms"] is None and lines[1:] == [{"exit": 0}, {"exit": 0}]
    assert "no model at" in err
