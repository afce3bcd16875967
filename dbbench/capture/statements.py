"""Captured statements as shapes: normalised (literals and placeholders to ``:name`` parameters,
IN-lists folded), dbbench's own and the servers' catalog queries left out, merged by shape."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from dbbench.catalog.entries import inserts_values
from dbbench.catalog.sqltext import (
    MAX_LIST,
    drop_param_casts,
    expand_lists,
    normalize,
    shape_key,
    statement_kind,
    tokens,
)

# What is never an application's query shape: the servers' catalogs (PostgreSQL's pg_* relations
# and functions, read by dbbench's role lookups, the drivers' type lookups and other sessions alike;
# information_schema, performance_schema, sys and mysql.*), dbbench's own statements (its marker
# table, its tagged lookups, the writes it runs marked ``/* dbbench sample … */`` / ``/* dbbench
# lock … */`` in a rolled-back transaction, its fingerprints), the servers' settings, plans of plans.
_NOT_APPLICATION = re.compile(
    r"\bpg_\w+|information_schema|performance_schema|\bsys\.\w+|\bmysql\.\w+|"
    r"\bto_reg(?:class|type|proc|role|namespace)\b|\bcurrent_setting\s*\(|::reg\w+|"
    r"dbbench_meta|/\* dbbench\b|@@|"
    r"SHA2\(CONCAT_WS\(|sha256\(convert_to\(",  # the last two: dbbench's fingerprints
    re.I,
)
SAMPLES = 3  # tests and sources kept per shape
# PostgreSQL's type names of more than one word, as a driver casts a parameter to them
# (SQLAlchemy: ``%(created_at)s::TIMESTAMP WITHOUT TIME ZONE``): the whole cast is dropped
_MULTIWORD_CAST = re.compile(
    r"(:[A-Za-z_]\w*)::(?:(?:TIMESTAMP|TIME)(?:\(\d+\))?\s+WITH(?:OUT)?\s+TIME\s+ZONE|DOUBLE\s+PRECISION|"
    r"(?:CHARACTER|BIT)\s+VARYING(?:\(\d+\))?)(?:\[\])?(?![\w(])",
    re.I,
)


@dataclass
class Seen:
    """One shape as captured: its ``:name`` text (IN-lists folded to one parameter), sample values
    (of a folded list: its first), the values of each folded IN-list (its longest seen, at most
    :data:`MAX_LIST`), where it ran and how often."""

    sql: str
    key: str
    values: dict[str, Any]
    lists: dict[str, list[Any]] = field(default_factory=dict)
    dialects: list[str] = field(default_factory=list)
    calls: int = 0
    sources: list[str] = field(default_factory=list)  # file:line (function)
    tests: list[str] = field(default_factory=list)
    function: str | None = None  # the function that issued it, when known

    def where(self) -> str:
        parts = self.sources[:1] + ([f"test {self.tests[0]}"] if self.tests else [])
        return ", ".join(parts)

    def expanded(self) -> tuple[str, dict[str, Any], dict[str, list[str]]]:
        """The text and values a check runs: each folded IN-list of more than one value written out
        with every value it had (:func:`dbbench.catalog.sqltext.expand_lists`), and the names of
        each list's parameters (for :meth:`take`)."""
        lists = {k: v for k, v in self.lists.items() if len(v) > 1}
        return expand_lists(self.sql, {**self.values, **lists})

    def take(self, params: dict[str, Any], groups: dict[str, list[str]], *, replace: bool = False) -> None:
        """Values given to the expanded text (``params``) kept as the shape's: a parameter's where it
        has none (``replace``: every one), each list's values into its list."""
        folded = set(self.values)
        for name, names in groups.items():
            items = [params.get(n) for n in names]
            if replace or any(v is None for v in self.lists.get(name, [None])):
                self.lists[name] = items
        for name, value in params.items():
            if name in folded and (replace or self.values.get(name) is None):
                self.values[name] = value

    def written(self) -> dict[str, Any]:
        """The sample values a captured block is written with: a folded list as its list."""
        out = {k: v for k, v in self.values.items() if v is not None}
        for name, items in self.lists.items():
            if len(items) > 1 and all(v is not None for v in items):
                out[name] = list(items)
        return out


def keep(sql: str) -> bool:
    """Whether ``sql`` is an application statement worth a shape, not a catalog query of the server
    nor one of dbbench's own:

    - a ``SELECT`` / ``WITH`` reading a table (a locking read, ``… FOR UPDATE`` / ``FOR SHARE``,
      included; a ``WITH`` whose statement writes, ``WITH d AS (DELETE … RETURNING …) …``, too);
    - an ``UPDATE … WHERE`` or a ``DELETE … WHERE`` (MySQL's multi-table forms too): its predicate
      is an access path, and what it locks is measured (:mod:`dbbench.measure.writes`). Without a
      ``WHERE`` it changes every row by design (a test's reset): nothing to check, left out;
    - an ``INSERT … SELECT … FROM`` (its ``SELECT`` reads a table);
    - a plain ``INSERT … VALUES``: no access path, but the indexes each row writes are its cost,
      which its check names (:func:`dbbench.measure.explain.run_shape`). Kept when it carries
      values to run with (:func:`merge` leaves out one read without them, from
      ``pg_stat_statements``).

    ``REPLACE``, ``MERGE``, ``TRUNCATE``, DDL and the rest are left out."""
    if _NOT_APPLICATION.search(sql):
        return False
    kind = statement_kind(sql)
    if kind in ("select", "with"):
        return bool(_FROM.search(sql)) or (kind == "with" and bool(_WRITE.search(sql)))
    if kind in ("update", "delete"):
        return bool(_WHERE.search(sql))
    return kind == "insert" and (inserts_values(sql) or bool(_FROM.search(sql)))


_FROM = re.compile(r"\bFROM\b", re.I)
_WHERE = re.compile(r"\bWHERE\b", re.I)
_WRITE = re.compile(r"\b(?:INSERT|UPDATE|DELETE)\b", re.I)


def _without_line_comments(sql: str, dialect: str) -> str:
    """``sql`` without its ``--`` comments (and MySQL's ``#`` ones): a shape is written on one line,
    where a comment running to the line's end would swallow the rest, its ``;`` included. Block
    comments stay (an optimizer hint ``/*+ … */`` changes the plan)."""
    return "".join(
        " "
        if kind == "comment" and (text.startswith("--") or (text.startswith("#") and dialect == "mysql"))
        else text
        for kind, text, _ in tokens(sql)
    )


def _without_casts(sql: str) -> str:
    """``sql`` without the casts a driver adds to its parameters (``:id::BIGINT``, ``:created_at::
    TIMESTAMP WITHOUT TIME ZONE``): the same shape, whatever the driver."""
    return drop_param_casts(_MULTIWORD_CAST.sub(r"\1", sql))


def _known(items: list[Any]) -> int:
    return sum(v is not None for v in items)


Found = tuple[str, str, Any, int, str | None, str | None, str | None]


def merge(found: Sequence[Found]) -> list[Seen]:
    """(dialect, statement text, its parameters, calls, source, function, test) -> one
    :class:`Seen` per shape, in order of first appearance."""
    shapes: dict[str, Seen] = {}
    for dialect, text, params, calls, source, function, test in found:
        if not keep(text):
            continue
        try:
            norm = normalize(text, params, literals=True, fold_in_lists=True)
        except (TypeError, ValueError):
            continue
        if norm.values and all(v is None for v in norm.values.values()) and inserts_values(text):
            continue  # an INSERT … VALUES without its values (pg_stat_statements): nothing to run
        sql = " ".join(_without_line_comments(_without_casts(norm.sql), dialect).split()).rstrip(";").strip()
        key = shape_key(sql)
        seen = shapes.get(key)
        if seen is None:
            seen = shapes[key] = Seen(sql, key, norm.values, function=function)
        seen.calls += calls
        for value, bag in ((dialect, seen.dialects), (source, seen.sources), (test, seen.tests)):
            if value and value not in bag and len(bag) < SAMPLES:
                bag.append(value)
        for name, value in norm.values.items():
            if seen.values.get(name) is None and value is not None:
                seen.values[name] = value
        for name, items in norm.lists.items():  # the longest list seen, its values known first
            items = items[:MAX_LIST]
            had = seen.lists.get(name)
            if had is None or (len(items), _known(items)) > (len(had), _known(had)):
                seen.lists[name] = items
    return list(shapes.values())
