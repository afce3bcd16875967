"""The fill's fan-out without a server: every reader gets every chunk in order at its own pace, the
producer held only by the fastest reader, a slow reader's backlog in the file, not in memory; and
the bulk-load text made a column at a time is the per-value converters' text, byte for byte."""

from __future__ import annotations

import threading
import time
from datetime import date, datetime

from dbbench.dialects import mysql, postgresql
from dbbench.dialects.encode import converters
from dbbench.volume.fanout import Fanout
from dbbench.volume.text import encoder


def test_a_slow_reader_does_not_hold_the_fast_one_and_its_backlog_goes_to_the_file():
    fan = Fanout(2, window=64, memory=256)
    chunks = [bytes([k % 251]) * 50 for k in range(200)]  # 10,000 bytes, far beyond the memory
    got: list[list[bytes]] = [[], []]

    def read(i: int, pause: float) -> None:
        while (item := fan.reader(i).get(timeout=5)) is not None:
            got[i].append(item)
            time.sleep(pause)

    fast = threading.Thread(target=read, args=(0, 0.0))
    fast.start()
    for c in chunks:
        assert fan.put([c, c], timeout=5)
    assert fan.put([None, None], timeout=5)
    fast.join(5)
    assert got[0] == chunks and not fast.is_alive()  # done before the slow reader read anything
    assert fan._held <= 256 and fan._end > 9_000  # the slow reader's backlog is in the file
    read(1, 0.0)
    assert got[1] == chunks
    fan.close()


def test_the_text_made_a_column_at_a_time_is_the_per_value_text():
    columns = [
        [1, None, -3],
        ["plain", "tab\there", None],
        ["back\\slash\nnew", "nul\x00inside\r", "x"],
        [datetime(2026, 1, 2, 3, 4, 5), datetime(2026, 1, 2, 3, 4, 5, 6), None],
        [date(2026, 1, 2), None, date(1999, 12, 31)],
        [True, False, None],
        ["1.50", "0.05", None],
        [b"\x00\xff", None, b""],
    ]
    kinds = ["int", "text", "text", "datetime", "date", "bool", "decimal", "bytes"]
    for d in (postgresql, mysql):
        convs = converters(
            [k if k in ("int", "bool", "datetime", "bytes") else "text" for k in kinds],
            d.encode_bytes,
            [True] * len(kinds),
        )
        rows = ["\t".join(c(v) for c, v in zip(convs, row)) for row in zip(*columns)]
        assert encoder(kinds, d.encode_bytes)(columns) == ("\n".join(rows) + "\n").encode()
    assert encoder(["int"], postgresql.encode_bytes)([[]]) == b""
