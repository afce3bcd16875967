"""The client lines: the heavy real clients (CPU-only torch, Transformers, Diffusers, huggingface_hub)
of the current and the previous major line, each in its own virtual environment.

A line's requirements are the project's optional extra of that name (``hf-models``: the current
line; ``hf-models-old``: huggingface_hub < 1.0, transformers 4.x, diffusers < 0.36), read from the
installed package's metadata, so ``pyproject.toml`` is the one place they are written. An
environment lives under the httpbench home (``$HTTPBENCH_HOME``, default ``~/.cache/httpbench``) in
``hf-lines/LINE-HASH`` (the hash of the requirements: changed pins make a new environment) and
counts as ready once its install finished (``ready.json``, with the install's wall time).
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from httpbench.errors import HttpbenchError

LINES = {"current": "hf-models", "old": "hf-models-old"}  # line -> the project's extra
INSTALL_TIMEOUT_S = 1800.0  # one environment's pip install, at most
_EXTRA = re.compile(r"""^(?P<req>[^;]+);\s*extra\s*==\s*["'](?P<extra>[\w.-]+)["']\s*$""")


def home() -> Path:
    """The httpbench home: ``$HTTPBENCH_HOME``, else ``~/.cache/httpbench``."""
    given = os.environ.get("HTTPBENCH_HOME")
    return Path(given) if given else Path.home() / ".cache" / "httpbench"


def requirements(line: str) -> list[str]:
    """The requirement strings of a line: its extra in the installed package's metadata."""
    if line not in LINES:
        raise HttpbenchError(f"unknown client line {line!r} (known: {', '.join(LINES)})")
    found = []
    for text in importlib.metadata.requires("dbbench") or []:
        m = _EXTRA.match(text)
        if m and m["extra"] == LINES[line]:
            found.append(m["req"].strip())
    if not found:
        raise HttpbenchError(
            f"the extra {LINES[line]!r} is not in this installation's metadata (reinstall: pip install -e .)"
        )
    return found


@dataclass(frozen=True)
class LineEnv:
    """One line's environment: its directory, Python, requirements and (once ready) install time."""

    line: str
    directory: Path
    requirements: tuple[str, ...]

    @property
    def python(self) -> Path:
        return self.directory / "bin" / "python"

    @property
    def marker(self) -> Path:
        return self.directory / "ready.json"

    def ready(self) -> dict | None:
        """The ready record (requirements, install seconds), or None while not installed."""
        try:
            doc = json.loads(self.marker.read_text())
        except (OSError, ValueError):
            return None
        ok = doc.get("requirements") == list(self.requirements) and self.python.exists()
        return doc if ok else None


def env(line: str, base: Path | None = None) -> LineEnv:
    reqs = tuple(requirements(line))
    digest = hashlib.sha256("\n".join(reqs).encode()).hexdigest()[:10]
    return LineEnv(line, (base or home()) / "hf-lines" / f"{line}-{digest}", reqs)


def ensure(line: str, say: Callable[[str], None], base: Path | None = None) -> LineEnv:
    """The line's environment, created first when it is missing (a venv and one bounded pip install
    of the extra's requirements; the wall time is recorded in ``ready.json``)."""
    e = env(line, base)
    if e.ready():
        return e
    if e.directory.exists():
        shutil.rmtree(e.directory)  # an unfinished install: start again
    e.directory.parent.mkdir(parents=True, exist_ok=True)
    say(f"creating the {line} client line in {e.directory}: pip install {' '.join(e.requirements)}")
    start = time.monotonic()
    _run([sys.executable, "-m", "venv", str(e.directory)], 300.0, f"{line}: python -m venv")
    _run(
        [str(e.python), "-m", "pip", "install", "-q", "--no-input", *e.requirements],
        INSTALL_TIMEOUT_S,
        f"{line}: pip install",
    )
    seconds = round(time.monotonic() - start, 1)
    versions = installed_versions(e.python)
    e.marker.write_text(
        json.dumps(
            {"requirements": list(e.requirements), "install_s": seconds, "versions": versions}, indent=1
        )
    )
    say(f"{line} client line ready in {seconds:g} s")
    return e


def installed_versions(python: Path) -> dict[str, str]:
    """The versions of the client packages in an environment."""
    code = (
        "import importlib.metadata as m, json; print(json.dumps({n: m.version(n) for n in "
        "('torch', 'transformers', 'diffusers', 'huggingface_hub', 'tokenizers', 'safetensors', "
        "'accelerate') if __import__('importlib.util').util.find_spec(n.replace('-', '_'))}))"
    )
    proc = _run([str(python), "-c", code], 120.0, "reading the installed versions")
    return json.loads(proc.stdout)


def _run(argv: list[str], timeout: float, what: str) -> subprocess.CompletedProcess:
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise HttpbenchError(f"{what}: timed out after {timeout:g} s") from None
    except OSError as exc:
        raise HttpbenchError(f"{what}: cannot start: {exc.strerror}") from None
    if proc.returncode != 0:
        lines = [x for x in (proc.stderr or proc.stdout).splitlines() if x.strip()]
        raise HttpbenchError(f"{what} failed (exit {proc.returncode}): {(lines or ['no output'])[-1][:300]}")
    return proc
