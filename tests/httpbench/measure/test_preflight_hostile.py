"""Bounded work against hostile HTTP servers (issue 13, item 5): the preflight reads a bounded
number of bytes, whatever the server sends.

The servers here are real sockets on 127.0.0.1 (a thread per connection), not mocks.
"""

from __future__ import annotations

import socket
import socketserver
import threading
import time
import tracemalloc
from collections.abc import Iterator

import httpx
import pytest

from httpbench.errors import HttpbenchError
from httpbench.measure import preflight
from httpbench.model import Scenario, Target
from tests.httpbench.http_fixtures import read_head

SMALL = b"s" * 1000
CHUNK = b"x" * 65536


class _Handler(socketserver.BaseRequestHandler):
    """By the first path segment: ``/small/…``: 1,000 bytes; ``/endless/…``: a chunked body that
    never ends (64 KiB chunks, paced to about 30 MB/s so a client without a byte bound fills memory
    only slowly here); ``/declared/…``: ``Content-Length`` of 10 GiB, then the same bytes."""

    def handle(self) -> None:
        sock: socket.socket = self.request
        head = read_head(sock)
        if b"\r\n\r\n" not in head:
            return
        kind = head.split(b" ", 2)[1].split(b"/")[1]
        try:
            if kind == b"small":
                sock.sendall(
                    b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n" % len(SMALL) + SMALL
                )
            elif kind == b"endless":
                sock.sendall(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n")
                frame = b"%x\r\n" % len(CHUNK) + CHUNK + b"\r\n"
                while True:
                    sock.sendall(frame)
                    time.sleep(0.002)
            elif kind == b"declared":
                sock.sendall(
                    b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n" % (10 << 30)
                )
                while True:
                    sock.sendall(CHUNK)
                    time.sleep(0.002)
            else:
                sock.sendall(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        except OSError:  # the client hung up: what a bounded reader does
            return


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


@pytest.fixture(scope="module")
def hostile() -> Iterator[str]:
    server = _Server(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def _target(name: str, url: str) -> Target:
    return Target.parse(name, url)[0]


def test_an_endless_body_stops_at_max_bytes_in_memory_and_time(hostile):
    tracemalloc.start()
    started = time.monotonic()
    try:
        with (
            preflight.new_client(20.0) as client,
            pytest.raises(preflight.BodyTooLarge, match=r"more than the 1,048,576 bytes allowed"),
        ):
            preflight.request_within(client, "GET", f"{hostile}/endless/f", max_bytes=1 << 20)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert time.monotonic() - started < 5  # not the 20 s time limit
    assert peak < 8 << 20
    assert issubclass(preflight.BodyTooLarge, httpx.HTTPError)  # for callers catching httpx errors


def test_an_announced_oversized_body_is_refused_before_reading(hostile):
    started = time.monotonic()
    with preflight.new_client(20.0) as client, pytest.raises(HttpbenchError) as info:
        preflight.send(client, _target("t", f"{hostile}/declared"), "GET", "/f")
    assert str(info.value) == (
        "preflight: target 't' GET /f: Content-Length 10,737,418,240 is "
        "more than the 268,435,456 bytes allowed"
    )
    assert time.monotonic() - started < 5


@pytest.mark.servers
def test_the_preflight_reads_only_a_margin_past_the_expected_length(hostile):
    """An endless body where 1,000 bytes are expected (the scenario's length, or the baseline's
    answer): reading stops 64 KiB past it at once. Before, it took the whole timeout and as much
    memory as the server could send in it."""
    started = time.monotonic()
    with pytest.raises(HttpbenchError) as info:
        preflight.check([_target("base", f"{hostile}/endless")], [Scenario("f", "/f", length=1000)], 10.0)
    assert str(info.value) == (
        "preflight: target 'base' GET /f: body is more than the 66,536 bytes "
        "allowed (reading stopped there); expected 1,000 bytes"
    )
    targets = [_target("base", f"{hostile}/small"), _target("cand", f"{hostile}/endless")]
    with pytest.raises(HttpbenchError) as info:
        preflight.check(targets, [Scenario("f", "/f")], 10.0)
    assert str(info.value) == (
        "preflight: target 'cand' GET /f: body is more than the 66,536 bytes "
        "allowed (reading stopped there); expected 1,000 bytes"
    )
    assert time.monotonic() - started < 8  # each would have run into its 10 s timeout
    # a correct answer is not affected
    expectations, _ = preflight.check(targets[:1], [Scenario("f", "/f", length=1000)], 10.0)
    assert expectations[("f", "base")].length == 1000


def test_a_head_answer_announcing_a_large_body_is_not_refused(hostile):
    """A HEAD answer's Content-Length is the size of the body it does not send."""
    with preflight.new_client(20.0) as client:
        resp = preflight.send(client, _target("t", f"{hostile}/declared"), "HEAD", "/f", expected_length=0)
    assert resp.status_code == 200 and resp.content == b""
    assert resp.headers["content-length"] == str(10 << 30)
