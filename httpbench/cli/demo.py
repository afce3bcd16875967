"""``httpbench demo PROFILE``: a real A/B run of a protocol profile on this machine, end to end.

Each demo (:mod:`httpbench.profiles.alpine.demo`, :mod:`httpbench.profiles.huggingface.demo`) builds
the profile's deterministic fixture and starts two real servers over it on loopback ports; then
exactly the ``httpbench compare --profile …`` command a user would run is printed and run, with any
further compare options passed through. The servers are stopped and the temporary files removed
when the run ends, whatever its outcome.
"""

from __future__ import annotations

import shlex
from pathlib import Path

import click

from httpbench.cli.app import invoke, say
from httpbench.cli.compare import compare

_PASS_THROUGH = {"ignore_unknown_options": True, "allow_interspersed_args": False}


@click.group()
def demo() -> None:
    """A real A/B run of a profile on this machine: fixture, two real servers, compare."""


def _run_compare(args: list[str], passthrough: tuple[str, ...]) -> None:
    argv = [*args, *passthrough]
    say("running: " + shlex.join(["httpbench", "compare", *argv]))
    invoke(compare, argv, "httpbench compare")


@demo.command("alpine", context_settings=_PASS_THROUGH)
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
    from httpbench.peers import programs
    from httpbench.profiles.alpine.demo import alpine

    programs.ensure(["nginx", "caddy"], say)
    with alpine(directory, package_size, client_rounds, say) as args:
        _run_compare(args, compare_args)


@demo.command("huggingface", context_settings=_PASS_THROUGH)
@click.option(
    "--naive",
    is_flag=True,
    help="Put a pass-through nginx cache in front of the Hub-like upstream: the preflight "
    "must reject it (leaked Location / X-Xet-Hash).",
)
@click.option("--no-hf-client", is_flag=True, help="Skip the real huggingface_hub client rounds.")
@click.option(
    "--no-model-clients",
    is_flag=True,
    help="Skip the tiny models and the Transformers / Diffusers rounds (no client-line environments).",
)
@click.option(
    "--prepare",
    is_flag=True,
    help="Only create what the model clients need (both client lines' environments under the httpbench "
    "home, the pinned tiny models), say where and how long it took, and exit.",
)
@click.argument("compare_args", nargs=-1, type=click.UNPROCESSED)
def demo_huggingface(naive, no_hf_client, no_model_clients, prepare, compare_args) -> None:
    """The hub fixture served directly (baseline) vs an nginx proxy_cache in front of a Hub-like
    upstream (candidate): warm rounds, cold fill with upstream fetch counts, real hf clients, and
    Transformers and Diffusers of the old and the current client line on the tiny models (their
    environments are created first when missing); extra arguments go to ``httpbench compare``."""
    import importlib.util

    from httpbench.peers import programs
    from httpbench.profiles.huggingface.demo import huggingface
    from httpbench.profiles.huggingface.models.prepare import prepare as prepare_models

    prepared = None if no_model_clients and not prepare else prepare_models(say)
    if prepare:
        assert prepared is not None
        for line, env in prepared.envs.items():
            facts = env.ready() or {}
            say(
                f"{line} client line: {env.python} (installed in {facts.get('install_s')} s: {facts.get('versions')})"
            )
        say(f"tiny models: {prepared.models}")
        return
    programs.ensure(["nginx"], say)
    hf_client = not no_hf_client and importlib.util.find_spec("huggingface_hub") is not None
    with huggingface(naive, hf_client, say, prepared) as args:
        _run_compare(args, compare_args)
