"""Statements split in a thread of their own while the server runs the ones before them.

Splitting and checking a statement is Python work (holding the interpreter); running it is mostly
the server's (the driver waits on its socket, letting the interpreter go). Reading ahead overlaps
the two, so a large dump loads in about the servers' time rather than the sum of both.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator

from dbbench.setup.split import Statement

_END = object()


def read_ahead(stmts: Iterator[Statement], depth: int = 4) -> Iterator[Statement]:
    """``stmts`` as they were, at most ``depth`` of them split ahead. A statement carrying rows
    read from the file as they are consumed (a long ``COPY``) is handed over alone: the thread
    waits until it has been run before it reads on. An error of the splitter is raised here, in
    order; when the consumer stops early, the thread stops and the file is closed."""
    ahead: queue.Queue[object] = queue.Queue(depth)
    stop = threading.Event()
    handed = threading.Event()  # the statement with streamed rows was run: read on

    def put(item: object) -> bool:
        while not stop.is_set():
            try:
                ahead.put(item, timeout=0.05)
                return True
            except queue.Full:
                continue
        return False

    def produce() -> None:
        try:
            for s in stmts:
                if not put(s):
                    return
                if s.data is not None and s.data.streamed:
                    while not handed.wait(0.05):
                        if stop.is_set():
                            return
                    handed.clear()
            put(_END)
        except BaseException as exc:  # handed to the consumer, raised there
            put(exc)
        finally:
            close = getattr(stmts, "close", None)
            if close is not None:
                close()

    thread = threading.Thread(target=produce, name="dbbench-read-ahead", daemon=True)
    thread.start()
    try:
        while True:
            item = ahead.get()
            if item is _END:
                return
            if isinstance(item, BaseException):
                raise item
            assert isinstance(item, Statement)
            yield item
            if item.data is not None and item.data.streamed:
                handed.set()
    finally:
        stop.set()
        thread.join()
