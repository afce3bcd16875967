#!/usr/bin/env python3
"""Can httpbench's verdicts be trusted? False failures on A/A, detection on A/B, wall time.

    .venv/bin/python benchmarks/bench_verdicts.py [--aa 50] [--ab 20] [--candidate caddy|throttled]
                                                  [--method paired|seed] [--burner off|on|both]
                                                  [--against TREE] [--json FILE] [--keep DIR]
                                                  [-- COMPARE ARGS]

Each run is a real ``httpbench compare --enforce-gates`` with default settings on the three
scenarios of issue 12 (1 KiB metadata GET, 64 KiB Range of a 4 MiB file, the 4 MiB GET), against
servers started fresh for that run on loopback:

* **A/A**: two identical nginx (same files, same configuration). Any exit 1 is a false failure.
* **A/B**: nginx against a candidate that is really slower -- ``caddy`` serving the same files
  (its own stock file server), or ``throttled``: nginx with ``limit_req`` holding the metadata path
  to ``--throttle-rps`` (a measured, injected slowdown). Exit 1 is a detection.

``--burner on`` keeps one CPU busy beside every compare (a Python loop in its own process, bounded
in time and stopped with the run): the neighbour a shared CI runner has; ``both`` runs every
comparison without and then with it, so both see the same hour of the machine. ``--against TREE``
also runs every A/A comparison with the httpbench of another checkout (e.g. the commit before a
change, ``git worktree add``), right after this one's on the same servers: the change's effect on
the A/A verdicts, measured side by side.

It prints, per kind: runs, pass / fail / inconclusive counts, the false-failure or detection
rate, and the median and max wall time of a compare. ``--method seed`` measures the published write-up's fixed
procedure the same way, for comparison. Needs Debian's nginx (and caddy for ``--candidate caddy``).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from httpbench.errors import HttpbenchError  # noqa: E402 (after the sys.path line)
from httpbench.peers.nginx import NginxProcess  # noqa: E402 (after the sys.path line)
from httpbench.peers.static import StaticCaddy, StaticNginx  # noqa: E402 (after the sys.path line)

SCENARIOS = (
    "name=metadata GET,path=/meta.json,class=metadata",
    "name=payload Range 64 KiB,path=/pkg.bin,header=Range: bytes=0-65535,class=payload",
    "name=payload GET 4 MiB,path=/pkg.bin,class=payload",
)
EXIT = {0: "pass", 1: "fail", 3: "inconclusive"}
BURN_S = 6 * 3600  # the burner's own bound: it stops by itself after this long


@contextlib.contextmanager
def burner(on: bool):
    """One CPU kept busy while the block runs (nothing when ``on`` is false)."""
    if not on:
        yield
        return
    loop = f"import time\nend = time.monotonic() + {BURN_S}\nwhile time.monotonic() < end:\n    pass\n"
    proc = subprocess.Popen([sys.executable, "-c", loop])
    try:
        yield
    finally:
        proc.terminate()
        proc.wait(10)


class ThrottledNginx(NginxProcess):
    """nginx whose metadata file is held to ``rps`` requests per second by ``limit_req`` (requests
    beyond the rate wait in a deep burst queue: a slower server, not an erroring one)."""

    def __init__(self, root: Path, rps: int):
        super().__init__()
        self.root, self.rps = root, rps

    def http_extra(self) -> str:
        return f"    limit_req_zone $server_port zone=meta:1m rate={self.rps}r/s;\n"

    def servers(self) -> str:
        return (
            f"    server {{ listen 127.0.0.1:{self.port} backlog=4096; root {self.root}; "
            "location = /meta.json { limit_req zone=meta burst=100000; } location / { } }\n"
        )


def fixture(directory: Path) -> Path:
    root = directory / "root"
    root.mkdir()
    (root / "meta.json").write_bytes(b"{" + b"x" * 1022 + b"}")
    block = bytes(range(256)) * 4096
    (root / "pkg.bin").write_bytes(block * 4)  # 4 MiB, no repeated single byte
    return root


def one(
    kind: str,
    root: Path,
    candidate: str,
    rps: int,
    method: str,
    extra: list[str],
    out: Path,
    trees: list[Path],
) -> list[dict]:
    """One comparison of ``kind`` on fresh servers, by the httpbench of each of ``trees`` in turn."""
    if kind == "aa":
        b_server = StaticNginx(root)
    elif candidate == "caddy":
        b_server = StaticCaddy(root)
    else:
        b_server = ThrottledNginx(root, rps)
    with StaticNginx(root) as a, b_server as b:
        return [
            _compare(kind, a.url, b.url, method, extra, out.with_suffix(f".{i}.json"), tree)
            for i, tree in enumerate(trees)
        ]


def _compare(kind: str, a: str, b: str, method: str, extra: list[str], out: Path, tree: Path) -> dict:
    """``httpbench compare --enforce-gates`` of ``a`` (baseline) against ``b`` with ``tree``'s httpbench."""
    argv = [
        sys.executable,
        "-m",
        "httpbench",
        "compare",
        "--target",
        f"baseline={a}",
        "--target",
        f"candidate={b}",
        *[x for s in SCENARIOS for x in ("--scenario", s)],
        "--method",
        method,
        "--enforce-gates",
        "--output",
        str(out),
        "-q",
        *extra,
    ]
    start = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, text=True, cwd=tree, timeout=900)
    wall = time.perf_counter() - start
    doc = json.loads(out.read_text()) if out.exists() else {}
    return {
        "kind": kind,
        "tree": str(tree),
        "exit": proc.returncode,
        "verdict": EXIT.get(proc.returncode, "error"),
        "wall_s": round(wall, 2),
        "gate_failures": doc.get("gate_failures", []),
        "inconclusive": doc.get("inconclusive", []),
        "stopped": {n: r.get("stopped") for n, r in (doc.get("paired") or {}).items() if isinstance(r, dict)},
        "stderr": proc.stderr.strip().splitlines()[-1:] if proc.returncode not in EXIT else [],
    }


def summary(kind: str, runs: list[dict]) -> str:
    if not runs:
        return f"{kind}: no runs"
    count = {v: sum(r["verdict"] == v for r in runs) for v in ("pass", "fail", "inconclusive", "error")}
    walls = [r["wall_s"] for r in runs if r["verdict"] != "error"] or [0.0]
    rate = count["fail"] / len(runs)
    label = "false-failure rate" if kind.startswith("A/A") else "detection rate"
    return (
        f"{kind}: {len(runs)} runs: {count['pass']} pass, {count['fail']} fail, {count['inconclusive']} "
        f"inconclusive, {count['error']} error; {label} {rate:.1%}, inconclusive "
        f"{count['inconclusive'] / len(runs):.1%}; wall median "
        f"{statistics.median(walls):.1f} s, max {max(walls):.1f} s"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--aa", type=int, default=50, help="A/A runs (two identical nginx)")
    ap.add_argument("--ab", type=int, default=20, help="A/B runs (nginx vs the slower candidate)")
    ap.add_argument("--candidate", choices=("caddy", "throttled"), default="caddy")
    ap.add_argument("--throttle-rps", type=int, default=6000)
    ap.add_argument("--method", choices=("paired", "seed"), default="paired")
    ap.add_argument("--burner", choices=("off", "on", "both"), default="off", help="one CPU kept busy beside")
    ap.add_argument("--against", type=Path, help="also run every A/A with this checkout's httpbench")
    ap.add_argument("--json", type=Path, help="write every run here")
    ap.add_argument("--keep", type=Path, help="keep every run's result document in this directory")
    ap.add_argument("extra", nargs="*", help="more httpbench compare arguments (after --)")
    args = ap.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # stop the servers and the burner too
    if args.keep:
        args.keep.mkdir(parents=True, exist_ok=True)
    conditions = {"off": [False], "on": [True], "both": [False, True]}[args.burner]
    results: dict[str, list[dict]] = {}
    with tempfile.TemporaryDirectory(prefix="bench-verdicts-") as tmp:
        root = fixture(Path(tmp))
        order = []  # the kinds interleaved, so both see the same machine states
        aa, ab = args.aa, args.ab
        while aa or ab:
            if aa:
                order.append("aa")
                aa -= 1
            if ab:
                order.append("ab")
                ab -= 1
        runs = [(kind, burn) for kind in order for burn in conditions]
        for i, (kind, burn) in enumerate(runs, 1):
            trees = [ROOT, args.against] if args.against and kind == "aa" else [ROOT]
            with burner(burn):
                out = (args.keep or Path(tmp)) / f"run-{i}-{kind}{'-burner' if burn else ''}.json"
                try:
                    done = one(
                        kind, root, args.candidate, args.throttle_rps, args.method, args.extra, out, trees
                    )
                except HttpbenchError as exc:  # a server that did not start: an error run, not the end
                    done = [_error(kind, tree, str(exc)) for tree in trees]
            for tree, r in zip(trees, done):
                label = _label(kind, burn, tree if tree != ROOT else None)
                results.setdefault(label, []).append(r | {"burner": burn})
                why = (r["gate_failures"] or r["inconclusive"] or r["stderr"] or [""])[0]
                print(
                    f"[{i}/{len(runs)}] {label:<34} {r['verdict']:<12} {r['wall_s']:6.1f} s  {why[:120]}",
                    file=sys.stderr,
                    flush=True,
                )
    print(
        f"httpbench compare --method {args.method}, candidate for A/B: {args.candidate}, "
        f"{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f}"
    )
    for label, rs in results.items():
        print(summary(label, rs))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")


def _error(kind: str, tree: Path, why: str) -> dict:
    """The record of a run that could not compare."""
    return {"kind": kind, "tree": str(tree), "exit": None, "verdict": "error", "wall_s": 0.0} | {
        "gate_failures": [],
        "inconclusive": [],
        "stopped": {},
        "stderr": [why],
    }


def _label(kind: str, burn: bool, tree: Path | None) -> str:
    """``A/A`` or ``A/B``, with the burner and the other checkout when they apply."""
    out = "A/A" if kind == "aa" else "A/B"
    if burn:
        out += " burner"
    return f"{out} ({tree.name})" if tree else out


if __name__ == "__main__":
    main()
