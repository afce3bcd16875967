"""Correctness before timing (httpx): every target answers every scenario right, with the same content.

For each scenario and target one request is made outside any clock. The check fails with a
one-line error when the status is wrong, a HEAD/304 answer has a body, a Range answer has no
matching ``Content-Range`` or the wrong length, a redirect is returned where content was expected,
or a candidate's body differs from the baseline's (length or SHA-256). The values found become the
:class:`Expectation` the engine checks on every timed response.
"""

from __future__ import annotations

import contextlib
import hashlib
import re
import time
from typing import Any

import httpx

from httpbench.errors import HttpbenchError
from httpbench.model import Expectation, Scenario, Target

_RANGE = re.compile(r"^\s*bytes=(\d+)-(\d+)\s*$")
MAX_BODY_BYTES = 256 << 20
"""Default bound on one preflight body whose correct length is not known (the body is held in
memory): 256 MiB. A scenario's ``length`` (or a profile's expected size) sets the bound instead."""
BODY_MARGIN = 64 * 1024
"""Bytes allowed past an expected body length before reading stops (the length check then names
the difference)."""


class BodyTooLarge(httpx.RequestError):
    """A response body larger than the bytes allowed: reading stopped there."""


def request_within(
    client: httpx.Client,
    method: str,
    url: str,
    headers: dict[str, str] | None = None,
    content: bytes | None = None,
    limit: float | None = None,
    max_bytes: int | None = None,
) -> httpx.Response:
    """One request whose body must be complete within ``limit`` seconds (default: the client's read
    timeout) and hold at most ``max_bytes`` bytes (default :data:`MAX_BODY_BYTES`). httpx bounds
    each read, not the whole answer, so a body trickled a byte at a time would never end; past the
    time limit this raises :class:`httpx.ReadTimeout`. An endless or oversized body would fill
    memory before the time limit: past the byte limit (or when ``Content-Length`` announces more)
    this raises :class:`BodyTooLarge` and the connection is dropped.

    ``content`` is the body **as sent** (never decompressed), which is what the timing engine
    reads and checks."""
    if limit is None:
        limit = client.timeout.read or 10.0
    if max_bytes is None:
        max_bytes = MAX_BODY_BYTES
    deadline = time.monotonic() + limit
    with client.stream(method, url, headers=headers, content=content) as resp:
        declared = resp.headers.get("content-length", "")
        bodyless = method.upper() == "HEAD" or resp.status_code in (204, 304)  # length of no body
        if not bodyless and declared.isascii() and declared.isdigit() and int(declared) > max_bytes:
            raise BodyTooLarge(
                f"Content-Length {int(declared):,} is more than the {max_bytes:,} bytes allowed",
                request=resp.request,
            )
        chunks = []
        size = 0
        for chunk in resp.iter_raw():
            size += len(chunk)
            if size > max_bytes:
                raise BodyTooLarge(
                    f"body is more than the {max_bytes:,} bytes allowed (reading stopped there)",
                    request=resp.request,
                )
            chunks.append(chunk)
            if time.monotonic() > deadline:
                raise httpx.ReadTimeout("the body did not complete within the timeout", request=resp.request)
        resp._content = b"".join(chunks)  # httpx keeps a read body here (raw, as sent)
    return resp


def send(
    client: httpx.Client,
    target: Target,
    method: str,
    path: str,
    headers: dict[str, str] | None = None,
    content: bytes | None = None,
    expected_length: int | None = None,
) -> httpx.Response:
    """One preflight request (no redirects followed, credentials attached); every transport error
    becomes a one-line :class:`HttpbenchError` naming the target and the request.

    Like the timing engine it asks for no content coding (``Accept-Encoding: identity`` unless the
    caller sets one) and sees the body as sent, and the whole answer is bounded by the timeout and
    in bytes: by :data:`MAX_BODY_BYTES`, or, when a correct answer's length is known
    (``expected_length``), :data:`BODY_MARGIN` past it."""
    max_bytes = None if expected_length is None else expected_length + BODY_MARGIN
    where = f"target {target.name!r} {method} {path}"
    sent = {"User-Agent": "httpbench-preflight", "Accept": "*/*", "Accept-Encoding": "identity"}
    for key, value in (headers or {}).items():  # the caller's spelling replaces the default's
        sent = {k: v for k, v in sent.items() if k.lower() != key.lower()}
        sent[key] = value
    if target.auth_header:
        sent["Authorization"] = target.auth_header
    try:
        return request_within(
            client,
            method,
            target.url + (path if path.startswith("/") else "/" + path),
            sent,
            content,
            max_bytes=max_bytes,
        )
    except BodyTooLarge as exc:
        expected = "" if expected_length is None else f"; expected {expected_length:,} bytes"
        raise HttpbenchError(f"preflight: {where}: {exc}{expected}") from None
    except httpx.ConnectTimeout:
        raise HttpbenchError(f"preflight: {where}: connect timed out ({target.url})") from None
    except httpx.TimeoutException:
        raise HttpbenchError(f"preflight: {where}: no complete response within the timeout") from None
    except httpx.ConnectError as exc:
        reason = "connection refused" if "refused" in str(exc).lower() else f"cannot connect ({exc})"
        raise HttpbenchError(f"preflight: {where}: {reason} ({target.url})") from None
    except (httpx.RemoteProtocolError, httpx.ReadError) as exc:
        raise HttpbenchError(f"preflight: {where}: connection broken mid-response ({exc})") from None
    except httpx.HTTPError as exc:
        raise HttpbenchError(f"preflight: {where}: {type(exc).__name__}: {exc}") from None


def _request(
    client: httpx.Client, target: Target, scenario: Scenario, extra=(), expected: int | None = None
) -> httpx.Response:
    """``expected``: the body length a correct answer has, when known (reading stops
    :data:`BODY_MARGIN` bytes past it)."""
    return send(
        client,
        target,
        scenario.method,
        scenario.path,
        {**dict(scenario.headers), **dict(extra)},
        expected_length=expected,
    )


def new_client(timeout: float) -> httpx.Client:
    """The preflight's HTTP client: never follows redirects, never reads proxy settings from the
    environment."""
    return httpx.Client(timeout=timeout, follow_redirects=False, trust_env=False)


def check(
    targets: list[Target], scenarios: list[Scenario], timeout: float, client: httpx.Client | None = None
) -> tuple[dict[tuple[str, str], Expectation], list[dict[str, Any]]]:
    """Returns expectations keyed by (scenario, target) and a JSON-ready preflight record.
    ``client``: a :func:`new_client` to reuse (its connections); default: a new one, closed after."""
    expectations: dict[tuple[str, str], Expectation] = {}
    records: list[dict[str, Any]] = []
    with new_client(timeout) if client is None else contextlib.nullcontext(client) as client:
        for scenario in scenarios:
            reference: tuple[int, str] | None = None  # the first target's body: (length, SHA-256)
            for target in targets:
                expectation, record = _check_one(client, target, scenario, reference)
                if reference is None and record["sha256"] is not None:
                    reference = (record["body_bytes"], record["sha256"])
                expectations[(scenario.name, target.name)] = expectation
                records.append(record)
    return expectations, records


def _check_one(
    client: httpx.Client, target: Target, scenario: Scenario, reference: tuple[int, str] | None
) -> tuple[Expectation, dict[str, Any]]:
    """One scenario on one target: its answer checked (status, body, Range, against the scenario and
    the ``reference`` body of the first target); the expectation and the record of what was found."""
    where = f"target {target.name!r} scenario {scenario.name!r}"
    extra, etag = _validators(client, target, scenario, where)
    resp = _request(client, target, scenario, extra, _expected_length(scenario, reference))
    want = scenario.expected_status
    if resp.status_code != want:
        hint = " (redirect: Location header)" if "location" in resp.headers else ""
        raise HttpbenchError(
            f"preflight: {where}: {scenario.method} {scenario.path} "
            f"returned {resp.status_code}, expected {want}{hint}"
        )
    length: int
    sha: str | None
    if not scenario.has_body:
        if resp.content:
            raise HttpbenchError(
                f"preflight: {where}: {scenario.method} answer with "
                f"status {want} must have an empty body, got {len(resp.content)} bytes"
            )
        length, sha = 0, None
    else:
        length, sha = _checked_body(resp, scenario, where)
        if reference is not None and scenario.same_body and reference != (length, sha):
            raise HttpbenchError(
                f"preflight: {where}: body differs from the baseline's "
                f"({length} bytes vs {reference[0]}; same content is required)"
            )
    record = {
        "scenario": scenario.name,
        "target": target.name,
        "status": resp.status_code,
        "body_bytes": length,
        "sha256": sha,
        "etag": etag,
        "content_range": resp.headers.get("content-range"),
    }
    return Expectation(want, length, sha, extra), record


def _validators(
    client: httpx.Client, target: Target, scenario: Scenario, where: str
) -> tuple[tuple[tuple[str, str], ...], str | None]:
    """A conditional scenario's request headers (``If-None-Match`` / ``If-Modified-Since``, from a
    first plain GET of the target) and the ETag seen; a scenario that is not conditional has none."""
    if not scenario.conditional:
        return (), None
    first = _request(client, target, Scenario(scenario.name, scenario.path, "GET"))
    etag = first.headers.get("etag")
    modified = first.headers.get("last-modified")
    if first.status_code != 200 or not (etag or modified):
        raise HttpbenchError(
            f"preflight: {where}: conditional scenario needs a 200 "
            f"GET with an ETag or Last-Modified, got {first.status_code}"
            f"{'' if etag or modified else ' with neither'}"
        )
    extra: tuple[tuple[str, str], ...] = (("If-None-Match", etag),) if etag else ()
    if modified:
        extra += (("If-Modified-Since", modified),)
    return extra, etag


def _expected_length(scenario: Scenario, reference: tuple[int, str] | None) -> int | None:
    """The body length a correct answer has, when known: none for a bodiless answer, the scenario's
    ``length``, else the first target's when the body must be the same."""
    if not scenario.has_body:
        return 0
    if scenario.length is not None:
        return scenario.length
    if reference is not None and scenario.same_body:
        return reference[0]
    return None


def _checked_body(resp: httpx.Response, scenario: Scenario, where: str) -> tuple[int, str]:
    """The body's length and SHA-256, checked against ``Content-Length``, the Range asked for and
    the scenario's ``length`` and ``sha256``."""
    body = resp.content
    length, digest = len(body), hashlib.sha256(body).hexdigest()
    declared = resp.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) != length:
        raise HttpbenchError(f"preflight: {where}: Content-Length {declared} but {length} body bytes")
    if scenario.expected_status == 206:
        _check_range(resp, scenario, where, length)
    if scenario.length is not None and length != scenario.length:
        raise HttpbenchError(f"preflight: {where}: body is {length} bytes, expected {scenario.length}")
    if scenario.sha256 is not None and digest != scenario.sha256.lower():
        raise HttpbenchError(f"preflight: {where}: body SHA-256 differs from the scenario's sha256")
    return length, digest


def _check_range(resp: httpx.Response, scenario: Scenario, where: str, length: int) -> None:
    """A 206 answer to ``Range: bytes=LO-HI``: its ``Content-Range`` starts at LO and ends at HI (or
    the body is shorter: the end of the file), and the body is no longer than the range."""
    rng = next((v for k, v in scenario.headers if k.lower() == "range"), None)
    m = _RANGE.match(rng) if rng else None
    if not m:
        return
    lo, hi = int(m.group(1)), int(m.group(2))
    cr = resp.headers.get("content-range", "")
    if not cr.startswith(f"bytes {lo}-"):
        raise HttpbenchError(
            f"preflight: {where}: Range {rng!r} answered with Content-Range {cr or 'missing'!r}"
        )
    if not (cr.startswith(f"bytes {lo}-{hi}/") or length < hi - lo + 1):
        raise HttpbenchError(f"preflight: {where}: Content-Range {cr!r} does not match {rng!r}")
    if length > hi - lo + 1:
        raise HttpbenchError(f"preflight: {where}: Range {rng!r} returned {length} bytes")
