#!/usr/bin/env python3
"""Is the client fast enough? Run wrk and httpbench against the same local nginx and compare.

    .venv/bin/python benchmarks/bench_client.py [--requests N] [--duration S] [--json]

Same as ``httpbench bench-client``: starts nginx (temp config, loopback port, ``daemon off``,
stopped afterwards) serving a 1 KiB file, alternates wrk / httpbench over three rounds at
concurrency 16, prints both tools' req/s and p50 and the ratio (target: >= 0.8x wrk req/s,
p50 <= 2x wrk's). Needs the Debian packages ``nginx`` and ``wrk``.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from httpbench.cli import main

if __name__ == "__main__":
    main(["bench-client", *sys.argv[1:]])
