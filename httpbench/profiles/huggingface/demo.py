"""``httpbench demo huggingface``: a real A/B run of the Hugging Face profile on this machine.

The Hub fixture (:mod:`httpbench.profiles.huggingface.fixture`) serving directly (baseline) against
an nginx ``proxy_cache`` in front of a Hub-like upstream (candidate), each server its own process on
loopback ports, and the ``httpbench compare --profile huggingface`` arguments a user would give.
The servers are stopped and the temporary files removed when the run ends, whatever its outcome
(the ``demo`` command: :mod:`httpbench.cli.demo`).
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator

from httpbench.peers.process import ServerProcess, free_port
from httpbench.profiles.huggingface.models.prepare import Prepared

DEMO_MODEL_ROUNDS = 5  # 2^-5 < 0.05: the fewest pairs that can decide a gate


class _FixtureProcess(ServerProcess):
    """``httpbench fixture huggingface`` in its own process (never a thread of the timing client,
    which would share its GIL and CPU), on free loopback ports."""

    program = "hub fixture"

    def __init__(self, *args: str):
        super().__init__()
        self.args = args
        self.cdn_port = 0

    def prepare(self) -> list[str]:
        self.ports = [free_port()]
        self.cdn_port = free_port()
        return [
            sys.executable,
            "-m",
            "httpbench",
            "fixture",
            "huggingface",
            "--port",
            str(self.port),
            "--cdn-port",
            str(self.cdn_port),
            *self.args,
        ]


@contextlib.contextmanager
def huggingface(
    naive: bool, hf_client: bool, say: Callable[[str], None], prepared: Prepared | None = None
) -> Iterator[list[str]]:
    """Baseline: the hub fixture serving directly. Candidate: an nginx ``proxy_cache`` (config written
    here) in front of a second fixture that behaves like the real Hub (302 to a CDN on another host,
    Xet headers). ``naive`` puts the pass-through cache there instead, which the leak check rejects.
    ``prepared``: both fixtures also serve the tiny models, and Transformers and Diffusers of every
    client line are timed against both targets."""
    from httpbench.peers.hfcache import HfCache

    models = ("--models", str(prepared.models)) if prepared else ()
    with (
        _FixtureProcess(*models) as direct,
        _FixtureProcess("--mode", "redirect", "--xet", *models) as upstream,
        HfCache(upstream.url, naive=naive) as cache,
    ):
        cdn = f"127.0.0.2:{upstream.cdn_port}"
        say(
            f"hub fixture (direct) at {direct.url}; hub-like upstream at {upstream.url} (CDN {cdn}); "
            f"{cache.flavour} nginx proxy_cache at {cache.url}"
        )
        yield [
            "--target",
            f"fixture={direct.url}",
            "--target",
            f"nginx-cache={cache.url}",
            "--profile",
            "huggingface",
            "--upstream-host",
            f"127.0.0.1:{upstream.port}",
            "--upstream-host",
            cdn,
            *(("--hf-client",) if hf_client else ()),
            *model_client_args(prepared),
        ]


def model_client_args(prepared: Prepared | None) -> list[str]:
    """The compare options of the model-client rounds: every line's Python, the fewest rounds that
    can decide the client gate at the default alpha."""
    if prepared is None:
        return []
    out = ["--model-client-rounds", str(DEMO_MODEL_ROUNDS)]
    for line, env in prepared.envs.items():
        out += ["--model-client", f"{line}={env.python}"]
    return out
