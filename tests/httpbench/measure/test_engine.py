"""The timing engine against the controllable fixture server: checks, failures, bounds, connects."""

from __future__ import annotations

import asyncio
import os
import time

import pytest

from httpbench.measure import engine, preflight
from httpbench.model import Expectation, Scenario, Target
from tests.httpbench.http_fixtures import FixtureServer, Route, body_of

BODY = body_of(4096)


@pytest.fixture()
def server():
    with FixtureServer({"/f": Route(BODY)}) as srv:
        yield srv


def measure(
    url: str,
    scenario: Scenario,
    warmups=0,
    requests=40,
    concurrency=4,
    timeout=2.0,
    verify_digest=False,
    rate=None,
):
    target, _ = Target.parse("t", url)
    exps, _ = preflight.check([target], [scenario], timeout)
    spec = engine.RoundSpec(
        target=target,
        scenario=scenario,
        expectation=exps[(scenario.name, "t")],
        warmups=warmups,
        requests=requests,
        concurrency=concurrency,
        timeout=timeout,
        rate=rate,
        keep_samples=True,
        verify_digest=verify_digest,
    )
    with asyncio.Runner(loop_factory=engine.new_event_loop) as runner:
        return runner.run(engine.run_round(spec, 1, 1, ["t"]))


def test_clean_run_connects_before_the_clock_and_times_every_request(server):
    r = measure(server.url, Scenario("f", "/f"), warmups=8, requests=40, concurrency=4)
    assert (r.ok, r.failures, r.connections, r.reconnects) == (40, 0, 4, 0)
    assert len(r.samples_ms) == 40  # one sample per timed request, no connects
    assert r.connect_ms["count"] == 4 and r.connect_ms["p50"] is not None
    assert server.connections == 1 + 4  # preflight + 4 workers: warm-ups reused them
    assert server.routes["/f"].count == 1 + 8 + 40  # preflight + warm-ups + timed
    assert r.body_bytes == 40 * len(BODY)
    assert r.p50_ms <= r.p95_ms <= r.p99_ms <= r.max_ms == pytest.approx(max(r.samples_ms), abs=1e-5)
    assert r.ttfb_p50_ms <= r.p50_ms
    # 40 requests cost this process CPU time (getrusage: the client and the fixture's thread), at
    # most wall time on every core; the utilization and the client-bound flag derive from the two
    assert 0 < r.client_cpu_s <= r.wall_ms / 1000.0 * (os.cpu_count() or 1) + 0.01
    assert r.client_cpu_util == pytest.approx(r.client_cpu_s / (r.wall_ms / 1000.0))
    assert r.client_bound == (r.client_cpu_util >= engine.CLIENT_BOUND_CPU)


def test_head_and_304_read_only_headers(server):
    head = measure(server.url, Scenario("h", "/f", method="HEAD"), requests=30)
    assert (head.ok, head.failures, head.body_bytes) == (30, 0, 0)
    cond = measure(server.url, Scenario("c", "/f", conditional=True), requests=30)
    assert (cond.ok, cond.failures, cond.body_bytes) == (30, 0, 0)


def test_range_is_checked_against_the_right_bytes(server):
    r = measure(
        server.url,
        Scenario("r", "/f", headers=(("Range", "bytes=100-1123"),), klass="payload"),
        requests=20,
        verify_digest=True,
    )
    assert (r.ok, r.failures, r.body_bytes) == (20, 0, 20 * 1024)


@pytest.mark.parametrize(
    "fault,kind,digest",
    [
        ("wrong_bytes", "sha256", True),
        ("wrong_length", "length", False),
        ("status_500", "status_500", False),
        ("reset", "reset", False),
    ],
)
def test_every_wrong_response_is_counted_and_never_timed(server, fault, kind, digest):
    route = server.routes["/f"]
    route.fault, route.fault_every, route.fault_after = fault, 5, 1  # preflight (request 1) is clean
    r = measure(server.url, Scenario("f", "/f"), warmups=0, requests=50, concurrency=4, verify_digest=digest)
    assert r.failures == route.faults == 10
    assert r.failure_kinds == {kind: 10}
    assert r.ok == 40 and len(r.samples_ms) == 40
    if fault == "reset":
        # the worker reopened (outside the samples) unless nothing was left to send
        assert 10 - 4 <= r.reconnects <= 10


def test_wrong_bytes_pass_a_length_only_check_but_not_a_digest_check(server):
    route = server.routes["/f"]
    route.fault, route.fault_every, route.fault_after = "wrong_bytes", 2, 1
    assert measure(server.url, Scenario("f", "/f"), requests=10).failures == 0
    route.count = route.faults = 0
    assert measure(server.url, Scenario("f", "/f"), requests=10, verify_digest=True).failures == 5


def test_connection_close_is_reopened_without_failures(server):
    route = server.routes["/f"]
    route.fault, route.fault_every, route.fault_after = "close", 3, 1
    r = measure(server.url, Scenario("f", "/f"), requests=30, concurrency=2)
    assert (r.ok, r.failures) == (30, 0)
    # a closed connection is reopened by the next request on it: each of the 2 workers may end on a
    # close it never reopens, so 8 to 10 reconnects, whichever worker sends the last requests
    assert route.faults == 10 and 10 - 2 <= r.reconnects <= 10


@pytest.mark.servers
def test_a_hanging_target_is_bounded_by_the_timeout(server):
    route = server.routes["/f"]
    route.fault, route.fault_every, route.fault_after = "hang", 4, 1
    start = time.monotonic()
    r = measure(server.url, Scenario("f", "/f"), requests=16, concurrency=4, timeout=0.3)
    assert time.monotonic() - start < 5
    assert r.failure_kinds == {"timeout": 4} and r.ok == 12


def test_a_target_that_dies_leaves_unsent_failures_and_ends():
    with FixtureServer({"/f": Route(BODY)}) as srv:
        target, _ = Target.parse("t", srv.url)
        scenario = Scenario("f", "/f")
        exps, _ = preflight.check([target], [scenario], 2.0)
        srv.routes["/f"].fault, srv.routes["/f"].fault_after = "reset", 0
        srv.stop_listening()  # no new connections: reconnects fail
        spec = engine.RoundSpec(
            target=target,
            scenario=scenario,
            expectation=exps[("f", "t")],
            warmups=0,
            requests=20,
            concurrency=2,
            timeout=1.0,
        )
        with asyncio.Runner(loop_factory=engine.new_event_loop) as runner:
            r = runner.run(engine.run_round(spec, 1, 1, ["t"]))
    assert r.ok == 0 and r.failures == 20
    assert r.rps == 0 and r.p95_ms is None


@pytest.mark.servers
def test_open_loop_counts_latency_from_the_intended_send_time(server):
    server.routes["/f"].delay = 0.02  # 20 ms service time, 1 connection: capacity 50 req/s
    r = measure(server.url, Scenario("f", "/f"), requests=20, concurrency=1, rate=200.0)
    assert r.mode == "open" and r.ok == 20
    # asked for 200 req/s: the queue grows, so corrected latency far exceeds the service time
    assert r.service_p50_ms < 40
    assert r.p99_ms > 5 * r.service_p99_ms / 2
    assert r.p99_ms > 200


def test_the_timed_request_target_is_the_one_the_preflight_sent():
    """A profile path with a space or non-ASCII name (``--package-path``, ``--file``): httpx
    percent-encodes it in the preflight, so the engine must too, not write it raw (400s)."""
    target, _ = Target.parse("t", "http://127.0.0.1:1/base%20dir")
    request = engine.build_request(target, Scenario("s", "/a b/ü?x=1&y=%41"), Expectation(200, None, None))
    assert request.startswith(b"GET /base%20dir/a%20b/%C3%BC?x=1&y=%41 HTTP/1.1\r\n")
    with FixtureServer({"/a%20b": Route(BODY)}) as srv:
        r = measure(srv.url, Scenario("spaced", "/a b"), requests=10, concurrency=2)
    assert (r.ok, r.failures) == (10, 0)
