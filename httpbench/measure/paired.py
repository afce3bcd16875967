"""The paired method (the default): gates decided with uncertainty, rounds added until decided.

Measurement model (docs/statistics.md explains it in plain words):

* **Round size by time and count.** A calibration run per target (untimed, also a warm-up) measures
  the rate; every round of the scenario then times ``max(requests, rate x min_round)`` requests, the
  same count for every target, so that a round of a fast server lasts long enough to measure
  (a 250-request round against nginx lasts ~5 ms here). ``requests`` defaults to four per worker
  (64 at concurrency 16), which sizes a large body's round (64 x 4 MiB: ~130 ms).
* **Pairs.** One *pair* is one round of every target, adjacent in time, in alternating order
  (rotated by scenario + pair), each with its own warm-ups on fresh connections. Each candidate
  gives one ratio per pair and metric: throughput ``cand rps / base rps`` and ``cand p95 / base p95``.
  Slow drifts of the machine hit both halves of a pair and cancel in the ratio.
* **Interval.** For each gate, the Hodges-Lehmann estimate of the typical pair ratio with its exact
  Wilcoxon signed-rank interval, on the log scale (``verdict.stats.paired_ratio_interval``). It
  assumes only that the pair ratios are independent and symmetric about their centre.
* **Decision.** ``fail`` when the whole interval lies past the gate, ``pass`` when it lies wholly
  inside, otherwise ``inconclusive`` -- and more pairs are taken. A verdict reads only the end of
  the interval that faces the gate, so each end is a one-sided bound at the look's error rate
  (``gates.gate_interval``: the interval covers 1 - 2 x that rate): 5 pairs all past a gate decide
  at 0.05, and fewer pairs than that are refused before any request (``build._check_decidable``).
* **Sequential looks.** The interval is looked at after n0, then about 1.5x as many pairs, up to
  ``max_looks`` looks. Each look uses alpha / max_looks (Bonferroni), so looking repeatedly never
  raises the error rate above ``alpha``. A scenario stops at its first decided look. When the time
  ``budget`` (shared by the scenarios, unused time passes on) cannot pay for the next look's pairs,
  the last look is taken at the pairs it does pay for (at least 1.2x those taken, else it stops
  there); undecided after the last look, it stays ``inconclusive``.
* **Futility.** A scenario also stops, ``inconclusive``, when no undecided candidate has a
  ``futility`` (5 %) chance of being decided by the last look (a gate failing, or every gate
  passing) if the pairs to come scatter like those so far (``verdict.stats.chances_to_decide``):
  a candidate at 0.89x against a 0.90x gate is not decided by 62 pairs either, and the time is
  better left to the next scenario. Stopping without a verdict never makes a wrong pass or fail
  more likely.
* With ``fixed_pairs`` (``--rounds N``) there is one look at ``alpha`` after exactly N pairs; the
  budget has no effect then.
* **Self-control** (``--self-control``): before the comparison, each scenario is first run with the
  baseline against itself (two slots, the same server). Its interval is the noise floor on this
  machine, reported beside the verdict. An A/A that *fails* means the set-up itself is biased
  (an order or slot effect): the scenario's verdict is then at most ``inconclusive``.
"""

from __future__ import annotations

import asyncio
import dataclasses
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from httpbench.measure import engine
from httpbench.measure.gates import fewest_pairs, gate_interval, too_few
from httpbench.model import DEFAULT_GATES, Gate, RoundResult, Scenario, Target
from verdict import FAIL, INCONCLUSIVE, PASS, Decision, combine, decide
from verdict.stats import chances_to_decide

Progress = Callable[[str], None]
MAX_REQUESTS_PER_ROUND = 2_000_000
MIN_ROUND_MS = 50.0  # shorter rounds, more pairs: as steady, and cheaper per pair (docs/statistics.md)
REQUESTS_PER_WORKER = 4  # timed requests per connection and round when --requests is not given
# (then sized by time too): a round is not one synchronized burst, and its p95 is not its largest
# sample or the next one (docs/statistics.md, "Pairs": fewer or more per round did not help)
FIT_MIN_GROWTH = 1.2  # a last look fitted to the budget takes at least this many times the pairs
SELF_SUFFIX = "-self"
UNCONFIRMED = "is past the gate at one look, not confirmed: the budget ran out before the next"


@dataclass(frozen=True)
class Plan:
    """The knobs of the paired method."""

    alpha: float = 0.05  # error rate of a verdict (over all looks)
    budget_s: float = 60.0  # seconds of paired rounds for all scenarios together
    min_round_ms: float = MIN_ROUND_MS  # a timed round lasts at least this long (0: count only)
    max_looks: int = 6
    growth: float = 1.8  # pairs at the next look = previous x growth
    futility: float = 0.05  # stop early when no undecided candidate has this chance to be decided
    fixed_pairs: int | None = None  # exactly this many pairs, one look at alpha

    @property
    def looks(self) -> list[int]:
        """Pair counts at which the intervals are looked at."""
        if self.fixed_pairs:
            return [self.fixed_pairs]
        n = fewest_pairs(self.look_alpha)
        out = [n]
        while len(out) < self.max_looks:
            n = max(n + 1, math.ceil(n * self.growth))
            out.append(n)
        return out

    @property
    def look_alpha(self) -> float:
        return self.alpha if self.fixed_pairs else self.alpha / self.max_looks

    def to_json(self) -> dict[str, Any]:
        looks = self.looks
        out = {name: getattr(self, name) for name in ("alpha", "look_alpha", "budget_s", "min_round_ms")}
        return out | {"max_looks": len(looks), "looks": looks, "fixed_pairs": self.fixed_pairs}


@dataclass(kw_only=True)
class Settings:
    """What one timed round needs besides target and scenario (from the compare config)."""

    warmups: int
    requests: int
    concurrency: int
    timeout: float
    rate: float | None
    keep_samples: bool
    verify_digest: bool
    digest_every: int | None


def gate_decisions(
    scenario: Scenario, gate: Gate, base: list[RoundResult], cand: list[RoundResult], alpha: float
) -> list[Decision]:
    """The throughput and p95 decisions of one candidate on one scenario, from its pairs."""
    out = []
    failed = [r for r in (*base, *cand) if r.failures]
    if failed:
        kinds: dict[str, int] = {}
        for r in failed:
            for k, v in r.failure_kinds.items():
                kinds[k] = kinds.get(k, 0) + v
        text = ", ".join(f"{k} {v}" for k, v in sorted(kinds.items()))
        out.append(
            Decision(
                "correctness",
                FAIL,
                0.0,
                "above",
                None,
                f"{sum(r.failures for r in failed)} timed request(s) failed their checks ({text})",
            )
        )
    if gate.min_throughput_ratio > 0:
        tp = [r.rps for r in base], [r.rps for r in cand]
        iv = gate_interval(*tp, alpha)
        out.append(decide("throughput", iv, gate.min_throughput_ratio, "below", _too_few(*tp, alpha)))
    if math.isfinite(gate.max_p95_ratio):
        # rounds without a p95 (no sample) are None: gate_interval skips those pairs
        p95 = [r.p95_ms for r in base], [r.p95_ms for r in cand]
        iv = gate_interval(*p95, alpha)
        out.append(decide("p95", iv, gate.max_p95_ratio, "above", _too_few(*p95, alpha)))
    return out


@dataclass(frozen=True)
class Session:
    """What the paired rounds of every scenario of one run share."""

    runner: asyncio.Runner
    expectations: dict
    settings: Settings
    plan: Plan
    progress: Progress | None


class ScenarioRun:
    """The paired rounds of one scenario for a list of targets (the first is the baseline)."""

    def __init__(
        self,
        session: Session,
        targets: list[Target],
        scenario: Scenario,
        s_idx: int,
        gate: Gate,
        label: str = "",
        aliases: dict[str, str] | None = None,
    ):
        self.runner, self.expectations = session.runner, session.expectations
        self.settings, self.plan, self.progress = session.settings, session.plan, session.progress
        self.targets, self.scenario, self.s_idx, self.gate = targets, scenario, s_idx, gate
        self.label = label
        self.aliases = aliases or {}  # slot name -> the target whose expectations it shares
        self.rounds: list[RoundResult] = []
        self.calibration: dict[str, Any] = {}
        self.looks: list[dict[str, Any]] = []
        self.decisions: dict[str, list[Decision]] = {}
        self.stopped = ""
        self.elapsed_s = 0.0  # this scenario's own time: calibration and pairs
        self.pairs = 0
        self.requests = 0  # per round, from the calibration
        self.schedule: list[int] = self.plan.looks  # pairs at each look; the last may be fitted
        self.fitted = False  # the last look was moved to the pairs the budget pays for

    def _say(self, text: str) -> None:
        if self.progress:
            self.progress(f"{self.label}{self.scenario.name}: {text}")

    def _spec(self, target: Target, requests: int, warmups: int) -> engine.RoundSpec:
        exp = self.expectations[(self.scenario.name, self.aliases.get(target.name, target.name))]
        per_round = dataclasses.asdict(self.settings) | {"warmups": warmups, "requests": requests}
        return engine.RoundSpec(target=target, scenario=self.scenario, expectation=exp, **per_round)

    def calibrate(self) -> int:
        """Requests per round: at least ``requests``, and enough for ``min_round_ms`` at the
        fastest target's rate (measured here, untimed)."""
        s = self.settings
        want = self.plan.min_round_ms / 1000.0
        count = max(s.requests, 1)
        if s.rate:
            count = max(count, math.ceil(s.rate * want))
            self.calibration = {"rate": s.rate}
        elif want > 0:
            rates = {}
            for target in self.targets:
                n, rps = max(s.requests, 1), 0.0
                for _ in range(3):
                    r = self.runner.run(engine.run_round(self._spec(target, n, s.warmups), 0, 0, []))
                    rps = r.rps
                    if r.wall_ms / 1000.0 >= want / 2 or r.ok == 0:
                        break
                    n = min(
                        MAX_REQUESTS_PER_ROUND,
                        max(n * 2, math.ceil(n * want / max(r.wall_ms / 1000.0, 1e-4))),
                    )
                rates[target.name] = rps
            fastest = max(rates.values()) if rates else 0.0
            count = max(count, min(MAX_REQUESTS_PER_ROUND, math.ceil(fastest * want * 1.1)))
            self.calibration = {"rps": rates}
        self.calibration["requests_per_round"] = count
        return count

    def step(self, share_s: float) -> bool:
        """One pair, and the look when it completes a look's pairs; False when this scenario is
        done (decided, stopped, or the next look's pairs would not fit in ``share_s``, its share of
        the seconds left of the budget, checked when they start, and no last look fitted to that
        share is worth taking: ``fitted_look``). The first call also calibrates;
        the first look is always taken. One pair per call lets the scenarios' pairs alternate, so
        a state of the machine that lasts seconds touches few pairs of any one scenario."""
        start = time.perf_counter()
        goal = self.schedule[len(self.looks)]
        if not self.calibration:
            self.requests = self.calibrate()
            self._say(
                f"{self.requests:,} requests per round; looks at {', '.join(map(str, self.schedule))} pairs"
            )
        elif (
            self.looks
            and self.pairs == self.looks[-1]["pairs"]
            and self._per_pair() * (goal - self.pairs) > share_s
        ):
            fit = fitted_look(self.pairs, self.pairs + max(share_s, 0.0) / self._per_pair())
            if fit is None:
                self.stopped = "budget"
                self._withhold(self.looks[-1].get("unconfirmed", []))
                return False
            self._say(f"the budget pays for {fit} pairs, not {goal}: the last look is at {fit}")
            self.schedule, self.fitted, goal = [*self.schedule[: len(self.looks)], fit], True, fit
        self._pairs_to(self.pairs + 1)
        self.elapsed_s += time.perf_counter() - start
        if self.pairs < goal:
            return True
        share_s -= time.perf_counter() - start
        reach = self.pairs + max(share_s, 0.0) / self._per_pair()  # the pairs this share still pays for
        self.stopped = self._look(len(self.looks) + 1, self.schedule, reach)
        return not self.stopped

    def _withhold(self, candidates: list[str]) -> None:
        """A fail no later look confirmed (the budget ran out) is not a verdict: inconclusive."""
        for cand in candidates:
            self.decisions[cand] = [
                dataclasses.replace(d, verdict=INCONCLUSIVE, reason=UNCONFIRMED) if d.verdict == FAIL else d
                for d in self.decisions[cand]
            ]

    def _per_pair(self) -> float:
        """Seconds per pair so far (calibration included)."""
        return self.elapsed_s / max(self.pairs, 1)

    def _pairs_to(self, goal: int) -> None:
        names = [t.name for t in self.targets]
        by_name = {t.name: t for t in self.targets}
        while self.pairs < goal:
            order = [names[(self.s_idx + self.pairs + i) % len(names)] for i in range(len(names))]
            for pos, name in enumerate(order, 1):
                spec = self._spec(by_name[name], self.requests, self.settings.warmups)
                self.rounds.append(self.runner.run(engine.run_round(spec, self.pairs + 1, pos, order)))
            self.pairs += 1

    def _look(self, look_no: int, looks: list[int], reach: float) -> str:
        """Decide at this look; why the scenario stops here ("" when it goes on). ``reach``: the
        pairs the budget may still pay for, which bounds the looks the futility rule counts on."""
        self.decisions = self._decide()
        verdicts = {c: combine(d.verdict for d in ds) for c, ds in self.decisions.items()}
        before = self.looks[-1]["verdicts"] if self.looks else {}
        final = look_no == len(looks)
        unconfirmed = [] if final else [c for c, v in verdicts.items() if v == FAIL and before.get(c) != FAIL]
        unconfirmed = [
            c for c in unconfirmed if not any(d.metric == "correctness" for d in self.decisions[c])
        ]
        self.looks.append({"pairs": self.pairs, "verdicts": verdicts})
        if unconfirmed:
            self.looks[-1]["unconfirmed"] = unconfirmed
        self._say(
            f"look {look_no} at {self.pairs} pairs: "
            + ", ".join(
                f"{c} {v}{' (to be confirmed)' if c in unconfirmed else ''}" for c, v in verdicts.items()
            )
            + self._brief()
        )
        if all(v != INCONCLUSIVE for v in verdicts.values()) and not unconfirmed:
            return "decided"
        if final:
            return "looks exhausted" if not self.plan.fixed_pairs else "fixed pairs"
        if unconfirmed:
            return ""  # a fail counts once the next look confirms it
        last = last_look(looks[look_no:], self.pairs, reach)
        chance = self._chance_to_decide(last)
        self.looks[-1] |= {"chance_to_decide": None if chance is None else round(chance, 4), "by_pairs": last}
        if chance is not None and chance < self.plan.futility:
            self._say(
                f"stopped: {chance:.0%} chance that {last} pairs decide it "
                f"(below {self.plan.futility:.0%}): inconclusive"
            )
            return "futile"
        return ""

    def _brief(self) -> str:
        parts = []
        for ds in self.decisions.values():
            for d in ds:
                if d.interval is not None:
                    parts.append(
                        f"{d.metric} {d.interval.estimate:.3f}x [{d.interval.low:.3f}, {d.interval.high:.3f}]"
                    )
        return f" ({'; '.join(parts)})" if parts else ""

    def _chance_to_decide(self, n_final: int) -> float | None:
        """The best chance, over the undecided candidates, that one is decided after ``n_final``
        pairs: some gate fails, or every gate passes (None when a gate has no interval yet)."""
        best = 0.0
        for ds in self.decisions.values():
            if combine(d.verdict for d in ds) != INCONCLUSIVE:
                continue
            none_fails, all_pass = 1.0, 1.0
            for d in ds:
                if d.verdict == PASS:
                    continue
                if d.interval is None:
                    return None
                to_fail, to_pass = chances_to_decide(
                    d.interval, d.threshold, d.worse, n_final, 2 * self.plan.look_alpha
                )
                none_fails *= 1 - to_fail
                all_pass *= to_pass
            best = max(best, min(1.0, 1 - none_fails + all_pass))
        return best

    def _decide(self) -> dict[str, list[Decision]]:
        base = self.targets[0].name
        by_pair: dict[str, list[RoundResult]] = {}
        for r in self.rounds:
            by_pair.setdefault(r.target, []).append(r)
        return {
            t.name: gate_decisions(
                self.scenario, self.gate, by_pair.get(base, []), by_pair.get(t.name, []), self.plan.look_alpha
            )
            for t in self.targets[1:]
        }

    def record(self) -> dict[str, Any]:
        base = self.targets[0].name
        by_target: dict[str, list[RoundResult]] = {}
        for r in self.rounds:
            by_target.setdefault(r.target, []).append(r)
        candidates = {}
        for cand, ds in self.decisions.items():
            pairs = list(zip(by_target.get(base, []), by_target.get(cand, [])))
            candidates[cand] = {
                "verdict": combine(d.verdict for d in ds),
                "decisions": [d.to_json() for d in ds],
                "pair_ratios": {
                    "throughput": [_ratio(c.rps, b.rps) for b, c in pairs],
                    "p95": [_ratio(c.p95_ms, b.p95_ms) for b, c in pairs],
                },
            }
        return {
            "requests_per_round": self.calibration.get("requests_per_round"),
            "calibration": self.calibration,
            "pairs": len(by_target.get(base, [])),
            "looks": self.looks,
            "schedule": self.schedule,
            "last_look_fitted": self.fitted,
            "stopped": self.stopped,
            "elapsed_s": round(self.elapsed_s, 3),
            "gate": self.gate.to_json(),
            "candidates": candidates,
        }


def fitted_look(pairs: int, reach: float) -> int | None:
    """A last look at the ``reach`` pairs the budget pays for, in place of the planned looks it does
    not pay for in full; None when that is too few more than the ``pairs`` taken to be worth a look.
    It spends the error rate the planned look would have, so the run's stays within alpha."""
    fit = math.floor(reach)
    return fit if fit > pairs and fit >= pairs * FIT_MIN_GROWTH else None


def last_look(planned: Sequence[int], pairs: int, reach: float) -> int:
    """The pairs of the last look still to come, when the budget pays for ``reach`` pairs: the
    planned looks it pays for, then one fitted to it (``fitted_look``); the next planned look when
    it pays for none (the futility rule then counts on that one)."""
    fits = [n for n in planned if n <= reach]
    last = fits[-1] if fits else pairs
    fitted = fitted_look(last, reach) if len(fits) < len(planned) else None
    return fitted or (fits[-1] if fits else planned[0])


def _too_few(base: Sequence[float | None], cand: Sequence[float | None], alpha: float) -> str:
    return too_few("pairs", sum(bool(b and c) for b, c in zip(base, cand)), alpha)


def _ratio(c: float | None, b: float | None) -> float | None:
    return c / b if c is not None and b else None


def self_copy(target: Target, taken: set[str]) -> Target:
    """The baseline in a second slot (same server), for the A/A self-control, under a free name."""
    name = target.name + SELF_SUFFIX
    while name in taken:
        name += "_"
    return dataclasses.replace(target, name=name)


def run(
    targets: list[Target],
    scenarios: list[Scenario],
    expectations: dict,
    settings: Settings,
    gates: dict[str, Gate],
    plan: Plan,
    self_control: bool,
    progress: Progress | None,
) -> tuple[list[RoundResult], dict[str, Any]]:
    """Every scenario's self-control (when asked) and paired comparison. Returns the comparison's
    rounds and the ``paired`` section of the result (per scenario). A gate not in ``gates`` is the
    default one of its class.

    The budget goes where it is needed: every scenario first takes its first look, then each one
    still undecided takes its next look in turn, while that look fits in what is left of the
    budget; a scenario decided early leaves its share to the undecided ones."""
    comparisons: list[ScenarioRun] = []
    controls: list[ScenarioRun] = []
    with asyncio.Runner(loop_factory=engine.new_event_loop) as runner:
        session = Session(runner, expectations, settings, plan, progress)
        for s_idx, scenario in enumerate(scenarios):
            gate = gates.get(scenario.klass, DEFAULT_GATES[scenario.klass])
            if self_control:
                controls.append(_self_control(session, targets, scenario, s_idx, gate))
            comparisons.append(ScenarioRun(session, targets, scenario, s_idx, gate))
        pending = (
            [r for pair in zip(controls, comparisons) for r in pair] if self_control else list(comparisons)
        )
        share_budget(pending, plan.budget_s)
    rounds: list[RoundResult] = []
    section: dict[str, Any] = {}
    for i, run_ in enumerate(comparisons):
        record: dict[str, Any] = {}
        if self_control:
            record["self_control"] = controls[i].record() | {
                "rounds": [r.to_json() for r in controls[i].rounds]
            }
        record.update(run_.record())
        if self_control and next(iter(record["self_control"]["candidates"].values()))["verdict"] == FAIL:
            _distrust(record)
        rounds += run_.rounds
        section[run_.scenario.name] = record
    return rounds, section


class Stepper(Protocol):
    def step(self, share_s: float) -> bool: ...


def share_budget(runs: Sequence[Stepper], budget_s: float) -> None:
    """Step ``runs`` in turns until each is done: in every turn each run still going takes one
    step with an equal share of the seconds left of ``budget_s`` among the runs still to step in
    that turn, so what a run decided early does not use passes to the undecided ones."""
    start = time.perf_counter()
    pending = list(runs)
    while pending:
        going = []
        for i, run_ in enumerate(pending):
            left = budget_s - (time.perf_counter() - start)
            if run_.step(left / (len(pending) - i)):
                going.append(run_)
        pending = going


def _self_control(
    session: Session, targets: list[Target], scenario: Scenario, s_idx: int, gate: Gate
) -> ScenarioRun:
    """The A/A run of one scenario: the baseline (the first target) against a second slot of itself."""
    baseline = targets[0]
    copy = self_copy(baseline, {t.name for t in targets})
    return ScenarioRun(
        session,
        [baseline, copy],
        scenario,
        s_idx,
        gate,
        label="self-control ",
        aliases={copy.name: baseline.name},
    )


def _distrust(record: dict[str, Any]) -> None:
    """A failed self-control: no decided verdict of the scenario is trusted (each is inconclusive,
    the one it had kept beside it)."""
    for cand in record["candidates"].values():
        if cand["verdict"] != INCONCLUSIVE:
            cand["verdict_before_self_control"] = cand["verdict"]
            cand["verdict"] = INCONCLUSIVE
            cand["self_control_note"] = (
                "the A/A self-control failed on this scenario: the "
                "set-up itself is biased, so no verdict is trusted"
            )


def overall(section: dict[str, Any]) -> str:
    return combine(c["verdict"] for rec in section.values() for c in rec["candidates"].values())


__all__ = ["FAIL", "INCONCLUSIVE", "PASS", "Plan", "Settings", "gate_decisions", "overall", "run"]
