"""Query catalogs: one TOML file per query shape, in a directory (``sql/catalog/alpine`` is ours).

See ``docs/catalog.md`` for the format. Loading validates every entry and reports problems as
``file: field: what is wrong``.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dbbench.dataset import DATASET_PARAMS
from dbbench.errors import DbbenchError
from dbbench.sqltext import param_names
from dbbench.urls import DIALECTS

CATALOG_DIR = Path(__file__).resolve().parent.parent / "sql" / "catalog"
FORBIDDABLE = ("full_scan", "sort", "temp_table")


class CatalogError(DbbenchError):
    pass


@dataclass
class Variant:
    """One dialect's spelling of a shape and what its plan must look like."""

    sql: str
    expect_table: str
    expect_index: str
    forbid: list[str]
    natural: str | None = None
    natural_label: str | None = None
    settings: dict[str, Any] = field(default_factory=dict)


@dataclass
class Shape:
    name: str
    path: Path
    description: str
    cardinality: str
    expect_rows: int | None
    locks: bool
    params: dict[str, Any]
    setup: list[str]
    variants: dict[str, Variant] = field(default_factory=dict)
    cascade: dict[str, str] | None = None   # {"delete": sql, "count": sql}: proved in a rolled-back transaction


def resolve(name_or_path: str) -> Path:
    path = Path(name_or_path)
    if not path.exists():
        path = CATALOG_DIR / name_or_path
    if not path.exists():
        known = ", ".join(sorted(p.name for p in CATALOG_DIR.iterdir() if p.is_dir()))
        raise CatalogError(f"no catalog {name_or_path!r} (known: {known}; or give a directory or .toml file)")
    return path


def load(name_or_path: str = "alpine", only: list[str] | None = None) -> list[Shape]:
    path = resolve(name_or_path)
    files = sorted(path.glob("*.toml")) if path.is_dir() else [path]
    if not files:
        raise CatalogError(f"{path}: no .toml catalog entries")
    shapes = [load_entry(f) for f in files]
    names = [s.name for s in shapes]
    dupes = {n for n in names if names.count(n) > 1}
    if dupes:
        raise CatalogError(f"{path}: shape names must be unique, repeated: {', '.join(sorted(dupes))}")
    if only:
        unknown = [o for o in only if o not in names]
        if unknown:
            raise CatalogError(f"no shape named {unknown[0]!r} in {path} (shapes: {', '.join(names)})")
        shapes = [s for s in shapes if s.name in only]
    return shapes


def load_entry(path: Path) -> Shape:
    def fail(where: str, what: str) -> CatalogError:
        return CatalogError(f"{path}: {where}: {what}")

    try:
        raw = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as exc:
        raise CatalogError(f"{path}: not valid TOML: {exc}") from None
    for key in ("name", "cardinality"):
        if not isinstance(raw.get(key), str) or not raw[key].strip():
            raise fail(key, "required text is missing")
    known = {"name", "description", "cardinality", "expect_rows", "locks", "params", "setup", "query",
             "cascade", *DIALECTS}
    for key in raw:
        if key not in known:
            raise fail(key, f"unknown field (expected one of {', '.join(sorted(known))})")
    params = raw.get("params", {})
    if not isinstance(params, dict):
        raise fail("params", "must be a table of name = value")
    setup = []
    for i, entry in enumerate(raw.get("setup", [])):
        if not isinstance(entry, dict) or not isinstance(entry.get("sql"), str):
            raise fail(f"setup[{i}]", "needs sql = \"SELECT … AS name …\"")
        setup.append(entry["sql"])
    expect_rows = raw.get("expect_rows")
    if expect_rows is not None and (not isinstance(expect_rows, int) or expect_rows < 0):
        raise fail("expect_rows", "must be a non-negative integer")
    shape = Shape(raw["name"], path, raw.get("description", "").strip(), raw["cardinality"], expect_rows,
                  bool(raw.get("locks", False)), params, setup)
    cascade = raw.get("cascade")
    if cascade is not None:
        if not isinstance(cascade, dict) or not all(isinstance(cascade.get(k), str) for k in ("delete", "count")):
            raise fail("cascade", 'needs delete = "DELETE …" and count = "SELECT COUNT(*) …"')
        shape.cascade = {"delete": cascade["delete"], "count": cascade["count"]}
    shared = raw.get("query", {})
    for dialect in DIALECTS:
        section = raw.get(dialect)
        if section is None:
            continue
        where = f"[{dialect}]"
        sql = section.get("sql", shared.get("sql"))
        if not isinstance(sql, str) or not sql.strip():
            raise fail(f"{where} sql", "missing (give it here or in [query])")
        expect = section.get("expect")
        if not isinstance(expect, dict) or not expect.get("table") or not expect.get("index"):
            raise fail(f"{where} expect", 'needs { table = "…", index = "…" }')
        forbid = section.get("forbid", [])
        for item in forbid:
            if item.partition(":")[0] not in FORBIDDABLE:
                raise fail(f"{where} forbid", f"{item!r} is not one of {', '.join(FORBIDDABLE)} (optionally full_scan:TABLE)")
        natural = section.get("natural")
        available = set(params) | set(DATASET_PARAMS)
        for s in setup:
            available |= {a.lower() for a in _aliases(s)}
        for text, field_name in ((sql, "sql"), (natural, "natural")):
            if text:
                missing = [p for p in param_names(text) if p not in available]
                if missing:
                    raise fail(f"{where} {field_name}", f"parameter :{missing[0]} is not in [params] or a setup query")
        settings = section.get("settings", {})
        if not isinstance(settings, dict):
            raise fail(f"{where} settings", "must be a table of planner setting = value")
        if settings and dialect != "postgresql":
            raise fail(f"{where} settings", "planner settings are supported on PostgreSQL only")
        shape.variants[dialect] = Variant(sql.strip(), expect["table"], expect["index"], list(forbid),
                                          natural.strip() if natural else None, section.get("natural_label"),
                                          dict(settings))
    if not shape.variants:
        raise fail("[postgresql]/[mysql]", "at least one dialect section is required")
    return shape


def _aliases(sql: str) -> list[str]:
    """Output column names of a setup query's select list (``x AS name`` or a bare ``t.col``)."""
    import re
    head = re.split(r"\bFROM\b", sql, maxsplit=1, flags=re.I)[0]
    head = re.sub(r"^\s*SELECT\s+", "", head, flags=re.I)
    names = []
    for item in head.split(","):
        m = re.search(r"(?:\bAS\s+)?([A-Za-z_]\w*)\s*$", item.strip(), flags=re.I)
        if m:
            names.append(m.group(1))
    return names
