"""``httpbench bench-client``: wrk and httpbench against the same local nginx, in one run.

Rounds alternate wrk / httpbench order; each tool's req/s and p50 are the medians of its rounds.
The result is rendered by :mod:`httpbench.report.bench`.
"""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
from collections.abc import Callable
from typing import Any

from httpbench.errors import HttpbenchError
from httpbench.measure import engine, preflight
from httpbench.measure.percentiles import median_or_none
from httpbench.model import Scenario, Target
from httpbench.peers import programs
from httpbench.peers.nginx import LocalNginx

_UNITS = {"us": 1e-3, "ms": 1.0, "s": 1000.0}


def _parse_wrk(text: str) -> tuple[float, float | None, int]:
    rps = re.search(r"Requests/sec:\s*([\d.]+)", text)
    p50 = re.search(r"^\s*50%\s+([\d.]+)(us|ms|s)\s*$", text, re.M)
    errors = sum(int(n) for n in re.findall(r"(?:connect|read|write|timeout) (\d+)", text))
    non2xx = re.search(r"Non-2xx or 3xx responses:\s*(\d+)", text)
    if rps is None:
        raise HttpbenchError("could not read wrk's output")
    return (
        float(rps.group(1)),
        float(p50.group(1)) * _UNITS[p50.group(2)] if p50 else None,
        errors + (int(non2xx.group(1)) if non2xx else 0),
    )


def run(
    requests: int,
    duration: float,
    concurrency: int,
    wrk_threads: int,
    size: int,
    rounds: int = 3,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    wrk = programs.ensure(["nginx", "wrk"], progress or (lambda _line: None))["wrk"]
    body = bytes((i * 7 + 13) % 251 for i in range(size))
    say = progress or (lambda _line: None)
    with LocalNginx({"bench.bin": body}) as ng:
        target, _ = Target.parse("nginx", ng.url())
        scenario = Scenario("GET 1 KiB" if size == 1024 else f"GET {size} B", "/bench.bin", klass="payload")
        expectations, _ = preflight.check([target], [scenario], 5.0)
        spec = engine.RoundSpec(
            target=target,
            scenario=scenario,
            expectation=expectations[(scenario.name, "nginx")],
            warmups=min(2000, requests),
            requests=requests,
            concurrency=concurrency,
            timeout=5.0,
        )
        wrk_argv = [
            wrk,
            f"-t{wrk_threads}",
            f"-c{concurrency}",
            f"-d{duration:g}s",
            "--latency",
            "--timeout",
            "5s",
            f"{ng.url()}/bench.bin",
        ]
        wrk_runs, hb_runs = [], []
        with asyncio.Runner(loop_factory=engine.new_event_loop) as runner:
            for r in range(rounds):
                order = ("wrk", "httpbench") if r % 2 == 0 else ("httpbench", "wrk")
                for tool in order:
                    if tool == "wrk":
                        wrk_runs.append(_wrk_round(wrk_argv, duration, r, say))
                    else:
                        hb_runs.append(_httpbench_round(runner, spec, r, say))
    return _result(size, concurrency, (wrk_threads, duration, wrk_runs), (requests, hb_runs))


def _wrk_round(argv: list[str], duration: float, r: int, say: Callable[[str], None]) -> dict[str, Any]:
    """One wrk run of ``duration`` seconds: its req/s, p50 and errors."""
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=duration + 30)
    if proc.returncode != 0:
        raise HttpbenchError(f"wrk failed: {proc.stderr.strip()[:200]}")
    rps, p50, errs = _parse_wrk(proc.stdout)
    say(f"round {r + 1} wrk: {rps:,.0f} req/s, p50 {p50 if p50 is None else round(p50, 3)} ms")
    return {"rps": rps, "p50_ms": p50, "errors": errs}


def _httpbench_round(
    runner: asyncio.Runner, spec: engine.RoundSpec, r: int, say: Callable[[str], None]
) -> dict[str, Any]:
    """One round of the timing client: its req/s, percentiles, errors, CPU use and connect time."""
    res = runner.run(engine.run_round(spec, r + 1, 1, ["nginx"]))
    say(f"round {r + 1} httpbench: {res.rps:,.0f} req/s, p50 {res.p50_ms:.3f} ms")
    return {
        "rps": res.rps,
        "p50_ms": res.p50_ms,
        "p95_ms": res.p95_ms,
        "p99_ms": res.p99_ms,
        "errors": res.failures,
        "client_cpu_util": res.client_cpu_util,
        "connect_p50_ms": res.connect_ms["p50"],
    }


def _result(
    size: int,
    concurrency: int,
    wrk: tuple[int, float, list[dict[str, Any]]],
    httpbench: tuple[int, list[dict[str, Any]]],
) -> dict[str, Any]:
    """The result: each tool's runs and medians, and httpbench/wrk ratios. ``wrk``: threads,
    seconds and runs; ``httpbench``: requests and runs."""
    wrk_threads, duration, wrk_runs = wrk
    requests, hb_runs = httpbench
    wrk_rps = median_or_none(x["rps"] for x in wrk_runs)
    hb_rps = median_or_none(x["rps"] for x in hb_runs)
    wrk_p50 = median_or_none(x["p50_ms"] for x in wrk_runs)
    hb_p50 = median_or_none(x["p50_ms"] for x in hb_runs)
    return {
        "server": "nginx (1 worker, loopback)",
        "file_bytes": size,
        "concurrency": concurrency,
        "wrk": {
            "threads": wrk_threads,
            "duration_s": duration,
            "runs": wrk_runs,
            "rps": wrk_rps,
            "p50_ms": wrk_p50,
        },
        "httpbench": {
            "requests": requests,
            "event_loop": engine.loop_name(),
            "runs": hb_runs,
            "rps": hb_rps,
            "p50_ms": hb_p50,
        },
        "cpu_count": os.cpu_count(),
        "rps_ratio": hb_rps / wrk_rps if wrk_rps and hb_rps is not None else None,
        "p50_ratio": hb_p50 / wrk_p50 if wrk_p50 and hb_p50 is not None else None,
        "targets": {"rps_ratio_min": 0.8, "p50_ratio_max": 2.0},
    }
