"""A small HTTP/1.1 server the httpbench tests control, plus helpers to run the real command.

The server runs its own asyncio loop in a daemon thread on 127.0.0.1. Each route serves fixed
bytes and can be made slow (``delay``) or faulty (``fault``) on chosen requests:

* ``wrong_bytes``  same length, one byte changed (only a digest check sees it)
* ``wrong_length`` one byte more than expected (Content-Length consistent)
* ``status_500``   a 500 answer
* ``reset``        headers and half the body, then the connection is aborted
* ``hang``         never answers (the client's timeout must end it)
* ``close``        a correct answer with ``Connection: close``, then the server closes
* ``trickle``      headers at once, then the body one byte every 0.2 s (each read is quick, the
                   whole answer is not)

Request *n* of a route (1-based, counted across connections, preflight included) is faulted when
``n > fault_after`` and ``(n - fault_after) % fault_every == 0``. ``faults`` counts what was sent.
Responses are written with a single write each (headers and body together), so the fixture adds
no artificial delay per keep-alive response.
"""

from __future__ import annotations

import asyncio
import gzip
import hashlib
import os
import re
import socket
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from tests.conftest import CliResult, run_program


@dataclass
class Route:
    body: bytes = b""
    status: int = 200
    delay: float = 0.0
    fault: str | None = None
    fault_every: int = 1
    fault_after: int = 0
    headers: dict[str, str] = field(default_factory=dict)
    gzip: bool = False  # answer gzip-encoded when the request accepts gzip
    last_modified: str | None = None  # validators: Last-Modified, and ETag unless no_etag
    no_etag: bool = False
    count: int = 0
    faults: int = 0

    @property
    def etag(self) -> str:
        return '"' + hashlib.sha256(self.body).hexdigest()[:16] + '"'


class FixtureServer:
    def __init__(self, routes: dict[str, Route] | None = None):
        self.routes: dict[str, Route] = routes or {}
        self.loop = asyncio.new_event_loop()
        self.server = None
        self.port = 0
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self._writers: set = set()
        self.connections = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> FixtureServer:
        self._thread.start()
        fut = asyncio.run_coroutine_threadsafe(
            asyncio.start_server(self._handle, "127.0.0.1", 0, backlog=1024), self.loop
        )
        self.server = fut.result(5)
        self.port = self.server.sockets[0].getsockname()[1]
        return self

    def stop_listening(self) -> None:
        """Refuse new connections from now on (open ones stay)."""

        async def _close():
            self.server.close()

        asyncio.run_coroutine_threadsafe(_close(), self.loop).result(5)

    def stop(self) -> None:
        async def _close():
            self.server.close()
            for w in list(self._writers):
                w.transport.abort()
            current = asyncio.current_task()
            pending = [t for t in asyncio.all_tasks() if t is not current]
            for task in pending:  # handlers still waiting (a hang fault, a slow client)
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)

        asyncio.run_coroutine_threadsafe(_close(), self.loop).result(5)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(5)

    def __enter__(self) -> FixtureServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.add(writer)
        self.connections += 1
        try:
            while True:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError):
                    return
                lines = head.decode("latin-1").split("\r\n")
                method, target, _ = (lines[0].split(" ") + ["", "", ""])[:3]
                headers = {}
                for line in lines[1:]:
                    if ":" in line:
                        k, v = line.split(":", 1)
                        headers[k.strip().lower()] = v.strip()
                if not await self._respond(method, target, headers, writer):
                    return
        finally:
            self._writers.discard(writer)
            if not writer.transport.is_closing():
                writer.transport.close()

    async def _respond(self, method: str, path: str, headers: dict[str, str], writer) -> bool:
        route = self.routes.get(path)
        if route is None:
            writer.write(
                b"HTTP/1.1 404 Not Found\r\nContent-Length: 9\r\nContent-Type: text/plain\r\n\r\nnot found"
            )
            return True
        route.count += 1
        n = route.count
        fault = None
        if route.fault and n > route.fault_after and (n - route.fault_after) % route.fault_every == 0:
            fault = route.fault
            route.faults += 1
        if route.delay:
            await asyncio.sleep(route.delay)
        if fault == "hang":
            await asyncio.sleep(3600)
            return False
        body, status, extra = route.body, route.status, dict(route.headers)
        reason = {200: "OK", 206: "Partial Content", 304: "Not Modified", 500: "Internal Server Error"}
        if not route.no_etag:
            extra["ETag"] = route.etag
        if route.last_modified:
            extra["Last-Modified"] = route.last_modified
        fresh = (
            headers.get("if-none-match") == route.etag
            if "if-none-match" in headers
            else bool(route.last_modified) and headers.get("if-modified-since") == route.last_modified
        )
        if fresh and fault is None:
            status, body = 304, b""
        elif "range" in headers and status == 200:
            m = re.match(r"bytes=(\d+)-(\d+)$", headers["range"])
            if m:
                lo, hi = int(m.group(1)), min(int(m.group(2)), len(body) - 1)
                extra["Content-Range"] = f"bytes {lo}-{hi}/{len(body)}"
                status, body = 206, body[lo : hi + 1]
        if fault == "wrong_bytes" and body:
            body = bytes([body[0] ^ 0xFF]) + body[1:]
        elif fault == "wrong_length":
            body = body + b"!"
        elif fault == "status_500":
            status, body = 500, b"boom"
        if fault == "close":
            extra["Connection"] = "close"
        if route.gzip and "gzip" in headers.get("accept-encoding", "") and status == 200:
            body = gzip.compress(body, mtime=0)
            extra["Content-Encoding"] = "gzip"
        head = [f"HTTP/1.1 {status} {reason.get(status, 'Status')}", f"Content-Length: {len(body)}"]
        head += [f"{k}: {v}" for k, v in extra.items()]
        raw_head = ("\r\n".join(head) + "\r\n\r\n").encode("latin-1")
        send_body = method != "HEAD" and status != 304
        if fault == "trickle":
            writer.write(raw_head)
            for i in range(len(body)):
                if writer.transport.is_closing():
                    return False
                writer.write(body[i : i + 1])
                await writer.drain()
                await asyncio.sleep(0.2)
            return True
        if fault == "reset":
            writer.write(raw_head + body[: len(body) // 2])
            await writer.drain()
            writer.transport.abort()
            return False
        writer.write(raw_head + (body if send_body else b""))
        if fault == "close":
            await writer.drain()
            writer.close()
            return False
        return True


def body_of(size: int, seed: int = 1) -> bytes:
    """Non-repeating bytes, so a wrong offset or a changed byte is detectable."""
    out = bytearray()
    counter = 0
    while len(out) < size:
        out += hashlib.sha256(f"{seed}:{counter}".encode()).digest()
        counter += 1
    return bytes(out[:size])


def run_httpbench(
    *args: str, env: dict[str, str] | None = None, timeout: float = 60, process: bool = False
) -> CliResult:
    """Run ``httpbench ARGS``: in this process, or as a real one with ``process=True``
    (:func:`tests.conftest.run_program`)."""
    return run_program("httpbench", *args, env=env, timeout=timeout, process=process)


Option = str | int | float | bool | os.PathLike[str] | None | Sequence[str]

# the six scenarios of ``--profile alpine``, in the order the profile runs them
ALPINE_SCENARIOS = [
    "signed index GET",
    "signed index HEAD",
    "signed index 304",
    "package GET",
    "package Range 64 KiB",
    "package HEAD",
]


def cli_options(**options: Option) -> list[str]:
    """Command-line options from keywords, in their order: ``max_p95=2`` is ``--max-p95 2`` (a
    one-letter name is a short option: ``q=True`` is ``-q``); ``True`` is a bare flag, ``False`` and
    ``None`` leave the option out, a list or tuple repeats it once per value."""
    argv: list[str] = []
    for name, value in options.items():
        flag = f"-{name}" if len(name) == 1 else "--" + name.replace("_", "-")
        if value is True:
            argv.append(flag)
        elif isinstance(value, list | tuple):
            argv += [arg for item in value for arg in (flag, item)]
        elif value is not None and value is not False:
            argv += [flag, str(value)]
    return argv


def compare_args(targets: Mapping[str, str], *scenarios: str, **options: Option) -> list[str]:
    """The argv of ``httpbench compare``: ``--target NAME=URL`` for each of ``targets`` and
    ``--scenario`` for each of ``scenarios`` (both in order), then ``cli_options(**options)``."""
    named = [f"{name}={url}" for name, url in targets.items()]
    return ["compare", *cli_options(target=named, scenario=list(scenarios), **options)]


def seeded(requests: int, rounds: int = 1, warmups: int = 0, **more: Option) -> dict[str, Option]:
    """The options of a short ``--method seed`` run: ``rounds`` rounds of ``requests`` timed requests
    each after ``warmups`` warm-ups, plus ``more``."""
    return {"warmups": warmups, "requests": requests, "method": "seed", "rounds": rounds, **more}


def run_compare(
    targets: Mapping[str, str],
    *scenarios: str,
    extra: Sequence[str] = (),
    env: dict[str, str] | None = None,
    timeout: float = 60,
    process: bool = False,
    **options: Option,
) -> CliResult:
    """``run_httpbench`` of ``compare_args(targets, *scenarios, **options)`` followed by ``extra``."""
    args = compare_args(targets, *scenarios, **options)
    return run_httpbench(*args, *extra, env=env, timeout=timeout, process=process)


def read_head(sock: socket.socket) -> bytes:
    """Bytes from ``sock`` until the end of an HTTP head (``\r\n\r\n``) or of the stream; the
    caller checks for the terminator (a peer that closed early sent no complete head)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    return data
