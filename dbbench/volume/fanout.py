"""Chunks made once, read by every server's loader at its own pace, in bounded memory.

One producer appends each chunk (one payload per reader: the same bytes object when the dialects'
texts are equal) and each loader reads them in order with its own cursor. The producer runs at most
``window`` bytes ahead of the *fastest* reader; a slower reader's backlog beyond ``memory`` bytes
goes to a temporary file and is read back from it. So the fastest server loads at its own speed
(not held to the slowest one's, as with one short queue per server), memory stays flat in the row
count, and disk holds only the slowest server's lag.
"""

from __future__ import annotations

import os
import queue
import tempfile
import threading
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import IO

WINDOW = 4 << 20  # bytes the producer runs ahead of the fastest reader
MEMORY = 64 << 20  # bytes of unread chunks kept in memory; the newest beyond it go to the file


@dataclass
class _Entry:
    payloads: list[bytes | None]  # per reader (None: the end of a stream)
    where: list[tuple[int, int] | None] = field(default_factory=list)  # per reader: on disk (offset, size)
    size: int = 0  # bytes held in memory


class Fanout:
    """``put(payloads)`` from the producer; ``reader(i).get(timeout)`` from reader ``i`` (raises
    :class:`queue.Empty` on timeout, as a :class:`queue.Queue` does). ``close()`` drops the file."""

    def __init__(self, readers: int, *, window: int = WINDOW, memory: int = MEMORY) -> None:
        self._n, self._window, self._memory = readers, window, memory
        self._entries: deque[_Entry] = deque()
        self._base = 0  # index of self._entries[0]
        self._cursors = [0] * readers
        self._backlog = [0] * readers  # bytes each reader has not read yet
        self._held = 0  # bytes of payloads in memory
        self._file: IO[bytes] | None = None
        self._end = 0
        self._cond = threading.Condition()

    def put(self, payloads: Sequence[bytes | None], timeout: float | None = None) -> bool:
        """Append one chunk (``payloads[i]`` for reader ``i``); False when ``timeout`` passed with the
        fastest reader still ``window`` bytes behind (nothing appended)."""
        sizes = [len(p) if p is not None else 0 for p in payloads]
        with self._cond:
            if not self._cond.wait_for(lambda: min(self._backlog) < self._window, timeout):
                return False
            entry = _Entry(list(payloads), [None] * self._n)
            unique = {id(p): p for p in payloads if p}
            size = sum(len(p) for p in unique.values())
            if self._held + size > self._memory and size:
                self._spill(entry, unique)
            else:
                entry.size = size
                self._held += size
            self._entries.append(entry)
            for i, s in enumerate(sizes):
                self._backlog[i] += s
            self._cond.notify_all()
        return True

    def _spill(self, entry: _Entry, unique: dict[int, bytes]) -> None:
        if self._file is None:
            self._file = tempfile.TemporaryFile(prefix="dbbench-fill-")  # noqa: SIM115 (closed by close())
        fd = self._file.fileno()
        at: dict[int, tuple[int, int]] = {}
        for key, data in unique.items():
            os.pwrite(fd, data, self._end)
            at[key] = (self._end, len(data))
            self._end += len(data)
        entry.where = [at.get(id(p)) if p else None for p in entry.payloads]
        entry.payloads = [b"" if p else p for p in entry.payloads]

    def _get(self, i: int, timeout: float | None) -> bytes | None:
        with self._cond:
            if not self._cond.wait_for(lambda: self._cursors[i] < self._base + len(self._entries), timeout):
                raise queue.Empty
            entry = self._entries[self._cursors[i] - self._base]
            data, where = entry.payloads[i], entry.where[i]
            self._cursors[i] += 1
            while self._entries and min(self._cursors) > self._base:  # read by every reader
                self._held -= self._entries.popleft().size
                self._base += 1
        if where is not None:
            assert self._file is not None
            data = os.pread(self._file.fileno(), where[1], where[0])
        with self._cond:
            self._backlog[i] -= len(data) if data is not None else 0
            self._cond.notify_all()
        return data

    def reader(self, i: int) -> _Reader:
        return _Reader(self, i)

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


@dataclass
class _Reader:
    fanout: Fanout
    index: int

    def get(self, block: bool = True, timeout: float | None = None) -> bytes | None:
        """The reader's next chunk (:class:`queue.Empty` after ``timeout`` seconds without one)."""
        return self.fanout._get(self.index, timeout if block else 0)
