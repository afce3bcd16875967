"""The console entry point both tools share. The command line (click, the profiles, the drivers)
is imported inside the handler, so that a Ctrl-C even during start-up is one line and exit code
130, not a traceback."""

from __future__ import annotations

import importlib
import sys


def run(tool: str, cli_module: str) -> None:
    """Import ``cli_module`` and call its ``main``; an interrupt while importing is one line."""
    try:
        main = importlib.import_module(cli_module).main
    except KeyboardInterrupt:
        sys.stderr.write(f"{tool}: error: interrupted\n")
        raise SystemExit(130) from None
    main()
