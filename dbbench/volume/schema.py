"""A live schema, read from the server: tables, columns, keys, unique indexes, foreign keys, checks.

``dbbench fill`` reads it to load the spec's columns (and to fingerprint every table the way
``dbbench seed`` does); ``dbbench init`` reads it to write a starter spec.
"""

from __future__ import annotations

from dataclasses import dataclass, field

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

    @property
    def kind(self) -> str:
        """How the content fingerprint renders it (as :mod:`dbbench.setup.namespace` does)."""
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
    if count:
        with conn.cursor() as cur:
            for t in tables.values():
                cur.execute(f"{QUERY_TAG}SELECT COUNT(*) FROM {d.quote(ns)}.{d.quote(t.name)}")
                t.rows = int(cur.fetchone()[0])
    return tables
