"""The ``bench-client`` result (:mod:`httpbench.bench.wrk`): a table of wrk and httpbench with
their ratios against the targets, or JSON."""

from __future__ import annotations

import json
from typing import Any

from tabulate import tabulate


def render(result: dict[str, Any], as_json: bool = False) -> str:
    if as_json:
        return json.dumps(result, indent=2, allow_nan=False)
    w, h = result["wrk"], result["httpbench"]
    rows = [
        [
            "wrk",
            f"{w['rps']:,.0f}",
            f"{w['p50_ms']:.3f} ms" if w["p50_ms"] is not None else "—",
            f"{w['threads']} thread(s), {w['duration_s']:g} s",
        ],
        [
            "httpbench",
            f"{h['rps']:,.0f}",
            f"{h['p50_ms']:.3f} ms" if h["p50_ms"] is not None else "—",
            f"{h['event_loop']}, {h['requests']:,} requests",
        ],
    ]
    ok = (result["rps_ratio"] or 0) >= 0.8 and (result["p50_ratio"] or 99) <= 2.0
    return "\n".join(
        [
            f"{result['server']}, {result['file_bytes']} B file, concurrency {result['concurrency']}, "
            f"{result['cpu_count']} CPUs; medians of {len(w['runs'])} alternating rounds",
            tabulate(
                rows,
                headers=["client", "req/s", "p50", "settings"],
                disable_numparse=True,
                colalign=("left", "right", "right", "left"),
            ),
            f"httpbench/wrk req/s ratio {result['rps_ratio']:.3f}x (target >= 0.80x), "
            f"p50 ratio {result['p50_ratio']:.3f}x (target <= 2.00x): {'OK' if ok else 'BELOW TARGET'}",
        ]
    )
