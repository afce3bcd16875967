"""Console entry point: :func:`verdict.entry.run` imports the command line inside its handler, so
that a Ctrl-C even during start-up is one line and exit code 130, not a traceback."""

from __future__ import annotations

from verdict.entry import run


def main() -> None:
    run("dbbench", "dbbench.cli")
