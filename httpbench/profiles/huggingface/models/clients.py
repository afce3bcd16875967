"""Real-client rounds on the tiny model repositories: Transformers (config, tokenizer, model, one
forward pass on ``httpbench/tiny-bert``) and Diffusers (``StableDiffusionPipeline`` load and one 32x32
step on ``httpbench/tiny-sd``), per client line (each its own Python), per target in alternating
order; every sample a process with a fresh ``HF_HOME`` (:mod:`client` runs in it), forked from
a process of that line, client and target that made the imports once (``client.py serve``).

A sample counts when the process exits 0, every file it downloaded is the pinned bytes and the
output has the expected shape. Its time is the clients' calls (interpreter and imports excluded);
``process_ms`` beside it is the sample's process from fork to exit, and each line's ``imports_ms``
the imports its client processes made, once per client and target; ``primed_ms`` their one load
of this machine's copy of the pinned model (when there is one), made before any sample so that
the model classes a client imports on first use are not timed as the target's. The fixture's own request
counts for the repository are read from ``/__stats`` before and after each sample (through an
nginx cache, what the cache asked the upstream for). Gate: the ``client`` gate per line and client.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from httpbench.measure import client_rounds
from httpbench.measure.percentiles import median_or_none, percentiles
from httpbench.model import Gate, Target
from httpbench.profiles import Context, Section
from httpbench.profiles.huggingface.hub_clients import client_env, summarize_into
from httpbench.profiles.huggingface.models.repos import BERT, SD, repo_id
from httpbench.profiles.huggingface.stats import read_stats

SCRIPT = Path(__file__).with_name("client.py")
CLIENTS = {"transformers": BERT, "diffusers": SD}  # client -> the model repository it loads
COUNTED = ("info", "resolve", "head", "body", "cdn", "range")
SAMPLE_TIMEOUT_S = 300.0
OUTPUT_TAIL_BYTES = (
    4 * 2**20
)  # of a sample's stdout and stderr, the end is read (the result is its last line)


class ModelClientRounds:
    """``lines``: line name -> its Python; ``pins``: the manifest's repos; ``stats``: per target the
    fixture's ``/__stats`` URL (None: no counts)."""

    def __init__(
        self,
        ctx: Context,
        lines: dict[str, str],
        pins: dict[str, dict[str, Any]],
        commit: str,
        stats: dict[str, str | None],
        gate: Gate,
        rounds: int,
        local: Path | None = None,
    ):
        self.ctx, self.lines, self.pins, self.commit = ctx, lines, pins, commit
        self.stats, self.gate, self.rounds, self.local = stats, gate, rounds, local

    def run(self, section: Section) -> dict[str, Any]:
        names = [t.name for t in self.ctx.targets]
        out: dict[str, Any] = {"rounds": self.rounds, "gate": self.gate.to_json(), "lines": {}}
        index = 0
        for line, python in self.lines.items():
            per: dict[str, Any] = {}
            imports: dict[str, dict[str, float | None]] = {}
            primed: dict[str, dict[str, float | None]] = {}
            for client, model in CLIENTS.items():
                label = f"{client} ({line} line)"
                samples, imports[client], primed[client] = self._rounds(label, index, python, client, model)
                per[client] = self._summarize(label, names, samples, section)
                index += 1
            versions: dict[str, str] = next(
                (s["versions"] for c in per.values() for s in c["samples"] if s.get("versions")), {}
            )
            out["lines"][line] = {
                "python": python,
                "versions": versions,
                "clients": per,
                "imports_ms": imports,
                "primed_ms": primed,
            }
        return out

    def _rounds(
        self, label: str, index: int, python: str, client: str, model: str
    ) -> tuple[list[dict[str, Any]], dict[str, float | None], dict[str, float | None]]:
        """The rounds of one client of one line: the samples, and the imports and the load of the
        local copy each target's client process made (once, before its first sample)."""
        names = [t.name for t in self.ctx.targets]
        by_name = {t.name: t for t in self.ctx.targets}
        prime = None if self.local is None else self.local / model
        with contextlib.ExitStack() as stack:
            warm: dict[str, WarmClient] = {}

            def sample(name: str) -> dict[str, Any]:
                if name not in warm:
                    warm[name] = stack.enter_context(WarmClient(python, client, by_name[name], prime))
                return self._sample(warm[name], model, by_name[name])

            samples = client_rounds.alternate(label, index, names, self.rounds, sample, self.ctx.progress)
            return (
                samples,
                {name: w.imports_ms for name, w in warm.items()},
                {name: w.primed_ms for name, w in warm.items()},
            )

    def _sample(self, warm: WarmClient, model: str, target: Target) -> dict[str, Any]:
        repo = repo_id(model)
        before = self._counts(target.name, repo)
        start = time.perf_counter()
        try:
            proc = warm.sample(repo, self.commit, SAMPLE_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            return {"ms": None, "ok": False, "error": f"timed out after {SAMPLE_TIMEOUT_S:g} s"}
        process_ms = (time.perf_counter() - start) * 1000.0
        after = self._counts(target.name, repo)
        out = self._verify(warm.client, model, proc)
        out["process_ms"] = process_ms
        out["fixture_requests"] = (
            None if before is None or after is None else {k: after[k] - before[k] for k in COUNTED}
        )
        return out

    def _counts(self, target: str, repo: str) -> dict[str, int] | None:
        url = self.stats.get(target)
        doc = read_stats(self.ctx.client, url) if url else None
        if doc is None:
            return None
        counts = (doc.get("repos") or {}).get(repo, {})
        return {k: counts.get(k, 0) for k in COUNTED}

    def _verify(self, client: str, model: str, proc: subprocess.CompletedProcess) -> dict[str, Any]:
        lines = [x for x in proc.stdout.splitlines() if x.strip()]
        if proc.returncode != 0 or not lines:
            err = [x.strip() for x in proc.stderr.splitlines() if x.strip()] or lines or ["no output"]
            return {"ms": None, "ok": False, "exit_code": proc.returncode, "error": err[-1][:300]}
        try:
            result = json.loads(lines[-1])
        except ValueError:
            return {"ms": None, "ok": False, "error": f"unexpected output: {lines[-1][:200]}"}
        out = {
            "ms": result["ms"],
            "ok": False,
            "steps_ms": result["steps_ms"],
            "output_shape": result["output_shape"],
            "files": len(result["files"]),
            "versions": result["versions"],
        }
        pins = self.pins[model]
        wrong = sorted(
            p for p, digest in result["files"].items() if (pins.get(p) or {}).get("sha256") != digest
        )
        if wrong:
            out["error"] = f"downloaded {', '.join(wrong)} not as pinned"
        elif client == "diffusers" and result["output_shape"] != [1, 32, 32, 3]:
            out["error"] = f"the pipeline made an image of shape {result['output_shape']}, not 1x32x32x3"
        else:
            out["ok"] = True
        return out

    def _summarize(
        self, label: str, names: list[str], samples: list[dict[str, Any]], section: Section
    ) -> dict[str, Any]:
        summary, comparisons = summarize_into(section, label, names, samples, self.gate, self.ctx)
        for name in names:
            mine = [s for s in samples if s["target"] == name]
            ok = [s for s in mine if s["ok"]]
            # requests the fixture answered: API calls, resolves (HEAD and GET), CDN fetches
            counted = [requests(s["fixture_requests"]) for s in mine if s.get("fixture_requests") is not None]
            summary[name].update(
                process_p50_ms=percentiles([s["process_ms"] for s in ok], (0.5,))[0],
                fixture_requests=counted or None,
                fixture_requests_median=median_or_none(counted),
                errors=sorted({s["error"] for s in mine if s.get("error")}),
            )
        return {"samples": samples, "summary": summary, "comparisons": comparisons}


class WarmClient:
    """One ``client.py serve`` process of a line's Python for one client and target: started on
    the first sample (its imports, the load of ``prime``, a local copy of the model, then
    ``{"ready"}``), one forked sample per :meth:`sample`,
    killed with its process group at the end. A sample that does not answer within its timeout
    kills it (the next sample starts another); a process that died answers every sample with its
    exit code and the end of its stderr, as a sample process that failed would."""

    def __init__(self, python: str, client: str, target: Target, prime: Path | None = None):
        self.python, self.client, self.target, self.prime = python, client, target, prime
        self.tmp = Path(tempfile.mkdtemp(prefix="httpbench-model-client-"))
        self.proc: subprocess.Popen | None = None
        self.imports_ms: float | None = None
        self.primed_ms: float | None = None
        self._buffer = b""
        self._count = 0

    def __enter__(self) -> WarmClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop()
        shutil.rmtree(self.tmp, ignore_errors=True)

    def sample(self, repo: str, rev: str, timeout: float) -> subprocess.CompletedProcess:
        """One sample; its process's exit code, stdout and stderr (TimeoutExpired after ``timeout``)."""
        deadline = time.monotonic() + timeout
        self._count += 1
        out, err = self.tmp / f"sample-{self._count}.out", self.tmp / f"sample-{self._count}.err"
        argv = [self.python, str(SCRIPT), self.client, repo, rev]
        if self.proc is None:
            self._start()
            ready = self._reply(deadline)
            if ready is None:
                return self._died(argv)
            self.imports_ms, self.primed_ms = ready.get("imports_ms"), ready.get("primed_ms")
        assert self.proc is not None and self.proc.stdin is not None
        request = {"repo": repo, "rev": rev, "out": str(out), "err": str(err)}
        try:
            self.proc.stdin.write((json.dumps(request) + "\n").encode())
            self.proc.stdin.flush()
        except BrokenPipeError:
            return self._died(argv)
        reply = self._reply(deadline)
        if reply is None:
            return self._died(argv)
        code = int(reply["exit"])
        texts = [_tail(p) for p in (out, err)]
        for p in (out, err):
            p.unlink(missing_ok=True)
        return subprocess.CompletedProcess(argv, code, texts[0], texts[1])

    def _start(self) -> None:
        env = client_env(self.target, str(self.tmp / "hf-home"))
        self._buffer = b""
        with open(self.tmp / "serve.err", "wb") as errors, client_rounds.sigint_deferred():
            self.proc = subprocess.Popen(
                [self.python, str(SCRIPT), "serve", self.client, *([str(self.prime)] if self.prime else [])],
                cwd=self.tmp,
                env=env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=errors,
                start_new_session=True,  # a Ctrl-C reaches httpbench, which ends the group
            )

    def _reply(self, deadline: float) -> dict[str, Any] | None:
        """The process's next reply (None: it ended without one); TimeoutExpired at ``deadline``.
        A line that is not one (the process prints its own on stderr, but a library may write to
        its stdout) is passed over."""
        assert self.proc is not None and self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        with selectors.DefaultSelector() as sel:
            sel.register(fd, selectors.EVENT_READ)
            while True:
                while b"\n" not in self._buffer:
                    left = deadline - time.monotonic()
                    if left <= 0 or not sel.select(left):
                        args = self.proc.args
                        self._stop()
                        raise subprocess.TimeoutExpired(args, 0)
                    chunk = os.read(fd, 65536)
                    if not chunk:
                        return None
                    self._buffer = (self._buffer + chunk)[-OUTPUT_TAIL_BYTES:]
                line, _, self._buffer = self._buffer.partition(b"\n")
                with contextlib.suppress(ValueError):
                    reply = json.loads(line)
                    if isinstance(reply, dict) and ("exit" in reply or "ready" in reply):
                        return reply

    def _died(self, argv: list[str]) -> subprocess.CompletedProcess:
        """The answer of a process that ended: its exit code, what it printed on stderr."""
        assert self.proc is not None
        code = self.proc.wait()
        self.proc = None
        return subprocess.CompletedProcess(argv, code if code else 1, "", _tail(self.tmp / "serve.err"))

    def _stop(self) -> None:
        if self.proc is None:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
        self.proc = None


def _tail(path: Path) -> str:
    """The last :data:`OUTPUT_TAIL_BYTES` of ``path`` as text ("" when there is no such file)."""
    try:
        with open(path, "rb") as fh:
            fh.seek(max(0, os.fstat(fh.fileno()).st_size - OUTPUT_TAIL_BYTES))
            return fh.read(OUTPUT_TAIL_BYTES).decode(errors="replace")
    except FileNotFoundError:
        return ""


def requests(counts: dict[str, int]) -> int:
    """The requests one sample made the fixture answer (``body``, ``head``, ``range`` are kinds of them)."""
    return counts["info"] + counts["resolve"] + counts["cdn"]
