"""A chunk of generated rows as bulk-load text, a column at a time.

The text is :mod:`dbbench.dialects.encode`'s (tab between fields, newline between rows, ``\\N``
for NULL, backslash escapes; the same for ``COPY`` and ``LOAD DATA`` but for binary values), made
with as little per-value Python as the values allow: numbers, dates and timestamps through ``str``
over the whole column; text escaped with four ``str.replace`` over the column joined, and only when
some value needs it; NULLs put back in one pass where a column has them. The rows are then joined
by C loops (``zip``, ``str.join``) and encoded once. The output is byte for byte the per-value
converters' (:func:`dbbench.dialects.encode.converters`), which still encode any other kind.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dbbench.dialects.encode import converters

NULL = "\\N"
_SEP = "\x00"  # joins a column's strings to escape them at once (no text value holds it)
_STR = {"int", "date", "datetime"}  # str() is the bulk-load text (a datetime's str is isoformat(" "))
_TEXT = {"text", "decimal"}  # str() then escaped
_BY_KIND = {"bool": "bool", "bytes": "bytes", "datetime": "datetime", "int": "int"}


def _escaped(values: list[str], one: Callable[[Any], str]) -> list[str]:
    """``values`` escaped: untouched when no value holds a backslash, tab, newline or carriage
    return; else the column joined, escaped and split again (``one`` per value if a value holds the
    separator)."""
    joined = _SEP.join(values)
    if "\\" not in joined and "\t" not in joined and "\n" not in joined and "\r" not in joined:
        return values
    if joined.count(_SEP) != len(values) - 1:
        return list(map(one, values))
    joined = joined.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")
    return joined.split(_SEP)


def _column(kind: str, values: list[Any], one: Callable[[Any], str]) -> list[str]:
    """One column's values, none of them None, as text."""
    if kind in _STR:
        return list(map(str, values))
    if kind in _TEXT:
        return _escaped(list(map(str, values)), one)
    return list(map(one, values))


def encoder(
    kinds: list[str], encode_bytes: Callable[[bytes], str], native_binary: bool = False
) -> Callable[[list[list[Any]]], bytes]:
    """Columns of values of ``kinds`` -> the rows as bulk-load text (``encode_bytes``: one binary
    value as the dialect reads it), NULL where None. A ``native`` value
    (:class:`dbbench.volume.generators.Native`) is its bytes where ``native_binary`` (MySQL's
    geometry and BIT), else its text."""
    natives = [k == "native" for k in kinds]
    kinds = [("bytes" if native_binary else "text") if n else k for k, n in zip(kinds, natives)]
    ones = converters([_BY_KIND.get(k, "text") for k in kinds], encode_bytes, [False] * len(kinds))

    def spelled(values: list[Any]) -> list[Any]:
        if native_binary:
            return [None if v is None else v.binary for v in values]
        return [None if v is None else v.text for v in values]

    def encode(columns: list[list[Any]]) -> bytes:
        if not columns or not columns[0]:
            return b""
        text = []
        for kind, one, values, native in zip(kinds, ones, columns, natives):
            if native:
                values = spelled(values)
            if None not in values:
                text.append(_column(kind, values, one))
                continue
            made = iter(_column(kind, [v for v in values if v is not None], one))
            text.append([NULL if v is None else next(made) for v in values])
        return ("\n".join(map("\t".join, zip(*text))) + "\n").encode()

    return encode
