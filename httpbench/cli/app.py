"""What every ``httpbench`` command shares: the one error handler (:func:`run`), the way one command
runs another (:func:`invoke`) and the progress and error lines on stderr."""

from __future__ import annotations

import os
import sys
import traceback

import click

from httpbench.errors import HttpbenchError
from verdict.files import clip_lines


def say(line: str) -> None:
    """A progress line on stderr."""
    click.echo(f"httpbench: {line}", err=True)


def err(message: str) -> None:
    click.echo(f"httpbench: error: {clip_lines(message)}", err=True)


def invoke(command: click.Command, args: list[str], prog_name: str):
    """``command.main(args, standalone_mode=False)`` without click's own handling of Ctrl-C (it
    always prints an empty line to stderr before our one-line error; :func:`run` does that only on
    a terminal, after its ``^C``); ``--help`` / ``--version`` exits return their exit code."""
    try:
        with command.make_context(prog_name, list(args)) as ctx:
            return command.invoke(ctx)
    except click.exceptions.Exit as exc:
        return exc.exit_code


def run(group: click.Group, argv: list[str]) -> None:
    """Run the command line and exit: every expected error (bad input, the environment) is one line
    on stderr; a bug shows its traceback, then one line saying it is one. This is the one place an
    exception of httpbench (:mod:`httpbench.errors`) becomes an exit code."""
    try:
        code = invoke(group, argv, "httpbench")
    except HttpbenchError as exc:
        err(str(exc))
        sys.exit(exc.exit_code)
    except click.exceptions.NoArgsIsHelpError as exc:  # a bare group: its help, as written
        click.echo(exc.ctx.get_help() if exc.ctx else exc.format_message(), err=True)
        sys.exit(2)
    except click.exceptions.UsageError as exc:
        err(exc.format_message().replace("\n", " "))
        sys.exit(2)
    except (click.exceptions.Abort, KeyboardInterrupt):
        if sys.stderr.isatty():
            click.echo("", err=True)  # end the terminal's ^C line
        err("interrupted")
        sys.exit(130)
    except BrokenPipeError:
        # stdout closed early (e.g. piped into head): quietly, as click does
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        sys.exit(1)
    except click.exceptions.ClickException as exc:
        err(exc.format_message().replace("\n", " "))
        sys.exit(exc.exit_code)
    except OSError as exc:
        # the environment refused (a file, a socket, a process): bad input, one line
        where = f"{exc.filename}: " if exc.filename else ""
        err(f"{where}{exc.strerror or exc}")
        sys.exit(2)
    except Exception as exc:
        # anything else is a bug, not bad input: show where, then say so in the last line
        traceback.print_exc()
        err(f"internal error (a bug in httpbench, traceback above): {type(exc).__name__}")
        sys.exit(2)
    sys.exit(code if isinstance(code, int) else 0)
