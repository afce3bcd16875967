#!/usr/bin/env python3
"""How long does `dbbench grow` take, cold and with the sizes already loaded?

    .venv/bin/python benchmarks/bench_grow.py [--sizes 10k,100k,1m] [--namespace bench_grow]

Drops the ladder's namespaces (load files stay cached under the dbbench home), runs
``dbbench grow --sizes SIZES`` once cold (every size seeded) and once more reusing the loaded
sizes, and prints both wall times with the per-size load / measure seconds, the verdicts and the
natural / remediated work ratio at the largest size. Targets (issue 15): the default ladder
<= 10 minutes cold with load files cached; ``--sizes 10k,100k`` <= 60 s.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from dbbench import dialects  # noqa: E402 (after the sys.path line)
from dbbench.access.targets import open_targets  # noqa: E402
from dbbench.measure import grow  # noqa: E402


def drop(namespace: str, sizes: list[int]) -> None:
    for t in open_targets({}):
        d = dialects.get(t.dialect)
        with t.all_or_nothing() as conn:
            for n in sizes:
                d.drop_namespace(conn, grow.namespace_for(namespace, n))
            conn.commit()
        t.dispose()


def run(sizes: str, namespace: str, out: Path) -> tuple[int, float, dict]:
    start = time.perf_counter()
    p = subprocess.run(
        [
            sys.executable,
            "-m",
            "dbbench",
            "grow",
            "--sizes",
            sizes,
            "--namespace",
            namespace,
            "--output",
            str(out),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=3600,
        check=False,
    )
    wall = time.perf_counter() - start
    if p.returncode not in (0, 1):
        sys.exit(f"dbbench grow failed ({p.returncode}): {p.stderr.strip()[-500:]}")
    return p.returncode, wall, json.loads(out.read_text())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="10k,100k,1m")
    ap.add_argument("--namespace", default="bench_grow")
    args = ap.parse_args()
    sizes = grow.parse_sizes(args.sizes)
    drop(args.namespace, sizes)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "grow.json"
        code, cold, doc = run(args.sizes, args.namespace, out)
        _, warm, _ = run(args.sizes, args.namespace, out)
    print(f"dbbench grow --sizes {args.sizes}: cold {cold:.1f} s, sizes reused {warm:.1f} s (exit {code})")
    print("  " + ", ".join(f"{k} {v:.1f} s" for k, v in doc["seconds"].items()))
    largest = grow.size_label(doc["sizes"][-1])
    by = {(g["shape"], g["dialect"], g["spelling"]): g for g in doc["growth"]}
    for (shape, dialect, spelling), g in sorted(by.items()):
        if spelling != "remediated":
            continue
        nat = by.get((shape, dialect, "natural"))
        ratio = ""
        if nat and nat["points"][-1]["work"] is not None and g["points"][-1]["work"] is not None:
            r = nat["points"][-1]["work"] / max(g["points"][-1]["work"], 1.0)
            ratio = f"; natural {nat['verdict']} (k {nat['k']:.2f}), {r:,.1f}x the work at {largest}"
        print(f"  {dialect:<10} {shape:<30} remediated {g['verdict']} (k {g['k']:.2f}){ratio}")
    for line in doc["problems"]:
        print(f"  PROBLEM: {line}")


if __name__ == "__main__":
    main()
