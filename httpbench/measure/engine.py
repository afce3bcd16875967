"""The timing client: asyncio (uvloop when installed) + httptools, one keep-alive connection per worker.

Measurement model (see docs/httpbench.md):

* Every worker's connection is opened *before* the round clock starts; connect times are
  recorded separately and never enter the response-time samples.
* Warm-ups (untimed, not counted) run on those same connections, then the clock starts.
* A sample starts immediately before the request bytes are written and ends when the complete
  body has been parsed (HEAD: end of headers; 304/204: headers plus the empty body).
* Every response is checked (status, body length, SHA-256 when expected). A wrong response is a
  failure: counted by kind, never added to the samples.
* Requests come from one shared pool, so a slow or dead connection does not stall the round. A
  connection the server closes is reopened (counted in ``reconnects``); if it cannot be reopened
  the worker stops. When no worker is left, the requests not sent are failures (``unsent``).
* Every request is bounded by ``timeout`` (a watchdog aborts it), connects too, so a round always
  ends: at most about requests/concurrency * timeout.
* Closed loop by default. With ``rate`` (open loop) request *i* is due at t0 + i/rate; its latency
  counts from that intended time (coordinated-omission corrected, as wrk2 does), and the service
  time from the actual write is reported beside it.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import resource
import socket
import ssl
import time
from collections import Counter
from dataclasses import dataclass
from urllib.parse import quote

import httptools

from httpbench.measure.percentiles import percentiles
from httpbench.model import Expectation, RoundResult, Scenario, Target

try:  # uvloop is the fast path; plain asyncio still works (and is recorded in the environment)
    import uvloop
except ImportError:  # pragma: no cover - exercised only without uvloop
    uvloop = None  # type: ignore[assignment]

CLIENT_BOUND_CPU = 0.85  # client CPU / wall above this: the client, not the target, may be the limit
_perf = time.perf_counter


def new_event_loop() -> asyncio.AbstractEventLoop:
    return uvloop.new_event_loop() if uvloop is not None else asyncio.new_event_loop()


def loop_name() -> str:
    return f"uvloop {uvloop.__version__}" if uvloop is not None else "asyncio"


# what may stay as is in a request target (RFC 3986 pchar, "/", "?" and existing %XX escapes);
# everything else is percent-encoded (UTF-8), as httpx does for the preflight's requests
_TARGET_SAFE = "/?%:@!$&'()*+,;=~-._"


def set_nodelay(transport: asyncio.BaseTransport) -> None:
    """Send small writes at once (no Nagle delay): every request and every fixture answer is one
    write that must not wait for the peer's ACK."""
    sock = transport.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


def build_request(target: Target, scenario: Scenario, expectation: Expectation) -> bytes:
    path = target.base_path + (scenario.path if scenario.path.startswith("/") else "/" + scenario.path)
    path = quote(path, safe=_TARGET_SAFE)
    lines = [
        f"{scenario.method} {path} HTTP/1.1",
        f"Host: {target.host_header}",
        "User-Agent: httpbench",
        "Accept: */*",
    ]
    if target.auth_header:
        lines.append(f"Authorization: {target.auth_header}")
    for key, value in (*scenario.headers, *expectation.extra_headers):
        lines.append(f"{key}: {value}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def _cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


class _Phase:
    """One batch of requests (warm-up or timed) shared by all connections."""

    __slots__ = (
        "body_bytes",
        "busy",
        "digests",
        "done",
        "failures",
        "issued",
        "ok",
        "rate",
        "remaining",
        "samples",
        "sent",
        "service",
        "t0",
        "timed",
        "ttfb",
    )

    def __init__(self, count: int, timed: bool, loop: asyncio.AbstractEventLoop, rate: float | None):
        self.remaining = count
        self.timed = timed
        self.samples: list[float] = []
        self.service: list[float] = []
        self.ttfb: list[float] = []
        self.failures: Counter[str] = Counter()
        self.body_bytes = 0
        self.ok = 0
        self.done = loop.create_future()
        self.busy = 0
        self.rate = rate
        self.t0 = 0.0
        self.issued = 0
        self.sent = 0
        self.digests = 0  # bodies whose SHA-256 was checked


class _Conn(asyncio.Protocol):
    """One worker: one connection, one request in flight, the next taken from the shared pool."""

    def __init__(self, run: _Round):
        self.run = run
        self.transport: asyncio.Transport | None = None
        self.parser = httptools.HttpResponseParser(self)
        self.inflight = False
        self.alive = False
        self.t_intended = 0.0
        self.t_start = 0.0
        self.t_headers = 0.0
        self.nbytes = 0
        self.hasher: hashlib._Hash | None = None
        self.keep_alive = True
        self.lost = None
        self.responses = 0  # requests sent on this connection (drives digest sampling)

    # -- asyncio protocol -------------------------------------------------------------------------
    def connection_made(self, transport):
        self.transport = transport
        self.alive = True
        set_nodelay(transport)

    def data_received(self, data):
        if not self.inflight:
            self._fail("unexpected_data")
            return
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserError:
            if self.inflight:
                self._fail("bad_response")

    def connection_lost(self, exc):
        self.alive = False
        self.transport = None
        if self.inflight:
            self._fail("reset" if exc is not None or self.nbytes or self.t_headers else "closed")
        self.run.lost(self)

    # -- httptools callbacks ----------------------------------------------------------------------
    def on_headers_complete(self):
        self.t_headers = _perf()
        self.keep_alive = self.parser.should_keep_alive()
        if self.run.head:
            self._complete(self.t_headers)

    def on_body(self, body):
        self.nbytes += len(body)
        if self.hasher is not None:
            self.hasher.update(body)

    def on_message_complete(self):
        if not self.run.head and self.inflight:
            self._complete(_perf())

    # -- request cycle ----------------------------------------------------------------------------
    def send(self, t_intended: float):
        self.inflight = True
        self.nbytes = 0
        self.t_headers = 0.0
        self.t_intended = t_intended
        self.responses += 1
        run = self.run
        if run.check_digest and (self.responses == 1 or self.responses % run.digest_every == 0):
            self.hasher = hashlib.sha256()
        else:
            self.hasher = None
        self.t_start = _perf()
        assert self.transport is not None  # sent only on a live connection
        self.transport.write(self.run.request)

    def _complete(self, t_end: float):
        run = self.run
        phase = run.phase
        assert phase is not None  # a request is answered only during a phase
        self.inflight = False
        phase.busy -= 1
        exp = run.expectation
        status = self.parser.get_status_code()
        if status != exp.status:
            kind = f"status_{status}"
        elif exp.length is not None and self.nbytes != exp.length:
            kind = "length"
        elif self.hasher is not None and exp.sha256 and self.hasher.hexdigest() != exp.sha256:
            kind = "sha256"
        else:
            kind = None
        if self.hasher is not None and status == exp.status:
            phase.digests += 1
        if kind is None:
            phase.ok += 1
            phase.body_bytes += self.nbytes
            if phase.timed:
                start = (
                    self.t_intended if (self.t_intended and self.t_intended < self.t_start) else self.t_start
                )
                phase.samples.append(t_end - start)
                if phase.rate:
                    phase.service.append(t_end - self.t_start)
                phase.ttfb.append(self.t_headers - self.t_start)
        else:
            phase.failures[kind] += 1
        if run.head:
            # httptools would now wait for a HEAD body that never comes: start a fresh parser.
            self.parser = httptools.HttpResponseParser(self)
        if not self.keep_alive:
            assert self.transport is not None  # an answer just arrived on it
            self.transport.close()  # connection_lost() reopens it and then continues
            return
        run.next(self)

    def _fail(self, kind: str):
        run = self.run
        if self.inflight:
            assert run.phase is not None  # a request is in flight only during a phase
            self.inflight = False
            run.phase.busy -= 1
            run.phase.failures[kind] += 1
        self.parser = httptools.HttpResponseParser(self)
        if self.transport is not None:
            self.transport.abort()  # connection_lost() follows and reopens


@dataclass(kw_only=True)
class RoundSpec:
    target: Target
    scenario: Scenario
    expectation: Expectation
    warmups: int
    requests: int
    concurrency: int
    timeout: float
    rate: float | None = None
    keep_samples: bool = False
    verify_digest: bool = False
    digest_every: int | None = None  # SHA-256 every Nth body per connection (and the first);
    # None: every body below 1 MiB, every 8th above


BIG_BODY = 1 << 20


class _Round:
    def __init__(self, spec: RoundSpec, loop: asyncio.AbstractEventLoop):
        self.spec = spec
        self.loop = loop
        self.request = build_request(spec.target, spec.scenario, spec.expectation)
        self.expectation = spec.expectation
        self.head = spec.scenario.method == "HEAD"
        self.check_digest = (
            bool(spec.expectation.sha256)
            and spec.scenario.has_body
            and (spec.verify_digest or spec.scenario.sha256 is not None)
        )
        big = (spec.expectation.length or 0) >= BIG_BODY
        self.digest_every = spec.digest_every or (8 if big else 1)
        self.ssl = ssl.create_default_context() if spec.target.scheme == "https" else None
        self.conns: list[_Conn] = []
        self.phase: _Phase | None = None
        self.reconnects = 0
        self.connect_times: list[float] = []
        self.connect_errors: Counter[str] = Counter()
        self.pending_reconnects = 0
        self.closing = False
        self.warm: _Phase | None = None

    async def _connect(self) -> _Conn | None:
        t = self.spec.target
        conn = _Conn(self)
        start = _perf()
        try:
            await asyncio.wait_for(
                self.loop.create_connection(
                    lambda: conn, t.host, t.port, ssl=self.ssl, server_hostname=t.host if self.ssl else None
                ),
                self.spec.timeout,
            )
        except TimeoutError:
            self.connect_errors["connect_timeout"] += 1
            return None
        except ssl.SSLError:
            self.connect_errors["tls"] += 1
            return None
        except OSError as exc:
            self.connect_errors["refused" if isinstance(exc, ConnectionRefusedError) else "connect"] += 1
            return None
        self.connect_times.append(_perf() - start)
        return conn

    # -- pool -------------------------------------------------------------------------------------
    def next(self, conn: _Conn):
        phase = self.phase
        assert phase is not None
        if phase.remaining > 0 and conn.alive:
            phase.remaining -= 1
            phase.busy += 1
            if phase.rate:
                due = phase.t0 + phase.issued / phase.rate
                phase.issued += 1
                wait = due - _perf()
                if wait > 0.0005:
                    self.loop.call_later(wait, self._send_due, conn, due)
                    return
                conn.send(due)
            else:
                conn.send(0.0)
        else:
            self._maybe_done()

    def _send_due(self, conn: _Conn, due: float):
        if conn.alive and conn.inflight is False:
            conn.send(due)
        else:  # lost while waiting: that request is not sent
            assert self.phase is not None
            self.phase.busy -= 1
            self.phase.failures["unsent"] += 1
            self._maybe_done()

    def _maybe_done(self):
        phase = self.phase
        assert phase is not None
        if phase.done.done() or phase.busy > 0:
            return
        if phase.remaining > 0:
            if any(c.alive for c in self.conns) or self.pending_reconnects:
                return
            phase.failures["unsent"] += phase.remaining
            phase.remaining = 0
        phase.done.set_result(None)

    def lost(self, conn: _Conn):
        if conn in self.conns:
            self.conns.remove(conn)
        if self.phase is None or self.phase.done.done() or self.closing:
            return
        if self.phase.remaining > 0:
            self.pending_reconnects += 1
            self.loop.create_task(self._reopen())
        self._maybe_done()

    async def _reopen(self):
        conn = await self._connect()
        self.pending_reconnects -= 1
        if conn is not None:
            self.reconnects += 1
            self.conns.append(conn)
            self.next(conn)
        else:
            self._maybe_done()

    async def _watchdog(self):
        timeout = self.spec.timeout
        step = min(max(timeout / 4, 0.01), 0.25)
        while True:
            await asyncio.sleep(step)
            now = _perf()
            for conn in list(self.conns):
                if conn.inflight and now - conn.t_start > timeout:
                    conn._fail("timeout")

    async def _run_phase(self, count: int, timed: bool) -> tuple[_Phase, float, float]:
        phase = _Phase(count, timed, self.loop, self.spec.rate if timed else None)
        self.phase = phase
        cpu0 = _cpu()
        phase.t0 = t0 = _perf()
        for conn in list(self.conns):
            self.next(conn)
        self._maybe_done()
        await phase.done
        wall = _perf() - t0
        return phase, wall, _cpu() - cpu0

    async def run(self) -> tuple[_Phase, float, float, int]:
        spec = self.spec
        workers = max(1, min(spec.concurrency, max(spec.requests, spec.warmups, 1)))
        opened = await asyncio.gather(*(self._connect() for _ in range(workers)))
        self.conns = [c for c in opened if c is not None]
        connections = len(self.conns)
        watchdog = self.loop.create_task(self._watchdog())
        try:
            warm, _, _ = await self._run_phase(spec.warmups, False) if spec.warmups else (None, 0, 0)
            self.warm = warm
            # connections lost during warm-up are reopened before the clock starts
            while len(self.conns) < connections and not self.connect_errors:
                conn = await self._connect()
                if conn is None:
                    break
                self.conns.append(conn)
            phase, wall, cpu = await self._run_phase(spec.requests, True)
        finally:
            self.closing = True
            watchdog.cancel()
            for conn in list(self.conns):
                if conn.transport is not None:
                    conn.transport.close()
        return phase, wall, cpu, connections


async def run_round(spec: RoundSpec, round_no: int, position: int, order: list[str]) -> RoundResult:
    loop = asyncio.get_running_loop()
    rnd = _Round(spec, loop)
    phase, wall, cpu, connections = await rnd.run()
    await asyncio.sleep(0)  # let transports close
    failures = Counter(phase.failures)
    p50, p95, p99, pmax = percentiles(phase.samples)
    t50, t95 = percentiles(phase.ttfb, (0.5, 0.95))
    c50, cmax = percentiles(rnd.connect_times, (0.5, 1.0))
    ms = lambda v: None if v is None else v * 1000.0
    util = cpu / wall if wall > 0 else 0.0
    warm = rnd.warm
    kinds = dict(sorted(failures.items()))
    if rnd.connect_errors:
        kinds.update({f"connect:{k}": v for k, v in sorted(rnd.connect_errors.items())})
    result = RoundResult(
        scenario=spec.scenario.name,
        target=spec.target.name,
        round=round_no,
        position=position,
        order=order,
        mode="open" if spec.rate else "closed",
        requests=spec.requests,
        ok=phase.ok,
        failures=sum(failures.values()),
        failure_kinds=kinds,
        warmups=spec.warmups,
        warmup_failures=sum(warm.failures.values()) if warm else 0,
        concurrency=spec.concurrency,
        connections=connections,
        connect_ms={"p50": ms(c50), "max": ms(cmax), "count": len(rnd.connect_times)},
        reconnects=rnd.reconnects,
        body_bytes=phase.body_bytes,
        wall_ms=wall * 1000.0,
        rps=phase.ok / wall if wall > 0 else 0.0,
        mibps=phase.body_bytes / wall / 1048576.0 if wall > 0 else 0.0,
        p50_ms=ms(p50),
        p95_ms=ms(p95),
        p99_ms=ms(p99),
        max_ms=ms(pmax),
        ttfb_p50_ms=ms(t50),
        ttfb_p95_ms=ms(t95),
        client_cpu_s=cpu,
        client_cpu_util=util,
        client_bound=util >= CLIENT_BOUND_CPU and phase.ok > 0,
        rate=spec.rate,
        digests_checked=phase.digests,
    )
    if spec.rate:
        s50, s95, s99 = percentiles(phase.service, (0.5, 0.95, 0.99))
        result.service_p50_ms, result.service_p95_ms, result.service_p99_ms = ms(s50), ms(s95), ms(s99)
    if spec.keep_samples:
        result.samples_ms = [round(s * 1000.0, 6) for s in phase.samples]
    return result
