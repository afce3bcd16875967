"""A data spec: how many rows each table gets and how each column is filled (TOML, see docs/volume.md).

Reading a spec checks every table, column, slice and check at once and reports every problem, one
line each, naming the file and the field (``FILE: tables.orders.columns.status: weights: …``).
"""

from __future__ import annotations

import hashlib
import math
import tomllib
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import Any

from dbbench.errors import DbbenchError
from dbbench.volume import expr
from dbbench.volume.expr import Expr, ExprError
from dbbench.volume.generators import GENERATORS
from dbbench.volume.limits import MAX_SCALE, SPEC_READ_LIMIT
from verdict.files import excerpt, loads_toml, read_bounded

SPEC_FILE = Path("data") / "spec.toml"  # a catalog's data spec, relative to its directory
TOP_FIELDS = {"seed", "locale", "scale", "check_scale", "params", "tables", "verify"}
TABLE_FIELDS = {"rows", "columns", "slices"}
SLICE_FIELDS = {"name", "rows", "columns"}
COLUMN_FIELDS = {"gen", "null", "distinct", "skew", "unique"}  # with the generator's own parameters
VERIFY_FIELDS = {"name", "expect", "sql", "sql_postgresql", "sql_mysql"}
DEFAULT_LOCALE = "en_US"


class SpecError(DbbenchError):
    """A data spec that cannot be used; ``problems`` holds one line each."""

    def __init__(self, problems: list[str] | str):
        self.problems = [problems] if isinstance(problems, str) else list(problems)
        super().__init__("\n".join(self.problems))


@dataclass(frozen=True)
class ColumnSpec:
    name: str
    gen: str
    params: dict[str, Any]
    null: float = 0.0
    distinct: Expr | None = None
    skew: float | None = None
    unique: bool = False
    where: str = ""  # "tables.T.columns.C", for messages


@dataclass(frozen=True)
class SliceSpec:
    name: str
    rows: Expr
    columns: dict[str, ColumnSpec]


@dataclass(frozen=True)
class TableSpec:
    name: str
    rows: Expr
    columns: dict[str, ColumnSpec]
    slices: list[SliceSpec] = field(default_factory=list)


@dataclass(frozen=True)
class Check:
    name: str
    expect: Expr
    sql: dict[str, str]  # dialect (or "" for both) -> SQL with :name parameters


@dataclass(frozen=True)
class Spec:
    path: Path
    seed: int
    locale: str
    scale: int | None  # the spec's own default for :scale
    params: dict[str, Any]
    tables: dict[str, TableSpec]
    verify: list[Check]
    sha256: str
    check_scale: int | None = None  # :scale of `dbbench check` (default: dbbench.volume.catalog_spec)
    root: Path | None = None  # files the spec names must be inside it (default: the spec's folder)

    @property
    def folder(self) -> Path:
        """The directory a file the spec names must resolve into (after symbolic links): the
        catalog directory of ``DIR/data/spec.toml``, else the spec's own folder."""
        return self.root if self.root is not None else self.path.parent

    def numbers(self) -> dict[str, float]:
        """The numeric ``[params]``, usable as ``:name`` in row counts."""
        return {
            k: v for k, v in self.params.items() if isinstance(v, (int, float)) and not isinstance(v, bool)
        }

    def check_sql(self, check: Check, dialect: str) -> str | None:
        return check.sql.get(dialect, check.sql.get(""))


def read(path: str | Path, root: str | Path | None = None) -> Spec:
    """Read and check the spec at ``path``; a catalog directory means its ``data/spec.toml``
    (and is the ``root`` the files it names must be in; else ``root``, else the spec's folder).
    The file is read bounded (:data:`~dbbench.volume.limits.SPEC_READ_LIMIT`)."""
    file = Path(path)
    if file.is_dir():
        root = file if root is None else root
        file = file / SPEC_FILE
    try:
        raw = read_bounded(file, limit=SPEC_READ_LIMIT, what="data spec")
    except OSError as exc:
        raise SpecError(f"{file}: cannot read the data spec ({exc.strerror or exc})") from None
    try:
        doc = loads_toml(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise SpecError(f"{file}: not UTF-8 text") from None
    except tomllib.TOMLDecodeError as exc:
        raise SpecError(f"{file}: not TOML: {excerpt(str(exc), 200)}") from None
    return parse(doc, file, hashlib.sha256(raw).hexdigest(), None if root is None else Path(root))


def _show(value: Any) -> str:
    """A spec's value as a message quotes it: its repr, at most a short excerpt."""
    return excerpt(repr(value))


def parse(doc: dict[str, Any], file: Path, sha256: str = "", root: Path | None = None) -> Spec:
    problems: list[str] = []

    def fail(where: str, what: str) -> None:
        problems.append(f"{file}: {where}: {what}" if where else f"{file}: {what}")

    _unknown(doc, TOP_FIELDS, "", fail)
    seed = doc.get("seed", 1)
    if not isinstance(seed, int) or isinstance(seed, bool):
        fail("seed", f"{_show(seed)} is not an integer")
        seed = 1
    locale = doc.get("locale", DEFAULT_LOCALE)
    if not isinstance(locale, str):
        fail("locale", f"{_show(locale)} is not text")
        locale = DEFAULT_LOCALE
    scale, check_scale = (_positive(doc.get(k), k, fail) for k in ("scale", "check_scale"))
    params = doc.get("params", {})
    if not isinstance(params, dict):
        fail("params", "must be a table")
        params = {}
    tables_raw = doc.get("tables", {})
    if not isinstance(tables_raw, dict) or not tables_raw:
        fail("tables", "at least one [tables.NAME] is needed")
        tables_raw = {}
    tables = {}
    for name, raw in tables_raw.items():
        table = _table(name, raw, fail)
        if table is not None:
            tables[name] = table
    verify = _verify(doc.get("verify", []), fail)
    if problems:
        raise SpecError(problems)
    return Spec(file, seed, locale, scale, params, tables, verify, sha256, check_scale, root)


def _positive(value: Any, where: str, fail) -> int | None:
    if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
        fail(where, f"{_show(value)} is not a positive integer")
        return None
    if value is not None and value > MAX_SCALE:
        fail(where, f"{value:,} is above the largest scale, {MAX_SCALE:,}")
        return None
    return value


def _unknown(raw: dict[str, Any], known: set[str], where: str, fail) -> None:
    for key in raw:
        if key not in known:
            fail(
                where, f"{excerpt(str(key), 60)}: unknown field (expected one of {', '.join(sorted(known))})"
            )


def _expr(value: Any, where: str, fail) -> Expr | None:
    try:
        return expr.parse(value)
    except ExprError as exc:
        fail(where, str(exc))
        return None


def _table(name: str, raw: Any, fail) -> TableSpec | None:
    where = f"tables.{excerpt(name, 60)}"
    if not isinstance(raw, dict):
        fail(where, "must be a table")
        return None
    _unknown(raw, TABLE_FIELDS, where, fail)
    if "rows" not in raw:
        fail(where, "rows: required (a number or an expression of :scale)")
    rows = _expr(raw.get("rows", 0), f"{where}.rows", fail)
    columns = _columns(raw.get("columns"), where, fail)
    slices = []
    raw_slices = raw.get("slices", [])
    if not isinstance(raw_slices, list):
        fail(f"{where}.slices", "must be an array of tables ([[tables.NAME.slices]])")
        raw_slices = []
    for k, s in enumerate(raw_slices, start=1):
        swhere = f"{where}.slices[{k}]"
        if not isinstance(s, dict):
            fail(swhere, "must be a table")
            continue
        _unknown(s, SLICE_FIELDS, swhere, fail)
        srows = _expr(s.get("rows"), f"{swhere}.rows", fail) if "rows" in s else None
        if "rows" not in s:
            fail(swhere, "rows: required")
        scols = _columns(s.get("columns"), swhere, fail)
        for c in scols:
            if c not in columns:
                fail(
                    f"{swhere}.columns.{excerpt(c, 60)}",
                    "a slice sets only columns the table's [columns] fill",
                )
        if srows is not None:
            slices.append(SliceSpec(str(s.get("name", f"slice {k}")), srows, scols))
    if rows is None:
        return None
    return TableSpec(name, rows, columns, slices)


def _columns(raw: Any, where: str, fail) -> dict[str, ColumnSpec]:
    if not isinstance(raw, dict) or not raw:
        fail(f"{where}.columns", "at least one column is needed (NAME = { gen = … })")
        return {}
    out = {}
    for name, col in raw.items():
        spec = _column(name, col, f"{where}.columns.{excerpt(name, 60)}", fail)
        if spec is not None:
            out[name] = spec
    return out


def _column(name: str, raw: Any, where: str, fail) -> ColumnSpec | None:
    if not isinstance(raw, dict):
        fail(where, "must be a table ({ gen = … })")
        return None
    gen = raw.get("gen")
    if gen not in GENERATORS:
        fail(where, f"gen: {_show(gen)} is not one of {', '.join(sorted(GENERATORS))}")
        return None
    generator = GENERATORS[gen]
    _unknown(raw, COLUMN_FIELDS | set(generator.params), where, fail)
    params: dict[str, Any] = {}
    for p, how in generator.params.items():
        if p not in raw:
            if "default" not in how:
                fail(where, f"{p}: required by gen {gen!r}")
            else:
                params[p] = how["default"]
            continue
        value, problem = _typed(raw[p], how["type"])
        if problem:
            fail(where, f"{p}: {problem}")
        params[p] = value
    null = raw.get("null", 0.0)
    if isinstance(null, bool) or not isinstance(null, (int, float)) or not 0 <= null <= 1:  # NaN too
        fail(where, f"null: {_show(null)} is not a fraction between 0 and 1")
        null = 0.0
    skew = raw.get("skew")
    if skew is not None and (
        isinstance(skew, bool) or not isinstance(skew, (int, float)) or not 0 < skew < math.inf
    ):
        fail(where, f"skew: {_show(skew)} is not a number above 0 (a Zipf exponent)")
        skew = None
    unique = raw.get("unique", False)
    if not isinstance(unique, bool):
        fail(where, f"unique: {_show(unique)} is not true or false")
        unique = False
    if unique and not generator.unique:
        fail(where, f"unique: gen {gen!r} cannot make unique values")
    distinct = _expr(raw["distinct"], f"{where}.distinct", fail) if "distinct" in raw else None
    if distinct is not None and unique:
        fail(where, "distinct and unique exclude each other")
    return ColumnSpec(name, gen, params, float(null), distinct, skew, unique, where)


def _typed(value: Any, kind: str) -> tuple[Any, str | None]:
    """(value as the generator takes it, problem or None)."""
    number = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    shown = _show(value)
    if kind == "int":
        return value, None if isinstance(value, int) and not isinstance(
            value, bool
        ) else f"{shown} is not an integer"
    if kind == "number":
        return value, None if number else f"{shown} is not a (finite) number"
    if kind == "text":
        return value, None if isinstance(value, str) else f"{shown} is not text"
    if kind == "list":
        return value, None if isinstance(value, list) else f"{shown} is not an array"
    if kind == "bool":
        return value, None if isinstance(value, bool) else f"{shown} is not true or false"
    if kind == "table":
        return value, None if isinstance(value, dict) else f"{shown} is not a table"
    if kind == "expr":
        try:
            return expr.parse(value), None
        except ExprError as exc:
            return None, str(exc)
    if kind in ("date", "datetime"):
        if isinstance(value, (date, datetime)):
            return value, None
        try:
            return datetime.fromisoformat(str(value)), None
        except ValueError:
            return value, f"{shown} is not an ISO {kind} (2026-01-31 or 2026-01-31T12:00:00)"
    return value, None


def _verify(raw: Any, fail) -> list[Check]:
    if not isinstance(raw, list):
        fail("verify", "must be an array of tables ([[verify]])")
        return []
    out = []
    for k, v in enumerate(raw, start=1):
        where = f"verify[{k}]"
        if not isinstance(v, dict):
            fail(where, "must be a table")
            continue
        _unknown(v, VERIFY_FIELDS, where, fail)
        name = v.get("name")
        if not isinstance(name, str) or not name.strip():
            fail(where, "name: required text")
        sql = {
            d: v[f]
            for f, d in (("sql", ""), ("sql_postgresql", "postgresql"), ("sql_mysql", "mysql"))
            if f in v
        }
        if not sql or not all(isinstance(s, str) and s.strip() for s in sql.values()):
            fail(where, "sql (or sql_postgresql and sql_mysql): required text")
        expect = _expr(v.get("expect"), f"{where}.expect", fail) if "expect" in v else None
        if "expect" not in v:
            fail(where, "expect: required (a number or an expression of :scale)")
        if expect is not None and isinstance(name, str) and sql:
            out.append(Check(name, expect, sql))
    return out
