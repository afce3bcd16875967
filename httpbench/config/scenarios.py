"""The generic profile: scenarios from repeated ``--scenario`` options or a TOML file.

``--scenario`` takes either a bare path (``/index.html``: a GET named after the path) or
comma-separated ``key=value`` pairs::

    name=index HEAD,method=HEAD,path=/index.html,class=metadata
    name=range,path=/pkg.bin,header=Range: bytes=0-65535,class=payload
    name=index 304,path=/index.html,conditional=true

Keys: name, method (GET|HEAD), path, status, length, sha256, class (metadata|payload),
header (``Name: value``, repeatable), conditional (true: send If-None-Match with the target's ETag),
same_body (false: each target may serve its own bytes, e.g. an index each repository signs itself).

The TOML file has ``[[scenario]]`` tables with the same keys (``headers`` is a table) and
optional ``[gates.CLASS]`` tables with ``min_throughput_ratio`` / ``max_p95_ratio``.
"""

from __future__ import annotations

import math
import tomllib
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from httpbench.errors import HttpbenchError
from httpbench.model import DEFAULT_GATES, GATE_CLASSES, METHODS, SCENARIO_CLASSES, Gate, Scenario
from verdict.files import excerpt, loads_toml, read_text_bounded

_KEYS = {
    "name",
    "method",
    "path",
    "status",
    "length",
    "sha256",
    "class",
    "header",
    "headers",
    "conditional",
    "same_body",
}


_TCHAR = frozenset("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
# query keys that carry a credential (signed URLs, OAuth tokens, API keys): never recorded in results
_CREDENTIAL_QUERY_KEYS = frozenset(
    {
        "access_token",
        "token",
        "auth_token",
        "id_token",
        "api_key",
        "apikey",
        "key",
        "password",
        "passwd",
        "secret",
        "client_secret",
        "signature",
        "sig",
        "x_amz_signature",
        "x_amz_credential",
        "x_goog_signature",
    }
)
_CREDENTIAL_HEADERS = frozenset(
    {
        "authorization",
        "proxy-authorization",
        "cookie",
        "x-api-key",
        "api-key",
        "x-auth-token",
        "private-token",
    }
)


def _bool(value: Any, where: str, key: str) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off", ""):
        return False
    raise HttpbenchError(f"{where}: {key} must be true or false")


def _int(value: Any, key: str, where: str) -> int:
    try:
        if isinstance(value, bool) or not isinstance(value, (int, float, str)):
            raise TypeError(key)
        out = int(value)
    except (TypeError, ValueError, OverflowError):
        raise HttpbenchError(f"{where}: {key} must be an integer, got {value!r}") from None
    if out < 0:
        raise HttpbenchError(f"{where}: {key} must not be negative")
    return out


MAX_SCENARIO_NAME = 200  # a name as tables and messages show it
MAX_PATH = 8192  # the request line servers accept (nginx's default large header buffer)


def make(fields: dict[str, Any], where: str) -> Scenario:
    unknown = set(fields) - _KEYS
    if unknown:
        raise HttpbenchError(f"{where}: unknown key(s) {', '.join(sorted(unknown))}")
    for key in ("name", "method", "path", "class", "sha256"):
        if fields.get(key) is not None and not isinstance(fields[key], str):
            raise HttpbenchError(f"{where}: {key} must be text")
    for key, most in (("name", MAX_SCENARIO_NAME), ("path", MAX_PATH)):
        if len(str(fields.get(key) or "")) > most:
            raise HttpbenchError(f"{where}: {key} of {len(fields[key]):,} characters: at most {most:,}")
    path = _path(fields, where)
    method = str(fields.get("method", "GET")).upper()
    if method not in METHODS:
        raise HttpbenchError(f"{where}: method must be one of {', '.join(METHODS)}")
    klass = str(fields.get("class", "metadata")).lower()
    if klass not in SCENARIO_CLASSES:
        raise HttpbenchError(f"{where}: class must be one of {', '.join(SCENARIO_CLASSES)}")
    headers = _headers(fields, where)
    sha = fields.get("sha256")
    if sha is not None:
        sha = str(sha).lower()
        if len(sha) != 64 or any(c not in "0123456789abcdef" for c in sha):
            raise HttpbenchError(f"{where}: sha256 must be 64 hex digits")
    scenario = Scenario(
        name=str(fields.get("name") or f"{method} {path}"),
        path=path,
        method=method,
        headers=tuple(headers),
        status=_int(fields["status"], "status", where) if fields.get("status") is not None else None,
        length=_int(fields["length"], "length", where) if fields.get("length") is not None else None,
        sha256=sha,
        klass=klass,
        conditional=_bool(fields.get("conditional", False), where, "conditional"),
        same_body=_bool(fields.get("same_body", True), where, "same_body"),
    )
    if scenario.conditional and method != "GET":
        raise HttpbenchError(f"{where}: conditional scenarios use GET")
    return scenario


def _path(fields: dict[str, Any], where: str) -> str:
    """The scenario's path: absolute, no whitespace, no credential in its query."""
    path = str(fields.get("path") or "")
    if not path.startswith("/"):
        raise HttpbenchError(f"{where}: path must start with '/'")
    if any(ch in path for ch in " \r\n\t"):
        raise HttpbenchError(f"{where}: path must not contain whitespace (percent-encode it)")
    secret = sorted(
        {
            k
            for k, _ in parse_qsl(urlsplit(path).query, keep_blank_values=True)
            if k.lower().replace("-", "_") in _CREDENTIAL_QUERY_KEYS
        }
    )
    if secret:
        raise HttpbenchError(
            f"{where}: the path's query carries credentials ({', '.join(secret)}), which results "
            "record with the path: pass them with --auth instead"
        )
    return path


def _headers(fields: dict[str, Any], where: str) -> list[tuple[str, str]]:
    """The request headers, from the ``headers`` table then the ``header`` texts, each checked."""
    headers: list[tuple[str, str]] = []
    raw_headers = fields.get("headers") or {}
    if not isinstance(raw_headers, dict):
        raise HttpbenchError(f"{where}: headers must be a table of name = value")
    for k, v in raw_headers.items():
        if not isinstance(v, (str, int, float)) or isinstance(v, bool):
            raise HttpbenchError(f"{where}: headers.{str(k)[:40]} must be text")
        headers.append((str(k), str(v)))
    raw_header = fields.get("header", [])
    if isinstance(raw_header, str):
        raw_header = [raw_header]
    if not isinstance(raw_header, list) or not all(isinstance(item, str) for item in raw_header):
        raise HttpbenchError(f"{where}: header must be 'Name: value' text (or a list of them)")
    for item in raw_header:
        if ":" not in item:
            raise HttpbenchError(f"{where}: header must be 'Name: value'")
        key, value = item.split(":", 1)
        headers.append((key.strip(), value.strip()))
    for key, value in headers:
        _check_header(key, value, where)
    return headers


def _check_header(key: str, value: str, where: str) -> None:
    """A header a scenario may send: a valid field, not one httpbench sets, carrying no credential."""
    # a field name is an RFC 9110 token; a value has no control character but tab
    if (
        not key
        or any(c not in _TCHAR for c in key)
        or any((ord(c) < 0x20 and c != "\t") or ord(c) == 0x7F for c in value)
    ):
        raise HttpbenchError(f"{where}: bad header name or value {key[:40]!r}")
    if key.lower() in ("host", "content-length", "transfer-encoding"):
        raise HttpbenchError(f"{where}: header {key} is set by httpbench")
    if key.lower() in _CREDENTIAL_HEADERS:
        raise HttpbenchError(
            f"{where}: header {key} carries credentials, which scenarios would record: "
            "use --auth NAME=env:VAR (never written)"
        )


def _masked(parts: list[str]) -> list[str]:
    """``parts`` as echoed in errors: header values (and what follows them up to the next key,
    a value with a comma) are ``***``, since one may carry a credential."""
    out, in_header = [], False
    for part in parts:
        key = part.split("=", 1)[0].strip().lower() if "=" in part else None
        in_header = key == "header" or (key is None and in_header)
        name, colon, _ = part.split("=", 1)[1].partition(":") if key == "header" else ("", "", "")
        out.append(
            (f"header={name.strip()}: ***" if colon else "header=***")
            if key == "header"
            else "***"
            if in_header
            else part
        )
    return out


def _query_masked(path: str) -> str:
    """``path`` as echoed in errors: every query value is ``***`` (one may be a credential)."""
    base, mark, query = path.partition("?")
    if not mark:
        return path
    return (
        base
        + "?"
        + "&".join(f"{k}=***" if sep else k for k, sep, _ in (p.partition("=") for p in query.split("&")))
    )


def parse_option(text: str) -> Scenario:
    if text.strip().startswith("/"):  # a path (its query may hold '='), never key=value pairs
        return make({"path": text.strip()}, f"--scenario {excerpt(_query_masked(text.strip()))!r}")
    parts = text.split(",")
    shown = _masked(parts)
    where = f"--scenario {excerpt(','.join(shown))!r}"
    if "=" not in text:
        return make({"path": text.strip()}, where)
    fields: dict[str, Any] = {"header": []}
    for part, part_shown in zip(parts, shown):
        if not part.strip():
            continue
        if "=" not in part:
            raise HttpbenchError(f"{where}: expected key=value, got {part_shown.strip()!r}")
        key, value = part.split("=", 1)
        key = key.strip().lower()
        if key == "header":
            fields["header"].append(value)
        elif key in fields:
            raise HttpbenchError(f"{where}: {key} given twice")
        else:
            fields[key] = value.strip()
    return make(fields, where)


SCENARIOS_LIMIT = 4 * 1024 * 1024  # thousands of scenarios; a larger file is not a scenarios file


def load_file(path: str) -> tuple[list[Scenario], dict[str, Gate]]:
    try:
        data = loads_toml(read_text_bounded(path, limit=SCENARIOS_LIMIT, what="scenarios file"))
    except OSError as exc:
        raise HttpbenchError(f"cannot read scenarios file {path}: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise HttpbenchError(f"scenarios file {path}: {excerpt(str(exc))}") from None
    unknown = set(data) - {"scenario", "gates"}
    if unknown:
        raise HttpbenchError(f"scenarios file {path}: unknown table(s) {', '.join(sorted(unknown))}")
    items = data.get("scenario", [])
    if not isinstance(items, list):
        raise HttpbenchError(f"scenarios file {path}: use [[scenario]] tables")
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise HttpbenchError(
                f"{path} scenario {i + 1}: must be a [[scenario]] table, got {type(item).__name__}"
            )
    scenarios = [make(dict(item), f"{path} scenario {i + 1}") for i, item in enumerate(items)]
    raw_gates = data.get("gates") or {}
    if not isinstance(raw_gates, dict):
        raise HttpbenchError(f"scenarios file {path}: gates must be [gates.CLASS] tables")
    gates = {}
    for klass, table in raw_gates.items():
        if not isinstance(table, dict):
            raise HttpbenchError(
                f"{path} gates.{klass}: must be a table of min_throughput_ratio / max_p95_ratio"
            )
        gates[klass] = gate_from(klass, table, f"{path} gates.{klass}")
    return scenarios, gates


def gate_from(klass: str, table: dict[str, Any], where: str) -> Gate:
    if klass not in GATE_CLASSES:
        raise HttpbenchError(f"{where}: gate class must be one of {', '.join(GATE_CLASSES)}")
    base = DEFAULT_GATES[klass]
    unknown = set(table) - {"min_throughput_ratio", "max_p95_ratio"}
    if unknown:
        raise HttpbenchError(f"{where}: unknown key(s) {', '.join(sorted(unknown))}")
    values = [
        table.get("min_throughput_ratio", base.min_throughput_ratio),
        table.get("max_p95_ratio", base.max_p95_ratio),
    ]
    try:
        if any(isinstance(v, bool) or not isinstance(v, (int, float, str)) for v in values):
            raise TypeError(where)
        gate = Gate(float(values[0]), float(values[1]))
    except (TypeError, ValueError, OverflowError):
        raise HttpbenchError(f"{where}: ratios must be numbers") from None
    if not (math.isfinite(gate.min_throughput_ratio) and math.isfinite(gate.max_p95_ratio)):
        raise HttpbenchError(f"{where}: ratios must be finite numbers")
    if not (gate.min_throughput_ratio >= 0 and gate.max_p95_ratio > 0):
        raise HttpbenchError(f"{where}: ratios must be positive")
    return gate


def parse_gate_option(text: str) -> tuple[str, Gate]:
    """``CLASS:MIN_THROUGHPUT:MAX_P95``, e.g. ``payload:0.9:1.15``."""
    parts = text.split(":")
    if len(parts) != 3:
        raise HttpbenchError(f"--gate {text!r}: expected CLASS:MIN_THROUGHPUT_RATIO:MAX_P95_RATIO")
    return parts[0], gate_from(
        parts[0], {"min_throughput_ratio": parts[1], "max_p95_ratio": parts[2]}, f"--gate {text!r}"
    )


def unique(scenarios: list[Scenario]) -> list[Scenario]:
    seen = set()
    for s in scenarios:
        if s.name in seen:
            raise HttpbenchError(f"scenario name {s.name!r} is used twice")
        seen.add(s.name)
    return scenarios
