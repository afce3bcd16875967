"""Tab-separated text that both PostgreSQL ``COPY … FROM STDIN`` and MySQL ``LOAD DATA`` read.

Both use the same defaults: tab between fields, newline between rows, ``\\N`` for NULL and
backslash escapes. Only binary values differ, so the caller passes the byte encoder. One converter
per column is chosen from the column's kind up front (the per-value work is the hot path).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

_ESCAPES = str.maketrans({"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"})
_SPECIAL = set("\\\t\n\r")


def _text(v) -> str:
    s = str(v)
    return s.translate(_ESCAPES) if not _SPECIAL.isdisjoint(s) else s


def _nullable(fn: Callable) -> Callable:
    return lambda v: "\\N" if v is None else fn(v)


def converters(
    kinds: list[str], encode_bytes: Callable[[bytes], str], nullable: list[bool]
) -> list[Callable]:
    by_kind: dict[str, Callable[[Any], str]] = {
        "bytes": encode_bytes,
        "datetime": lambda v: v.isoformat(" "),
        "bool": lambda v: "1" if v else "0",
        "int": str,
        "text": _text,
    }
    return [_nullable(by_kind[k]) if n else by_kind[k] for k, n in zip(kinds, nullable)]


def tsv(rows: list[tuple], kinds: list[str], encode_bytes: Callable[[bytes], str]) -> str:
    nullable = [any(row[i] is None for row in rows) for i in range(len(kinds))]
    convs = converters(kinds, encode_bytes, nullable)
    lines = ["\t".join([c(v) for c, v in zip(convs, row)]) for row in rows]
    lines.append("")
    return "\n".join(lines)
