"""A live schema, read from the server: tables, columns, keys, unique indexes, foreign keys, checks.

``dbbench fill`` reads it to load the spec's columns (and to fingerprint every table the way
``dbbench seed`` does); ``dbbench init`` reads it to write a starter spec.

Beside the dialects' own schema queries, what a starter spec needs to fill real schemas without
edits (:func:`_details`): each column's full type (``bigint unsigned``, ``set('a','b')``,
``integer[]``), its default, its SRID; a domain's CHECK constraints (as checks of the column, with
``VALUE`` named as the column) and NOT NULL; a partition's bound (as a check) and which tables are
partitioned; unique expression indexes (as unique keys of the columns they read); and the triggers
that fire on insert: the tables they write and the columns they set.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from dbbench import dialects
from dbbench.defaults import QUERY_TAG

_BYTES = {"bytea", "binary", "varbinary", "blob", "tinyblob", "mediumblob", "longblob"}
_DATETIME = {"timestamp without time zone", "timestamp with time zone", "timestamp", "datetime"}


@dataclass(frozen=True)
class Column:
    name: str
    type: str  # the server's data type, lower case; ``enum`` and ``boolean`` on both
    nullable: bool
    max_length: int | None
    precision: int | None
    scale: int | None
    generated: bool  # computed by the server: never loaded
    auto: bool  # serial, identity, auto_increment
    enum: tuple[str, ...] | None = None
    column_type: str = ""  # the full type: ``bigint unsigned``, ``set('a','b')``, ``integer[]``, ``bit(8)``
    default: str | None = None  # the column's default expression (None: none, NULL)
    srid: int | None = None  # MySQL geometry: the column's SRID
    set_by: str = ""  # the BEFORE INSERT trigger that sets it

    @property
    def kind(self) -> str:
        """How the content fingerprint renders it (as :mod:`dbbench.setup.loader` does)."""
        if self.type in _BYTES:
            return "bytes"
        if self.type in _DATETIME:
            return "datetime"
        return "bool" if self.type == "boolean" else "text"


@dataclass(frozen=True)
class Key:
    name: str
    kind: str  # primary | unique | foreign | check
    columns: tuple[str, ...]
    ref_table: str | None = None
    ref_columns: tuple[str, ...] = ()
    definition: str = ""


@dataclass
class Table:
    name: str
    columns: dict[str, Column] = field(default_factory=dict)
    keys: list[Key] = field(default_factory=list)
    rows: int | None = None  # counted on request
    partitioned: bool = False  # its rows are its partitions' (PostgreSQL PARTITION BY)
    writes: dict[str, str] = field(default_factory=dict)  # table -> the insert trigger that writes into it

    def of(self, kind: str) -> list[Key]:
        return [k for k in self.keys if k.kind == kind]

    @property
    def primary(self) -> tuple[str, ...]:
        return next((k.columns for k in self.keys if k.kind == "primary"), ())


def read(conn, dialect: str, ns: str, *, count: bool = False) -> dict[str, Table]:
    """The tables of ``ns`` (dbbench's marker table left out), by name; ``count``: their rows too."""
    d = dialects.get(dialect)
    tables: dict[str, Table] = {}
    for name, column, dtype, nullable, length, precision, scale, generated, auto, labels in d.schema_columns(
        conn, ns
    ):
        if name == d.META:
            continue
        enum = tuple(labels) if labels else None
        col = Column(
            column, dtype, bool(nullable), length, precision, scale, bool(generated), bool(auto), enum
        )
        tables.setdefault(name, Table(name)).columns[column] = col
    for name, key, kind, cols, ref, ref_cols, text in d.schema_keys(conn, ns):
        if name in tables:
            tables[name].keys.append(Key(key, kind, tuple(cols), ref, tuple(ref_cols), text))
    _details(conn, dialect, ns, tables)
    if count:
        with conn.cursor() as cur:
            for t in tables.values():
                cur.execute(f"{QUERY_TAG}SELECT COUNT(*) FROM {d.quote(ns)}.{d.quote(t.name)}")
                t.rows = int(cur.fetchone()[0])
    return tables


# -- what the dialects' schema queries leave out ------------------------------------------------------
_PG_COLUMNS = """SELECT c.relname, a.attname, format_type(a.atttypid, a.atttypmod),
       COALESCE(pg_get_expr(d.adbin, d.adrelid), t.typdefault), t.typtype = 'd' AND t.typnotnull
  FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
  JOIN pg_type t ON t.oid = a.atttypid LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
 WHERE n.nspname = %s AND c.relkind IN ('r', 'p') AND a.attnum > 0 AND NOT a.attisdropped"""
_PG_DOMAIN_CHECKS = """SELECT c.relname, a.attname, k.conname, pg_get_constraintdef(k.oid)
  FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
  JOIN pg_constraint k ON k.contypid = a.atttypid AND k.contype = 'c'
 WHERE n.nspname = %s AND c.relkind IN ('r', 'p') AND a.attnum > 0 AND NOT a.attisdropped"""
_PG_PARTITIONS = """SELECT c.relname, c.relkind = 'p', pg_get_partition_constraintdef(c.oid)
  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
 WHERE n.nspname = %s AND (c.relkind = 'p' OR c.relispartition)"""
_PG_EXPRESSION_KEYS = """SELECT c.relname, i.relname, pg_get_indexdef(x.indexrelid)
  FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class c ON c.oid = x.indrelid
  JOIN pg_namespace n ON n.oid = c.relnamespace
 WHERE n.nspname = %s AND x.indisunique AND 0 = ANY (x.indkey::int2[])"""
# tgtype bits: 2 BEFORE, 4 INSERT (pg_trigger.h)
_PG_TRIGGERS = """SELECT c.relname, t.tgname, t.tgtype & 2 = 2, p.prosrc, pg_get_triggerdef(t.oid)
  FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n ON n.oid = c.relnamespace
  JOIN pg_proc p ON p.oid = t.tgfoid
 WHERE n.nspname = %s AND NOT t.tgisinternal AND t.tgenabled <> 'D' AND t.tgtype & 4 = 4"""
_MY_COLUMNS = """SELECT table_name, column_name, column_type, column_default, srs_id, extra
  FROM information_schema.columns WHERE table_schema = %s"""
_MY_EXPRESSION_KEYS = """SELECT table_name, index_name, expression FROM information_schema.statistics
 WHERE table_schema = %s AND non_unique = 0 AND expression IS NOT NULL"""
_MY_TRIGGERS = """SELECT event_object_table, trigger_name, action_timing = 'BEFORE', action_statement, ''
  FROM information_schema.triggers WHERE trigger_schema = %s AND event_manipulation = 'INSERT'"""
_NAME = r'(?:`[^`]+`|"[^"]+"|\w+)'
_INSERT_INTO = re.compile(
    rf"\b(?:INSERT|REPLACE)\s+(?:IGNORE\s+)?(?:INTO\s+)?(?:ONLY\s+)?(?:{_NAME}\s*\.\s*)?({_NAME})", re.I
)
_SET_NEW = re.compile(rf"\bNEW\s*\.\s*({_NAME})\s*:?=(?!=)", re.I)
_TRIGGER_ARGS = re.compile(r"\bEXECUTE\s+(?:PROCEDURE|FUNCTION)\s+[\w.]+\s*\((.*)\)\s*$", re.I | re.S)


def _unquoted(name: str) -> str:
    return name[1:-1] if name[:1] in '`"' and name[-1:] == name[:1] else name


def _words(text: str, names) -> tuple[str, ...]:
    """The ``names`` ``text`` mentions as words (quoted or not), in ``names``' order."""
    return tuple(n for n in names if re.search(rf"(?<![\w$]){re.escape(n)}(?![\w$])", text))


def _details(conn, dialect: str, ns: str, tables: dict[str, Table]) -> None:
    """Add to ``tables`` what :func:`read` needs beyond the dialect's schema queries (the module's doc)."""
    pg = dialect == "postgresql"
    with conn.cursor() as cur:
        cur.execute(_PG_COLUMNS if pg else _MY_COLUMNS, (ns,))
        for row in cur.fetchall():
            t, c = tables.get(row[0]), None
            if t is not None and (c := t.columns.get(row[1])) is not None:
                change: dict = {"column_type": str(row[2]), "default": row[3]}
                if pg:
                    change["nullable"] = c.nullable and not row[4]  # a domain's NOT NULL
                else:
                    change["srid"] = None if row[4] is None else int(row[4])
                    extra = str(
                        row[5] or ""
                    ).upper()  # DEFAULT_GENERATED is a default, not a generated column
                    change["generated"] = "VIRTUAL GENERATED" in extra or "STORED GENERATED" in extra
                t.columns[c.name] = replace(c, **change)
        if pg:
            cur.execute(_PG_DOMAIN_CHECKS, (ns,))
            for table, column, name, text in cur.fetchall():
                if table in tables:  # the domain's VALUE is the column
                    named = re.sub(r"\bVALUE\b", column, text)
                    tables[table].keys.append(Key(name, "check", (column,), definition=named))
            cur.execute(_PG_PARTITIONS, (ns,))
            for table, partitioned, bound in cur.fetchall():
                if table in tables:
                    tables[table].partitioned = bool(partitioned)
                    if bound:
                        tables[table].keys.append(
                            Key(f"{table} partition", "check", (), definition=f"CHECK ({bound})")
                        )
        cur.execute(_PG_EXPRESSION_KEYS if pg else _MY_EXPRESSION_KEYS, (ns,))
        for table, name, text in cur.fetchall():
            t = tables.get(table)
            body = str(text).split(" USING ", 1)[-1] if pg else str(text)
            if t is not None and (cols := _words(body.split(" WHERE ", 1)[0], list(t.columns))):
                t.keys.append(Key(name, "unique", cols, definition=str(text)))
        cur.execute(_PG_TRIGGERS if pg else _MY_TRIGGERS, (ns,))
        for table, name, before, body, definition in cur.fetchall():
            t = tables.get(table)
            if t is None:
                continue
            for m in _INSERT_INTO.finditer(str(body or "")):
                written = _unquoted(m.group(1))
                if written in tables and written != table:
                    t.writes.setdefault(written, name)
            if before:
                set_here = {_unquoted(n.group(1)) for n in _SET_NEW.finditer(str(body or ""))}
                if args := _TRIGGER_ARGS.search(str(definition or "")):  # tsvector_update_trigger(col, …)
                    set_here |= {a.strip().strip("'") for a in args.group(1).split(",")[:1]}
                for c_name in set_here:
                    if c_name in t.columns:
                        t.columns[c_name] = replace(t.columns[c_name], set_by=name)
