"""Protocol profiles: a named scenario set plus protocol-aware checks on top of ``httpbench compare``.

A profile (``--profile alpine``, ``--profile huggingface``) supplies

* its own options (``Profile.options``: declared once, attached to ``httpbench compare`` by the CLI,
  refused when given with another profile),
* default run sizes (warm-ups, requests, concurrency, rounds) that explicit options override,
* the HTTP scenarios (:class:`httpbench.model.Scenario`) the generic engine times,
* a **preflight** that runs before the generic one and before any timing, on every target, and raises
  :class:`httpbench.errors.HttpbenchError` with a one-line reason on any mismatch,
* optionally extra measured phases after the HTTP rounds (``after_rounds``: e.g. cold fill);

and its section of the result is rendered by :mod:`httpbench.report` (``report.profile_tables``), so
the JSON stays the single source.

The result document carries the profile's section under ``"profile"``::

    {"name": "alpine", "options": {...}, "preflight": {...}, "notes": [...], "phases": {...}}
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

import httpx

from httpbench.errors import HttpbenchError
from httpbench.model import Gate, Scenario, Target

PROFILES = {
    "alpine": "httpbench.profiles.alpine.profile",
    "huggingface": "httpbench.profiles.huggingface.profile",
}


@dataclass(frozen=True)
class Option:
    """One profile option, turned into a click option on ``httpbench compare``.

    ``name`` is the long flag (``--package-path``); ``dest`` the keyword the profile receives.
    ``kind`` is ``str``, ``int``, ``float``, ``bool`` (a flag) or ``path`` (an existing file).
    ``multiple`` options arrive as tuples.
    """

    name: str
    help: str
    kind: str = "str"
    multiple: bool = False
    default: Any = None
    metavar: str | None = None

    @property
    def dest(self) -> str:
        return self.name.lstrip("-").replace("-", "_")


@dataclass(frozen=True)
class Defaults:
    warmups: int
    requests: int
    concurrency: int
    rounds: int


@dataclass
class Section:
    """What a profile phase adds to the result: JSON records, non-failing notes, gate failures."""

    records: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    gate_failures: list[str] = field(default_factory=list)
    inconclusive: list[str] = field(default_factory=list)  # gates the paired method could not decide


class Context:
    """What a profile phase gets: the targets, the timeout, progress, and a preflight HTTP client.

    ``fetch`` never follows redirects, never reads proxy settings from the environment, sends the
    target's credentials, and turns every transport error into a one-line :class:`HttpbenchError`.
    """

    def __init__(
        self,
        targets: list[Target],
        timeout: float,
        progress: Callable[[str], None] | None = None,
        gates: dict[str, Gate] | None = None,
        method: str = "seed",
        alpha: float = 0.05,
    ):
        from httpbench.model import DEFAULT_GATES

        self.method, self.alpha = method, alpha  # how gates are decided (see httpbench.measure.paired)
        self.targets = targets
        self.timeout = timeout
        self.gates = dict(gates or DEFAULT_GATES)  # the run's gates (e.g. "cold", "client")
        self._progress = progress
        from httpbench.measure.preflight import new_client

        self.client = new_client(timeout)

    def progress(self, line: str) -> None:
        if self._progress:
            self._progress(line)

    def fetch(
        self,
        target: Target,
        path: str,
        method: str = "GET",
        headers: dict[str, str] | None = None,
        content: bytes | None = None,
    ) -> httpx.Response:
        from httpbench.measure.preflight import send

        return send(self.client, target, method, path, headers or {}, content)

    def close(self) -> None:
        self.client.close()


class Profile:
    """Base class of a profile. Subclasses set the class attributes and implement ``scenarios`` and
    ``preflight``; ``__init__`` receives the profile's options as keywords (``Option.dest``)."""

    name: ClassVar[str]
    description: ClassVar[str]
    options: ClassVar[tuple[Option, ...]] = ()
    defaults: ClassVar[Defaults]
    gates: ClassVar[dict[str, Gate]] = {}  # extra/overriding gates, e.g. {"client": Gate(0, 1.25)}
    # option defaults under --method paired (sample counts that leave room for an interval)
    paired_defaults: ClassVar[dict[str, Any]] = {}

    def __init__(self, **options: Any):
        self.values = options

    def scenarios(self) -> list[Scenario]:
        raise NotImplementedError

    def preflight(self, ctx: Context) -> Section:
        """Protocol checks on every target before any timing; raise HttpbenchError on a mismatch."""
        raise NotImplementedError

    def after_rounds(self, ctx: Context) -> Section:
        """Extra measured phases after the HTTP rounds (default: none)."""
        return Section()

    def options_json(self) -> dict[str, Any]:
        """The options as recorded in the result (never secrets)."""
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in self.values.items()}


def load(name: str) -> type[Profile]:
    if name not in PROFILES:
        raise HttpbenchError(f"unknown profile {name!r} (known: {', '.join(sorted(PROFILES))})")
    module = importlib.import_module(PROFILES[name])
    return module.PROFILE


def all_profiles() -> dict[str, type[Profile]]:
    return {name: load(name) for name in PROFILES}
