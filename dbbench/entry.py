"""Console entry point. The command line (click, the profiles, the drivers) is imported here, inside
the handler, so that a Ctrl-C even during start-up is one line and exit code 130, not a traceback."""

from __future__ import annotations

import sys


def main() -> None:
    try:
        from dbbench.cli import main as run
    except KeyboardInterrupt:
        sys.stderr.write("dbbench: error: interrupted\n")
        raise SystemExit(130) from None
    run()
