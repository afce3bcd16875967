"""The run ``compare`` asks for, built by the library call alone (no command line): the options as a
typed object, the defaults of the profile and of the method, and every input error before a round."""

from __future__ import annotations

import pytest

from httpbench.config.build import CompareOptions, build_config
from httpbench.errors import HttpbenchError
from httpbench.measure import paired
from httpbench.measure.gates import PAIRED_MIN_SAMPLES

TARGETS = ("a=http://127.0.0.1:1", "b=http://127.0.0.1:2")


def test_options_by_name_keep_the_profiles_own_apart():
    opts = CompareOptions.from_values(targets=TARGETS, requests_=5, cold_samples=2, repo=None)
    assert opts.targets == TARGETS and opts.requests_ == 5
    assert opts.profile_values == {"cold_samples": 2, "repo": None}


def test_paired_rounds_warm_each_connection_and_time_at_least_the_minimum():
    cfg = build_config(CompareOptions(targets=TARGETS, scenario_opts=("/x",), concurrency=3))
    assert (cfg.warmups, cfg.requests, cfg.concurrency, cfg.rounds) == (
        3,
        paired.REQUESTS_PER_WORKER * 3,
        3,
        3,
    )
    assert cfg.plan.fixed_pairs is None and cfg.client_rounds == PAIRED_MIN_SAMPLES


def test_seed_rounds_take_the_profiles_defaults_then_the_generic_ones():
    opts = CompareOptions(targets=TARGETS, profile_name="huggingface", method="seed", warmups=2)
    cfg = build_config(opts)
    assert cfg.profile is not None and cfg.profile.name == "huggingface"
    defaults = cfg.profile.defaults
    assert (cfg.warmups, cfg.requests, cfg.rounds) == (2, defaults.requests, defaults.rounds)
    assert cfg.client_rounds == 3 and [s.name for s in cfg.scenarios] == [
        s.name for s in cfg.profile.scenarios()
    ]


def test_credentials_in_a_url_are_accepted_with_a_warning():
    said: list[str] = []
    targets = ("a=http://user:pw@127.0.0.1:1", TARGETS[1])
    cfg = build_config(CompareOptions(targets=targets, scenario_opts=("/x",)), warn=said.append)
    assert cfg.targets[0].auth_header is not None and "pw" not in cfg.targets[0].url
    assert len(said) == 1 and "visible in the process list" in said[0] and "pw" not in said[0]


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"requests_": 0, "method": "seed"}, "--requests 0: --method seed"),
        ({"targets": TARGETS[:1]}, "at least two --target"),
        ({"cold_samples": 2}, "--cold-samples belongs to --profile huggingface"),
        ({"scenario_opts": ()}, "no scenarios"),
        ({"gate_opts": ("payload:1",)}, "expected CLASS:MIN_THROUGHPUT_RATIO:MAX_P95_RATIO"),
        ({"method": "seed", "self_control": True}, "--self-control needs --method paired"),
    ],
)
def test_every_input_error_is_raised_before_any_round(changes, message):
    values = {"targets": TARGETS, "scenario_opts": ("/x",), **changes}
    with pytest.raises(HttpbenchError, match=message):
        build_config(CompareOptions.from_values(**values))
