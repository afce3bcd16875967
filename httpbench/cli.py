"""The ``httpbench`` command: a thin click layer over :mod:`httpbench.compare`."""

from __future__ import annotations

import os
import shlex
import sys
import traceback
from pathlib import Path

import click

from httpbench import __version__
from httpbench.errors import HttpbenchError
from httpbench.profiles import PROFILES
from verdict.outputs import unwritable


def _err(message: str) -> None:
    click.echo(f"httpbench: error: {message}", err=True)


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


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="httpbench")
def cli() -> None:
    """Same-host A/B HTTP benchmarks: a candidate against a baseline."""


def _profile_options(command):
    """Attach every profile's options to ``compare`` (declared once, in the profile module)."""
    from httpbench.profiles import all_profiles

    seen: dict[str, str] = {}
    for pname, profile in sorted(all_profiles().items(), reverse=True):
        for opt in reversed(profile.options):
            if opt.name in seen:
                continue
            seen[opt.name] = pname
            kinds = {"str": str, "int": int, "float": float, "path": click.Path(exists=True, dir_okay=False)}
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


@cli.command()
@click.option(
    "--target",
    "targets",
    multiple=True,
    metavar="NAME=URL",
    help="Named base URL; repeat. The first is the baseline.",
)
@click.option(
    "--auth",
    "auths",
    multiple=True,
    metavar="NAME=env:VAR|NAME=file:PATH",
    help="Credentials ('user:password' or 'Bearer TOKEN') for a target, from an "
    "environment variable or a file. Never echoed or written.",
)
@click.option(
    "--profile",
    "profile_name",
    type=click.Choice(sorted(PROFILES)),
    default=None,
    help="A protocol profile: its scenarios, defaults and preflight (see docs/).",
)
@click.option(
    "--scenario",
    "scenario_opts",
    multiple=True,
    metavar="SPEC",
    help="A path, or key=value pairs: name,method,path,status,length,sha256,class,header,"
    "conditional. Repeat.",
)
@click.option("--scenarios", "scenarios_file", metavar="FILE", help="TOML file with [[scenario]] tables.")
@click.option(
    "--warmups",
    type=click.IntRange(0, 100_000),
    default=None,
    help="Untimed requests per target and round, on the timed connections. [default: 32, "
    "or the profile's; --method paired: one per connection]",
)
@click.option(
    "--requests",
    "requests_",
    type=click.IntRange(0, 1_000_000),
    default=None,
    help="Timed requests per target and round: --method seed exactly [default: 250, or the "
    "profile's]; --method paired at least, more to last --min-round-ms [default: 64].",
)
@click.option(
    "--concurrency",
    type=click.IntRange(1, 1024),
    default=None,
    help="Workers, each with one keep-alive connection. [default: 16, or the profile's]",
)
@click.option(
    "--rounds",
    type=click.IntRange(1, 1000),
    default=None,
    help="--method seed: rounds (target order alternates) [default: 3, or the profile's]. "
    "--method paired: exactly this many pairs, one look [default: sequential looks].",
)
@click.option(
    "--method",
    type=click.Choice(["paired", "seed"]),
    default="paired",
    show_default=True,
    help="paired: gates decided on intervals of paired-round ratios, rounds added until "
    "decided (pass/fail) or --budget runs out (inconclusive). seed: the seeds' fixed "
    "rounds and point-estimate gates, as published.",
)
@click.option(
    "--budget",
    "budget_s",
    type=click.FloatRange(1, 86_400),
    default=60.0,
    show_default=True,
    help="[paired] Seconds of paired rounds for all scenarios together.",
)
@click.option(
    "--alpha",
    type=click.FloatRange(0.0001, 0.5),
    default=0.05,
    show_default=True,
    help="[paired] Error rate of a verdict, over all looks.",
)
@click.option(
    "--min-round-ms",
    type=click.FloatRange(0, 60_000),
    default=100.0,
    show_default=True,
    help="[paired] A timed round lasts at least this long (requests scaled up from a "
    "calibration run); 0: --requests only.",
)
@click.option(
    "--self-control",
    is_flag=True,
    help="[paired] First compare the baseline with itself per scenario: the noise floor, "
    "reported beside the verdict.",
)
@click.option(
    "--timeout",
    type=click.FloatRange(0.01, 600),
    default=10.0,
    show_default=True,
    help="Seconds allowed per connect and per request.",
)
@click.option(
    "--rate",
    type=click.FloatRange(1, 10_000_000),
    default=None,
    help="Open loop: intended req/s per target; latency counts from the intended send time.",
)
@click.option(
    "--gate",
    "gate_opts",
    multiple=True,
    metavar="CLASS:MIN_TP:MAX_P95",
    help="Override a gate: metadata, payload, client (p95 only) or cold (throughput only), "
    "e.g. payload:0.9:1.15.",
)
@click.option(
    "--client-command",
    "client_opts",
    multiple=True,
    metavar="NAME=COMMAND",
    help="A real client to time per target (shell command; {url}, {tmp}, $HTTPBENCH_URL). "
    "One per target, or one using {url} for all.",
)
@click.option(
    "--client-rounds",
    type=click.IntRange(1, 100),
    default=None,
    help="Rounds of real-client samples, alternating target order (one pair per round). "
    "[default: 3 (seed), 8 (paired)]",
)
@click.option(
    "--client-timeout",
    type=click.FloatRange(1, 3600),
    default=300.0,
    show_default=True,
    help="Seconds allowed per real-client sample.",
)
@click.option("--output", metavar="FILE", help="Write the JSON result here.")
@click.option("--markdown", is_flag=True, help="Print the tables as Markdown.")
@click.option(
    "--junit",
    type=click.Path(dir_okay=False),
    default=None,
    help="Write JUnit XML: one test case per judged comparison (fail: failure, inconclusive: skipped).",
)
@click.option(
    "--github-summary",
    type=click.Path(dir_okay=False),
    envvar="GITHUB_STEP_SUMMARY",
    default=None,
    metavar="FILE",
    help="Append the verdict and tables as Markdown (default: $GITHUB_STEP_SUMMARY).",
)
@click.option(
    "--enforce-gates",
    is_flag=True,
    help="Exit with the verdict: 0 pass, 1 fail (gate_failures), 3 inconclusive.",
)
@click.option(
    "--verify-digest", is_flag=True, help="SHA-256 every timed body (always on when a scenario gives sha256)."
)
@click.option(
    "--digest-every",
    type=click.IntRange(1, 1_000_000),
    default=None,
    help="SHA-256 the first body of each connection and every Nth after it. [default: "
    "every body below 1 MiB, every 8th above, so hashing does not bind the client]",
)
@click.option("--samples", "keep_samples", is_flag=True, help="Keep every timed sample in the JSON.")
@click.option("--quiet", "-q", is_flag=True, help="No progress lines on stderr.")
@_profile_options
def compare(
    targets,
    auths,
    profile_name,
    scenario_opts,
    scenarios_file,
    warmups,
    requests_,
    concurrency,
    rounds,
    method,
    budget_s,
    alpha,
    min_round_ms,
    self_control,
    timeout,
    rate,
    gate_opts,
    client_opts,
    client_rounds,
    client_timeout,
    output,
    markdown,
    junit,
    github_summary,
    enforce_gates,
    verify_digest,
    digest_every,
    keep_samples,
    quiet,
    **profile_values,
) -> None:
    """Measure every target on every scenario in alternating rounds and gate the candidates."""
    from httpbench import clients, paired, report
    from httpbench import compare as compare_mod
    from httpbench import scenarios as sc_mod
    from httpbench.model import DEFAULT_GATES
    from verdict import exit_code

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
    for option, path in (("--output", output), ("--junit", junit), ("--github-summary", github_summary)):
        reason = unwritable(path) if path else None  # before any round, not after all of them
        if reason:
            raise HttpbenchError(f"{option} {path}: cannot be written ({reason})")
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
    progress = None if quiet else (lambda line: click.echo(f"httpbench: {line}", err=True))
    doc = compare_mod.run(cfg, progress)
    if output:
        try:
            report.write_json(doc, output)
        except OSError as exc:
            raise HttpbenchError(f"--output: cannot write {output}: {exc.strerror}") from None
    click.echo(report.tables(doc, markdown))
    for path, text, mode in ((junit, report.junit_xml, "w"), (github_summary, report.github_summary, "a")):
        if path:
            try:
                with open(path, mode, encoding="utf-8") as fh:
                    fh.write(text(doc))
            except OSError as exc:
                raise HttpbenchError(f"cannot write {path}: {exc.strerror}") from None
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


@cli.command("bench-client")
@click.option(
    "--requests",
    "requests_",
    type=click.IntRange(1000, 5_000_000),
    default=200_000,
    show_default=True,
    help="httpbench timed requests.",
)
@click.option(
    "--duration", type=click.FloatRange(1, 60), default=5.0, show_default=True, help="wrk run seconds."
)
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

    say = lambda line: click.echo(f"httpbench: {line}", err=True)
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

    say = lambda line: click.echo(f"httpbench: {line}", err=True)
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
