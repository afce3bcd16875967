"""``httpbench demo PROFILE``: a real A/B run of a protocol profile on this machine, end to end.

Each demo builds the profile's deterministic fixture, starts two real servers over it on loopback
ports, and runs exactly the ``httpbench compare --profile …`` command a user would run (it is
printed first), with any further compare options passed through. The servers are stopped and the
temporary files removed when the run ends, whatever its outcome.
"""

from __future__ import annotations

import contextlib
import shlex
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

from httpbench.peers.process import ServerProcess, free_port


@contextlib.contextmanager
def _workdir(given: Path | None) -> Iterator[Path]:
    if given is not None:
        yield given
        return
    with tempfile.TemporaryDirectory(prefix="httpbench-demo-") as tmp:
        yield Path(tmp) / "tree"


@contextlib.contextmanager
def alpine(
    directory: Path | None, package_size: int, client_rounds: int, say: Callable[[str], None]
) -> Iterator[list[str]]:
    """The Alpine fixture tree served by nginx (baseline) and caddy (candidate); yields the compare
    arguments. The real client is ``httpbench apk-client`` (apk's update/search/policy/fetch flow)."""
    from httpbench.fixtures.alpine import write_tree
    from httpbench.peers.static import StaticCaddy, StaticNginx

    with _workdir(directory) as tree, tempfile.TemporaryDirectory(prefix="httpbench-served-") as served:
        manifest = write_tree(tree, package_size=package_size)
        pkg = manifest["package"]
        branch_repo, arch = pkg["path"].rsplit("/", 1)[0].rsplit("/", 1)
        # serve the repository tree only: the signing key and the manifest stay off the web root
        branch = pkg["path"].lstrip("/").split("/", 1)[0]
        (Path(served) / branch).symlink_to((tree / branch).resolve(), target_is_directory=True)
        with StaticNginx(served) as nginx, StaticCaddy(served) as caddy:
            say(
                f"fixture {tree}: {pkg['path']} ({pkg['size']:,} bytes); nginx at {nginx.url}, "
                f"caddy at {caddy.url}"
            )
            client = shlex.join(
                [
                    sys.executable,
                    "-m",
                    "httpbench",
                    "apk-client",
                    "--arch",
                    arch,
                    "--keys-dir",
                    str((tree / "keys").resolve()),
                    "--package",
                    pkg["name"],
                ]
            )
            yield [
                "--target",
                f"nginx={nginx.url}",
                "--target",
                f"caddy={caddy.url}",
                *manifest["compare_options"],
                "--client-command",
                f"{client} {{url}}/{branch_repo}",
                "--client-rounds",
                str(client_rounds),
            ]


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
def huggingface(naive: bool, hf_client: bool, say: Callable[[str], None]) -> Iterator[list[str]]:
    """Baseline: the hub fixture serving directly. Candidate: an nginx ``proxy_cache`` (config written
    here) in front of a second fixture that behaves like the real Hub (302 to a CDN on another host,
    Xet headers). ``naive`` puts the pass-through cache there instead, which the leak check rejects."""
    from httpbench.peers.hfcache import HfCache

    with (
        _FixtureProcess() as direct,
        _FixtureProcess("--mode", "redirect", "--xet") as upstream,
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
        ]
