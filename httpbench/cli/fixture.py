"""``httpbench fixture``: the profiles' deterministic fixtures, written (``alpine``: a signed APK
repository tree, :mod:`httpbench.profiles.alpine.fixture`) or served in the foreground until
Ctrl-C (``huggingface``: the Hub fixture, :mod:`httpbench.profiles.huggingface.fixture`)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from httpbench.cli.options import option
from httpbench.profiles.alpine.fixture import DEFAULT_PACKAGE_SIZE, MIN_PACKAGE_SIZE
from httpbench.profiles.huggingface.fixture.content import DEFAULT_SEED, DEFAULT_SIZE
from verdict.cli import Float

PORT = click.IntRange(0, 65535)


@click.group()
def fixture() -> None:
    """Deterministic fixtures to serve or upload, so anyone can reproduce a comparison."""


@fixture.command("alpine")
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
@click.option(
    "--package-size",
    type=click.IntRange(MIN_PACKAGE_SIZE, 1 << 31),
    default=DEFAULT_PACKAGE_SIZE,
    show_default=True,
    help="Target size of the .apk in bytes (the exact size is reported).",
)
@click.option(
    "--seed", type=click.IntRange(0), default=1, show_default=True, help="Seed of the pseudo-random payload."
)
def alpine(directory: Path, package_size: int, seed: int) -> None:
    """Write a deterministic signed Alpine APK v2 repository tree (package, index, key, manifest)."""
    from httpbench.profiles.alpine.fixture import summary, write_tree

    manifest = write_tree(directory, package_size=package_size, seed=seed)
    click.echo(summary(manifest, directory))


@fixture.command("huggingface")
@option("--host", default="127.0.0.1", help="Address to listen on.")
@option("--port", type=PORT, default=0, help="Hub port (0: a free port).")
@option("--cdn-port", type=PORT, default=0, help="CDN port for the redirect mode (0: a free port).")
@option(
    "--cdn-host",
    default=None,
    help="CDN address (another host than --host, as on the Hub). [default: 127.0.0.2 on Linux]",
)
@option(
    "--mode",
    type=click.Choice(["direct", "redirect"]),
    default="direct",
    help="direct: resolve serves the bytes; redirect: the model file's resolve answers 302 to the CDN.",
)
@option("--xet", is_flag=True, help='Add X-Xet-Hash and a rel="xet-auth" Link to the model file\'s answers.')
@option("--size", type=click.IntRange(0, 1 << 31), default=DEFAULT_SIZE, help="Bytes of model.safetensors.")
@option("--seed", default=DEFAULT_SEED, help="Seed of the model file's bytes.")
@option(
    "--delay",
    type=Float(0, 60),
    default=0.0,
    help="Seconds to hold every answer about the model file (a slow upstream).",
)
@option(
    "--models",
    type=click.Path(file_okay=False, exists=True, path_type=Path),
    default=None,
    help="Also serve the tiny model repositories in this directory (httpbench/tiny-bert, httpbench/tiny-sd; "
    "made by `httpbench demo huggingface --prepare`), refused unless every file is the pinned bytes.",
)
@option(
    "--fault",
    type=click.Choice(["no-commit", "wrong-etag", "no-tree"]),
    multiple=True,
    help="Break what real clients rely on: no X-Repo-Commit, wrong ETags, no tree endpoint (repeatable).",
)
def huggingface(
    host: str,
    port: int,
    cdn_port: int,
    cdn_host: str | None,
    models: Path | None,
    fault: tuple[str, ...],
    **content: Any,
) -> None:
    """Serve a deterministic Hugging Face model repository in the foreground until Ctrl-C."""
    from httpbench.profiles.huggingface.fixture import HubApp, HubFixture, run_foreground
    from httpbench.profiles.huggingface.models.repos import load_manifest, read_models

    served = read_models(models, load_manifest()) if models else None
    app = HubApp(**content, models=served, faults=fault)
    fixture = HubFixture(app, host=host, port=port, cdn_port=cdn_port, cdn_host=cdn_host)
    run_foreground(fixture, lambda line: click.echo(line, file=sys.stdout))
