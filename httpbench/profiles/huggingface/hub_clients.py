"""Real huggingface_hub client rounds: ``hf_hub_download``, ``snapshot_download`` and ``hf download``
against every target, one subprocess per sample with a fresh ``HF_HOME``.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from httpbench.errors import HttpbenchError
from httpbench.measure import client_rounds
from httpbench.measure.gates import add_failures
from httpbench.measure.percentiles import percentiles
from httpbench.model import Gate, Target
from httpbench.profiles import Context, Section
from httpbench.profiles.huggingface.base import ModelProfile

_CLIENT_ENV = {
    "HF_HUB_DISABLE_TELEMETRY": "1",
    "HF_HUB_DISABLE_XET": "1",
    "HF_HUB_DISABLE_UPDATE_CHECK": "1",
    "HF_HUB_DISABLE_PROGRESS_BARS": "1",
    "HF_HUB_DISABLE_IMPLICIT_TOKEN": "1",
    "DO_NOT_TRACK": "1",
}


_CLIENT_SCRIPT = r"""
import hashlib, json, os, sys, time
kind, repo, rev, name = sys.argv[1:5]
from huggingface_hub import hf_hub_download, snapshot_download
start = time.perf_counter()
if kind == "hf_hub_download":
    path = hf_hub_download(repo, name, revision=rev)
    files = [name]
else:
    folder = snapshot_download(repo, revision=rev)
    path = os.path.join(folder, name)
    files = sorted(os.path.relpath(os.path.join(d, f), folder) for d, _, fs in os.walk(folder) for f in fs)
elapsed = (time.perf_counter() - start) * 1000.0
with open(path, "rb") as fh:
    digest = hashlib.sha256(fh.read()).hexdigest()
print(json.dumps({"ms": elapsed, "sha256": digest, "files": files}))
"""

CLIENTS = ("hf_hub_download", "snapshot_download", "hf download")


class ClientRounds:
    """The real huggingface_hub client against every target, one subprocess per sample."""

    def __init__(self, profile: ModelProfile, ctx: Context, gate: Gate):
        self.p = profile
        self.ctx = ctx
        self.gate = gate
        self.timeout = max(ctx.timeout * 6, 120.0)
        self.hf = _hf_cli()

    def run(self, section: Section) -> dict[str, Any]:
        names = [t.name for t in self.ctx.targets]
        by_name = {t.name: t for t in self.ctx.targets}
        rounds = self.p.values["hf_client_rounds"]
        out: dict[str, Any] = {"rounds": rounds, "gate": self.gate.to_json(), "clients": {}}
        for c_idx, client in enumerate(CLIENTS):
            if client == "hf download" and self.hf is None:
                section.notes.append(
                    "client rounds: the hf command was not found next to this Python; skipped"
                )
                continue

            def sample(name: str, client: str = client) -> dict[str, Any]:
                return self._sample(client, by_name[name])

            samples = client_rounds.alternate(client, c_idx, names, rounds, sample, self.ctx.progress)
            out["clients"][client] = self._summarize(client, names, samples, section)
        return out

    def _sample(self, client: str, target: Target) -> dict[str, Any]:
        tmp = tempfile.mkdtemp(prefix="httpbench-hf-client-")
        try:
            env = client_env(target, os.path.join(tmp, "hf-home"))
            argv = client_argv(client, self.p.repo, self.p.revision, self.p.file, self.hf)
            start = time.perf_counter()
            try:
                proc = client_rounds.run_process(argv, cwd=tmp, env=env, timeout=self.timeout)
            except subprocess.TimeoutExpired:
                return {
                    "ms": None,
                    "process_ms": None,
                    "ok": False,
                    "error": f"timed out after {self.timeout:g} s",
                }
            process_ms = (time.perf_counter() - start) * 1000.0
            return self._verify(client, proc, process_ms, Path(env["HF_HOME"]))
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def _verify(
        self, client: str, proc: subprocess.CompletedProcess, process_ms: float, home: Path
    ) -> dict[str, Any]:
        out: dict[str, Any] = {"ms": None, "process_ms": process_ms, "ok": False}
        lines = [line for line in proc.stdout.splitlines() if line.strip()]
        if proc.returncode != 0 or (not lines and client != "hf download"):
            err = [line for line in proc.stderr.splitlines() if line.strip()]
            out["error"] = f"exit {proc.returncode}: {(err or lines or ['no output'])[-1][:300]}"
            return out
        if client == "hf download":  # its output format varies by version: find the file
            found = sorted(home.glob(f"hub/models--*/snapshots/*/{self.p.file}"))
            digest = hashlib.sha256(found[0].read_bytes()).hexdigest() if found else None
            out["ms"] = process_ms
        else:
            try:
                result = json.loads(lines[-1])
            except ValueError:
                out["error"] = f"unexpected output: {lines[-1][:200]}"
                return out
            digest, out["ms"] = result["sha256"], result["ms"]
            if client == "snapshot_download":
                out["files"] = len(result["files"])
        if digest != self.p.sha256:
            out["error"] = f"downloaded {self.p.file} has SHA-256 {digest}, expected {self.p.sha256}"
            return out
        out["ok"] = True
        return out

    def _summarize(
        self, client: str, names: list[str], samples: list[dict[str, Any]], section: Section
    ) -> dict[str, Any]:
        summary, comparisons = summarize_into(section, client, names, samples, self.gate, self.ctx)
        for name in names:
            ok = [s for s in samples if s["target"] == name and s["ok"]]
            w50, w95 = percentiles([s["process_ms"] for s in ok], (0.5, 0.95))
            summary[name].update(
                process_p50_ms=w50, process_p95_ms=w95, timed="process" if client == "hf download" else "call"
            )
        return {"samples": samples, "summary": summary, "comparisons": comparisons}


def summarize_into(
    section: Section, label: str, names: list[str], samples: list[dict[str, Any]], gate: Gate, ctx: Context
) -> tuple[dict[str, Any], dict[str, Any]]:
    """A client's samples summarized per target and compared (the ``client`` gate), its failed and
    undecided gates added to the section. Returns (summary, comparisons)."""
    summary, comparisons, fails = client_rounds.summarize(label, names, samples, gate, ctx.method, ctx.alpha)
    add_failures(section.gate_failures, fails)
    add_failures(
        section.inconclusive, [c["inconclusive"] for c in comparisons.values() if c.get("inconclusive")]
    )
    return summary, comparisons


def client_env(target: Target, home: str, xet: bool = False) -> dict[str, str]:
    """The environment of one client sample: ``HF_ENDPOINT`` = the target, a fresh ``HF_HOME``,
    telemetry, update checks and (unless ``xet``) Xet off; no inherited ``HF_*`` setting."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGINGFACE_"))}
    env.update(_CLIENT_ENV)
    if xet:
        env.pop("HF_HUB_DISABLE_XET")
    env.update(HF_ENDPOINT=target.url, HF_HOME=home)
    if target.auth_header and target.auth_header.startswith("Bearer "):
        env["HF_TOKEN"] = target.auth_header[7:]
    return env


def client_argv(client: str, repo: str, revision: str, file: str, hf: str | None = None) -> list[str]:
    """One client sample: ``hf download`` (needs the ``hf`` program) or a Python subprocess calling
    ``hf_hub_download`` / ``snapshot_download`` that prints the call's time and the file's SHA-256."""
    if client == "hf download":
        if hf is None:
            raise HttpbenchError("the hf command was not found next to this Python")
        return [hf, "download", repo, file, "--revision", revision]
    if client not in CLIENTS:
        raise HttpbenchError(f"unknown client {client!r} (known: {', '.join(CLIENTS)})")
    return [sys.executable, "-c", _CLIENT_SCRIPT, client, repo, revision, file]


def _hf_cli() -> str | None:
    local = Path(sys.executable).parent / "hf"
    return str(local) if local.is_file() and os.access(local, os.X_OK) else shutil.which("hf")
