"""The compare run: preflight, alternating rounds, summaries, ratios, gates, result document."""

from __future__ import annotations

import asyncio
import datetime as _dt
import os
import platform
import socket
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httptools

from httpbench import __version__
from httpbench.measure import client_rounds, engine, gates, paired, preflight
from httpbench.measure.schedule import round_order
from httpbench.model import DEFAULT_GATES, SCHEMA, Gate, RoundResult, Scenario, Target
from httpbench.profiles import Context, Profile, Section
from verdict import FAIL, INCONCLUSIVE, PASS, combine

METHODS = ("paired", "seed")


@dataclass(kw_only=True)
class Config:
    targets: list[Target]
    scenarios: list[Scenario]
    warmups: int = 32
    requests: int = 250
    concurrency: int = 16
    rounds: int = 3
    timeout: float = 10.0
    rate: float | None = None
    gates: dict[str, Gate] = field(default_factory=lambda: dict(DEFAULT_GATES))
    keep_samples: bool = False
    verify_digest: bool = False
    profile: Profile | None = None
    client_commands: list[client_rounds.ClientCommand] = field(default_factory=list)
    client_rounds: int = 3
    client_timeout: float = 300.0
    digest_every: int | None = None
    method: str = "paired"  # "paired" (intervals, sequential) or "seed" (the seeds' procedure)
    plan: paired.Plan = field(default_factory=paired.Plan)
    self_control: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "targets": [t.to_json() for t in self.targets],
            "baseline": self.targets[0].name,
            "method": self.method,
            "self_control": self.self_control,
            "paired": self.plan.to_json() if self.method == "paired" else None,
            "scenarios": [s.to_json() for s in self.scenarios],
            "warmups": self.warmups,
            "requests": self.requests,
            "concurrency": self.concurrency,
            "rounds": self.rounds,
            "timeout_s": self.timeout,
            "mode": "open" if self.rate else "closed",
            "rate": self.rate,
            "verify_digest": self.verify_digest,
            "digest_every": self.digest_every,
            "gates": {k: g.to_json() for k, g in sorted(self.gates.items())},
            "profile": self.profile.name if self.profile else None,
            "client_rounds": self.client_rounds if self.client_commands else 0,
        }


def environment() -> dict[str, Any]:
    try:
        load = list(os.getloadavg())
    except OSError:
        load = None
    return {
        "generated_at": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "host": socket.gethostname(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "cpu_count": os.cpu_count(),
        "loadavg": load,
        "httpbench": __version__,
        "event_loop": engine.loop_name(),
        "httptools": httptools.__version__,
        "client": "single-process asyncio event loop, httptools parser, one keep-alive "
        "connection per worker opened before the clock",
        "client_bound_cpu_threshold": engine.CLIENT_BOUND_CPU,
    }


def run(cfg: Config, progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Profile preflight, generic preflight (both before any timing), the alternating HTTP rounds,
    real-client rounds, the profile's extra phases; then the result document."""
    ctx = Context(cfg.targets, cfg.timeout, progress, cfg.gates, method=cfg.method, alpha=cfg.plan.alpha)
    try:
        profile_pre = cfg.profile.preflight(ctx) if cfg.profile else None
        if cfg.profile:  # a profile's scenarios may be exact only after its preflight (sizes, digests)
            fresh = {s.name: s for s in cfg.profile.scenarios()}
            cfg.scenarios = [fresh.get(s.name, s) for s in cfg.scenarios]
        expectations, preflight_records = preflight.check(cfg.targets, cfg.scenarios, cfg.timeout, ctx.client)
        rounds, paired_section = _timed_rounds(cfg, expectations, progress)
        client_section, client_failures = _real_clients(cfg, progress)
        profile_post = cfg.profile.after_rounds(ctx) if cfg.profile else None
    finally:
        ctx.close()
    doc = assemble(cfg, preflight_records, rounds, paired_section)
    if cfg.profile:
        assert profile_pre is not None and profile_post is not None  # both ran: a profile is set
        doc["profile"] = profile_document(cfg.profile, profile_pre, profile_post)
        gates.add_failures(doc["gate_failures"], profile_post.gate_failures)
        gates.add_failures(doc["inconclusive"], profile_post.inconclusive)
    if client_section is not None:
        doc["clients"] = client_section
        gates.add_failures(doc["gate_failures"], client_failures)
        gates.add_failures(doc["inconclusive"], client_rounds.undecided(client_section))
    doc["verdict"] = run_verdict(doc)
    return doc


def _timed_rounds(
    cfg: Config, expectations: dict, progress: Callable[[str], None] | None
) -> tuple[list[RoundResult], dict[str, Any] | None]:
    """The timed HTTP rounds: the paired method's (with its ``paired`` section), or the seeds'."""
    if cfg.method != "paired":
        return http_rounds(cfg, expectations, progress), None
    settings = paired.Settings(**round_settings(cfg))
    return paired.run(
        cfg.targets, cfg.scenarios, expectations, settings, cfg.gates, cfg.plan, cfg.self_control, progress
    )


def _real_clients(
    cfg: Config, progress: Callable[[str], None] | None
) -> tuple[dict[str, Any] | None, list[str]]:
    """The real-client rounds, when a client command is given: their section and gate failures."""
    if not cfg.client_commands:
        return None, []
    return client_rounds.run(
        cfg.client_commands,
        cfg.targets,
        cfg.client_rounds,
        cfg.client_timeout,
        cfg.gates.get("client", client_rounds.DEFAULT_CLIENT_GATE),
        progress,
        method=cfg.method,
        alpha=cfg.plan.alpha,
    )


def run_verdict(doc: dict[str, Any]) -> str:
    """The run's verdict: ``fail`` when any gate failed (any method, any phase), else
    ``inconclusive`` when any gate of the paired method could not be decided, else ``pass``."""
    if doc["gate_failures"]:
        return FAIL
    return combine([INCONCLUSIVE] if doc.get("inconclusive") else [PASS])


def undecided_causes(doc: dict[str, Any]) -> list[str]:
    """Why the undecided gates of a run are undecided, each with what would help (only that): one
    line per paired scenario by the reason its pairs stopped, one for real-client rounds, one for
    the profile's own samples."""
    causes = []
    paired_lines: set[str] = set()
    for name, rec in (doc.get("paired") or {}).items():
        undecided = [c for c in rec["candidates"].values() if c["verdict"] == INCONCLUSIVE]
        if not undecided:
            continue
        paired_lines.update(m for m in doc["inconclusive"] if m.startswith(f"{name}: "))
        if any(c.get("self_control_note") for c in undecided):
            causes.append(f"{name}: the A/A self-control failed (the set-up is biased; see its table)")
        else:
            causes.append(f"{name}: {_stop_cause(rec, doc['config']['paired'])}")
    if doc.get("clients") and client_rounds.undecided(doc["clients"]):
        causes.append(
            f"real clients: {doc['clients']['rounds']} pairs were too few for their noise: give more --client-rounds"
        )
    client_lines = set(client_rounds.undecided(doc["clients"])) if doc.get("clients") else set()
    if any(m not in paired_lines and m not in client_lines for m in doc["inconclusive"]):
        causes.append("the profile's own samples were too few for their noise (see its options)")
    return causes


def _stop_cause(rec: dict[str, Any], plan: dict[str, Any]) -> str:
    """What stopped an undecided scenario's pairs, and the one thing that would help."""
    pairs, stopped = rec["pairs"], rec["stopped"]
    if stopped == "fixed pairs":
        return f"{pairs} pairs (--rounds) were too few for the noise: give more --rounds (--budget has no effect with --rounds)"
    if stopped == "budget" or (stopped == "looks exhausted" and rec.get("last_look_fitted")):
        return f"the --budget ran out after {pairs} pairs: give a larger --budget"
    if stopped == "futile":
        look = rec["looks"][-1]
        chance, by = look.get("chance_to_decide") or 0.0, look.get("by_pairs", plan["looks"][-1])
        if by < plan["looks"][-1]:
            return (
                f"too close to a gate for the pairs the --budget pays for: {chance:.0%} chance that {by} "
                f"pairs decide it, so it stopped at {pairs}; a larger --budget may help"
            )
        return (
            f"too close to a gate: {chance:.0%} chance that {by} pairs (the last look) decide it, so it "
            f"stopped at {pairs}; a larger --budget would not help (a quieter machine or a wider gate would)"
        )
    if stopped == "looks exhausted":
        return (
            f"still undecided at the last look ({pairs} pairs); a larger --budget adds no look: "
            "--rounds N takes N pairs in one look, or measure on a quieter machine"
        )
    return f"a gate had too few pairs with a value ({pairs} pairs)"


def round_settings(cfg: Config) -> dict[str, Any]:
    """What every round of a run is measured with, for paired.Settings and engine.RoundSpec alike."""
    return {
        "warmups": cfg.warmups,
        "requests": cfg.requests,
        "concurrency": cfg.concurrency,
        "timeout": cfg.timeout,
        "rate": cfg.rate,
        "keep_samples": cfg.keep_samples,
        "verify_digest": cfg.verify_digest,
        "digest_every": cfg.digest_every,
    }


def http_rounds(cfg: Config, expectations: dict, progress: Callable[[str], None] | None) -> list[RoundResult]:
    names = [t.name for t in cfg.targets]
    by_name = {t.name: t for t in cfg.targets}
    rounds: list[RoundResult] = []
    with asyncio.Runner(loop_factory=engine.new_event_loop) as runner:
        for s_idx, scenario in enumerate(cfg.scenarios):
            for r_idx in range(cfg.rounds):
                order = round_order(names, s_idx, r_idx)
                for pos, name in enumerate(order, 1):
                    spec = engine.RoundSpec(
                        target=by_name[name],
                        scenario=scenario,
                        expectation=expectations[(scenario.name, name)],
                        **round_settings(cfg),
                    )
                    result = runner.run(engine.run_round(spec, r_idx + 1, pos, order))
                    rounds.append(result)
                    if progress:
                        progress(
                            f"{scenario.name} round {r_idx + 1} {name}: {result.rps:,.0f} req/s"
                            f"{f', {result.failures} failed' if result.failures else ''}"
                        )
    return rounds


def profile_document(profile: Profile, pre: Section, post: Section) -> dict[str, Any]:
    return {
        "name": profile.name,
        "options": profile.options_json(),
        "preflight": pre.records,
        "notes": pre.notes + post.notes,
        "phases": post.records,
    }


def assemble(
    cfg: Config,
    preflight_records: list[dict[str, Any]],
    rounds: list[RoundResult],
    paired_section: dict[str, Any] | None = None,
) -> dict[str, Any]:
    names = [t.name for t in cfg.targets]
    baseline = names[0]
    summaries: dict[str, dict[str, dict[str, Any]]] = {}
    comparisons: dict[str, dict[str, Any]] = {}
    gate_failures: list[str] = []
    inconclusive: list[str] = []
    for scenario in cfg.scenarios:
        per = {
            n: gates.summarize([r for r in rounds if r.scenario == scenario.name and r.target == n])
            for n in names
        }
        summaries[scenario.name] = per
        comparisons[scenario.name] = {}
        gate = cfg.gates.get(scenario.klass, DEFAULT_GATES[scenario.klass])
        for cand in names[1:]:
            ratios = gates.compare(per[baseline], per[cand])
            entry: dict[str, Any] = {
                "baseline": baseline,
                "class": scenario.klass,
                "gate": gate.to_json(),
                "ratios": ratios,
            }
            if paired_section is not None:
                decided = paired_section[scenario.name]["candidates"][cand]
                fails, unsure = gates.paired_messages(scenario, baseline, cand, decided)
                entry.update(verdict=decided["verdict"], decisions=decided["decisions"])
                inconclusive += [u for u in unsure if u not in inconclusive]
            else:
                fails = gates.evaluate(scenario, baseline, cand, per, ratios, gate)
                entry["verdict"] = FAIL if fails else PASS
            entry["passed"] = entry["verdict"] == PASS
            comparisons[scenario.name][cand] = entry
            gates.add_failures(gate_failures, fails)
    client_bound = sorted({f"{r.scenario}: {r.target}" for r in rounds if r.client_bound})
    return {
        "schema": SCHEMA,
        "environment": environment(),
        "config": cfg.to_json(),
        "preflight": preflight_records,
        "rounds": [r.to_json() for r in rounds],
        "summaries": summaries,
        "comparisons": comparisons,
        "client_bound": client_bound,
        "totals": {
            "timed_requests": sum(r.requests for r in rounds),
            "ok": sum(r.ok for r in rounds),
            "failures": sum(r.failures for r in rounds),
        },
        **({"paired": paired_section} if paired_section is not None else {}),
        "gate_failures": gate_failures,
        "inconclusive": inconclusive,
    }
