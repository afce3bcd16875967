"""Captured statements as shapes: normalised (literals and placeholders to ``:name`` parameters,
IN-lists folded), dbbench's own and the servers' catalog queries left out, merged by shape."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from dbbench.catalog.sqltext import drop_param_casts, normalize, shape_key, statement_kind, tokens

# What is never an application's query shape: the servers' catalogs (PostgreSQL's pg_* relations
# and functions, read by dbbench's role lookups, the drivers' type lookups and other sessions alike;
# information_schema, performance_schema, sys and mysql.*), dbbench's own statements (its marker
# table, its tagged lookups, its fingerprints), the servers' settings, plans of plans.
_NOT_APPLICATION = re.compile(
    r"\bpg_\w+|information_schema|performance_schema|\bsys\.\w+|\bmysql\.\w+|"
    r"\bto_reg(?:class|type|proc|role|namespace)\b|\bcurrent_setting\s*\(|::reg\w+|"
    r"dbbench_meta|/\* dbbench \*/|@@|"
    r"SHA2\(CONCAT_WS\(|sha256\(convert_to\(",  # the last two: dbbench's fingerprints
    re.I,
)
SAMPLES = 3  # tests and sources kept per shape


@dataclass
class Seen:
    """One shape as captured: its ``:name`` text, sample values, where it ran and how often."""

    sql: str
    key: str
    values: dict[str, Any]
    dialects: list[str] = field(default_factory=list)
    calls: int = 0
    sources: list[str] = field(default_factory=list)  # file:line (function)
    tests: list[str] = field(default_factory=list)
    function: str | None = None  # the function that issued it, when known

    def where(self) -> str:
        parts = self.sources[:1] + ([f"test {self.tests[0]}"] if self.tests else [])
        return ", ".join(parts)


def keep(sql: str) -> bool:
    """Whether ``sql`` is an application query worth a shape: a SELECT (or WITH) reading a table,
    not a catalog query of the server nor one of dbbench's own."""
    return (
        statement_kind(sql) in ("select", "with")
        and bool(re.search(r"\bFROM\b", sql, re.I))
        and not _NOT_APPLICATION.search(sql)
    )


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
        sql = (
            " ".join(_without_line_comments(drop_param_casts(norm.sql), dialect).split()).rstrip(";").strip()
        )
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
    return list(shapes.values())
