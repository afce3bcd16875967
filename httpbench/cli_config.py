"""The ``compare`` command's options (declared here, profiles' options attached from their modules),
the targets and credentials they name, and the :class:`~httpbench.compare.Config` built from them."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from httpbench.errors import HttpbenchError
from httpbench.options import option
from httpbench.profiles import PROFILES
from verdict.cli import Float
from verdict.outputs import unwritable

if TYPE_CHECKING:
    from httpbench.compare import Config


def _read_credentials(name: str, source: str) -> str:
    kind, _, ref = source.partition(":")
    if kind == "env" and ref:
        value = os.environ.get(ref)
        if value is None:
            raise HttpbenchError(f"--auth {name}: environment variable {ref} is not set")
        value = value.strip("\r\n")
    elif kind == "file" and ref:
        try:
            value = Path(ref).read_text(encoding="utf-8").strip("\r\n")
        except OSError as exc:
            raise HttpbenchError(f"--auth {name}: cannot read {ref}: {exc.strerror}") from None
        except UnicodeDecodeError:
            raise HttpbenchError(f"--auth {name}: {ref} is not UTF-8 text") from None
    else:
        # never echo what was given: it may be the secret itself
        raise HttpbenchError(
            f"--auth {name}: use NAME=env:VARIABLE or NAME=file:PATH "
            "(credentials are never taken from the command line)"
        )
    if not value:
        raise HttpbenchError(f"--auth {name}: the credentials from {kind}:{ref} are empty")
    return value


def _split_pair(option: str, text: str) -> tuple[str, str]:
    name, sep, value = text.partition("=")
    if not sep or not name.strip() or not value.strip():
        raise HttpbenchError(f"{option} expects NAME=VALUE")
    return name.strip(), value.strip()


def _profile_options(command):
    """Attach every profile's options to ``compare`` (declared once, in the profile module)."""
    from httpbench.profiles import all_profiles

    kinds = {"str": str, "int": int, "float": Float(), "path": click.Path(exists=True, dir_okay=False)}
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


def _make_profile(name: str | None, given: dict, method: str = "seed"):
    """The chosen profile with its options; an option of another profile is an error. Options not
    given take the profile's ``paired_defaults`` under --method paired, else their defaults."""
    from httpbench.profiles import all_profiles, load

    chosen = load(name) if name else None
    mine = {o.dest for o in chosen.options} if chosen else set()
    for pname, profile in all_profiles().items():
        for opt in profile.options:
            value = given.get(opt.dest)
            if opt.dest not in mine and value not in (None, (), False):
                raise HttpbenchError(
                    f"{opt.name} belongs to --profile {pname}"
                    + ("" if name is None else f", not --profile {name}")
                )
    if chosen is None:
        return None
    values = {}
    for opt in chosen.options:
        value = given.get(opt.dest)
        if value is None or value == ():
            value = opt.default if not opt.multiple else tuple(opt.default or ())
            if method == "paired" and opt.dest in chosen.paired_defaults:
                value = chosen.paired_defaults[opt.dest]
        values[opt.dest] = value
    return chosen(**values)


#: The help of every ``compare`` option, in the order of its ``--help``.
_HELP = {
    "--target": "Named base URL; repeat. The first is the baseline.",
    "--auth": "Credentials ('user:password' or 'Bearer TOKEN') for a target, from an environment variable or a file. Never echoed or written.",
    "--profile": "A protocol profile: its scenarios, defaults and preflight (see docs/).",
    "--scenario": "A path, or key=value pairs: name,method,path,status,length,sha256,class,header,conditional. Repeat.",
    "--scenarios": "TOML file with [[scenario]] tables.",
    "--warmups": "Untimed requests per target and round, on the timed connections. [default: 32, or the profile's; --method paired: one per connection]",
    "--requests": "Timed requests per target and round: --method seed exactly, at least 1 [default: 250, or the profile's]; --method paired at least, more to last --min-round-ms (0: sized by --min-round-ms alone) [default: 64].",
    "--concurrency": "Workers, each with one keep-alive connection. [default: 16, or the profile's]",
    "--rounds": "--method seed: rounds (target order alternates) [default: 3, or the profile's]. --method paired: exactly this many pairs, one look [default: sequential looks].",
    "--method": "paired: gates decided on intervals of paired-round ratios, rounds added until decided (pass/fail) or --budget runs out (inconclusive). seed: the seeds' fixed rounds and point-estimate gates, as published.",
    "--budget": "[paired] Seconds of paired rounds for all scenarios together.",
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
    _option("--auth", "auths", multiple=True, metavar="NAME=env:VAR|NAME=file:PATH"),
    _option("--profile", "profile_name", type=click.Choice(sorted(PROFILES)), default=None),
    _option("--scenario", "scenario_opts", multiple=True, metavar="SPEC"),
    _option("--scenarios", "scenarios_file", metavar="FILE"),
    _option("--warmups", type=click.IntRange(0, 100_000), default=None),
    _option("--requests", "requests_", type=click.IntRange(0, 1_000_000), default=None),
    _option("--concurrency", type=click.IntRange(1, 1024), default=None),
    _option("--rounds", type=click.IntRange(1, 1000), default=None),
    _option("--method", type=click.Choice(["paired", "seed"]), default="paired"),
    _option("--budget", "budget_s", type=Float(1, 86_400), default=60.0),
    _option("--alpha", type=Float(0.0001, 0.5), default=0.05),
    _option("--min-round-ms", type=Float(0, 60_000), default=100.0),
    _option("--self-control", is_flag=True),
    _option("--timeout", type=Float(0.01, 600), default=10.0),
    _option("--rate", type=Float(1, 10_000_000), default=None),
    _option("--gate", "gate_opts", multiple=True, metavar="CLASS:MIN_TP:MAX_P95"),
    _option("--client-command", "client_opts", multiple=True, metavar="NAME=COMMAND"),
    _option("--client-rounds", type=click.IntRange(1, 100), default=None),
    _option("--client-timeout", type=Float(1, 3600), default=300.0),
    _option("--output", metavar="FILE"),
    _option("--markdown", is_flag=True),
    _option("--junit", type=click.Path(dir_okay=False), default=None),
    _option(
        "--github-summary",
        type=click.Path(dir_okay=False),
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


def build_config(
    *,
    targets: tuple[str, ...],
    auths: tuple[str, ...],
    profile_name: str | None,
    scenario_opts: tuple[str, ...],
    scenarios_file: str | None,
    warmups: int | None,
    requests_: int | None,
    concurrency: int | None,
    rounds: int | None,
    method: str,
    budget_s: float,
    alpha: float,
    min_round_ms: float,
    self_control: bool,
    timeout: float,
    rate: float | None,
    gate_opts: tuple[str, ...],
    client_opts: tuple[str, ...],
    client_rounds: int | None,
    client_timeout: float,
    output: str | None,
    junit: str | None,
    github_summary: str | None,
    keep_samples: bool,
    verify_digest: bool,
    digest_every: int | None,
    **profile_values: Any,
) -> Config:
    """The run ``compare`` was asked for (the values of its options: those of the profiles by their
    names, in ``profile_values``); every input error (targets, credentials, profile options,
    scenarios, gates, unwritable output paths) is raised here, before any round."""
    from httpbench import clients, paired
    from httpbench import compare as compare_mod
    from httpbench import scenarios as sc_mod
    from httpbench.model import DEFAULT_GATES

    if requests_ == 0 and method == "seed":
        # a seed round times exactly --requests requests: none measures 0 req/s and fails every gate
        raise HttpbenchError(
            "--requests 0: --method seed times exactly --requests per round; give at least 1"
        )
    if requests_ == 0 and min_round_ms == 0:
        raise HttpbenchError(
            "--requests 0 with --min-round-ms 0 leaves nothing to size a round by; "
            "give --requests at least 1 or --min-round-ms above 0"
        )
    parsed = _targets(targets, auths)
    profile = _make_profile(profile_name, profile_values, method)
    gates = dict(DEFAULT_GATES)
    if profile is not None:
        gates.update(profile.gates)
    scenario_list = list(profile.scenarios()) if profile is not None else []
    if scenarios_file:
        file_scenarios, file_gates = sc_mod.load_file(scenarios_file)
        scenario_list += file_scenarios
        gates.update(file_gates)
    scenario_list += [sc_mod.parse_option(s) for s in scenario_opts]
    if not scenario_list:
        raise HttpbenchError("no scenarios: give --profile, --scenario PATH or --scenarios FILE")
    sc_mod.unique(scenario_list)
    for text in gate_opts:
        klass, gate = sc_mod.parse_gate_option(text)
        gates[klass] = gate
    if output:
        parent = Path(output).resolve().parent
        if not parent.is_dir():
            raise HttpbenchError(f"--output: directory {parent} does not exist")
        if Path(output).is_dir():
            raise HttpbenchError(f"--output: {output} is a directory, not a file")
    for name, path in (("--output", output), ("--junit", junit), ("--github-summary", github_summary)):
        reason = unwritable(path) if path else None  # before any round, not after all of them
        if reason:
            raise HttpbenchError(f"{name} {path}: cannot be written ({reason})")
    commands = clients.parse_options(client_opts, parsed)
    if client_rounds is None:
        from httpbench.gates import PAIRED_MIN_SAMPLES

        client_rounds = PAIRED_MIN_SAMPLES if method == "paired" else 3
    defaults = profile.defaults if profile is not None else None
    pick = lambda given, field, generic: (
        given if given is not None else getattr(defaults, field) if defaults else generic
    )
    workers = pick(concurrency, "concurrency", 16)
    if method == "paired" and warmups is None:
        warmups = workers  # one per fresh connection; the calibration run warmed the server
    cfg = compare_mod.Config(
        targets=parsed,
        scenarios=scenario_list,
        warmups=pick(warmups, "warmups", 32),
        requests=(
            requests_
            if requests_ is not None and method == "paired"
            else paired.MIN_REQUESTS
            if method == "paired"
            else pick(requests_, "requests", 250)
        ),
        concurrency=pick(concurrency, "concurrency", 16),
        rounds=pick(rounds, "rounds", 3),
        timeout=timeout,
        rate=rate,
        gates=gates,
        keep_samples=keep_samples,
        verify_digest=verify_digest,
        profile=profile,
        client_commands=commands,
        client_rounds=client_rounds,
        client_timeout=client_timeout,
        digest_every=digest_every,
        method=method,
        plan=paired.Plan(
            alpha=alpha,
            budget_s=budget_s,
            min_round_ms=min_round_ms,
            fixed_pairs=rounds if method == "paired" else None,
        ),
        self_control=self_control,
    )
    if self_control and method != "paired":
        raise HttpbenchError("--self-control needs --method paired")
    return cfg


def _targets(targets: tuple[str, ...], auths: tuple[str, ...]) -> list:
    from httpbench.model import Target

    if len(targets) < 2:
        raise HttpbenchError("give at least two --target NAME=URL (the first is the baseline)")
    parsed: list[Target] = []
    for text in targets:
        name, url = _split_pair("--target", text)
        target, userinfo = Target.parse(name, url)
        if any(t.name == name for t in parsed):
            raise HttpbenchError(f"target name {name!r} is used twice")
        if userinfo is not None:
            click.echo(
                f"httpbench: warning: target {name!r}: credentials in the URL are visible in "
                "the process list; prefer --auth NAME=env:VAR",
                err=True,
            )
            target = target.with_credentials(userinfo)
        parsed.append(target)
    by_name = {t.name: i for i, t in enumerate(parsed)}
    for text in auths:
        name, source = text.partition("=")[0].strip(), text.partition("=")[2].strip()
        if name not in by_name:
            raise HttpbenchError(f"--auth names unknown target {name!r}")
        credentials = _read_credentials(name, source)
        try:
            parsed[by_name[name]] = parsed[by_name[name]].with_credentials(credentials)
        except HttpbenchError as exc:
            raise HttpbenchError(f"--auth {name}: {exc}") from None
    return parsed
