"""Real-client rounds on the tiny model repositories: Transformers (config, tokenizer, model, one
forward pass on ``httpbench/tiny-bert``) and Diffusers (``StableDiffusionPipeline`` load and one 32x32
step on ``httpbench/tiny-sd``), per client line (each its own Python), per target in alternating
order; every sample a subprocess with a fresh ``HF_HOME`` (:mod:`client` runs in it).

A sample counts when the process exits 0, every file it downloaded is the pinned bytes and the
output has the expected shape. Its time is the clients' calls (interpreter and imports excluded,
recorded beside it as ``process_ms``). The fixture's own request counts for the repository are read
from ``/__stats`` before and after each sample (through an nginx cache, what the cache asked the
upstream for). Gate: the ``client`` gate per line and client.
"""

from __future__ import annotations

import json
import shutil
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
    ):
        self.ctx, self.lines, self.pins, self.commit = ctx, lines, pins, commit
        self.stats, self.gate, self.rounds = stats, gate, rounds

    def run(self, section: Section) -> dict[str, Any]:
        names = [t.name for t in self.ctx.targets]
        by_name = {t.name: t for t in self.ctx.targets}
        out: dict[str, Any] = {"rounds": self.rounds, "gate": self.gate.to_json(), "lines": {}}
        index = 0
        for line, python in self.lines.items():
            per: dict[str, Any] = {}
            for client, model in CLIENTS.items():
                label = f"{client} ({line} line)"

                def sample(name: str, client: str = client, model: str = model, python: str = python):
                    return self._sample(python, client, model, by_name[name])

                samples = client_rounds.alternate(label, index, names, self.rounds, sample, self.ctx.progress)
                per[client] = self._summarize(label, names, samples, section)
                index += 1
            versions: dict[str, str] = next(
                (s["versions"] for c in per.values() for s in c["samples"] if s.get("versions")), {}
            )
            out["lines"][line] = {"python": python, "versions": versions, "clients": per}
        return out

    def _sample(self, python: str, client: str, model: str, target: Target) -> dict[str, Any]:
        repo = repo_id(model)
        tmp = tempfile.mkdtemp(prefix="httpbench-model-client-")
        try:
            env = client_env(target, str(Path(tmp) / "hf-home"))
            before = self._counts(target.name, repo)
            start = time.perf_counter()
            try:
                proc = client_rounds.run_process(
                    [python, str(SCRIPT), client, repo, self.commit],
                    cwd=tmp,
                    env=env,
                    timeout=SAMPLE_TIMEOUT_S,
                )
            except subprocess.TimeoutExpired:
                return {"ms": None, "ok": False, "error": f"timed out after {SAMPLE_TIMEOUT_S:g} s"}
            process_ms = (time.perf_counter() - start) * 1000.0
            after = self._counts(target.name, repo)
            out = self._verify(client, model, proc)
            out["process_ms"] = process_ms
            out["fixture_requests"] = (
                None if before is None or after is None else {k: after[k] - before[k] for k in COUNTED}
            )
            return out
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

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


def requests(counts: dict[str, int]) -> int:
    """The requests one sample made the fixture answer (``body``, ``head``, ``range`` are kinds of them)."""
    return counts["info"] + counts["resolve"] + counts["cdn"]
