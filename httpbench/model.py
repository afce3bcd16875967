"""Typed data: targets, scenarios, per-round measurements, summaries, and the result schema."""

from __future__ import annotations

import base64
import math
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit

from httpbench.errors import HttpbenchError
from verdict.files import excerpt

SCHEMA = "httpbench.compare/1"
SCENARIO_CLASSES = ("metadata", "payload")
METHODS = ("GET", "HEAD")
MAX_NAME = 64  # a target or scenario name, as tables and messages show it


@dataclass(frozen=True)
class Target:
    """One named base URL. ``url`` never carries userinfo; credentials live in ``auth_header``."""

    name: str
    url: str
    scheme: str
    host: str
    port: int
    base_path: str
    auth_header: str | None = field(default=None, repr=False, compare=False)

    @classmethod
    def parse(cls, name: str, raw_url: str) -> tuple[Target, str | None]:
        """Parse ``raw_url``; returns the target and any ``user:pass`` found in the URL."""
        if len(name) > MAX_NAME:
            raise HttpbenchError(f"target name of {len(name):,} characters: at most {MAX_NAME}")
        if not name or not name.replace("-", "").replace("_", "").replace(".", "").isalnum():
            raise HttpbenchError(f"bad target name {excerpt(name)!r}: use letters, digits, '-', '_', '.'")
        try:
            parts = urlsplit(raw_url)
        except ValueError as exc:
            raise HttpbenchError(f"target {name!r}: bad URL ({exc})") from None
        try:
            port = parts.port
        except ValueError:
            # never echo the exception: with an unencoded '/' or '?' in a password, Python takes part
            # of the password for the port and quotes it
            raise HttpbenchError(
                f"target {name!r}: bad URL (the port is not a number 0-65535; "
                "percent-encode '/', '?', '#' and '@' in credentials)"
            ) from None
        if parts.scheme not in ("http", "https"):
            raise HttpbenchError(f"target {name!r}: URL must start with http:// or https://")
        if not parts.hostname:
            raise HttpbenchError(f"target {name!r}: URL has no host")
        if parts.query or parts.fragment:
            raise HttpbenchError(f"target {name!r}: base URL must not have a query or fragment")
        userinfo = None
        if parts.username is not None:  # percent-decoded, as curl and browsers do
            userinfo = f"{unquote(parts.username)}:{unquote(parts.password or '')}"
        host = parts.hostname
        port = port or (443 if parts.scheme == "https" else 80)
        netloc = f"[{host}]" if ":" in host else host
        if (parts.scheme, port) not in (("http", 80), ("https", 443)):
            netloc += f":{port}"
        base_path = parts.path.rstrip("/")
        clean = urlunsplit((parts.scheme, netloc, base_path, "", ""))
        return cls(name, clean, parts.scheme, host, port, base_path), userinfo

    @property
    def host_header(self) -> str:
        netloc = f"[{self.host}]" if ":" in self.host else self.host
        if (self.scheme, self.port) in (("http", 80), ("https", 443)):
            return netloc
        return f"{netloc}:{self.port}"

    def with_credentials(self, credentials: str | None) -> Target:
        if credentials is None:
            return self
        if credentials.lower().startswith("bearer "):
            token = credentials[7:].strip()
            # a token goes into the header as is: only visible ASCII (RFC 6750), so that it can never
            # break the request (or an error message quoting the header) -- and is never echoed
            if not token or any(not 0x21 <= ord(c) <= 0x7E for c in token):
                raise HttpbenchError(
                    f"target {self.name!r}: the Bearer token must be visible ASCII "
                    "characters (no spaces, control characters or line breaks)"
                )
            header = "Bearer " + token
        else:
            if ":" not in credentials:
                raise HttpbenchError(
                    f"target {self.name!r}: credentials must be 'user:password' or 'Bearer TOKEN'"
                )
            if any(ord(c) < 0x20 or ord(c) == 0x7F for c in credentials):
                raise HttpbenchError(
                    f"target {self.name!r}: the credentials contain a control character or line break"
                )
            header = "Basic " + base64.b64encode(credentials.encode()).decode("ascii")
        return Target(self.name, self.url, self.scheme, self.host, self.port, self.base_path, header)

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "url": self.url, "authenticated": self.auth_header is not None}


@dataclass(frozen=True)
class Scenario:
    """One request shape: what to send and what a correct answer looks like."""

    name: str
    path: str
    method: str = "GET"
    headers: tuple[tuple[str, str], ...] = ()
    status: int | None = None  # None: 200, or 304 for conditional, 206 with a Range header
    length: int | None = None  # expected body length; None: learned from the baseline
    sha256: str | None = None  # expected body digest; checked on every response when set
    klass: str = "metadata"
    conditional: bool = False  # send If-None-Match with the target's own ETag
    same_body: bool = True  # every target must serve the baseline's bytes (False: each
    # target's own body, e.g. an index each repository signs)

    @property
    def expected_status(self) -> int:
        if self.status is not None:
            return self.status
        if self.conditional:
            return 304
        if any(k.lower() == "range" for k, _ in self.headers):
            return 206
        return 200

    @property
    def has_body(self) -> bool:
        return self.method != "HEAD" and self.expected_status not in (204, 304)

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "method": self.method,
            "path": self.path,
            "headers": {k: v for k, v in self.headers},
            "expected_status": self.expected_status,
            "length": self.length,
            "sha256": self.sha256,
            "class": self.klass,
            "conditional": self.conditional,
            "same_body": self.same_body,
        }


@dataclass(frozen=True)
class Expectation:
    """What the engine checks on every response of one scenario at one target (from preflight)."""

    status: int
    length: int | None
    sha256: str | None
    extra_headers: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Gate:
    min_throughput_ratio: float
    max_p95_ratio: float

    def to_json(self) -> dict[str, float]:
        return {"min_throughput_ratio": self.min_throughput_ratio, "max_p95_ratio": self.max_p95_ratio}


# metadata/payload gate the HTTP scenarios; "client" gates real-client p95 (throughput unused);
# "cold" gates cold-fill throughput (p95 unused).
DEFAULT_GATES = {
    "metadata": Gate(0.80, 1.25),
    "payload": Gate(0.90, 1.15),
    "client": Gate(0.0, 1.25),
    "cold": Gate(0.90, math.inf),
}
GATE_CLASSES = tuple(DEFAULT_GATES)


@dataclass
class RoundResult:
    """One timed run of one scenario at one target (warm-ups excluded)."""

    scenario: str
    target: str
    round: int  # 1-based
    position: int  # 1-based place of this target in the round's order
    order: list[str]
    mode: str  # "closed" or "open"
    requests: int  # timed requests attempted
    ok: int
    failures: int
    failure_kinds: dict[str, int]
    warmups: int
    warmup_failures: int
    concurrency: int
    connections: int  # connections that opened
    connect_ms: dict[str, float | None]  # p50/max of the connect times, outside the samples
    reconnects: int
    body_bytes: int
    wall_ms: float
    rps: float  # successful requests / wall
    mibps: float
    p50_ms: float | None
    p95_ms: float | None
    p99_ms: float | None
    max_ms: float | None
    ttfb_p50_ms: float | None
    ttfb_p95_ms: float | None
    client_cpu_s: float
    client_cpu_util: float  # client CPU seconds / wall seconds (1.0 = one core saturated)
    client_bound: bool
    digests_checked: int = 0  # timed bodies whose SHA-256 was verified (see digest_every)
    rate: float | None = None  # open loop: intended requests per second
    service_p50_ms: float | None = None  # open loop: from the actual send (uncorrected)
    service_p95_ms: float | None = None
    service_p99_ms: float | None = None
    samples_ms: list[float] | None = None

    def to_json(self) -> dict[str, Any]:
        out = dict(self.__dict__)
        if out["samples_ms"] is None:
            out.pop("samples_ms")
        if self.mode == "closed":
            for key in ("rate", "service_p50_ms", "service_p95_ms", "service_p99_ms"):
                out.pop(key)
        return out


SUMMARY_FIELDS = (
    "rps",
    "mibps",
    "wall_ms",
    "p50_ms",
    "p95_ms",
    "p99_ms",
    "max_ms",
    "ttfb_p50_ms",
    "ttfb_p95_ms",
    "client_cpu_util",
)


def finite_or_none(value: Any) -> Any:
    """JSON has no Infinity/NaN: replace them with null, recursively."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite_or_none(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite_or_none(v) for v in value]
    return value
