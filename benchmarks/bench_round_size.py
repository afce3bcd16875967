#!/usr/bin/env python3
"""How many requests should one paired round time? The A/A spread per pair, against the time per pair.

    .venv/bin/python benchmarks/bench_round_size.py [--sizes 16,32,64,128] [--pairs 60]
                                                    [--burner off|on|both] [--scenario SPEC]

Two identical nginx serve the same 4 MiB file (``bench_verdicts.py``'s fixture). For every size,
pairs of rounds are taken as ``httpbench compare`` takes them (a round of each server, adjacent in
time, the order alternating; every round on fresh connections, one warm-up per connection, then
SIZE timed requests at concurrency 16), the sizes interleaved pair by pair so that each sees the
same states of the machine. Per size it prints the spread (sd) of the pairs' log ratios of
throughput and p95, the wall time per pair (connections and warm-ups included), and what decides a
gate: the share of resamples of n pairs whose intervals (``gate_interval`` at the default look's
error rate) lie within the payload gates (throughput >= 0.90x, p95 <= 1.15x) at each planned look,
and the seconds the first look reaching 90 % costs. An A/A passes sooner the narrower its pairs
scatter per second spent, which is the number to compare.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_verdicts import burner, fixture  # noqa: E402 (after the sys.path line)

from httpbench.config.scenarios import parse_option  # noqa: E402
from httpbench.measure import engine, preflight  # noqa: E402
from httpbench.measure.gates import gate_interval  # noqa: E402
from httpbench.measure.paired import Plan  # noqa: E402
from httpbench.model import DEFAULT_GATES, RoundResult, Target  # noqa: E402
from httpbench.peers.static import StaticNginx  # noqa: E402

CONCURRENCY = 16
RESAMPLES = 200


def pair(runner: asyncio.Runner, targets: list[Target], spec_of, size: int, flip: bool) -> tuple:
    """One pair at ``size`` requests per round: (baseline round, candidate round, wall seconds)."""
    start = time.perf_counter()
    rounds: dict[str, RoundResult] = {}
    for target in reversed(targets) if flip else targets:
        rounds[target.name] = runner.run(engine.run_round(spec_of(target, size), 1, 1, []))
    return rounds[targets[0].name], rounds[targets[1].name], time.perf_counter() - start


def decide_share(pairs: list[tuple[RoundResult, RoundResult, float]], n: int, alpha: float) -> float:
    """The share of ``n``-pair resamples whose throughput and p95 intervals pass the payload gate."""
    gate, rng, ok = DEFAULT_GATES["payload"], random.Random(n), 0
    for _ in range(RESAMPLES):
        s = [rng.choice(pairs) for _ in range(n)]
        tp = gate_interval([b.rps for b, _, _ in s], [c.rps for _, c, _ in s], alpha)
        p95 = gate_interval([b.p95_ms for b, _, _ in s], [c.p95_ms for _, c, _ in s], alpha)
        ok += bool(tp and p95 and tp.low > gate.min_throughput_ratio and p95.high < gate.max_p95_ratio)
    return ok / RESAMPLES


def report(size: int, pairs: list[tuple[RoundResult, RoundResult, float]], plan: Plan) -> str:
    tp = [math.log(c.rps / b.rps) for b, c, _ in pairs if b.rps and c.rps]
    p95 = [math.log(c.p95_ms / b.p95_ms) for b, c, _ in pairs if b.p95_ms and c.p95_ms]
    per_pair = statistics.median(w for _, _, w in pairs)
    shares = {n: decide_share(pairs, n, plan.look_alpha) for n in plan.looks}
    first = next((n for n, v in shares.items() if v >= 0.9), None)
    cost = f"{first * per_pair:5.1f} s" if first else "  never"
    return (
        f"{size:>8}  {len(pairs):>5}  {statistics.stdev(tp):8.3f}  {statistics.stdev(p95):8.3f}  "
        f"{per_pair * 1000:7.0f} ms  {' '.join(f'{shares[n]:4.2f}' for n in plan.looks)}  {cost}"
    )


def run(sizes: list[int], n_pairs: int, burn: bool, scenario_spec: str) -> None:
    scenario = parse_option(scenario_spec)
    plan = Plan()
    with tempfile.TemporaryDirectory(prefix="bench-round-size-") as tmp:
        root = fixture(Path(tmp))
        with StaticNginx(root) as a, StaticNginx(root) as b, burner(burn):
            targets = [Target.parse("baseline", a.url)[0], Target.parse("candidate", b.url)[0]]
            expect, _ = preflight.check(targets, [scenario], 10.0)

            def spec_of(target: Target, size: int) -> engine.RoundSpec:
                exp = expect[(scenario.name, target.name)]
                return engine.RoundSpec(
                    target=target,
                    scenario=scenario,
                    expectation=exp,
                    warmups=CONCURRENCY,
                    requests=size,
                    concurrency=CONCURRENCY,
                    timeout=10.0,
                )

            got: dict[int, list] = {s: [] for s in sizes}
            with asyncio.Runner(loop_factory=engine.new_event_loop) as runner:
                for i in range(n_pairs):
                    for j, size in enumerate(sizes[i % len(sizes) :] + sizes[: i % len(sizes)]):
                        got[size].append(pair(runner, targets, spec_of, size, (i + j) % 2 == 1))
    looks = " ".join(f"{n:>4}" for n in plan.looks)
    print(
        f"\n{scenario.name}, A/A of two nginx, burner {'on' if burn else 'off'}, "
        f"{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f}"
    )
    print(f"requests  pairs  sd(tput)  sd(p95)   per pair   pass share at looks {looks}  to 90%")
    for size in sizes:
        print(report(size, got[size], plan))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="16,32,64,128", help="requests per round, comma-separated")
    ap.add_argument("--pairs", type=int, default=60, help="pairs per size")
    ap.add_argument("--burner", choices=("off", "on", "both"), default="both")
    ap.add_argument("--scenario", default="name=payload GET 4 MiB,path=/pkg.bin,class=payload")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    for burn in {"off": [False], "on": [True], "both": [False, True]}[args.burner]:
        run(sizes, args.pairs, burn, args.scenario)


if __name__ == "__main__":
    main()
