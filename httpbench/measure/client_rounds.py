"""Real-client rounds: time a real client program (``apk``, ``hf``, a script) against every target.

Each *client scenario* has one command per target. Every sample is one subprocess, started in a
fresh temporary directory (also ``$HTTPBENCH_TMP``) so no client cache carries over between
samples, with ``$HTTPBENCH_TARGET`` / ``$HTTPBENCH_URL`` set and ``{url}`` / ``{tmp}`` /
``{target}`` substituted in shell commands, and ``$HTTPBENCH_AUTHORIZATION`` (the target's
``Authorization`` header value, from ``--auth``) set when the target has credentials. Rounds alternate the target order (rotated by round),
so neither target always runs first. A sample counts when the command exits 0 within the timeout;
a failing sample is recorded with its exit code and the last line of its stderr and fails the gate.

Statistics per target: nearest-rank p50/p95 of the successful samples; the ``client`` gate is the
candidate/baseline p95 ratio (default ≤ 1.25×).
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from httpbench.errors import HttpbenchError
from httpbench.measure.gates import add_failures, decision_message, paired_samples
from httpbench.measure.percentiles import percentiles, ratio
from httpbench.measure.schedule import round_order
from httpbench.model import Gate, Target

DEFAULT_CLIENT_GATE = Gate(0.0, 1.25)
# userinfo runs to the *last* '@' before the path: "http://user:p@ss@host" has the password "p@ss"
_USERINFO = re.compile(r"(\w+://)[^/\s]*@")
_CURL_USER = re.compile(r"((?:^|\s)(?:-u|--user|--proxy-user)(?:\s+|=))('[^']*'|\"[^\"]*\"|\S+)")
_AUTH_HEADER = re.compile(r"((?:Proxy-)?Authorization:\s*)[^'\"\n]+", re.I)


def redact(text: str) -> str:
    """Drop credentials from text that is recorded (commands, a sample's last stderr line):
    ``user:password@`` in URLs, curl's ``-u USER:PASS``, and ``Authorization:`` header values."""
    text = _USERINFO.sub(r"\1", text)
    text = _CURL_USER.sub(r"\1***", text)
    return _AUTH_HEADER.sub(r"\1***", text)


@dataclass(frozen=True)
class ClientCommand:
    """One client scenario: a label and, per target name, a shell string or an argv list."""

    label: str
    commands: Mapping[str, str | list[str]]

    def argv(self, target: Target, tmp: str) -> list[str]:
        command = self.commands[target.name]
        if isinstance(command, list):
            return [
                part.replace("{url}", target.url).replace("{tmp}", tmp).replace("{target}", target.name)
                for part in command
            ]
        text = (
            command.replace("{url}", shlex.quote(target.url))
            .replace("{tmp}", shlex.quote(tmp))
            .replace("{target}", shlex.quote(target.name))
        )
        return ["/bin/sh", "-c", text]

    def describe(self, name: str) -> str:
        command = self.commands[name]
        return redact(command if isinstance(command, str) else shlex.join(command))


def parse_options(
    values: tuple[str, ...], targets: list[Target], label: str = "real client"
) -> list[ClientCommand]:
    """``--client-command NAME=CMD`` per target, or one ``--client-command CMD`` for all targets
    (then it must use ``{url}`` or ``$HTTPBENCH_URL``). A command for only some targets is an
    error, never silently ignored."""
    if not values:
        return []
    names = [t.name for t in targets]
    per: dict[str, str] = {}
    shared: list[str] = []
    for value in values:
        name, sep, command = value.partition("=")
        if sep and name.strip() in names:
            if name.strip() in per:
                raise HttpbenchError(f"--client-command: target {name.strip()!r} is given twice")
            if not command.strip():
                raise HttpbenchError(f"--client-command {name.strip()}=: the command is empty")
            per[name.strip()] = command.strip()
        else:
            shared.append(value.strip())
    if shared and per:
        raise HttpbenchError(
            "--client-command: give NAME=COMMAND for every target, or one command for all targets, not both"
        )
    if len(shared) > 1:
        raise HttpbenchError(
            "--client-command: several commands without a target name "
            f"(prefix each with one of: {', '.join(names)})"
        )
    if shared:
        if "{url}" not in shared[0] and "HTTPBENCH_URL" not in shared[0]:
            raise HttpbenchError(
                "--client-command: a command shared by all targets must use {url} "
                "or $HTTPBENCH_URL, or it would time the same server twice"
            )
        check_syntax(shared[0], "--client-command")
        return [ClientCommand(label, {n: shared[0] for n in names})]
    missing = [n for n in names if n not in per]
    if missing:
        raise HttpbenchError(
            f"--client-command: no command for target(s) {', '.join(missing)} "
            "(every target needs one, or the comparison is meaningless)"
        )
    for name in names:
        check_syntax(per[name], f"--client-command {name}")
    return [ClientCommand(label, per)]


def run_process(
    argv: list[str], *, cwd: str, env: dict[str, str], timeout: float
) -> subprocess.CompletedProcess:
    """``subprocess.run(argv, capture_output=True, text=True, timeout=timeout)``, but the command
    runs in its own process group, and that whole group is killed when the sample ends (timeout,
    Ctrl-C, or a normal exit that left children behind). ``/bin/sh -c`` forks its commands, so
    killing only the shell would leave them running, loading the host during the next samples.

    A Ctrl-C while ``Popen()`` is still returning (the child already runs: under load it may have
    done its first work) is held back until ``proc`` is known, then raised here, so the group is
    killed on every path; raised inside ``Popen()`` it would leave the client running."""
    proc = None
    try:
        with sigint_deferred():
            proc = subprocess.Popen(
                argv,
                cwd=cwd,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                errors="replace",  # a client may print bytes
                start_new_session=True,
            )
        stdout, stderr = proc.communicate(timeout=timeout)
    except BaseException:
        if proc is not None:
            _kill_group(proc)
            proc.communicate()
        raise
    _kill_group(proc)
    return subprocess.CompletedProcess(argv, proc.returncode, stdout, stderr)


@contextlib.contextmanager
def sigint_deferred() -> Iterator[None]:
    """Record a SIGINT during the block instead of raising inside it; re-deliver it at the end
    (KeyboardInterrupt under Python's default handler). Main thread only: elsewhere a no-op."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: caught.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if caught:
            if callable(previous):
                previous(signal.SIGINT, None)
            elif previous == signal.SIG_DFL:
                os.kill(os.getpid(), signal.SIGINT)


def _kill_group(proc: subprocess.Popen) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


def scrub(text: str, target: Target) -> str:
    """Remove the target's credentials from text a client printed (it gets them as
    ``$HTTPBENCH_AUTHORIZATION``): the header value, its token, and a Basic pair decoded."""
    header = target.auth_header
    if not header:
        return text
    scheme, _, token = header.partition(" ")
    secrets = [header, token]
    if scheme.lower() == "basic":
        import base64
        import binascii

        try:
            pair = base64.b64decode(token, validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            pair = ""
        secrets += [pair, pair.partition(":")[2]]
    for secret in sorted((x for x in secrets if len(x) >= 3), key=len, reverse=True):
        text = text.replace(secret, "***")
    return text


def check_syntax(command: str, what: str) -> None:
    """Refuse a shell command ``/bin/sh`` cannot parse (``sh -n``: nothing is run), before any
    timing, instead of recording a failed sample per round after the HTTP rounds."""
    probe = (
        command.replace("{url}", "http://127.0.0.1/").replace("{tmp}", "/tmp").replace("{target}", "target")
    )
    try:
        proc = subprocess.run(
            ["/bin/sh", "-n", "-c", probe],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=10,
        )
    except (OSError, subprocess.TimeoutExpired):
        return  # cannot check here: the samples will say what is wrong
    if proc.returncode != 0:
        reason = _last_line(proc.stderr).removeprefix("/bin/sh: ").removeprefix("1: ")
        raise HttpbenchError(f"{what}: /bin/sh cannot parse the command ({reason or 'syntax error'})")


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return redact(lines[-1][:300]) if lines else ""


def run_sample(
    command: ClientCommand, target: Target, timeout: float, env: dict[str, str] | None = None
) -> dict[str, Any]:
    """One timed subprocess in a fresh temporary directory; the directory is removed afterwards."""
    tmp = tempfile.mkdtemp(prefix="httpbench-client-")
    try:
        sample_env = {
            **os.environ,
            **(env or {}),
            "HTTPBENCH_TARGET": target.name,
            "HTTPBENCH_URL": target.url,
            "HTTPBENCH_TMP": tmp,
        }
        sample_env.pop("HTTPBENCH_AUTHORIZATION", None)
        if target.auth_header:  # the target's credentials, for the client only (never recorded)
            sample_env["HTTPBENCH_AUTHORIZATION"] = target.auth_header
        argv = command.argv(target, tmp)
        start = time.perf_counter()
        try:
            proc = run_process(argv, cwd=tmp, env=sample_env, timeout=timeout)
        except subprocess.TimeoutExpired:
            return {
                "ms": (time.perf_counter() - start) * 1000.0,
                "ok": False,
                "exit_code": None,
                "error": f"timed out after {timeout:g} s",
            }
        except OSError as exc:
            return {"ms": None, "ok": False, "exit_code": None, "error": f"cannot start: {exc.strerror}"}
        elapsed = (time.perf_counter() - start) * 1000.0
        out: dict[str, Any] = {"ms": elapsed, "ok": proc.returncode == 0, "exit_code": proc.returncode}
        if proc.returncode != 0:
            out["error"] = scrub(_last_line(proc.stderr) or _last_line(proc.stdout), target)
        return out
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def alternate(
    label: str,
    index: int,
    names: list[str],
    rounds: int,
    sample: Callable[[str], dict[str, Any]],
    progress: Callable[[str], None] | None,
) -> list[dict[str, Any]]:
    """``rounds`` rounds of one ``sample(target name)`` per target, the order rotated by
    (``index`` + round) as in the HTTP rounds; each sample is tagged with target, round and position."""
    samples = []
    for r_idx in range(rounds):
        for pos, name in enumerate(round_order(names, index, r_idx), 1):
            result = sample(name)
            samples.append({"target": name, "round": r_idx + 1, "position": pos, **result})
            if progress:
                state = f"{result['ms']:,.1f} ms" if result["ok"] else f"FAILED ({result.get('error')})"
                progress(f"client {label} round {r_idx + 1} {name}: {state}")
    return samples


def run(
    commands: list[ClientCommand],
    targets: list[Target],
    rounds: int,
    timeout: float,
    gate: Gate = DEFAULT_CLIENT_GATE,
    progress: Callable[[str], None] | None = None,
    method: str = "seed",
    alpha: float = 0.05,
) -> tuple[dict[str, Any], list[str]]:
    """All client scenarios, ``rounds`` alternating rounds each. Returns the JSON section and the
    gate failures."""
    names = [t.name for t in targets]
    by_name = {t.name: t for t in targets}
    section: dict[str, Any] = {
        "rounds": rounds,
        "timeout_s": timeout,
        "gate": gate.to_json(),
        "scenarios": {},
    }
    failures: list[str] = []
    for c_idx, command in enumerate(commands):

        def sample(name: str, command: ClientCommand = command) -> dict[str, Any]:
            return run_sample(command, by_name[name], timeout)

        samples = alternate(command.label, c_idx, names, rounds, sample, progress)
        summary, comparisons, fails = summarize(command.label, names, samples, gate, method, alpha)
        for name in names:
            summary[name]["command"] = command.describe(name)
        add_failures(failures, fails)
        section["scenarios"][command.label] = {
            "samples": samples,
            "summary": summary,
            "comparisons": comparisons,
        }
    return section, failures


def summarize(
    label: str,
    names: list[str],
    samples: list[dict[str, Any]],
    gate: Gate,
    method: str = "seed",
    alpha: float = 0.05,
) -> tuple[dict[str, dict[str, Any]], dict[str, dict[str, Any]], list[str]]:
    """Per target: sample counts and nearest-rank p50/p95 of the successful samples (``ms``); per
    candidate: p50/p95 ratios and the ``client`` gate. ``method`` seed: the p95 ratio against the
    gate; paired: the interval of the per-round candidate/baseline ratios (same round = a pair),
    whose verdict may be ``inconclusive`` (then ``comparisons[cand]["inconclusive"]`` says why).
    Returns (summary, comparisons, failures)."""
    summary = {name: _target_summary([s for s in samples if s["target"] == name]) for name in names}
    comparisons: dict[str, dict[str, Any]] = {}
    failures: list[str] = []
    base = names[0]
    for cand in names[1:]:
        entry: dict[str, Any] = {
            "baseline": base,
            "p95_ratio": ratio(summary[cand]["p95_ms"], summary[base]["p95_ms"]),
            "p50_ratio": ratio(summary[cand]["p50_ms"], summary[base]["p50_ms"]),
        }
        fails = [
            f"client {label}: {n} had {summary[n]['failures']} failed sample(s)"
            for n in (base, cand)
            if summary[n]["failures"]
        ]
        if method == "paired":
            # the raw p95 ratio of a few process timings is noise; the paired interval decides
            _paired_verdict(entry, fails, f"client {label}: {cand}", _pairs(samples, base, cand), gate, alpha)
        else:
            fails += _p95_gate_failures(f"client {label}: {cand}", entry["p95_ratio"], base, gate)
            entry["verdict"] = "fail" if fails else "pass"
        entry["passed"] = entry["verdict"] == "pass"
        comparisons[cand] = entry
        add_failures(failures, fails)
    return summary, comparisons, failures


def _target_summary(mine: list[dict[str, Any]]) -> dict[str, Any]:
    """One target's samples: counts, and nearest-rank p50/p95 of the successful ones."""
    ok = [s["ms"] for s in mine if s["ok"]]
    p50, p95 = percentiles(ok, (0.5, 0.95))
    return {
        "samples": len(mine),
        "ok": len(ok),
        "failures": len(mine) - len(ok),
        "p50_ms": p50,
        "p95_ms": p95,
    }


def _p95_gate_failures(who: str, p95_ratio: float | None, base: str, gate: Gate) -> list[str]:
    """The seed method's client gate: the candidate/baseline p95 ratio at most the gate's."""
    if p95_ratio is None:
        return [f"{who} p95 ratio cannot be computed"]
    if p95_ratio > gate.max_p95_ratio:
        return [f"{who} p95 {p95_ratio:.3f}x {base} > {gate.max_p95_ratio:.2f}x (client gate)"]
    return []


def _pairs(
    samples: list[dict[str, Any]], base: str, cand: str
) -> tuple[list[float | None], list[float | None]]:
    """The baseline's and the candidate's sample time of each round (None: failed or missing)."""
    rounds = sorted({s["round"] for s in samples})
    at = {(s["target"], s["round"]): s["ms"] if s["ok"] else None for s in samples}
    return [at.get((base, r)) for r in rounds], [at.get((cand, r)) for r in rounds]


def _paired_verdict(
    entry: dict[str, Any],
    fails: list[str],
    who: str,
    pairs: tuple[list[float | None], list[float | None]],
    gate: Gate,
    alpha: float,
) -> None:
    """The paired method's client gate, into ``entry`` (decision, verdict, why undecided) and
    ``fails``: the interval of the per-round ratios against the gate's p95 ratio."""
    d = paired_samples("sample time", pairs[0], pairs[1], gate.max_p95_ratio, "above", alpha)
    entry["decision"] = d.to_json()
    if d.verdict == "fail":
        fails.append(decision_message(who, d, "client"))
    elif d.verdict == "inconclusive" and not fails:
        entry["inconclusive"] = decision_message(who, d, "client")
    entry["verdict"] = "fail" if fails else d.verdict


def undecided(section: dict[str, Any]) -> list[str]:
    """The inconclusive messages of a client section (paired method)."""
    return [
        c["inconclusive"]
        for sc in section["scenarios"].values()
        for c in sc["comparisons"].values()
        if c.get("inconclusive")
    ]
