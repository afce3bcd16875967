#!/usr/bin/env python3
"""Does the Hugging Face fixture add latency of its own? It against nginx serving the same bytes.

    .venv/bin/python benchmarks/bench_hub_fixture.py [--requests N] [--rounds N]

Starts ``httpbench fixture huggingface`` in its own process and a local nginx whose static files sit
at the same URL paths with the fixture's exact bytes (model info JSON, the 4 MiB model file), then
runs ``httpbench compare`` (nginx = baseline, fixture = candidate) at concurrency 1 (latency) and 16
(throughput) and prints p50 and req/s side by side with the ratios. The fixture is fast enough when
its p50 at c=1 is within a few tens of microseconds of nginx's: it then cannot dominate the proxy
misses it serves. Needs the Debian package ``nginx``.
"""

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx
from tabulate import tabulate

from httpbench.peers.nginx import LocalNginx
from httpbench.profiles.huggingface.demo import _FixtureProcess
from httpbench.profiles.huggingface.fixture import COMMIT, DEFAULT_REPO, MODEL_FILE

INFO = f"/api/models/{DEFAULT_REPO}/revision/{COMMIT}"
FILE = f"/{DEFAULT_REPO}/resolve/{COMMIT}/{MODEL_FILE}"
SCENARIOS = [
    f"name=model info GET,path={INFO}",
    f"name=model file HEAD,method=HEAD,path={FILE}",
    f"name=Range 64 KiB,path={FILE},header=Range: bytes=0-65535",
    f"name=4 MiB GET,path={FILE},class=payload",
]


def run(nginx: str, fixture: str, concurrency: int, requests: int, rounds: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "r.json"
        args = [
            sys.executable,
            "-m",
            "httpbench",
            "compare",
            "--target",
            f"nginx={nginx}",
            "--target",
            f"fixture={fixture}",
            "--concurrency",
            str(concurrency),
            "--requests",
            str(requests),
            "--warmups",
            "50",
            "--rounds",
            str(rounds),
            "-q",
            "--output",
            str(out),
        ]
        for spec in SCENARIOS:
            args += ["--scenario", spec]
        proc = subprocess.run(args, capture_output=True, text=True)
        if proc.returncode not in (0, 1):
            sys.exit(proc.stderr.strip())
        return json.loads(out.read_text())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    opts = parser.parse_args()
    with _FixtureProcess() as hub:
        files = {path.lstrip("/"): httpx.get(hub.url + path).content for path in (INFO, FILE)}
        with LocalNginx(files) as ng:
            rows = []
            for c in (1, 16):
                doc = run(ng.url(0), hub.url, c, opts.requests, opts.rounds)
                for name, per in doc["summaries"].items():
                    n, f = per["nginx"], per["fixture"]
                    rows.append(
                        [
                            name,
                            c,
                            f"{n['p50_ms']:.3f}",
                            f"{f['p50_ms']:.3f}",
                            f"{f['p50_ms'] - n['p50_ms']:+.3f}",
                            f"{n['rps']:,.0f}",
                            f"{f['rps']:,.0f}",
                            f"{f['rps'] / n['rps']:.2f}x",
                        ]
                    )
    print(
        tabulate(
            rows,
            headers=[
                "scenario",
                "c",
                "nginx p50 ms",
                "fixture p50 ms",
                "fixture - nginx",
                "nginx req/s",
                "fixture req/s",
                "fixture / nginx",
            ],
            tablefmt="github",
            disable_numparse=True,
        )
    )


if __name__ == "__main__":
    main()
