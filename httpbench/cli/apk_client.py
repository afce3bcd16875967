"""``httpbench apk-client``: apk's update/search/policy/fetch flow as a command, a sound
``--client-command`` for ``httpbench compare --profile alpine`` (the flow:
:mod:`httpbench.profiles.alpine.apk_client`)."""

from __future__ import annotations

from pathlib import Path

import click

from verdict.cli import Float


@click.command("apk-client")
@click.argument("repository")
@click.option("--arch", default="x86_64", show_default=True)
@click.option(
    "--keys-dir",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    required=True,
    help="Trusted public keys (*.pub), as /etc/apk/keys.",
)
@click.option("--package", "package", required=True, help="Exact package name to search and fetch.")
@click.option("--no-fetch", is_flag=True, help="Stop after update/search/policy.")
@click.option("--timeout", type=Float(0.1, 600), default=30.0, show_default=True)
def apk_client(
    repository: str, arch: str, keys_dir: Path, package: str, no_fetch: bool, timeout: float
) -> None:
    """apk update + exact search + policy (+ fetch) against REPOSITORY (e.g. http://host/v3.23/main)."""
    from httpbench.profiles.alpine.apk_client import flow, trusted_keys

    result = flow(repository, arch, trusted_keys(keys_dir), package, not no_fetch, timeout)
    click.echo(
        f"{result['package']} {' '.join(result['versions'])}  C:{result['identity']}  "
        f"({result['records']} records, key {result['key']}"
        + (f", {result['bytes']:,} bytes fetched" if "bytes" in result else "")
        + ")"
    )
