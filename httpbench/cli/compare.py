"""``httpbench compare``: its options (declared here; the profiles' own attached from their modules),
then one library call (:func:`httpbench.config.build.build_config` and
:func:`httpbench.measure.compare.run`), then the result rendered (:mod:`httpbench.report`) and
written where asked; the exit code is the verdict's under ``--enforce-gates``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from httpbench.cli.app import say
from httpbench.cli.options import option
from httpbench.config.build import CompareOptions
from httpbench.errors import HttpbenchError
from httpbench.profiles import PROFILES, all_profiles
from verdict.cli import Float, InputFile, OutputFile


class AuthSource(click.ParamType):
    """``NAME=env:VAR`` or ``NAME=file:PATH``: the file is an input (an output never replaces it)."""

    name = "auth"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        return value

    def input_paths(self, value: str) -> list[Path]:
        from httpbench.config.targets import auth_files

        return auth_files(value)


DEFAULT = CompareOptions()


def _profile_options(command):
    """Attach every profile's options to ``compare`` (declared once, in the profile module)."""
    kinds = {"str": str, "int": int, "float": Float(), "path": InputFile(exists=True, path_type=str)}
    seen: dict[str, str] = {}
    for pname, profile in sorted(all_profiles().items(), reverse=True):
        for opt in reversed(profile.options):
            if opt.name in seen:
                continue
            seen[opt.name] = pname
            if opt.kind == "bool":
                command = click.option(
                    opt.name, opt.dest, is_flag=True, default=None, help=f"[{pname}] {opt.help}"
                )(command)
            else:
                command = click.option(
                    opt.name,
                    opt.dest,
                    type=kinds[opt.kind],
                    multiple=opt.multiple,
                    default=None,
                    metavar=opt.metavar,
                    help=f"[{pname}] {opt.help}",
                )(command)
    return command


#: The help of every ``compare`` option, in the order of its ``--help``.
_HELP = {
    "--target": "Named base URL; repeat. The first is the baseline.",
    "--auth": "Credentials ('user:password' or 'Bearer TOKEN') for a target, from an environment variable or a file. Never echoed or written.",
    "--profile": "A protocol profile: its scenarios, defaults and preflight (see docs/).",
    "--scenario": "A path, or key=value pairs: name,method,path,status,length,sha256,class,header,conditional. Repeat.",
    "--scenarios": "TOML file with [[scenario]] tables.",
    "--warmups": "Untimed requests per target and round, on the timed connections. [default: 32, or the profile's; --method paired: one per connection]",
    "--requests": "Timed requests per target and round: --method seed exactly, at least 1 [default: 250, or the profile's]; --method paired at least, more to last --min-round-ms (0: sized by --min-round-ms alone) [default: 4 per worker].",
    "--concurrency": "Workers, each with one keep-alive connection. [default: 16, or the profile's]",
    "--rounds": "--method seed: rounds (target order alternates) [default: 3, or the profile's]. --method paired: exactly this many pairs, one look (at least the fewest that can decide at --alpha: 5 at 0.05) [default: sequential looks].",
    "--method": "paired: gates decided on intervals of paired-round ratios, rounds added until decided (pass/fail) or --budget runs out (inconclusive). seed: the seeds' fixed rounds and point-estimate gates, as published.",
    "--budget": "[paired] Seconds of paired rounds for all scenarios together; what a decided scenario leaves goes to the undecided ones. No effect with --rounds.",
    "--alpha": "[paired] Error rate of a verdict, over all looks.",
    "--min-round-ms": "[paired] A timed round lasts at least this long (requests scaled up from a calibration run); 0: --requests only.",
    "--self-control": "[paired] First compare the baseline with itself per scenario: the noise floor, reported beside the verdict.",
    "--timeout": "Seconds allowed per connect and per request.",
    "--rate": "Open loop: intended req/s per target; latency counts from the intended send time.",
    "--gate": "Override a gate: metadata, payload, client (p95 only) or cold (throughput only), e.g. payload:0.9:1.15.",
    "--client-command": "A real client to time per target (shell command; {url}, {tmp}, $HTTPBENCH_URL). One per target, or one using {url} for all.",
    "--client-rounds": "Rounds of real-client samples, alternating target order (one pair per round). [default: 3 (seed), 8 (paired)]",
    "--client-timeout": "Seconds allowed per real-client sample.",
    "--output": "Write the JSON result here.",
    "--markdown": "Print the tables as Markdown.",
    "--junit": "Write JUnit XML: one test case per judged comparison (fail: failure, inconclusive: skipped).",
    "--github-summary": "Append the verdict and tables as Markdown (default: $GITHUB_STEP_SUMMARY).",
    "--enforce-gates": "Exit with the verdict: 0 pass, 1 fail (gate_failures), 3 inconclusive.",
    "--verify-digest": "SHA-256 every timed body (always on when a scenario gives sha256).",
    "--digest-every": "SHA-256 the first body of each connection and every Nth after it. [default: every body below 1 MiB, every 8th above, so hashing does not bind the client]",
    "--samples": "Keep every timed sample in the JSON.",
    "--quiet": "No progress lines on stderr.",
}


def _option(name: str, *decls: str, **attrs: Any):
    """An option of ``compare``, its help from :data:`_HELP`."""
    return option(name, *decls, help=_HELP[name], **attrs)


COMPARE_OPTIONS = [
    _option("--target", "targets", multiple=True, metavar="NAME=URL"),
    _option("--auth", "auths", type=AuthSource(), multiple=True, metavar="NAME=env:VAR|NAME=file:PATH"),
    _option("--profile", "profile_name", type=click.Choice(sorted(PROFILES)), default=None),
    _option("--scenario", "scenario_opts", multiple=True, metavar="SPEC"),
    _option("--scenarios", "scenarios_file", type=InputFile(path_type=str), metavar="FILE"),
    _option("--warmups", type=click.IntRange(0, 100_000), default=None),
    _option("--requests", "requests_", type=click.IntRange(0, 1_000_000), default=None),
    _option("--concurrency", type=click.IntRange(1, 1024), default=None),
    _option("--rounds", type=click.IntRange(1, 1000), default=None),
    _option("--method", type=click.Choice(["paired", "seed"]), default=DEFAULT.method),
    _option("--budget", "budget_s", type=Float(1, 86_400), default=DEFAULT.budget_s),
    _option("--alpha", type=Float(0.0001, 0.5), default=DEFAULT.alpha),
    _option("--min-round-ms", type=Float(0, 60_000), default=DEFAULT.min_round_ms),
    _option("--self-control", is_flag=True),
    _option("--timeout", type=Float(0.01, 600), default=DEFAULT.timeout),
    _option("--rate", type=Float(1, 10_000_000), default=None),
    _option("--gate", "gate_opts", multiple=True, metavar="CLASS:MIN_TP:MAX_P95"),
    _option("--client-command", "client_opts", multiple=True, metavar="NAME=COMMAND"),
    _option("--client-rounds", type=click.IntRange(1, 100), default=None),
    _option("--client-timeout", type=Float(1, 3600), default=DEFAULT.client_timeout),
    _option("--output", type=OutputFile(path_type=str), metavar="FILE"),
    _option("--markdown", is_flag=True),
    _option("--junit", type=OutputFile(path_type=str), default=None),
    _option(
        "--github-summary",
        type=OutputFile(path_type=str),
        envvar="GITHUB_STEP_SUMMARY",
        default=None,
        metavar="FILE",
    ),
    _option("--enforce-gates", is_flag=True),
    _option("--verify-digest", is_flag=True),
    _option("--digest-every", type=click.IntRange(1, 1_000_000), default=None),
    _option("--samples", "keep_samples", is_flag=True),
    _option("--quiet", "-q", is_flag=True),
]


def compare_options(command):
    """Attach the options of ``compare`` (in the order of its ``--help``), then every profile's."""
    command = _profile_options(command)
    for attach in reversed(COMPARE_OPTIONS):
        command = attach(command)
    return command


@click.command()
@compare_options
def compare(output, markdown, junit, github_summary, enforce_gates, quiet, **options) -> None:
    """Measure every target on every scenario in alternating rounds and gate the candidates."""
    from httpbench import report
    from httpbench.config.build import build_config
    from httpbench.measure.compare import run
    from verdict.files import write_output

    opts = CompareOptions.from_values(output=output, junit=junit, github_summary=github_summary, **options)
    cfg = build_config(opts, warn=lambda line: click.echo(f"httpbench: warning: {line}", err=True))
    doc = run(cfg, None if quiet else say)
    if output:
        _write("--output", output, lambda: report.write_json(doc, output))
    click.echo(report.tables(doc, markdown))
    if junit:
        _write("--junit", junit, lambda: write_output(junit, report.junit_xml(doc)))
    if github_summary:
        _write(
            "--github-summary",
            github_summary,
            lambda: write_output(github_summary, report.github_summary(doc), append=True),
        )
    _exit_by_verdict(doc, enforce_gates)


def _write(option_name: str, path: str, write: Callable[[], Any]) -> None:
    """One output file; a refusal of the system is one line naming the option and the path."""
    try:
        write()
    except OSError as exc:
        raise HttpbenchError(f"{option_name}: cannot write {path}: {exc.strerror}") from None


def _exit_by_verdict(doc: dict[str, Any], enforce_gates: bool) -> None:
    """Failed timed requests fail the run (exit 1); under ``--enforce-gates`` so does a verdict
    other than pass (1 fail, 3 inconclusive)."""
    from verdict import exit_code

    failed = doc["totals"]["failures"]
    if failed:
        raise HttpbenchError(f"{failed} timed request(s) failed their checks (see failure_kinds)", 1)
    if enforce_gates and doc["verdict"] != "pass":
        if doc["verdict"] == "fail":
            why = f"{len(doc['gate_failures'])} gate failure(s)"
        else:
            from httpbench.measure.compare import undecided_causes

            why = f"{len(doc['inconclusive'])} gate(s) undecided: " + "; ".join(undecided_causes(doc))
        raise HttpbenchError(f"verdict {doc['verdict']}: {why}", exit_code(doc["verdict"]))
