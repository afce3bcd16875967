"""The ``httpbench`` command: a thin click layer over :mod:`httpbench.compare` (its options and the
run they build: :mod:`httpbench.cli_config`)."""

from __future__ import annotations

import os
import shlex
import sys
import traceback
from pathlib import Path

import click

from httpbench import __version__
from httpbench.cli_config import _make_profile as _make_profile
from httpbench.cli_config import _profile_options as _profile_options
from httpbench.cli_config import _read_credentials as _read_credentials
from httpbench.cli_config import _split_pair as _split_pair
from httpbench.cli_config import _targets as _targets
from httpbench.cli_config import build_config, compare_options
from httpbench.errors import HttpbenchError
from verdict.cli import Float


def _err(message: str) -> None:
    click.echo(f"httpbench: error: {message}", err=True)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="httpbench")
def cli() -> None:
    """Same-host A/B HTTP benchmarks: a candidate against a baseline."""


@cli.command()
@compare_options
def compare(output, markdown, junit, github_summary, enforce_gates, quiet, **options) -> None:
    """Measure every target on every scenario in alternating rounds and gate the candidates."""
    from httpbench import compare as compare_mod
    from httpbench import report
    from verdict import exit_code
    from verdict.files import write_output

    cfg = build_config(output=output, junit=junit, github_summary=github_summary, **options)
    progress = None if quiet else (lambda line: click.echo(f"httpbench: {line}", err=True))
    doc = compare_mod.run(cfg, progress)
    if output:
        try:
            report.write_json(doc, output)
        except OSError as exc:
            raise HttpbenchError(f"--output: cannot write {output}: {exc.strerror}") from None
    click.echo(report.tables(doc, markdown))
    for name, path, text, append in (
        ("--junit", junit, report.junit_xml, False),
        ("--github-summary", github_summary, report.github_summary, True),
    ):
        if path:
            try:
                write_output(path, text(doc), append=append)
            except OSError as exc:
                raise HttpbenchError(f"{name}: cannot write {path}: {exc.strerror}") from None
    failed = doc["totals"]["failures"]
    if failed:
        raise HttpbenchError(f"{failed} timed request(s) failed their checks (see failure_kinds)", 1)
    if enforce_gates and doc["verdict"] != "pass":
        if doc["verdict"] == "fail":
            why = f"{len(doc['gate_failures'])} gate failure(s)"
        else:
            why = (
                f"{len(doc['inconclusive'])} gate(s) undecided (noise larger than the margin: give a "
                "larger --budget, or see docs/statistics.md)"
            )
        raise HttpbenchError(f"verdict {doc['verdict']}: {why}", exit_code(doc["verdict"]))


@cli.command("bench-client")
@click.option(
    "--requests",
    "requests_",
    type=click.IntRange(1000, 5_000_000),
    default=200_000,
    show_default=True,
    help="httpbench timed requests.",
)
@click.option("--duration", type=Float(1, 60), default=5.0, show_default=True, help="wrk run seconds.")
@click.option("--concurrency", type=click.IntRange(1, 1024), default=16, show_default=True)
@click.option("--wrk-threads", type=click.IntRange(1, 64), default=1, show_default=True)
@click.option(
    "--size",
    type=click.IntRange(0, 64 << 20),
    default=1024,
    show_default=True,
    help="Bytes of the served file.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def bench_client(requests_, duration, concurrency, wrk_threads, size, as_json) -> None:
    """Start a local nginx, run wrk and httpbench against it, print both and the ratio."""
    from httpbench import benchclient

    result = benchclient.run(
        requests_,
        duration,
        concurrency,
        wrk_threads,
        size,
        progress=lambda line: click.echo(f"httpbench: {line}", err=True),
    )
    click.echo(benchclient.render(result, as_json))


@cli.group()
def peers() -> None:
    """The programs httpbench starts or drives (nginx, caddy, wrk): status, install."""


@peers.command("status")
def peers_status() -> None:
    """Each program: where it is, or missing, and the Debian package that provides it."""
    from tabulate import tabulate

    from httpbench.peers import programs

    click.echo(tabulate(programs.status(), headers="keys"))


@peers.command("install")
@click.argument("names", nargs=-1, type=click.Choice(["nginx", "caddy", "wrk"]))
def peers_install(names) -> None:
    """Install the missing ones (all three by default) from the system's packages (root, apt-get);
    the package scripts are kept from starting system-wide services."""
    from httpbench.peers import programs

    say = lambda line: click.echo(f"httpbench: {line}", err=True)
    installed = programs.install(names or programs.ALL, say)
    say(f"installed {', '.join(installed)}" if installed else "nothing to install")
    peers_status.callback()  # type: ignore[misc]


@cli.group()
def fixture() -> None:
    """Deterministic fixtures to serve or upload, so anyone can reproduce a comparison."""


@cli.group()
def demo() -> None:
    """A real A/B run of a profile on this machine: fixture, two real servers, compare."""


def _run_compare(args: list[str], passthrough: tuple[str, ...]) -> None:
    argv = [*args, *passthrough]
    click.echo("httpbench: running: " + shlex.join(["httpbench", "compare", *argv]), err=True)
    _invoke(compare, argv, "httpbench compare")


@demo.command("alpine", context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@click.option(
    "--dir",
    "directory",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Keep the fixture tree here (default: a temporary directory).",
)
@click.option("--package-size", type=click.IntRange(4096, 1 << 31), default=4_196_328, show_default=True)
@click.option(
    "--client-rounds",
    type=click.IntRange(1, 100),
    default=8,
    show_default=True,
    help="Real-client sample pairs (apk-client), alternating order.",
)
@click.argument("compare_args", nargs=-1, type=click.UNPROCESSED)
def demo_alpine(directory, package_size, client_rounds, compare_args) -> None:
    """The Alpine fixture tree served by nginx (baseline) vs caddy (candidate), with real-client
    rounds; extra arguments go to ``httpbench compare`` (e.g. --requests 100 --output r.json)."""
    from httpbench import demo as demo_mod
    from httpbench.peers import programs

    say = lambda line: click.echo(f"httpbench: {line}", err=True)
    programs.ensure(["nginx", "caddy"], say)
    with demo_mod.alpine(directory, package_size, client_rounds, say) as args:
        _run_compare(args, compare_args)


@demo.command(
    "huggingface", context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False}
)
@click.option(
    "--naive",
    is_flag=True,
    help="Put a pass-through nginx cache in front of the Hub-like upstream: the preflight "
    "must reject it (leaked Location / X-Xet-Hash).",
)
@click.option("--no-hf-client", is_flag=True, help="Skip the real huggingface_hub client rounds.")
@click.argument("compare_args", nargs=-1, type=click.UNPROCESSED)
def demo_huggingface(naive, no_hf_client, compare_args) -> None:
    """The hub fixture served directly (baseline) vs an nginx proxy_cache in front of a Hub-like
    upstream (candidate): warm rounds, cold fill with upstream fetch counts, real hf clients;
    extra arguments go to ``httpbench compare``."""
    import importlib.util

    from httpbench import demo as demo_mod
    from httpbench.peers import programs

    say = lambda line: click.echo(f"httpbench: {line}", err=True)
    programs.ensure(["nginx"], say)
    hf_client = not no_hf_client and importlib.util.find_spec("huggingface_hub") is not None
    with demo_mod.huggingface(naive, hf_client, say) as args:
        _run_compare(args, compare_args)


def _register() -> None:
    from httpbench import apkclient
    from httpbench.fixtures import alpine as alpine_fixture
    from httpbench.fixtures import huggingface as huggingface_fixture

    fixture.add_command(alpine_fixture.command, "alpine")
    fixture.add_command(huggingface_fixture.command, "huggingface")
    cli.add_command(apkclient.command, "apk-client")


_register()


def _invoke(command: click.Command, args: list[str], prog_name: str):
    """``command.main(args, standalone_mode=False)`` without click's own handling of Ctrl-C (it
    always prints an empty line to stderr before our one-line error; :func:`main` does that only on
    a terminal, after its ``^C``); ``--help`` / ``--version`` exits return their exit code."""
    try:
        with command.make_context(prog_name, list(args)) as ctx:
            return command.invoke(ctx)
    except click.exceptions.Exit as exc:
        return exc.exit_code


def main(argv: list[str] | None = None) -> None:
    """Console entry point: every expected error (bad input, the environment) is one line on stderr;
    a bug shows its traceback, then one line saying it is one."""
    try:
        code = _invoke(cli, sys.argv[1:] if argv is None else argv, "httpbench")
    except HttpbenchError as exc:
        _err(str(exc))
        sys.exit(exc.exit_code)
    except click.exceptions.NoArgsIsHelpError as exc:  # a bare group: its help, as written
        click.echo(exc.ctx.get_help() if exc.ctx else exc.format_message(), err=True)
        sys.exit(2)
    except click.exceptions.UsageError as exc:
        _err(exc.format_message().replace("\n", " "))
        sys.exit(2)
    except (click.exceptions.Abort, KeyboardInterrupt):
        if sys.stderr.isatty():
            click.echo("", err=True)  # end the terminal's ^C line
        _err("interrupted")
        sys.exit(130)
    except BrokenPipeError:
        # stdout closed early (e.g. piped into head): quietly, as click does
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        sys.exit(1)
    except click.exceptions.ClickException as exc:
        _err(exc.format_message().replace("\n", " "))
        sys.exit(exc.exit_code)
    except OSError as exc:
        # the environment refused (a file, a socket, a process): bad input, one line
        where = f"{exc.filename}: " if exc.filename else ""
        _err(f"{where}{exc.strerror or exc}")
        sys.exit(2)
    except Exception as exc:
        # anything else is a bug, not bad input: show where, then say so in the last line
        traceback.print_exc()
        _err(f"internal error (a bug in httpbench, traceback above): {type(exc).__name__}")
        sys.exit(2)
    sys.exit(code if isinstance(code, int) else 0)
