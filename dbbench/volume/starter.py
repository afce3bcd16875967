"""``dbbench init``: a starter data spec from a live schema, one that fills it without edits.

Each column gets a generator from what the schema says about it, in this order: a generated column
is left to the server; a single-column foreign key draws its parent uniformly (a composite one
follows its first column); an enum, a SET, or a check constraint listing values (``IN (…)``, a
list partition's bound) is a choice of those values; a check comparing it with another column
(``end_date >= start_date``) copies that column plus a step; a check on its length
(``char_length(code) = 3``) gives zero-padded numbers of that length; a key column (primary or
unique, an expression index's column included) is a sequence, or unique faker text by name
(``email``); ``BETWEEN`` / ``>`` / ``<`` bounds in checks (a domain's and a range partition's
included) bound numbers, dates and timestamps, within the type's own range (``tinyint``, ``year``,
unsigned); otherwise the type and the name decide (``email`` → faker email, ``name`` → faker name,
numeric(p, s) → decimal with s digits, timestamps over the last years, geometry and bit strings in
each dialect's spelling, a BINARY(14) named like a time → ``%Y%m%d%H%M%S`` text). A key of several
columns gets one unique column, or, when all are foreign keys, walks the parents' pairs in turn; a
column made unique that has too few values (a date, a small or bounded integer) beside a foreign key
of the key is the row's rank within its parent, the foreign key walking its parents in turn
(salaries' ``PRIMARY KEY (emp_no, from_date)``).

A CHECK it cannot read (what is left of it once the readers took their parts, :func:`_unread`)
leaves each column it names, keys and foreign keys apart, to its default, else NULL where nullable
(a CHECK that is NULL passes), else to the values the type gives, with a comment naming the check.
A JSON column gets ``[]`` when a check asks for an array (``jsonb_typeof(args) = 'array'``).

Where it cannot fill a column sensibly it says so in a comment beside it and picks a value that
loads: NULL where the column is nullable, else the column's default (the column is left out),
else a constant of the type. A table an insert trigger of another table fills (sakila's
``film_text``) is left to the trigger, and a partitioned table to its partitions, each with a
comment. Row counts: the table's current rows, else ``:scale``, at most what its integer key's type
holds (``min(:scale, 255)`` for a ``tinyint unsigned`` key). Foreign-key order and cycles are
resolved when the spec is used (:mod:`dbbench.volume.recipe`).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import tomlkit
from tomlkit.items import InlineTable

from dbbench.volume.limits import MAX_SCALE
from dbbench.volume.schema import Column, Table
from dbbench.volume.spec import DEFAULT_LOCALE
from verdict.files import excerpt

_INTEGERS = {"smallint", "integer", "int", "bigint", "tinyint", "mediumint"}
_INT_MAX = {"tinyint": 2**7 - 1, "smallint": 2**15 - 1, "mediumint": 2**23 - 1, "int": 2**31 - 1}
_INT_MAX |= {"integer": 2**31 - 1, "bigint": 2**63 - 1}
_DECIMALS = {"numeric", "decimal"}
_FLOATS = {"real", "double precision", "double", "float", "money"}
_TEXT = {"character varying", "varchar", "character", "char", "text", "tinytext", "mediumtext", "longtext"}
_TEXT |= {"tsvector", "tsquery", "xml", '"char"', "name", "citext"}  # text the type reads as it is
_DATES = {"date"}
_TIMES = {"timestamp without time zone", "timestamp with time zone", "timestamp", "datetime"}
_CLOCK = {"time", "time without time zone", "time with time zone"}
_JSON = {"json", "jsonb"}
_BYTES = {"bytea", "binary", "varbinary", "blob", "tinyblob", "mediumblob", "longblob"}
_BITS = {"bit", "bit varying"}
# geometry types (PostgreSQL's built-in ones, MySQL's) -> the geometry generator's shape
_GEOMETRY = {"point": "point", "polygon": "polygon", "box": "box", "circle": "circle", "lseg": "lseg"}
_GEOMETRY |= {"line": "line", "path": "path", "linestring": "linestring", "geometry": "point"}
_MULTI = {"multipoint", "multilinestring", "multipolygon", "geomcollection", "geometrycollection"}
_FAKER_TYPES: dict[str, tuple[str, dict[str, Any]]] = {
    "inet": ("ipv4", {}),
    "cidr": ("ipv4", {"network": True}),
    "macaddr": ("mac_address", {}),
    "macaddr8": ("mac_address", {}),
}
_CONSTANTS = {  # a value each of these types reads
    "interval": "1 day",
    "int4range": "[1,10)",
    "int8range": "[1,10)",
    "numrange": "[1,10)",
    "daterange": "[2024-01-01,2025-01-01)",
    "tsrange": "[2024-01-01,2025-01-01)",
    "tstzrange": "[2024-01-01,2025-01-01)",
}
# column name (or its last word) -> faker provider and arguments
_FAKER: list[tuple[str, str, dict[str, Any]]] = [
    (r"e_?mail", "email", {}),
    (r"first_?name", "first_name", {}),
    (r"last_?name|surname", "last_name", {}),
    (r"(user_?)?name|full_?name|customer|author", "name", {}),
    (r"company|organi[sz]ation|seller|vendor", "company", {}),
    (r"city|town", "city", {}),
    (r"country", "country", {}),
    (r"address|street", "street_address", {}),
    (r"phone|mobile", "phone_number", {}),
    (r"url|website|link", "url", {}),
    (r"title|subject|headline", "sentence", {"nb_words": 4}),
    (r"body|description|comment|text|note|notes|content|summary|bio", "text", {"max_nb_chars": 200}),
    (r"zip|postcode|postal_?code", "postcode", {}),
    (r"user_?name|login|handle", "user_name", {}),
]
_TIME_NAME = re.compile(r"(time|timestamp|touched|expir\w*|updated|date|_ts|at)$", re.I)
_SINCE, _UNTIL = "2022-01-01T00:00:00", "2026-01-01T00:00:00"
_COMPARE = {">": "<", ">=": "<=", "<": ">", "<=": ">="}


@dataclass
class _Choice:
    gen: dict[str, Any]  # empty: the column is left out (its default)
    note: str = ""


def _plain(text: str) -> str:
    """A check's text with names unquoted, casts left out (``(x)::text`` → ``(x)``), MySQL's ``-(50)``
    as ``-50``, and every string literal spelled as PostgreSQL does (``'o''b'``). MySQL's
    check_clause (its names in backticks) escapes its quotes and backslashes once more, and its
    literals take backslash escapes."""
    mysql = "`" in text
    if mysql:
        text = re.sub(r"\\(.)", r"\1", text, flags=re.S)
    literal = r"'(?:[^'\\]|''|\\.)*'" if mysql else r"'(?:[^']|'')*'"
    out: list[str] = []
    at = 0
    for m in re.finditer(literal, text, re.S):
        out.append(_bare(text[at : m.start()]))
        body = m.group()[1:-1]
        if mysql:
            body = re.sub(r"''|\\(.)", lambda e: "'" if e.group() == "''" else e.group(1), body, flags=re.S)
        else:
            body = body.replace("''", "'")
        out.append("'" + body.replace("'", "''") + "'")
        at = m.end()
    out.append(_bare(text[at:]))
    return "".join(out)


def _bare(text: str) -> str:
    text = text.replace("`", "").replace('"', "")
    text = re.sub(r"-\((\d+(?:\.\d+)?)\)", r"-\1", text)
    return re.sub(r"::[\w ]+(?:\[\])?", "", text)


def _values_of_check(column: str, table: Table) -> list[Any] | None:
    """The values a check constraint allows for ``column`` (``IN (…)`` / ``= ANY (ARRAY[…])``)."""
    c = re.escape(column)
    for k in table.of("check"):
        text = _plain(k.definition)
        m = re.search(
            rf"(?<![\w.]){c}\)?\s*(?:IN\s*\(|=\s*ANY\s*\(\s*(?:ARRAY)?\s*[\[(])([^\])]*)", text, re.I
        )
        if m is None:  # one value: col = 'v' (a list partition of one value), col = 3; not f(col) = 3
            m = next(
                (
                    one
                    for one in re.finditer(
                        rf"(?<![\w.<>!]){c}\)?\s*=\s*((?:_\w+)?'(?:[^']|'')*'|\(?-?\d+\)?(?![\w.]))", text
                    )
                    if not re.search(r"\w\(\(?$", text[: one.start()])  # f(col) = 3, f((col)) = 3
                ),
                None,
            )
        if m is None:
            continue
        strings = re.findall(r"(?:_\w+)?'((?:[^']|'')*)'", m.group(1))
        if strings:
            return [s.replace("''", "'") for s in strings]
        numbers = re.findall(r"(?<![\w.])(-?\d+)(?![\w.])", m.group(1))
        if numbers:
            return sorted({int(n) for n in numbers})
    return None


def _bounds_of_check(column: str, table: Table, step: float = 1) -> tuple[float | None, float | None]:
    """(lower, upper) bounds the check constraints put on ``column`` (BETWEEN, >, >=, <, <=; a
    strict one moved by ``step``, the type's smallest difference)."""
    lo: float | None = None
    hi: float | None = None
    c = re.escape(column)
    num = r"\(?'?(-?\d+(?:\.\d+)?)'?\)?(?![\d.:'-])"  # 5, (5), '-50' (PostgreSQL's cast number)
    for k in table.of("check"):
        t = _plain(k.definition)
        if m := re.search(rf"(?<![\w.]){c}\)?\s+BETWEEN\s+{num}\s+AND\s+{num}", t, re.I):
            lo, hi = _tighter(lo, float(m.group(1)), max), _tighter(hi, float(m.group(2)), min)
        for m in re.finditer(rf"(?<![\w.]){c}\)?\s*(>=|>|<=|<)\s*{num}", t):
            op, v = m.group(1), float(m.group(2))
            if op.startswith(">"):
                lo = _tighter(lo, v + (step if op == ">" else 0), max)
            else:
                hi = _tighter(hi, v - (step if op == "<" else 0), min)
    return lo, hi


def _tighter(old, new, pick):
    return new if old is None else pick(old, new)


def _moments_of_check(column: str, table: Table) -> tuple[datetime | None, datetime | None, bool]:
    """(lower, upper, upper exclusive) bounds the check constraints put on a date or timestamp
    ``column`` (``>= '2007-01-01'``, a range partition's bound)."""
    lo: datetime | None = None
    hi: datetime | None = None
    strict = False
    c = re.escape(column)
    for k in table.of("check"):
        for m in re.finditer(
            rf"(?<![\w.]){c}\)?\s*(>=|>|<=|<)\s*\(?(?:_\w+)?'([^']+)'", _plain(k.definition)
        ):
            try:
                v = datetime.fromisoformat(m.group(2).strip())
            except ValueError:
                continue
            if m.group(1).startswith(">"):
                lo = _tighter(lo, v + timedelta(seconds=1 if m.group(1) == ">" else 0), max)
            elif hi is None or v <= hi:
                hi, strict = v, m.group(1) == "<"
    return lo, hi, strict


def _compared_with(column: str, table: Table) -> str | None:
    """The other column of the table when a check says ``column`` >= (or >) it."""
    c = re.escape(column)
    for k in table.of("check"):
        t = _plain(k.definition)
        for m in re.finditer(rf"(?<![\w.]){c}\)?\s*(>=|>|<=|<)\s*\(?(\w+)\b(?!\s*\()", t):
            other = m.group(2)
            if other in table.columns and other != column and m.group(1).startswith(">"):
                return other
        for m in re.finditer(rf"(?<![\w.])(\w+)\)?\s*(>=|>|<=|<)\s*\(?{c}\b(?!\s*\()", t):
            other = m.group(1)
            if other in table.columns and other != column and m.group(2).startswith("<"):
                return other
    return None


def _length_of_check(column: str, table: Table) -> tuple[int, bool] | None:
    """(length, exactly) when a check bounds ``column``'s length from below (``char_length(c) = 3``)."""
    c = re.escape(column)
    for k in table.of("check"):
        t = _plain(k.definition)
        fn = r"(?:char_length|character_length|length|octet_length|len)"
        if m := re.search(rf"{fn}\s*\(\s*\(?\s*{c}\s*\)?\s*\)\s*(=|>=|>)\s*\(?(\d+)", t, re.I):
            n = int(m.group(2)) + (1 if m.group(1) == ">" else 0)
            return n, m.group(1) == "="
    return None


# an array's element type -> a value of it (an array of one value: a check may want it not empty)
_ARRAY_ELEMENT = dict.fromkeys(_INTEGERS | _DECIMALS | _FLOATS, "1") | dict.fromkeys(
    _TEXT - {"tsvector", "tsquery", "xml"}, "a"
)
_ARRAY_ELEMENT |= {"boolean": "true", "date": "2024-01-01", "uuid": "00000000-0000-4000-8000-000000000000"}
_JSON_VALUES = {"array": "[]", "object": "{}", "string": '""', "number": "0", "boolean": "false"}
_JSON_TYPE = r"(?:jsonb_typeof|json_typeof|json_type)"


def _json_of_check(column: str, table: Table) -> str | None:
    """The JSON type a check asks of ``column`` (``jsonb_typeof(args) = 'array'``, MySQL's
    ``json_type(args) = 'ARRAY'``), lower case."""
    c = re.escape(column)
    for k in table.of("check"):
        if m := re.search(
            rf"{_JSON_TYPE}\s*\(\s*\(?\s*{c}\s*\)?\s*\)\s*=\s*(?:_\w+)?'(\w+)'", _plain(k.definition), re.I
        ):
            return m.group(1).lower()
    return None


def _max_length_of_check(column: str, table: Table) -> int | None:
    """The longest text a check lets ``column`` hold (``char_length(queue) <= 100``)."""
    c = re.escape(column)
    top: int | None = None
    fn = r"(?:char_length|character_length|length|octet_length|len)"
    for k in table.of("check"):
        for m in re.finditer(
            rf"{fn}\s*\(\s*\(?\s*{c}\s*\)?\s*\)\s*(<=|<|=)\s*\(?(\d+)", _plain(k.definition), re.I
        ):
            n = int(m.group(2)) - (1 if m.group(1) == "<" else 0)
            top = _tighter(top, n, min)
    return top


# What the readers above read, as patterns over a check's plain text (any column as ``(\w+)``):
# what is left of a check once they are taken out names the columns the starter cannot read it for.
_NUM = r"\(?'?-?\d+(?:\.\d+)?'?\)?"
_STR = r"\(?(?:_\w+)?'(?:[^']|'')*'"
_LEN_FN = r"(?:char_length|character_length|length|octet_length|len)"
_READ = [
    re.compile(p, re.I)
    for p in (
        rf"{_JSON_TYPE}\s*\(\s*\(?\s*(\w+)\s*\)?\s*\)\s*=\s*{_STR}",
        rf"{_LEN_FN}\s*\(\s*\(?\s*(\w+)\s*\)?\s*\)\s*(?:=|>=|>|<=|<)\s*\(?\d+\)?",
        r"(\w+)\)?\s*IN\s*\([^)]*\)",
        r"(\w+)\)?\s*=\s*ANY\s*\(+\s*(?:ARRAY\s*)?[\[(][^\])]*[\])]",
        rf"(\w+)\)?\s+BETWEEN\s+{_NUM}\s+AND\s+{_NUM}",
        rf"(\w+)\)?\s*=\s*(?:{_STR}|\(?-?\d+(?:\.\d+)?\)?(?![\w.]))",
        rf"(\w+)\)?\s*(?:>=|>|<=|<)\s*(?:{_NUM}(?![\d.:'-])|\(?(?:_\w+)?'\d{{4}}-[^']*')",
        r"(\w+)\)?\s*(?:>=|>|<=|<)\s*\(?(\w+)\b(?!\s*\()",
    )
]
_KEYWORDS = {"AND", "OR", "NOT", "CHECK", "CASE", "WHEN", "THEN", "ELSE", "IS", "IN"}  # not functions
_NULL_AWARE = re.compile(
    r"\bIS\s+(?:NOT\s+)?(?:NULL|DISTINCT|TRUE|FALSE|UNKNOWN)\b"
    r"|\b(?:coalesce|ifnull|nullif|isnull|nvl|num_nulls|num_nonnulls)\s*\(",
    re.I,
)


def _unread(table: Table) -> dict[str, list[tuple[str, bool]]]:
    """Per column, the checks that name it in a part the starter cannot read (``jsonb_typeof(data)
    = 'object' AND NOT (data ? 'tags')``, ``tier ~ '^[a-c]+$'``, ``level % 5 = 0``), each with
    whether the check reads NULL itself (``IS NULL``, ``coalesce``: a NULL need not pass it).
    A partition's bound is left out: the readers read it whole."""
    out: dict[str, list[tuple[str, bool]]] = {}
    for k in table.of("check"):
        if k.name.endswith(" partition"):
            continue
        text = re.sub(r"^\s*CHECK\s*", "", _plain(k.definition), flags=re.I)  # no function of its own
        for pattern in _READ:
            text = pattern.sub(lambda m: _taken(m, table), text)
        left = re.sub(r"'(?:[^']|'')*'", "''", text)  # a literal names no column
        for name in _words(left, table.columns):
            out.setdefault(name, []).append((k.name, bool(_NULL_AWARE.search(left))))
    return out


def _taken(m: re.Match[str], table: Table) -> str:
    """A reader's match taken out of a check, unless its column is no column of the table, or the
    argument of a function the pattern does not read (``f(x) = 3``, ``f(x, y) > 2``)."""
    names = [g for g in m.groups() if g is not None]
    if any(n not in table.columns for n in names):
        return m.group()
    if m.re.pattern.startswith(r"(\w+)"):  # the column first: not f(x) = 3, x + y > 2, x > y * 2
        before = m.string[: m.start()]
        call = re.search(r"(\w+)\s*\(\s*\(?\s*$", before)
        if (call and call.group(1).upper() not in _KEYWORDS) or re.search(r"[,%*/+-]\s*\(?\s*$", before):
            return m.group()
        if re.match(r"\s*[,%*/+-]", m.string[m.end() :]):
            return m.group()
    return " "


def _words(text: str, names) -> list[str]:
    return [n for n in names if re.search(rf"(?<![\w$]){re.escape(n)}(?![\w$])", text)]


def _faker_for(name: str) -> tuple[str, dict[str, Any]] | None:
    words = name.lower()
    for pattern, provider, args in _FAKER:
        if re.fullmatch(rf"(\w+_)?(?:{pattern})", words):
            return provider, args
    return None


def _int_range(col: Column) -> tuple[int, int]:
    """The values an integer column's type holds (``tinyint unsigned``: 0 to 255; ``year``: 1901
    to 2155)."""
    if col.type == "year":
        return 1901, 2155
    top = _INT_MAX.get(col.type, 2**63 - 1)
    if "unsigned" in col.column_type.lower():
        return 0, 2 * top + 1
    return -top - 1, top


def _labels(column_type: str) -> list[str]:
    """The labels of ``set('a','b')`` (or ``enum(…)``)."""
    inner = column_type.split("(", 1)[-1]
    return [m.replace("''", "'") for m in re.findall(r"'((?:[^']|'')*)'", inner)]


def _by_type(col: Column, table: Table, unique: bool) -> _Choice:
    t = col.type
    if t in _INTEGERS or t == "year":
        tmin, tmax = _int_range(col)
        if unique:
            return _Choice({"gen": "sequence"})
        lo, hi = _bounds_of_check(col.name, table)
        if t == "year":
            low, top = 1990, 2025
        else:
            low, top = 1, {"tinyint": 100, "smallint": 1000}.get(t, 1_000_000)
        lo = max(tmin, int(lo)) if lo is not None else max(tmin, min(low, int(hi) if hi is not None else low))
        hi = min(tmax, int(hi)) if hi is not None else max(lo, min(tmax, top))
        return _Choice({"gen": "int", "min": int(lo), "max": int(hi)})
    if t in _DECIMALS or t in _FLOATS:
        digits = col.scale if t in _DECIMALS and col.scale is not None else 2
        lo, hi = _bounds_of_check(col.name, table, 10**-digits)
        whole = (col.precision or 12) - digits if t in _DECIMALS else 12
        top = 10**whole - 10**-digits if whole < 5 else 10_000
        gen: dict[str, Any] = {
            "gen": "decimal",
            "min": _number(lo if lo is not None else 0 if hi is None or hi >= 0 else hi - 100),
            "max": _number(hi if hi is not None else max(top, lo + 100) if lo is not None else top),
            "digits": digits,
        }
        if unique:
            gen["unique"] = True
        return _Choice(gen)
    if t == "boolean":
        return _Choice({"gen": "bool"})
    if t in _DATES or t in _TIMES:
        return _moments(col, table, unique)
    if t in _CLOCK:
        return _Choice({"gen": "faker", "provider": "time"})
    if t == "uuid":
        return _Choice({"gen": "uuid"})
    if t in _JSON:
        kind = _json_of_check(col.name, table) or "object"
        value = _JSON_VALUES.get(kind, "{}")
        return _Choice({"gen": "const", "value": value}, f"an empty JSON {kind}: give it a generator")
    if t == "set":
        labels = _labels(col.column_type)
        if labels:
            return _Choice({"gen": "choice", "values": labels}, "one label of the set in each row")
    if t in _BITS:
        m = re.search(r"\((\d+)\)", col.column_type)
        length = min(int(m.group(1)) if m else 1, 64)
        return _Choice({"gen": "bits", "length": length})
    if t in _GEOMETRY or t in _MULTI:
        gen = {
            "gen": "geometry",
            "shape": _GEOMETRY.get(t, "geometrycollection" if t == "geomcollection" else t),
        }
        if col.srid:
            gen["srid"] = col.srid
        return _Choice(gen)
    if t in ("inet", "cidr") and unique:  # faker's pool repeats; numbered it reads as no address
        return _Choice({"gen": "ip", "unique": True})
    if t in _FAKER_TYPES:
        provider, args = _FAKER_TYPES[t]
        return _Choice({"gen": "faker", "provider": provider, **({"args": args} if args else {})})
    if t in _CONSTANTS:
        return _Choice({"gen": "const", "value": _CONSTANTS[t]}, f"type {t}: the same value in every row")
    if t == "array":
        if col.nullable:
            return _fallback(col, "an array")
        element = _ARRAY_ELEMENT.get(col.column_type.removesuffix("[]").split("(")[0].strip())
        if element is None:
            return _Choice({"gen": "const", "value": "{}"}, "an empty array: give it a generator")
        return _Choice(
            {"gen": "const", "value": f"{{{element}}}"}, "an array of one value: give it a generator"
        )
    if t in _BYTES:
        return _bytes(col, table, unique)
    if t in _TEXT:
        return _text(col, table, unique)
    return _fallback(col, f"type {t}: no generator")


def _fallback(col: Column, what: str) -> _Choice:
    """A column of a type the starter has no generator for: NULL, else its default, else a constant."""
    if col.nullable:  # a const without a value is NULL (TOML has no null)
        return _Choice({"gen": "const"}, f"{what}: NULL until you give it a generator")
    if col.default is not None:
        return _Choice({}, f"{what}: left to its default until you give it a generator")
    return _Choice({"gen": "const", "value": ""}, f"{what}: empty text until you give it a generator")


def _number(v: float) -> int | float:
    return int(v) if float(v).is_integer() else round(v, 10)


def _moments(col: Column, table: Table, unique: bool) -> _Choice:
    """Dates or timestamps over the last years, or within the bounds the checks put."""
    day = col.type in _DATES
    since, until = datetime.fromisoformat(_SINCE), datetime.fromisoformat(_UNTIL)
    lo, hi, strict = _moments_of_check(col.name, table)
    if hi is not None and strict:
        hi -= timedelta(days=1) if day else timedelta(seconds=1)
    if lo is not None and hi is None:
        hi = max(until, lo + timedelta(days=365))
    elif hi is not None and lo is None:
        lo = min(since, hi - timedelta(days=365))
    lo, hi = lo or since, hi or until
    if day:
        gen: dict[str, Any] = {"gen": "date", "min": lo.date().isoformat(), "max": hi.date().isoformat()}
    else:
        gen = {"gen": "timestamp", "min": lo.isoformat(), "max": hi.isoformat()}
    if unique:
        gen["unique"] = True
    return _Choice(gen)


def _bytes(col: Column, table: Table, unique: bool) -> _Choice:
    """A binary column: a key as unique text; a BINARY(14) named like a time as MediaWiki's
    ``YYYYMMDDHHMMSS``; a short one as text; else the SHA-256 of the table's key."""
    limit = col.max_length
    if limit is not None and limit >= 14 and _TIME_NAME.search(col.name):
        gen: dict[str, Any] = {"gen": "timestamp", "min": _SINCE, "max": _UNTIL, "format": "%Y%m%d%H%M%S"}
        if unique:
            gen["unique"] = True
        return _Choice(gen, "a timestamp as text (YYYYMMDDHHMMSS)")
    key = [c for c in table.primary if c != col.name and table.columns[c].type not in _BYTES]
    if unique or (limit is not None and limit < 32) or len(key) != 1:
        return _text(col, table, unique)
    return _Choice({"gen": "sha256", "column": key[0]}, "SHA-256 of the key")


def _text(col: Column, table: Table, unique: bool) -> _Choice:
    found = _faker_for(col.name)
    limit = col.max_length
    length = _length_of_check(col.name, table)
    if length is not None and length[0] > 1:
        n = length[0]
        fmt = f"{{:0{n}d}}"
        if unique or not length[1]:
            return _Choice(
                {"gen": "sequence", "format": fmt}, f"numbers of {n} digits or more: the check on its length"
            )
        return _Choice(
            {"gen": "sequence", "format": fmt, "mod": 10**n - 1},
            f"numbers of {n} digits: the check on its length",
        )
    if unique and (found is None or found[0] not in ("email", "user_name", "url")):
        prefix = f"{re.sub(r'[^A-Za-z0-9]', '', col.name)[:3].upper()}-"  # no brace of a name in the format
        fmt = prefix + "{:08d}" if limit is None or limit >= len(prefix) + 8 else "{}"
        return _Choice({"gen": "sequence", "format": fmt})
    if found is None:
        return _Choice({"gen": "faker", "provider": "word"})
    provider, args = found
    top = _max_length_of_check(col.name, table)
    if top is not None and top < 200 and provider in ("text", "sentence"):  # faker's text: 5 at least
        provider, args = "text", {"max_nb_chars": max(5, top)}
    gen: dict[str, Any] = {"gen": "faker", "provider": provider}
    if args:
        gen["args"] = args
    if unique:
        gen["unique"] = True
    return _Choice(gen)


def _column(
    col: Column, table: Table, rows: dict[str, str], reads: dict[str, str] | None = None
) -> _Choice | None:
    """The column's choice (None: generated by the server); ``reads``: the columns of the table
    already copied from another (a check comparing two columns), so none copies its own copier."""
    choice = _choose(col, table, rows, {} if reads is None else reads)
    if choice is not None and col.set_by:
        choice.note = "; ".join(
            n for n in (choice.note, f"trigger {col.set_by} sets it on insert: this value is replaced") if n
        )
    return choice


def _choose(col: Column, table: Table, rows: dict[str, str], reads: dict[str, str]) -> _Choice | None:
    if col.generated:
        return None
    fks = [k for k in table.of("foreign") if col.name in k.columns]
    keys = [k for k in table.keys if k.kind in ("primary", "unique")]
    alone_unique = any(k.columns == (col.name,) for k in keys)
    if fks:
        fk = fks[0]
        i = fk.columns.index(col.name)
        ref = f"{fk.ref_table}.{fk.ref_columns[i]}"
        if i > 0:
            return _Choice({"gen": "fk", "ref": ref, "follows": fk.columns[0]})
        gen: dict[str, Any] = {"gen": "fk", "ref": ref}
        pair = _all_foreign_key(table, col.name)
        if pair is not None:  # a key made of foreign keys only: walk the parents' pairs in turn
            gen["dist"] = "sequential"
            if pair > 0:
                first = _first_parent(table, pair)
                gen["every"] = rows.get(first, ":scale")
        elif alone_unique:
            gen["dist"] = "sequential"
            gen["unique"] = True
        elif any(fk_column == col.name for fk_column, _ in _per_parent(table).values()):
            gen["dist"] = "sequential"  # parent i mod parents: a column beside it is the rank within it
        if col.nullable:
            gen["null"] = 0.1
        return _Choice(gen)
    unique = alone_unique or col.auto or _made_unique(col.name, table)
    unread = [] if unique else _unread(table).get(col.name, [])
    if unread and col.default is not None:
        return _Choice({}, f"{_named(unread)}: left to its default {excerpt(col.default, 40)}")
    if unread and col.nullable and not any(aware for _, aware in unread):
        return _Choice({"gen": "const"}, f"{_named(unread)}: NULL (a check that is NULL passes)")
    if col.enum:
        return _Choice({"gen": "choice", "values": list(col.enum)})
    listed = _values_of_check(col.name, table)
    if listed:
        return _Choice({"gen": "choice", "values": listed})
    partner = None if alone_unique or col.auto else _per_parent(table).get(col.name)
    if partner is not None:  # unique with a foreign key: the row's rank within its parent
        fk_column, parent = partner
        choice = _by_type(col, table, False)
        choice.gen = {k: v for k, v in choice.gen.items() if k not in ("dist", "s", "sigma", "null")}
        choice.gen |= {"dist": "sequential", "every": rows.get(parent, ":scale")}
        choice.note = f"the row's rank within its {fk_column}: ({fk_column}, {col.name}) unique"
        return choice
    other = None if unique else _compared_with(col.name, table)
    if other is not None:
        source = table.columns[other]
        if reads.get(other) != col.name and (col.nullable or not source.nullable) and not source.generated:
            step = {"date": 30}.get(source.type, 86400 if source.type in _TIMES else 1)
            reads[col.name] = other
            return _Choice(
                {"gen": "copy", "column": other, "add": step},
                f"{other} + {step}{' days' if source.type == 'date' else ' s' if step == 86400 else ''}: "
                f"a check compares them",
            )
    choice = _by_type(col, table, unique)
    aware = any(a for _, a in unread)
    if (
        col.nullable
        and not aware
        and choice.gen.get("gen") not in ("const", None)
        and not choice.gen.get("unique")
    ):
        choice.gen["null"] = 0.1
    if unread:  # NOT NULL without a default, or a check that reads NULL: the type's values, said so
        choice.note = "; ".join(n for n in (choice.note, f"{_named(unread)}: check these values") if n)
    return choice


def _named(unread: list[tuple[str, bool]]) -> str:
    names = ", ".join(excerpt(name, 40) for name, _ in unread[:3]) + (", …" if len(unread) > 3 else "")
    return f"check{'s' if len(unread) > 1 else ''} {names} the starter cannot read"


def _per_parent(table: Table) -> dict[str, tuple[str, str]]:
    """The columns a key of several columns makes unique (:func:`_made_unique`) whose values are too
    few to be unique over the table (a date, a bounded or small integer) while a foreign key of the
    key is beside them: column -> (that foreign key's first column, its table). The foreign key
    walks its parents in turn and the column takes the row's rank within its parent, so the pair is
    unique however many rows (salaries' ``PRIMARY KEY (emp_no, from_date)``)."""
    out: dict[str, tuple[str, str]] = {}
    for k in table.keys:
        if k.kind not in ("primary", "unique") or len(k.columns) < 2:
            continue
        fk = next(
            (
                f
                for c in k.columns
                for f in table.of("foreign")
                if f.columns[0] == c and f.ref_table and set(f.columns) <= set(k.columns)
            ),
            None,
        )
        if fk is None or fk.ref_table is None:
            continue
        for c in k.columns:
            col = table.columns.get(c)
            if col is None or c in out or not _made_unique(c, table):
                continue
            span = _span(_by_type(col, table, True).gen, col)
            ranked = _by_type(col, table, False).gen.get("gen") in ("int", "decimal", "date", "timestamp")
            if span is not None and span < MAX_SCALE and ranked:
                out[c] = (fk.columns[0], fk.ref_table)
    return out


def _span(gen: dict[str, Any], col: Column) -> int | None:
    """How many distinct values a generator the starter writes can take (None: as many as rows)."""
    kind = gen.get("gen")
    if kind == "sequence":
        if col.type in _INTEGERS or col.type == "year":
            lo, hi = _int_range(col)
            return hi - max(lo, 0)
        fmt = gen.get("format")
        if isinstance(fmt, str) and col.max_length is not None and "mod" not in gen:
            digits = col.max_length - len(re.sub(r"\{[^}]*\}", "", fmt))  # what the text around leaves
            return 10 ** max(digits, 0) - 1 if digits < 10 else None
        return None
    if kind == "int":
        return int(gen["max"]) - int(gen["min"]) + 1
    if kind == "decimal":
        return int((gen["max"] - gen["min"]) * 10 ** gen.get("digits", 2)) + 1
    if kind == "date":
        return (datetime.fromisoformat(gen["max"]) - datetime.fromisoformat(gen["min"])).days + 1
    if kind == "timestamp":
        return (
            int((datetime.fromisoformat(gen["max"]) - datetime.fromisoformat(gen["min"])).total_seconds()) + 1
        )
    return None


def _all_foreign_key(table: Table, column: str) -> int | None:
    """The position of ``column`` in a multi-column key made of single-column foreign keys only."""
    for k in table.keys:
        if k.kind in ("primary", "unique") and len(k.columns) > 1 and column in k.columns:
            fk_cols = {c for f in table.of("foreign") for c in f.columns if len(f.columns) == 1}
            if set(k.columns) <= fk_cols:
                return k.columns.index(column)
    return None


def _first_parent(table: Table, position: int) -> str:
    """The table the foreign key before ``position`` in the all-foreign-key key references."""
    for k in table.keys:
        if k.kind in ("primary", "unique") and len(k.columns) > position:
            column = k.columns[position - 1]
            for f in table.of("foreign"):
                if f.columns == (column,) and f.ref_table:
                    return f.ref_table
    return ""


def _made_unique(column: str, table: Table) -> bool:
    """Whether ``column`` is the one made unique for a key of several columns none of which is
    unique alone: its last column that is not a foreign key and that nothing else constrains (no
    enum, listed values or bounds), else its last column that is not a foreign key."""
    fk_cols = {c for f in table.of("foreign") for c in f.columns}
    singles = {k.columns[0] for k in table.keys if k.kind in ("primary", "unique") and len(k.columns) == 1}
    for k in table.keys:
        if k.kind not in ("primary", "unique") or len(k.columns) < 2 or singles & set(k.columns):
            continue
        free = [c for c in k.columns if c not in fk_cols and c in table.columns]
        open_ = [c for c in free if _unconstrained(table.columns[c], table)] or free
        if open_ and min(reversed(open_), key=lambda c: _room(table.columns[c])) == column:
            return True
    return False


def _room(col: Column) -> int:
    """How readily a column's type takes unique values (lower: more readily): text, numbers, times, dates."""
    t = col.type
    if t in _TEXT or t in _BYTES:
        return 0
    if t in ("bigint", "integer", "int", "mediumint"):
        return 1
    if t in _DECIMALS or t in _FLOATS or t in _TIMES:
        return 2
    return 3


def _unconstrained(col: Column, table: Table) -> bool:
    """A column whose values may be unique: of a type that has many, no enum, listed values or bounds."""
    if col.enum or col.type in ("boolean", "set", "year") or _values_of_check(col.name, table):
        return False
    if _length_of_check(col.name, table) or _compared_with(col.name, table):
        return False
    return _bounds_of_check(col.name, table) == (None, None) and _moments_of_check(col.name, table)[:2] == (
        None,
        None,
    )


def _caps(tables: dict[str, Table]) -> dict[str, int]:
    """Per table, the most rows its keys can take: an integer key column's type (a ``tinyint
    unsigned`` holds 255), a unique foreign key's parent's rows, a key of two foreign keys' pairs."""
    caps: dict[str, int] = {name: t.rows for name, t in tables.items() if t.rows}
    for _ in range(len(tables) + 1):  # parents' caps first: until nothing changes
        changed = False
        for name, t in tables.items():
            found = [caps[name]] if name in caps else []
            paired = _per_parent(t)
            for c in t.columns.values():
                alone = c.auto or any(
                    k.columns == (c.name,) for k in t.keys if k.kind in ("primary", "unique")
                )
                key = alone or _made_unique(c.name, t)
                fk = next((f for f in t.of("foreign") if c.name in f.columns), None)
                if c.name in paired and not alone:  # the rank within a parent: parents x its values
                    span = _span(_by_type(c, t, False).gen, c)
                    parent = caps.get(paired[c.name][1])
                    if span is not None and parent is not None:
                        found.append(parent * span)
                elif key and fk is None and (c.type in _INTEGERS or c.type == "year"):
                    lo, hi = _int_range(c)
                    found.append(hi if c.type != "year" else hi - lo + 1)
                elif key and fk is None and c.type not in _INTEGERS:
                    span = _span(
                        _by_type(c, t, True).gen, c
                    )  # a date key: as many rows as days; char(4): 9,999
                    if span is not None and span < MAX_SCALE:
                        found.append(span)
                elif key and fk is not None and len(fk.columns) == 1 and fk.ref_table in caps:
                    found.append(caps[fk.ref_table])
            for k in t.keys:
                if k.kind in ("primary", "unique") and len(k.columns) > 1:
                    parents = [
                        caps.get(f.ref_table or "")
                        for c in k.columns
                        for f in t.of("foreign")
                        if f.columns == (c,)
                    ]
                    counts = [n for n in parents if n is not None]
                    if len(counts) == len(k.columns):
                        found.append(math.prod(counts))
            if found and caps.get(name) != min(found):
                caps[name] = min(found)
                changed = True
        if not changed:
            break
    return caps


def _comment(text: str) -> str:
    """``text`` as a TOML comment takes it: one line, no control character (a schema's names may hold any)."""
    return "".join(c if c.isprintable() else " " for c in text)


def _inline(gen: dict[str, Any]) -> InlineTable:
    """A column's generator as an inline table, ``{ gen = … }`` (nested tables, such as faker's
    ``args``, inline too)."""
    table = tomlkit.inline_table()
    table.add(tomlkit.ws(" "))
    for k, v in gen.items():
        table.append(k, _inline(v) if isinstance(v, dict) else v)
    table.add(tomlkit.ws(" "))
    return table


def _left_out(tables: dict[str, Table]) -> dict[str, str]:
    """The tables the spec leaves to the server, and why: those an insert trigger of another
    table writes (their rows come from it: filling them too would duplicate its rows), and
    partitioned tables (their rows are their partitions', each in the spec)."""
    out: dict[str, str] = {}
    for name, t in sorted(tables.items()):
        for written, trigger in sorted(t.writes.items()):
            out.setdefault(written, f"filled by trigger {trigger} of {name} on insert: rows from the trigger")
        if t.partitioned:
            out.setdefault(name, "partitioned: its rows are its partitions', each filled in its own table")
    return out


def row_counts(tables: dict[str, Table]) -> dict[str, str]:
    """Each table's ``rows``: its current rows, else ``:scale``, at most what its keys can take
    (``min(:scale, 255)``)."""
    caps = _caps(tables)
    return {
        name: str(t.rows)
        if t.rows
        else f"min(:scale, {caps[name]})"
        if caps.get(name, MAX_SCALE) < MAX_SCALE
        else ":scale"
        for name, t in sorted(tables.items())
    }


def starter(tables: dict[str, Table], *, source: str, seed: int = 1) -> str:
    """The starter spec (TOML text) of ``tables`` (with their ``rows`` counted, or None), written by
    tomlkit: every name and value is quoted and escaped as TOML wants, the comments stay."""
    rows = row_counts(tables)
    left_out = _left_out(tables)
    doc = tomlkit.document()
    doc.add(
        tomlkit.comment(
            _comment(
                f"dbbench data spec, written by `dbbench init` from {source} on {datetime.now():%Y-%m-%d}."
            )
        )
    )
    doc.add(
        tomlkit.comment(
            "Edit freely: docs/volume.md lists every generator. `dbbench fill` loads it, at --scale N"
        )
    )
    doc.add(tomlkit.comment("(the :scale of the row counts; 10,000 unless given)."))
    doc.add("seed", seed)
    doc.add("locale", DEFAULT_LOCALE)
    if left_out:
        doc.add(tomlkit.nl())
        doc.add(tomlkit.comment("Tables left out, the server fills them:"))
        for name, why in left_out.items():
            doc.add(tomlkit.comment(_comment(f"  {tomlkit.key(name).as_string()}: {why}")))
    all_tables = tomlkit.table(is_super_table=True)
    for name, table in sorted(tables.items()):
        if name in left_out:
            continue
        entry = tomlkit.table()
        entry.add("rows", int(rows[name]) if rows[name].isdigit() else rows[name])
        columns = tomlkit.table()
        reads: dict[str, str] = {}
        for col in table.columns.values():
            choice = _column(col, table, rows, reads)
            if choice is None or not choice.gen:
                why = "generated by the server" if choice is None else choice.note
                columns.add(tomlkit.comment(_comment(f"{tomlkit.key(col.name).as_string()}: {why}")))
                continue
            gen = _inline(choice.gen)
            if choice.note:
                gen.comment(_comment(choice.note))
            columns.add(col.name, gen)
        entry.add("columns", columns)
        all_tables.add(name, entry)
    doc.add(tomlkit.nl())
    doc.add("tables", all_tables)
    return tomlkit.dumps(doc)
