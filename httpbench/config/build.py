"""The run ``httpbench compare`` is asked for: its options as one typed object
(:class:`CompareOptions`) and the :class:`~httpbench.measure.compare.Config` built from them
(:func:`build_config`). Every input error (targets, credentials, profile options, scenarios, gates,
unwritable output paths, client commands) is raised here, before any round."""

from __future__ import annotations

import dataclasses
import math
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from httpbench.config import scenarios
from httpbench.config.targets import parse_targets
from httpbench.errors import HttpbenchError
from httpbench.measure import client_rounds, paired
from httpbench.measure.compare import Config
from httpbench.measure.gates import PAIRED_MIN_SAMPLES, fewest_pairs
from httpbench.model import DEFAULT_GATES, Gate, Scenario
from httpbench.profiles import Profile, all_profiles, load
from verdict.outputs import unwritable


@dataclass(frozen=True, kw_only=True)
class CompareOptions:
    """The options of ``httpbench compare`` (named as its click parameters), before any check.
    ``None`` means not given: the profile's default, else the generic one, applies."""

    targets: tuple[str, ...] = ()  # NAME=URL; the first is the baseline
    auths: tuple[str, ...] = ()  # NAME=env:VAR | NAME=file:PATH
    profile_name: str | None = None
    scenario_opts: tuple[str, ...] = ()  # --scenario SPEC
    scenarios_file: str | None = None
    warmups: int | None = None
    requests_: int | None = None
    concurrency: int | None = None
    rounds: int | None = None
    method: str = "paired"
    budget_s: float = 60.0
    alpha: float = 0.05
    min_round_ms: float = paired.MIN_ROUND_MS
    self_control: bool = False
    timeout: float = 10.0
    rate: float | None = None
    gate_opts: tuple[str, ...] = ()  # --gate CLASS:MIN_TP:MAX_P95
    client_opts: tuple[str, ...] = ()  # --client-command [NAME=]COMMAND
    client_rounds: int | None = None
    client_timeout: float = 300.0
    output: str | None = None
    junit: str | None = None
    github_summary: str | None = None
    keep_samples: bool = False
    verify_digest: bool = False
    digest_every: int | None = None
    profile_values: dict[str, Any] = field(default_factory=dict)  # the profiles' options, by name

    @classmethod
    def from_values(cls, **values: Any) -> CompareOptions:
        """The options from their values by name; a name that is none of the fields is a
        profile's option (:attr:`profile_values`)."""
        own = {f.name for f in dataclasses.fields(cls)} - {"profile_values"}
        return cls(
            **{k: v for k, v in values.items() if k in own},
            profile_values={k: v for k, v in values.items() if k not in own},
        )


def _warn_on_stderr(line: str) -> None:
    print(f"httpbench: warning: {line}", file=sys.stderr)


def build_config(opts: CompareOptions, warn: Callable[[str], None] = _warn_on_stderr) -> Config:
    """The run ``opts`` ask for; every input error is raised here, before any round. ``warn`` is
    told what is accepted but unwise (credentials in a target URL)."""
    _check_round_size(opts)
    targets = parse_targets(opts.targets, opts.auths, warn)
    profile = make_profile(opts.profile_name, opts.profile_values, opts.method)
    scenario_list, gates = _scenarios_and_gates(opts, profile)
    _check_outputs(opts)
    commands = client_rounds.parse_options(opts.client_opts, targets)
    _check_decidable(opts, profile, len(targets), len(scenario_list))
    cfg = Config(
        targets=targets,
        scenarios=scenario_list,
        **_round_counts(opts, profile),
        timeout=opts.timeout,
        rate=opts.rate,
        gates=gates,
        keep_samples=opts.keep_samples,
        verify_digest=opts.verify_digest,
        profile=profile,
        client_commands=commands,
        client_rounds=_client_rounds(opts),
        client_timeout=opts.client_timeout,
        digest_every=opts.digest_every,
        method=opts.method,
        plan=paired.Plan(
            alpha=opts.alpha,
            budget_s=opts.budget_s,
            min_round_ms=opts.min_round_ms,
            fixed_pairs=opts.rounds if opts.method == "paired" else None,
        ),
        self_control=opts.self_control,
    )
    if opts.self_control and opts.method != "paired":
        raise HttpbenchError("--self-control needs --method paired")
    return cfg


def _check_round_size(opts: CompareOptions) -> None:
    """A round must time something: a count (--requests) or a time (--min-round-ms) sizes it."""
    if opts.requests_ == 0 and opts.method == "seed":
        # a seed round times exactly --requests requests: none measures 0 req/s and fails every gate
        raise HttpbenchError(
            "--requests 0: --method seed times exactly --requests per round; give at least 1"
        )
    if opts.requests_ == 0 and opts.min_round_ms == 0:
        raise HttpbenchError(
            "--requests 0 with --min-round-ms 0 leaves nothing to size a round by; "
            "give --requests at least 1 or --min-round-ms above 0"
        )


def _check_decidable(opts: CompareOptions, profile: Profile | None, targets: int, scenarios: int) -> None:
    """Under --method paired every gate must be decidable at --alpha with the pairs and the time
    asked for: a count of pairs below the fewest that can decide (all of them past a gate by chance
    alone must be at most alpha), or a --budget too short for the first look of every scenario, is
    refused here, before any request, naming the minimum."""
    if opts.method != "paired":
        return
    need = fewest_pairs(opts.alpha)
    counts = [("--rounds", opts.rounds)]
    if opts.client_opts:
        counts.append(("--client-rounds", opts.client_rounds))
    if profile is not None:
        names = {o.dest: o.name for o in profile.options}
        counts += [(names[k], profile.values.get(k)) for k in profile.paired_defaults]
    for name, n in counts:
        if n and n < need:
            raise HttpbenchError(
                f"{name} {n} cannot decide a gate at --alpha {opts.alpha:g}: {n} pairs all on one side "
                f"of a gate happen by chance {2.0**-n:.1%} of the time, more than {opts.alpha:.1%}; "
                f"give {name} {need} or more "
                f"(or --alpha {2.0**-n:g})"
            )
    if opts.rounds is None:
        plan = paired.Plan(alpha=opts.alpha, min_round_ms=opts.min_round_ms)
        slots = targets + (2 if opts.self_control else 0)
        least = scenarios * plan.looks[0] * slots * opts.min_round_ms / 1000.0
        if opts.budget_s < least:
            raise HttpbenchError(
                f"--budget {opts.budget_s:g} s cannot reach a first look: {scenarios} scenario(s) x "
                f"{plan.looks[0]} pairs x {slots} rounds of at least {opts.min_round_ms:g} ms take "
                f"{least:.1f} s; give --budget {math.ceil(least)} or more (or a smaller --min-round-ms)"
            )


def make_profile(name: str | None, given: dict[str, Any], method: str = "seed") -> Profile | None:
    """The chosen profile with its options; an option of another profile is an error. Options not
    given take the profile's ``paired_defaults`` under --method paired, else their defaults."""
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


def _scenarios_and_gates(
    opts: CompareOptions, profile: Profile | None
) -> tuple[list[Scenario], dict[str, Gate]]:
    """The profile's scenarios, then the file's, then the options'; the gates: the defaults, the
    profile's, the file's, then ``--gate`` (each overriding the ones before)."""
    gates = dict(DEFAULT_GATES)
    if profile is not None:
        gates.update(profile.gates)
    scenario_list = list(profile.scenarios()) if profile is not None else []
    if opts.scenarios_file:
        file_scenarios, file_gates = scenarios.load_file(opts.scenarios_file)
        scenario_list += file_scenarios
        gates.update(file_gates)
    scenario_list += [scenarios.parse_option(s) for s in opts.scenario_opts]
    if not scenario_list:
        raise HttpbenchError("no scenarios: give --profile, --scenario PATH or --scenarios FILE")
    scenarios.unique(scenario_list)
    for text in opts.gate_opts:
        klass, gate = scenarios.parse_gate_option(text)
        gates[klass] = gate
    return scenario_list, gates


def _check_outputs(opts: CompareOptions) -> None:
    """Every output path can be written: checked before any round, not after all of them."""
    output = opts.output
    if output:
        parent = Path(output).resolve().parent
        if not parent.is_dir():
            raise HttpbenchError(f"--output: directory {parent} does not exist")
        if Path(output).is_dir():
            raise HttpbenchError(f"--output: {output} is a directory, not a file")
    for name, path in (
        ("--output", output),
        ("--junit", opts.junit),
        ("--github-summary", opts.github_summary),
    ):
        reason = unwritable(path) if path else None
        if reason:
            raise HttpbenchError(f"{name} {path}: cannot be written ({reason})")


def _round_counts(opts: CompareOptions, profile: Profile | None) -> dict[str, int]:
    """Warm-ups, requests, workers and rounds: given, else the profile's defaults, else the generic
    ones. Under --method paired a round times at least ``--requests`` (default
    :data:`~httpbench.measure.paired.REQUESTS_PER_WORKER` per worker) and warms each fresh
    connection once."""
    defaults = profile.defaults if profile is not None else None

    def pick(given: int | None, name: str, generic: int) -> int:
        if given is not None:
            return given
        return getattr(defaults, name) if defaults else generic

    concurrency = pick(opts.concurrency, "concurrency", 16)
    warmups = opts.warmups
    if opts.method == "paired":
        if warmups is None:
            warmups = concurrency  # the calibration run warmed the server: one per fresh connection
        requests = opts.requests_ if opts.requests_ is not None else paired.REQUESTS_PER_WORKER * concurrency
    else:
        requests = pick(opts.requests_, "requests", 250)
    return {
        "warmups": pick(warmups, "warmups", 32),
        "requests": requests,
        "concurrency": concurrency,
        "rounds": pick(opts.rounds, "rounds", 3),
    }


def _client_rounds(opts: CompareOptions) -> int:
    """Real-client sample pairs: given, else enough for a paired interval, else the seeds' 3."""
    if opts.client_rounds is not None:
        return opts.client_rounds
    return PAIRED_MIN_SAMPLES if opts.method == "paired" else 3
