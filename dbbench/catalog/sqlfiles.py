"""Annotated SQL files as a catalog: the ``-- name:`` blocks sqlc, aiosql, yesql, PugSQL and HugSQL
read, with optional ``-- dbbench:`` lines carrying what the plan must be.

::

    -- name: recent_orders
    -- A customer's ten most recent orders, newest first.
    -- dbbench: expect orders.ix_orders_customer_placed
    -- dbbench: forbid full_scan, sort
    -- dbbench: param customer_id = 42
    SELECT id, placed_at FROM orders WHERE customer_id = $1 ORDER BY placed_at DESC LIMIT 10;

A directory of such files (no ``.toml``; ``setup.sql`` / ``setup.<dialect>.sql`` and the ``setup/``
folder are the schema, not shapes) is a catalog wherever ``--catalog DIR`` is taken. Parameters may
be written ``:name``, ``%(name)s``, ``$1`` or ``?``; they become ``:name`` (named after the column
they are compared with). A parameter without a ``param`` line gets values drawn from the loaded
data (:mod:`dbbench.measure.probes`); a block without ``expect`` is measured and reported with the
expectation its plan proposes, which ``dbbench catalog accept`` writes down (:func:`accept`).

``-- dbbench:`` keys (a dialect first, ``-- dbbench: mysql expect …``, limits a line to it):
``expect TABLE.INDEX``, ``forbid full_scan, sort``, ``rows N``, ``growth bounded``,
``param NAME = VALUE`` (a TOML value; a list is the values of ``IN (:NAME)``), ``only postgresql``, ``probe none|values|generic``
(default both), ``cardinality TEXT``, ``source FILE:LINE (TEST)`` (written by capture),
``max-locked-rows N`` (a write's or locking read's bound on the rows it locks, every table
counted: the TOML entry's ``max_locked_rows``, :mod:`dbbench.measure.writes`).

A block may be a write: ``UPDATE … WHERE``, ``DELETE … WHERE``, ``INSERT … SELECT``, ``SELECT …
FOR UPDATE``, measured in a transaction that is rolled back, with what it locks; a plain
``INSERT … VALUES`` needs no ``expect`` (it has no access path; its check names the indexes it
writes).
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dbbench.catalog import files
from dbbench.catalog.features import normalize_forbid
from dbbench.catalog.sqltext import (
    QUERY_KINDS,
    expand_lists,
    line_of,
    list_problem,
    normalize,
    scan,
    statement_problems,
)
from dbbench.defaults import DIALECTS
from verdict.files import excerpt, loads_toml

# The name, then the suffixes aiosql / HugSQL add (^ $ ! < > * #), possessive: a line of a million
# suffix characters is read once, not once per character.
NAME_LINE = re.compile(
    r"^\s*--\s*(?::name\s+|name:\s*)((?:[\^$!<>*#]*+[^\s:\^$!<>*#]++)++|[\^$!<>*#])[\^$!<>*#]*+(?:\s.*)?$"
)
DIRECTIVE = re.compile(r"^\s*--\s*dbbench:\s*(.*?)\s*$")
KEYS = (
    "expect",
    "forbid",
    "rows",
    "growth",
    "param",
    "only",
    "probe",
    "cardinality",
    "source",
    "max-locked-rows",
)
PROBES = ("values", "generic")
GROWTH = ("bounded", "logarithmic", "linear")
SETUP_NAMES = {"setup.sql", *(f"setup.{d}.sql" for d in DIALECTS)}
MAX_NAME = 200  # characters of a shape's name (tables, JUnit test names and baselines show it whole)
CAPTURED = "-- Shapes captured by dbbench"  # the first line of a file dbbench's capture writes


@dataclass
class Block:
    """One ``-- name:`` block: its shape text (``:name`` parameters) and what its lines say.
    ``expect`` / ``forbid``: per dialect, ``None`` for both."""

    name: str
    path: Path
    line: int
    sql: str = ""
    description: str = ""
    expect: dict[str | None, tuple[str, str]] = field(default_factory=dict)
    forbid: dict[str | None, list[str]] = field(default_factory=dict)
    params: dict[str, Any] = field(default_factory=dict)
    rows: int | None = None
    growth: str | None = None
    cardinality: str = ""
    only: tuple[str, ...] = DIALECTS
    probes: tuple[str, ...] = PROBES
    source: str | None = None
    # a write's or locking read's bound on the rows it locks (TOML ``max_locked_rows``), per dialect
    max_locked_rows: dict[str | None, int] = field(default_factory=dict)

    def expected(self, dialect: str) -> tuple[str, str] | None:
        return self.expect.get(dialect) or self.expect.get(None)

    def forbidden(self, dialect: str) -> list[str]:
        return self.forbid.get(dialect, self.forbid.get(None, []))

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}"


def catalog_files(path: Path) -> list[Path]:
    """The annotated SQL files of a catalog directory (or the one file given), setup SQL excluded:
    every ``*.sql`` name, ordinary file or not (reading refuses what is not, :mod:`.files`)."""
    if not path.is_dir():
        return [path] if path.suffix == ".sql" else []
    return [p for p in sorted(path.glob("*.sql")) if p.name not in SETUP_NAMES]


def is_sql_catalog(path: Path) -> bool:
    """A ``.sql`` file, or a directory without ``.toml`` entries that holds ``.sql`` files besides
    its setup SQL (read by :func:`read`, which names what is wrong with each)."""
    if not path.is_dir():
        return path.suffix == ".sql"
    if any(path.glob("*.toml")):
        return False
    return bool(catalog_files(path))


def read(path: Path) -> tuple[list[Block], list[str]]:
    """Every block of the catalog at ``path`` and every problem found, one line each
    (``FILE:LINE: shape 'NAME': what``). Each file is read bounded (:mod:`dbbench.catalog.files`)."""
    blocks: list[Block] = []
    problems: list[str] = []
    found_files = catalog_files(path)
    if not found_files:
        problems.append(f"{path}: no annotated .sql files (-- name: blocks)")
    budget = files.Budget()
    for file in found_files:
        try:
            text = files.read_text(file, path if path.is_dir() else None, budget)
        except OSError as exc:
            problems.append(files.problem(exc))
            continue
        found = parse(text, file, problems)
        if not found:
            problems.append(f"{file}: no -- name: blocks")
        blocks += found
    seen: dict[str, Block] = {}
    for b in blocks:
        if b.name in seen:
            problems.append(
                f"{b.where}: shape {excerpt(b.name)!r}: name already used at line {seen[b.name].line}"
            )
        seen.setdefault(b.name, b)
    return blocks, problems


def parse(text: str, path: Path, problems: list[str]) -> list[Block]:
    """The blocks of one file's ``text``. Each block's SQL passes the catalog's one text check
    (:func:`dbbench.catalog.sqltext.statement_problems`, as TOML entries do), and a file cut while
    it was written (its last statement open, or without both its ``;`` and the final newline) is
    named at its last line."""
    blocks: list[Block] = []
    body: list[tuple[int, str]] = []  # (line number, line) of the block's SQL
    current: Block | None = None
    ends: list[bool | None] = []  # per block: its statement ends with ';' (None: it has problems)

    def close() -> None:
        if current is None:
            return
        raw = "\n".join(line for _, line in body)
        sql = raw.strip().rstrip(";").strip()
        if not sql:
            problems.append(f"{current.where}: shape {excerpt(current.name)!r}: no SQL after the name line")
            ends.append(None)
        else:
            found = statement_problems(raw, current.only, QUERY_KINDS)
            for offset, what in found:
                line, column = line_of(raw, offset)
                problems.append(
                    f"{path}:{body[line - 1][0]}: shape {excerpt(current.name)!r}: {what} (at column {column})"
                )
            ends.append(None if found else scan(raw, current.only[0]).terminated)
        current.sql = normalize(sql).sql
        _lists(current, problems)
        blocks.append(current)

    for n, line in enumerate(text.splitlines(), 1):
        if m := NAME_LINE.match(line):
            close()
            current, body = Block(m.group(1), path, n), []
            if len(current.name) > MAX_NAME:
                problems.append(
                    f"{path}:{n}: a name of {len(current.name):,} characters: a shape's name has at most {MAX_NAME}"
                )
        elif current is None:
            pass
        elif d := DIRECTIVE.match(line):
            _directive(current, d.group(1), n, problems)
        elif line.strip().startswith("--") and not body:
            current.description = (current.description + " " + line.strip()[2:].strip()).strip()
        else:
            body.append((n, line))
            continue
        if "\x00" in line:  # outside the SQL: in a name, dbbench line or description
            problems.append(f"{path}:{n}: holds a NUL byte (column {line.index(chr(0)) + 1})")
    close()
    if blocks and ends[-1] is False:
        cut = _cut(text, ends)
        if cut:
            last = body[-1][0] if body else blocks[-1].line
            problems.append(
                f"{path}:{last}: shape {excerpt(blocks[-1].name)!r}: {cut}: was the file cut while written?"
            )
    elif text and not text.endswith("\n") and text.startswith(CAPTURED):
        problems.append(
            f"{path}:{text.count(chr(10)) + 1}: the file ends without its final newline, which dbbench's "
            "capture always writes: was the file cut while written?"
        )
    return blocks


def _lists(block: Block, problems: list[str]) -> None:
    """A ``param NAME = [v1, v2, …]`` line gives an IN-list its values: ``IN (:NAME)`` is checked
    as ``IN (:NAME, :NAME_2, …)`` with one value each (:func:`dbbench.catalog.sqltext.expand_lists`)."""
    for name, value in block.params.items():
        if isinstance(value, dict):
            problems.append(
                f"{block.where}: shape {excerpt(block.name)!r}: param {excerpt(name)}: a table is not a value"
            )
        elif isinstance(value, list) and (why := list_problem(block.sql, name, value)):
            problems.append(f"{block.where}: shape {excerpt(block.name)!r}: param {excerpt(name)}: {why}")
    block.sql, block.params, _ = expand_lists(block.sql, block.params)


def _cut(text: str, ends: list[bool | None]) -> str | None:
    """Why the file's last statement, which has no ``;``, looks cut: the file ends without its
    final newline, or is one dbbench's capture wrote (which ends every statement with ``;``)."""
    if not text.endswith("\n"):
        return "the file ends in the statement, without its ';' or a final newline"
    if text.startswith(CAPTURED):
        return "the statement has no ';', which dbbench's capture always writes"
    return None


def _directive(block: Block, text: str, line: int, problems: list[str]) -> None:
    """One ``-- dbbench:`` line into ``block``."""

    def fail(what: str) -> None:
        problems.append(f"{block.path}:{line}: shape {excerpt(block.name)!r}: {what}")

    words = text.split(None, 1)
    dialect = None
    if words and words[0] in DIALECTS:
        dialect, words = words[0], (words[1].split(None, 1) if len(words) > 1 else [])
    if not words or words[0] not in KEYS:
        fail(f"unknown dbbench line {excerpt(text)!r} (keys: {', '.join(KEYS)})")
        return
    key, value = words[0], (words[1].strip() if len(words) > 1 else "")
    if key == "expect":
        table, dot, index = value.partition(".")
        if not dot or not table or not index or " " in value:
            fail(f"expect {excerpt(value)!r}: write TABLE.INDEX")
        else:
            block.expect[dialect] = (table, index)
    elif key == "forbid":
        try:
            block.forbid[dialect] = normalize_forbid([f.strip() for f in value.split(",") if f.strip()])
        except ValueError as exc:
            fail(f"forbid: {excerpt(str(exc), 200)}")
    elif key == "rows":
        if not value.isdigit():
            fail(f"rows {excerpt(value)!r}: a non-negative integer")
        else:
            block.rows = int(value)
    elif key == "growth":
        if value not in GROWTH:
            fail(f"growth {excerpt(value)!r}: one of {', '.join(GROWTH)}")
        block.growth = value if value in GROWTH else None
    elif key == "param":
        _param(block, value, fail)
    elif key == "only":
        chosen = tuple(d.strip() for d in value.split(","))
        if not chosen or any(d not in DIALECTS for d in chosen):
            fail(f"only {excerpt(value)!r}: one of {', '.join(DIALECTS)}")
        else:
            block.only = chosen
    elif key == "probe":
        probes = probe_words(value)
        if probes is None:
            fail(f"probe {excerpt(value)!r}: {PROBE_CHOICES}")
        else:
            block.probes = probes
    elif key == "cardinality":
        block.cardinality = value
    elif key == "max-locked-rows":
        number = value.replace(",", "").replace("_", "")
        if not number.isdigit():
            fail(
                f"max-locked-rows {excerpt(value)!r}: a non-negative integer (the most rows the statement may lock)"
            )
        else:
            block.max_locked_rows[dialect] = int(number)
    else:
        block.source = value


PROBE_CHOICES = f"none, or {', '.join(PROBES)}"


def probe_words(value: str) -> tuple[str, ...] | None:
    """The probes a ``probe`` line (or a TOML entry's ``probe``) asks for: ``none``, ``values``,
    ``generic`` or ``values, generic``; None when it names another."""
    chosen = tuple(p.strip() for p in value.split(",") if p.strip() and p.strip() != "none")
    return None if any(p not in PROBES for p in chosen) else chosen


def _param(block: Block, value: str, fail) -> None:
    name, eq, literal = value.partition("=")
    name = name.strip().lstrip(":")
    if not eq or not re.fullmatch(r"[A-Za-z_]\w*", name):
        fail(f"param {excerpt(value)!r}: write NAME = VALUE")
        return
    try:
        parsed = loads_toml(f"v = {literal.strip()}")["v"]
    except tomllib.TOMLDecodeError:
        fail(
            f'param {excerpt(name)}: {excerpt(literal.strip())!r} is not a value (42, 4.2, "text", true, 2024-01-01)'
        )
        return
    block.params[name] = parsed


# -- writing -------------------------------------------------------------------------------------
def render(block: Block) -> str:
    """A block as an annotated SQL file holds it."""
    lines = [f"-- name: {block.name}"]
    if block.description:
        lines.append(f"-- {block.description}")
    if block.source:
        lines.append(f"-- dbbench: source {block.source}")
    if tuple(block.only) != DIALECTS:
        lines.append(f"-- dbbench: only {', '.join(block.only)}")
    lines += directive_lines(block)
    for name, value in block.params.items():
        if value is not None:
            lines.append(f"-- dbbench: param {name} = {toml_value(value)}")
    if tuple(block.probes) != PROBES:
        lines.append(f"-- dbbench: probe {', '.join(block.probes) or 'none'}")
    return "\n".join(lines) + "\n" + block.sql.strip() + ";\n"


def directive_lines(block: Block) -> list[str]:
    """The ``expect`` / ``forbid`` / ``rows`` lines of ``block`` (one for both dialects when they agree)."""
    out = []
    for key, table in (("expect", block.expect), ("forbid", block.forbid)):
        for dialect, value in sorted(table.items(), key=lambda kv: kv[0] or ""):
            text = f"{value[0]}.{value[1]}" if key == "expect" else ", ".join(value)
            if key == "forbid" and not text:
                continue
            out.append(f"-- dbbench: {dialect + ' ' if dialect else ''}{key} {text}")
    if block.rows is not None:
        out.append(f"-- dbbench: rows {block.rows}")
    if block.growth:
        out.append(f"-- dbbench: growth {block.growth}")
    for dialect, bound in sorted(block.max_locked_rows.items(), key=lambda kv: kv[0] or ""):
        out.append(f"-- dbbench: {dialect + ' ' if dialect else ''}max-locked-rows {bound}")
    return out


def toml_value(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if hasattr(value, "isoformat"):
        return value.isoformat()
    text = str(value).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{text}"'


def inserted(text: str, name: str, proposed: Block) -> str:
    """``text`` (an annotated SQL file's) with ``proposed``'s expect / forbid lines right after
    block ``name``'s name line; the caller writes it (``dbbench catalog accept``: every file
    checked before any is replaced, each atomically)."""
    lines = text.splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if (m := NAME_LINE.match(line)) and m.group(1) == name)
    if not lines[at].endswith("\n"):
        lines[at] += "\n"
    new = [line + "\n" for line in directive_lines(proposed)]
    return "".join(lines[: at + 1] + new + lines[at + 1 :])
