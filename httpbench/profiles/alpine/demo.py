"""``httpbench demo alpine``: a real A/B run of the Alpine profile on this machine, end to end.

The deterministic fixture tree (:mod:`httpbench.profiles.alpine.fixture`) served by two real servers
on loopback ports, nginx (baseline) and caddy (candidate), and the ``httpbench compare --profile
alpine`` arguments a user would give, timed with the apk client flow as the real client
(:mod:`httpbench.profiles.alpine.apk_client`). The servers are stopped and the temporary files
removed when the run ends, whatever its outcome (the ``demo`` command:
:mod:`httpbench.cli.demo`).
"""

from __future__ import annotations

import contextlib
import shlex
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path


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
    from httpbench.peers.static import StaticCaddy, StaticNginx
    from httpbench.profiles.alpine.fixture import write_tree

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
