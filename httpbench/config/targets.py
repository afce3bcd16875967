"""The targets of a comparison: ``--target NAME=URL`` (the first is the baseline) and their
credentials, ``--auth NAME=env:VAR`` or ``NAME=file:PATH`` (never from the command line itself)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from httpbench.errors import HttpbenchError
from httpbench.model import Target
from verdict.files import read_text_bounded

CREDENTIALS_LIMIT = 64 * 1024  # a token or user:password; a file larger than this is not one


def auth_files(given: str) -> list[Path]:
    """The file an ``--auth NAME=file:PATH`` reads (none for ``env:``): an input of the command."""
    _, _, source = given.partition("=")
    kind, _, ref = source.partition(":")
    return [Path(ref)] if kind == "file" and ref else []


def read_credentials(name: str, source: str) -> str:
    kind, _, ref = source.partition(":")
    if kind == "env" and ref:
        value = os.environ.get(ref)
        if value is None:
            raise HttpbenchError(f"--auth {name}: environment variable {ref} is not set")
        value = value.strip("\r\n")
    elif kind == "file" and ref:
        try:
            value = read_text_bounded(ref, limit=CREDENTIALS_LIMIT, what="credentials file").strip("\r\n")
        except OSError as exc:
            raise HttpbenchError(f"--auth {name}: cannot read {ref}: {exc.strerror}") from None
    else:
        # never echo what was given: it may be the secret itself
        raise HttpbenchError(
            f"--auth {name}: use NAME=env:VARIABLE or NAME=file:PATH "
            "(credentials are never taken from the command line)"
        )
    if not value:
        raise HttpbenchError(f"--auth {name}: the credentials from {kind}:{ref} are empty")
    return value


def split_pair(option: str, text: str) -> tuple[str, str]:
    name, sep, value = text.partition("=")
    if not sep or not name.strip() or not value.strip():
        raise HttpbenchError(f"{option} expects NAME=VALUE")
    return name.strip(), value.strip()


def parse_targets(
    targets: tuple[str, ...], auths: tuple[str, ...], warn: Callable[[str], None]
) -> list[Target]:
    """The targets, in order, with their credentials; ``warn`` is told of credentials given in a URL."""
    if len(targets) < 2:
        raise HttpbenchError("give at least two --target NAME=URL (the first is the baseline)")
    parsed: list[Target] = []
    for text in targets:
        name, url = split_pair("--target", text)
        target, userinfo = Target.parse(name, url)
        if any(t.name == name for t in parsed):
            raise HttpbenchError(f"target name {name!r} is used twice")
        if userinfo is not None:
            warn(
                f"target {name!r}: credentials in the URL are visible in the process list; "
                "prefer --auth NAME=env:VAR"
            )
            target = target.with_credentials(userinfo)
        parsed.append(target)
    by_name = {t.name: i for i, t in enumerate(parsed)}
    for text in auths:
        name, source = text.partition("=")[0].strip(), text.partition("=")[2].strip()
        if name not in by_name:
            raise HttpbenchError(f"--auth names unknown target {name!r}")
        credentials = read_credentials(name, source)
        try:
            parsed[by_name[name]] = parsed[by_name[name]].with_credentials(credentials)
        except HttpbenchError as exc:
            raise HttpbenchError(f"--auth {name}: {exc}") from None
    return parsed
