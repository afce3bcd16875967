"""``dbbench init``: a starter data spec from a live schema, one that fills it without edits.

Each column gets a generator from what the schema says about it, in this order: a generated column
is left to the server; a single-column foreign key draws its parent uniformly (a composite one
follows its first column); an enum, or a check constraint listing values (``IN (…)``), is a choice
of those values; a key column (primary or unique) is a sequence, or unique faker text by name
(``email``); a ``BETWEEN`` / ``>`` bound in a check is an integer range; otherwise the type and the
name decide (``email`` → faker email, ``name`` → faker name, numeric(p, s) → decimal with s
digits, timestamps over the last years). A key of several columns gets one unique column, or, when
all are foreign keys, walks the parents' pairs in turn. Row counts: the table's current rows, else
``:scale``. Foreign-key order and cycles are resolved when the spec is used (:mod:`dbbench.volume.plan`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import tomlkit
from tomlkit.items import InlineTable

from dbbench.volume.schema import Column, Table
from dbbench.volume.spec import DEFAULT_LOCALE

_INTEGERS = {"smallint", "integer", "int", "bigint", "tinyint", "mediumint"}
_DECIMALS = {"numeric", "decimal"}
_FLOATS = {"real", "double precision", "double", "float"}
_TEXT = {"character varying", "varchar", "character", "char", "text", "tinytext", "mediumtext", "longtext"}
_DATES = {"date"}
_TIMES = {"timestamp without time zone", "timestamp with time zone", "timestamp", "datetime"}
_JSON = {"json", "jsonb"}
_BYTES = {"bytea", "binary", "varbinary", "blob", "tinyblob", "mediumblob", "longblob"}
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
_SINCE, _UNTIL = "2022-01-01T00:00:00", "2026-01-01T00:00:00"


@dataclass
class _Choice:
    gen: dict[str, Any]
    note: str = ""


def _values_of_check(column: str, table: Table) -> list[Any] | None:
    """The values a check constraint allows for ``column`` (``IN (…)`` / ``= ANY (ARRAY[…])``)."""
    for k in table.of("check"):
        text = k.definition
        if not re.search(rf"\b{re.escape(column)}\b", text) or not re.search(r"\bIN\s*\(|= ANY", text, re.I):
            continue
        strings = re.findall(r"'((?:[^']|'')*)'", text)
        if strings:
            return [s.replace("''", "'") for s in strings]
        numbers = re.findall(r"(?<![\w.])(-?\d+)(?![\w.])", text.split("(", 1)[-1])
        if numbers:
            return sorted({int(n) for n in numbers})
    return None


def _bounds_of_check(column: str, table: Table) -> tuple[float | None, float | None]:
    """(lower, upper) bounds a check constraint puts on ``column`` (BETWEEN, >, >=, <, <=)."""
    lo: float | None = None
    hi: float | None = None
    c = re.escape(column)
    for k in table.of("check"):
        t = k.definition.replace("`", "").replace('"', "")
        if m := re.search(rf"\b{c}\)?(?:::\w+)?\s+BETWEEN\s+\(?(-?[\d.]+)\)?\s+AND\s+\(?(-?[\d.]+)", t, re.I):
            lo, hi = float(m.group(1)), float(m.group(2))
        if m := re.search(rf"\b{c}\)?\s*(>=|>)\s*\(?(-?[\d.]+)", t):
            lo = float(m.group(2)) + (1 if m.group(1) == ">" else 0)
        if m := re.search(rf"\b{c}\)?\s*(<=|<)\s*\(?(-?[\d.]+)", t):
            hi = float(m.group(2)) - (1 if m.group(1) == "<" else 0)
    return lo, hi


def _faker_for(name: str) -> tuple[str, dict[str, Any]] | None:
    words = name.lower()
    for pattern, provider, args in _FAKER:
        if re.fullmatch(rf"(\w+_)?(?:{pattern})", words):
            return provider, args
    return None


def _by_type(col: Column, table: Table, unique: bool) -> _Choice:
    t = col.type
    lo, hi = _bounds_of_check(col.name, table)
    if t in _INTEGERS:
        if unique:
            return _Choice({"gen": "sequence"})
        top = 1000 if t in ("smallint", "tinyint") else 1_000_000
        return _Choice(
            {"gen": "int", "min": int(lo if lo is not None else 1), "max": int(hi if hi is not None else top)}
        )
    if t in _DECIMALS or t in _FLOATS:
        digits = col.scale if t in _DECIMALS and col.scale is not None else 2
        whole = (col.precision or 12) - digits
        limit = hi if hi is not None else min(10**whole - 1, 10_000)
        gen: dict[str, Any] = {
            "gen": "decimal",
            "min": lo if lo is not None else 0,
            "max": limit,
            "digits": digits,
        }
        if unique:
            gen["unique"] = True
        return _Choice(gen)
    if t == "boolean":
        return _Choice({"gen": "bool"})
    if t in _DATES or t in _TIMES:
        gen = (
            {"gen": "date", "min": _SINCE[:10], "max": _UNTIL[:10]}
            if t in _DATES
            else {"gen": "timestamp", "min": _SINCE, "max": _UNTIL}
        )
        if unique:
            gen["unique"] = True
        return _Choice(gen)
    if t == "uuid":
        return _Choice({"gen": "uuid"})
    if t in _JSON:
        return _Choice({"gen": "const", "value": "{}"})
    if t in _BYTES:
        return _Choice({"gen": "sha256", "column": next(iter(table.primary), col.name)}, "SHA-256 of the key")
    if t in _TEXT:
        return _text(col, unique)
    if col.nullable:  # a const without a value is NULL (TOML has no null)
        return _Choice({"gen": "const"}, f"type {t}: NULL until you give it a generator")
    return _Choice({"gen": "const", "value": ""}, f"type {t}: give it a generator")


def _text(col: Column, unique: bool) -> _Choice:
    found = _faker_for(col.name)
    limit = col.max_length
    if unique and (found is None or found[0] not in ("email", "user_name", "url")):
        prefix = f"{re.sub(r'[^A-Za-z0-9]', '', col.name)[:3].upper()}-"  # no brace of a name in the format
        fmt = prefix + "{:08d}" if limit is None or limit >= len(prefix) + 8 else "{}"
        return _Choice({"gen": "sequence", "format": fmt})
    if found is None:
        return _Choice({"gen": "faker", "provider": "word"})
    provider, args = found
    gen: dict[str, Any] = {"gen": "faker", "provider": provider}
    if args:
        gen["args"] = args
    if unique:
        gen["unique"] = True
    return _Choice(gen)


def _column(col: Column, table: Table, rows: dict[str, str]) -> _Choice | None:
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
        if col.nullable:
            gen["null"] = 0.1
        return _Choice(gen)
    if col.enum:
        return _Choice({"gen": "choice", "values": list(col.enum)})
    listed = _values_of_check(col.name, table)
    if listed:
        return _Choice({"gen": "choice", "values": listed})
    choice = _by_type(col, table, alone_unique or col.auto or _made_unique(col.name, table))
    if col.nullable and choice.gen.get("gen") not in ("const",) and not choice.gen.get("unique"):
        choice.gen["null"] = 0.1
    return choice


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
    unique alone: its last column that is not a foreign key."""
    fk_cols = {c for f in table.of("foreign") for c in f.columns}
    singles = {k.columns[0] for k in table.keys if k.kind in ("primary", "unique") and len(k.columns) == 1}
    for k in table.keys:
        if k.kind not in ("primary", "unique") or len(k.columns) < 2 or singles & set(k.columns):
            continue
        free = [c for c in k.columns if c not in fk_cols]
        if free and free[-1] == column:
            return True
    return False


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


def starter(tables: dict[str, Table], *, source: str, seed: int = 1) -> str:
    """The starter spec (TOML text) of ``tables`` (with their ``rows`` counted, or None), written by
    tomlkit: every name and value is quoted and escaped as TOML wants, the comments stay."""
    rows = {name: str(t.rows) if t.rows else ":scale" for name, t in sorted(tables.items())}
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
    all_tables = tomlkit.table(is_super_table=True)
    for name, table in sorted(tables.items()):
        entry = tomlkit.table()
        entry.add("rows", int(rows[name]) if rows[name].isdigit() else rows[name])
        columns = tomlkit.table()
        for col in table.columns.values():
            choice = _column(col, table, rows)
            if choice is None:
                columns.add(
                    tomlkit.comment(_comment(f"{tomlkit.key(col.name).as_string()}: generated by the server"))
                )
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
