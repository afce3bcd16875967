"""Cold fill: fresh-repository samples per target (alternating order), one concurrent-miss sample,
and the upstream fixture's fetch counts per fresh repository (singleflight).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, replace
from typing import Any

from httpbench.measure import engine
from httpbench.measure.gates import add_failures, decision_message, paired_samples
from httpbench.measure.percentiles import median_or_none, ratio
from httpbench.measure.schedule import round_order
from httpbench.model import Expectation, Gate, RoundResult, Scenario, Target
from httpbench.profiles import Context, Section
from httpbench.profiles.huggingface.base import ModelProfile
from httpbench.profiles.huggingface.stats import STATS_MAX_BYTES as STATS_MAX_BYTES
from httpbench.profiles.huggingface.stats import read_stats


@dataclass(frozen=True)
class ColdPlan:
    """Per target: the base URL of each cold sample (index 1..n) and the stats URL, if any."""

    urls: dict[str, list[str]]
    stats: dict[str, str | None]
    repos: dict[str, list[str]]


class ColdFill:
    """Fresh-repository samples per target (alternating), plus one concurrent-miss sample."""

    def __init__(self, profile: ModelProfile, ctx: Context, plan: ColdPlan, gate: Gate):
        self.p = profile
        self.ctx = ctx
        self.plan = plan
        self.gate = gate
        self.timeout = max(ctx.timeout, 30.0)
        self.stats_ok: dict[str, bool] = {}

    def run(self, section: Section) -> dict[str, Any]:
        targets = {t.name: t for t in self.ctx.targets}
        names = list(targets)
        samples: dict[str, list[dict[str, Any]]] = {n: [] for n in names}
        concurrent: dict[str, dict[str, Any]] = {}
        n = self.p.values["cold_samples"]
        with asyncio.Runner(loop_factory=engine.new_event_loop) as runner:
            for i in range(1, n + 1):
                for pos, name in enumerate(round_order(names, 0, i - 1), 1):
                    samples[name].append(self._sample(runner, targets[name], i, pos, 1))
            k = self.p.values["cold_concurrency"]
            if k:
                for pos, name in enumerate(round_order(names, 1, n), 1):
                    concurrent[name] = self._sample(runner, targets[name], n + 1, pos, k)
        summary = {name: self._summarize(samples[name], concurrent.get(name)) for name in names}
        record = {
            "samples_per_target": n,
            "concurrency": self.p.values["cold_concurrency"],
            "run": self.p.run_token,
            "gate": self.gate.to_json(),
            "samples": samples,
            "concurrent": concurrent,
            "summary": summary,
            "comparisons": self._compare(names, summary, section, samples),
        }
        self._singleflight(names, samples, concurrent, section)
        return record

    def _sample(self, runner: asyncio.Runner, main: Target, i: int, pos: int, k: int) -> dict[str, Any]:
        url = self.plan.urls[main.name][i - 1]
        repo = self.plan.repos[main.name][i - 1]
        target, userinfo = Target.parse(main.name, url)
        if userinfo:
            target = target.with_credentials(userinfo)
        elif (target.scheme, target.host, target.port) == (main.scheme, main.host, main.port):
            target = replace(target, auth_header=main.auth_header)  # same server: its credentials
        # another server gets no credentials unless its URL carries them: never leak them elsewhere
        path = self.p.file_path(repo)
        scenario = Scenario("cold fill", path, klass="payload", length=self.p.size, sha256=self.p.sha256)
        spec = engine.RoundSpec(
            target=target,
            scenario=scenario,
            expectation=Expectation(200, self.p.size, self.p.sha256),
            warmups=0,
            requests=k,
            concurrency=k,
            timeout=self.timeout,
            keep_samples=True,
            verify_digest=True,
        )
        before = self._stats(main.name)
        result: RoundResult = runner.run(engine.run_round(spec, i, pos, [main.name]))
        after = self._stats(main.name)
        upstream = _delta(before, after, repo, self.p.file)
        out = {
            "sample": i,
            "position": pos,
            "url": target.url,
            "repo": repo,
            "requests": k,
            "ok": result.ok,
            "failure_kinds": result.failure_kinds,
            "total_ms": result.max_ms if k > 1 else result.p50_ms,
            "ttfb_ms": result.ttfb_p50_ms,
            "samples_ms": result.samples_ms,
            "mibps": (self.p.size / 1048576) / (result.p50_ms / 1000.0)
            if result.ok and result.p50_ms and self.p.size
            else None,
            "connect_ms": result.connect_ms.get("p50"),
            "upstream": upstream,
        }
        if k == 1:
            out.pop("samples_ms")
        state = f"{out['total_ms']:.1f} ms" if result.ok == k else f"FAILED {result.failure_kinds}"
        fetches = (
            "" if upstream is None else f", upstream resolve {upstream['resolve']} body {upstream['body']}"
        )
        self.ctx.progress(
            f"cold fill {'x' + str(k) + ' concurrent' if k > 1 else 'sample ' + str(i)} "
            f"{main.name}: {state}{fetches}"
        )
        return out

    def _stats(self, name: str) -> dict[str, Any] | None:
        url = self.plan.stats[name]
        if url is None or self.stats_ok.get(name) is False:
            return None
        doc = read_stats(self.ctx.client, url)
        if doc is None:
            self.stats_ok[name] = False
            return None
        self.stats_ok[name] = True
        return doc

    def _summarize(self, samples: list[dict[str, Any]], conc: dict[str, Any] | None) -> dict[str, Any]:
        good = [s for s in samples if s["ok"] == s["requests"]]
        ups = [s["upstream"] for s in samples if s["upstream"] is not None]
        return {
            "samples": len(samples),
            "ok": len(good),
            "failures": len(samples) - len(good),
            "median_total_ms": median_or_none(s["total_ms"] for s in good),
            "median_ttfb_ms": median_or_none(s["ttfb_ms"] for s in good),
            "median_mibps": median_or_none(s["mibps"] for s in good),
            "upstream_resolve_per_repo": max((u["resolve"] for u in ups), default=None),
            "upstream_body_per_repo": max((u["body"] for u in ups), default=None),
            "concurrent": None
            if conc is None
            else {
                "requests": conc["requests"],
                "ok": conc["ok"],
                "max_ms": conc["total_ms"],
                "upstream_body": None if conc["upstream"] is None else conc["upstream"]["body"],
                "upstream_resolve": None if conc["upstream"] is None else conc["upstream"]["resolve"],
            },
        }

    def _compare(
        self,
        names: list[str],
        summary: dict[str, Any],
        section: Section,
        samples: dict[str, list[dict[str, Any]]],
    ) -> dict[str, Any]:
        base = names[0]
        out = {}
        for cand in names[1:]:
            if self.ctx.method == "paired":
                out[cand] = self._paired(base, cand, summary, samples, section)
                continue
            r = ratio(summary[cand]["median_mibps"], summary[base]["median_mibps"])
            fails = [
                f"cold fill: {n} had {summary[n]['failures']} failed sample(s)"
                for n in (base, cand)
                if summary[n]["failures"]
            ]
            if r is None:
                fails.append(f"cold fill: {cand} throughput ratio cannot be computed")
            elif r < self.gate.min_throughput_ratio:
                fails.append(
                    f"cold fill: {cand} median throughput {r:.3f}x {base} < "
                    f"{self.gate.min_throughput_ratio:.2f}x (cold gate)"
                )
            out[cand] = {
                "baseline": base,
                "throughput_ratio": r,
                "ttfb_ratio": ratio(summary[cand]["median_ttfb_ms"], summary[base]["median_ttfb_ms"]),
                "passed": not fails,
            }
            add_failures(section.gate_failures, fails)
        return out

    def _paired(
        self,
        base: str,
        cand: str,
        summary: dict[str, Any],
        samples: dict[str, list[dict[str, Any]]],
        section: Section,
    ) -> dict[str, Any]:
        """The cold gate on the interval of the per-sample throughput ratios (sample i of every
        target is a pair: adjacent in time, alternating order)."""

        def mibps(name: str) -> list[float | None]:
            return [s["mibps"] if s["ok"] == s["requests"] else None for s in samples[name]]

        fails = [
            f"cold fill: {n} had {summary[n]['failures']} failed sample(s)"
            for n in (base, cand)
            if summary[n]["failures"]
        ]
        d = paired_samples(
            "cold throughput",
            mibps(base),
            mibps(cand),
            self.gate.min_throughput_ratio,
            "below",
            self.ctx.alpha,
        )
        if d.verdict == "fail":
            fails.append(decision_message(f"cold fill: {cand}", d, "cold"))
        elif d.verdict == "inconclusive" and not fails:
            section.inconclusive.append(decision_message(f"cold fill: {cand}", d, "cold"))
        add_failures(section.gate_failures, fails)
        verdict = "fail" if fails else d.verdict
        return {
            "baseline": base,
            "throughput_ratio": ratio(summary[cand]["median_mibps"], summary[base]["median_mibps"]),
            "ttfb_ratio": ratio(summary[cand]["median_ttfb_ms"], summary[base]["median_ttfb_ms"]),
            "decision": d.to_json(),
            "verdict": verdict,
            "passed": verdict == "pass",
        }

    def _singleflight(
        self,
        names: list[str],
        samples: dict[str, list[dict[str, Any]]],
        concurrent: dict[str, dict[str, Any]],
        section: Section,
    ) -> None:
        for idx, name in enumerate(names):
            if not self.stats_ok.get(name):
                section.notes.append(
                    f"cold fill: no upstream request counts for {name} (no fixture "
                    "/__stats; give --stats-url)"
                )
                continue
            runs = samples[name] + ([concurrent[name]] if name in concurrent else [])
            worst = max(runs, key=lambda s: (s["upstream"] or {}).get("body", 0))
            body = (worst["upstream"] or {}).get("body", 0)
            if body <= 1:
                continue
            what = (
                f"{body} upstream body fetches of {self.p.file} for one fresh repository "
                f"({worst['requests']} request(s) in sample {worst['sample']})"
            )
            if idx == 0:
                section.notes.append(f"cold fill: baseline {name}: {what}")
            else:
                add_failures(section.gate_failures, [f"cold fill: {name}: {what}; expected 1 (singleflight)"])


def _delta(
    before: dict[str, Any] | None, after: dict[str, Any] | None, repo: str, file: str
) -> dict[str, int] | None:
    if before is None or after is None:
        return None

    def counts(doc: dict[str, Any]) -> dict[str, int]:
        return (doc.get("files") or {}).get(repo, {}).get(file, {})

    b, a = counts(before), counts(after)
    return {k: a.get(k, 0) - b.get(k, 0) for k in ("resolve", "head", "body", "range", "cdn")}
