"""Query catalogs: one TOML file per query shape, in a directory (``sql/catalog/alpine`` is ours).

See ``docs/catalog.md`` for the format. A catalog directory may also carry the SQL that builds its
own schema and data (``setup.sql``, or ``setup.postgresql.sql`` / ``setup.mysql.sql``, or several
files in a ``setup/`` folder, run in name order), which ``dbbench seed --catalog DIR`` runs into a
namespace dbbench owns (see :mod:`dbbench.setup`).

Loading validates every entry and reports every problem found, one per line, as
``FILE: entry "NAME": FIELD: what is wrong``.
"""

from __future__ import annotations

import hashlib
import os
import re
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime, time
from pathlib import Path
from typing import Any

from dbbench.catalog import sqlfiles
from dbbench.catalog.features import FEATURE_ALIASES, FEATURES, normalize_forbid
from dbbench.catalog.files import Budget, inside, is_empty, problem, read_text
from dbbench.catalog.params import DATASET_PARAMS, param_names
from dbbench.catalog.sqltext import QUERY_KINDS, ROW_KINDS, WRITE_KINDS, line_of, statement_problems
from dbbench.defaults import DIALECTS
from dbbench.errors import DbbenchError
from verdict.files import excerpt, loads_toml

CATALOG_DIR = Path(__file__).resolve().parents[2] / "sql" / "catalog"
FORBIDDABLE = FEATURES
SETUP_FILES = ("setup.{dialect}.sql", "setup.sql")
SETUP_DIR = "setup"  # or several files, in name order: NAME.<dialect>.sql for one dialect, NAME.sql for both

ENTRY_FIELDS = {
    "name",
    "description",
    "cardinality",
    "access_path",
    "expect_rows",
    "locks",
    "max_locked_rows",
    "race",
    "params",
    "setup",
    "query",
    "cascade",
    "growth",
    "probe",
    *DIALECTS,
}
MAX_NAME = sqlfiles.MAX_NAME  # characters of a shape's name, in either format
# How a shape's work may grow with the data (`dbbench grow`), from best to worst.
GROWTH_CLASSES = ("bounded", "logarithmic", "linear")
DIALECT_FIELDS = {"sql", "natural", "natural_label", "expect", "forbid", "settings", "max_locked_rows"}


class CatalogError(DbbenchError):
    """One or more catalog problems; ``problems`` holds one line each."""

    def __init__(self, problems: list[str] | str):
        self.problems = [problems] if isinstance(problems, str) else list(problems)
        super().__init__("\n".join(self.problems))


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
    # the most rows the statement may lock on this dialect (the shape's bound when not given here)
    max_locked_rows: int | None = None


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
    cascade: dict[str, str] | None = (
        None  # {"delete": sql, "count": sql}: proved in a rolled-back transaction
    )
    access_path: str | None = None  # short words for the report's "Bounded access path" column
    growth: str | None = None  # the worst growth `dbbench grow` accepts (GROWTH_CLASSES)
    line: int | None = None  # where the shape starts in ``path`` (an annotated SQL file's block)
    probes: tuple[str, ...] = ()  # also checked: "values" drawn from the data, the "generic" plan
    source: str | None = None  # where it was captured from (file:line, test), if it was
    # per dialect, the values a baseline measured the shape with (``dbbench diff``): a parameter
    # with no value takes its baseline value before one drawn from the data
    samples: dict[str, dict[str, Any]] = field(default_factory=dict)
    # the most rows a write or a locking read may lock (its lock footprint, every table counted)
    max_locked_rows: int | None = None
    # a two-session check (:mod:`dbbench.measure.race`): {"holder": shape name, "params": {holder
    # parameter: value or ":this shape's parameter"}, "wait_ms": how long waiting is "at once"}
    race: dict[str, Any] | None = None
    race_holder: Shape | None = field(default=None, repr=False)  # the shape ``race`` names, loaded

    def locked_rows_bound(self, dialect: str) -> int | None:
        """The ``max_locked_rows`` that holds on ``dialect``: its section's, else the shape's."""
        v = self.variants.get(dialect)
        if v is not None and v.max_locked_rows is not None:
            return v.max_locked_rows
        return self.max_locked_rows


@dataclass
class Catalog:
    """A loaded catalog: its shapes and, if it builds its own data, its setup SQL per dialect."""

    name: str
    path: Path
    shapes: list[Shape]
    setup: dict[str, list[Path]] = field(default_factory=dict)  # dialect -> its files, in order

    @property
    def has_setup(self) -> bool:
        return bool(self.setup)

    def setup_label(self, dialect: str) -> str:
        """The setup of a dialect as the output names it: its file, or the folder and its count."""
        files = self.setup[dialect]
        if len(files) == 1 and files[0].parent.name != SETUP_DIR:
            return files[0].name
        return f"{SETUP_DIR}/ ({len(files)} file{'s' if len(files) != 1 else ''})"

    def setup_digest(self, dialect: str) -> str:
        """SHA-256 of the dialect's setup file (of each file's name and digest, for a folder)."""
        files = self.setup[dialect]
        digests = [_sha256(f) for f in files]
        if len(files) == 1 and files[0].parent.name != SETUP_DIR:
            return digests[0]
        lines = "".join(f"{f.name} {d}\n" for f, d in zip(files, digests, strict=True))
        return hashlib.sha256(lines.encode()).hexdigest()

    @property
    def dataset_name(self) -> str:
        """What a namespace built from this catalog's setup calls its dataset."""
        return f"setup:{self.name}"


def _sha256(file: Path) -> str:
    with file.open("rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def resolve(name_or_path: str | Path) -> Path:
    path = Path(name_or_path)
    if not path.exists():
        path = CATALOG_DIR / str(name_or_path)
    if not path.exists():
        known = ", ".join(sorted(p.name for p in CATALOG_DIR.iterdir() if p.is_dir()))
        raise CatalogError(
            f"no catalog {excerpt(str(name_or_path))!r} (known: {known}; or give a directory or .toml file)"
        )
    return path


def setup_files(directory: Path) -> dict[str, list[Path]]:
    """The setup SQL of a catalog directory, per dialect: the ``setup/`` folder's ``.sql`` files in
    name order (``NAME.<dialect>.sql`` for that dialect only), else ``setup.<dialect>.sql``, else
    ``setup.sql``. A dialect with both a folder and a file is refused (which would run?), and so is
    a setup file that is not an ordinary file inside the directory (:func:`dbbench.catalog.files.inside`)."""
    folder = directory / SETUP_DIR
    listed = sorted(folder.glob("*.sql")) if folder.is_dir() else []
    named = [directory / p.format(dialect=d) for d in DIALECTS for p in SETUP_FILES]
    refused = []
    for f in dict.fromkeys([*listed, *(f for f in named if os.path.lexists(f))]):
        try:
            inside(f, directory)
        except OSError as exc:
            refused.append(problem(exc))
    if refused:
        raise CatalogError(refused)
    out: dict[str, list[Path]] = {}
    for dialect in DIALECTS:
        others = [f".{d}.sql" for d in DIALECTS if d != dialect]
        files = [f for f in listed if not f.name.endswith(tuple(others))]
        single = next(
            (c for p in SETUP_FILES if (c := directory / p.format(dialect=dialect)).is_file()), None
        )
        if files and single is not None:
            raise CatalogError(
                f"{directory}: both {single.name} and {SETUP_DIR}/ hold setup SQL for {dialect}; "
                f"keep one (the files of {SETUP_DIR}/ run in name order)"
            )
        if files:
            out[dialect] = files
        elif single is not None:
            out[dialect] = [single]
    return out


def open_catalog(
    name_or_path: str | Path = "alpine", only: list[str] | None = None, *, need_shapes: bool = True
) -> Catalog:
    """Load and validate a catalog (a name under ``sql/catalog/``, a directory, or one entry file).

    ``need_shapes=False`` (building and filling a namespace: seed, validate) also takes a directory
    that holds only setup SQL, a schema without query shapes yet: a Catalog without shapes."""
    path = resolve(name_or_path)
    is_dir = path.is_dir()
    directory = path if is_dir else path.parent
    files = sorted(path.glob("*.toml")) if is_dir else [path]
    setup = setup_files(directory)
    if sqlfiles.is_sql_catalog(path):  # annotated .sql files (dbbench.catalog.sqlfiles)
        return _sql_catalog(path, setup, only)
    if not files and not (setup and not need_shapes):
        hint = " (`dbbench seed --catalog` and `init` need only its setup SQL)" if setup else ""
        raise CatalogError(f"{path}: no .toml catalog entries (or annotated .sql files){hint}")
    # A catalog that builds its own data cannot use the alpine dataset's values.
    offered = () if setup else DATASET_PARAMS
    shapes, problems = [], []
    texts: dict[Path, str] = {}
    budget = Budget()
    for f in files:  # each read once, bounded (a file named inside a directory stays inside it)
        try:
            texts[f] = read_text(f, directory if is_dir else None, budget)
        except OSError as exc:
            problems.append(problem(exc))
    for f, text in texts.items():
        try:
            shapes.append(load_entry(f, offered, text=text))
        except CatalogError as exc:
            problems += exc.problems
    seen: dict[str, Path] = {}
    for f, text in texts.items():  # every file, including those with other problems
        name = _entry_name(text)
        if name is None:
            continue
        if name in seen:
            problems.append(
                f"{f}: entry {excerpt(name)!r}: name: already used by {seen[name].name} "
                "(shape names must be unique)"
            )
        seen.setdefault(name, f)
    for s in shapes:
        if s.race and s.race["holder"] not in seen:
            problems.append(
                f"{s.path}: entry {excerpt(s.name)!r}: race.holder: no shape named "
                f"{excerpt(s.race['holder'])!r} in this catalog"
            )
        elif s.race and s.race["holder"] == s.name:
            problems.append(f"{s.path}: entry {excerpt(s.name)!r}: race.holder: names the shape itself")
    for dialect, files in setup.items():
        if not any(dialect in s.variants for s in shapes):
            continue
        for file in files:
            try:
                if is_empty(file):
                    problems.append(f"{file}: empty setup SQL")
            except OSError as exc:
                problems.append(f"{file}: cannot read: {exc.strerror or exc}")
    if problems:
        raise CatalogError(problems)
    names = [s.name for s in shapes]
    by_name = {s.name: s for s in shapes}
    for s in shapes:
        if s.race:
            s.race_holder = by_name[s.race["holder"]]
    if only:
        unknown = [o for o in only if o not in names]
        if unknown:
            raise CatalogError(
                f"no shape named {excerpt(unknown[0])!r} in {path} (shapes: {excerpt(', '.join(names), 200)})"
            )
        shapes = [s for s in shapes if s.name in only]
    name = directory.name if path.is_dir() else path.stem
    return Catalog(name, path, shapes, setup)


def _sql_catalog(path: Path, setup: dict[str, list[Path]], only: list[str] | None) -> Catalog:
    """A catalog of annotated SQL files (:mod:`dbbench.catalog.sqlfiles`): one shape per block."""
    blocks, problems = sqlfiles.read(path)
    if problems:
        raise CatalogError(problems)
    shapes = [sql_shape(b) for b in blocks if not only or b.name in only]
    if only and (unknown := [o for o in only if o not in {b.name for b in blocks}]):
        raise CatalogError(f"no shape named {excerpt(unknown[0])!r} in {path}")
    return Catalog(path.parent.name if path.is_file() else path.name, path, shapes, setup)


def sql_shape(b: sqlfiles.Block) -> Shape:
    """The shape of one annotated SQL block: no expectation is an empty table and index (a plain
    ``INSERT … VALUES`` needs none: its table is the one it inserts into, as in a TOML entry);
    ``max-locked-rows`` lines are the shape's bound (a dialect's line, that dialect's)."""
    shape = Shape(b.name, b.path, b.description, b.cardinality, b.rows, False, dict(b.params), [])
    shape.growth, shape.line, shape.probes, shape.source = b.growth, b.line, tuple(b.probes), b.source
    shape.max_locked_rows = b.max_locked_rows.get(None)
    for d in b.only:
        table, index = b.expected(d) or (_insert_target(b.sql) if inserts_values(b.sql) else "", "")
        shape.variants[d] = Variant(b.sql, table, index, b.forbidden(d))
        shape.variants[d].max_locked_rows = b.max_locked_rows.get(d)
    return shape


def load(name_or_path: str | Path = "alpine", only: list[str] | None = None) -> list[Shape]:
    return open_catalog(name_or_path, only).shapes


def _entry_name(text: str) -> str | None:
    try:
        name = loads_toml(text).get("name")
    except tomllib.TOMLDecodeError:
        return None
    return name if isinstance(name, str) and name.strip() else None


def _is_param_value(value) -> bool:
    return isinstance(value, (str, int, float, bool, datetime, date, time))


Fail = Callable[[str, str], None]  # (where in the entry, what is wrong): one problem line


def load_entry(path: Path, offered_params=DATASET_PARAMS, *, text: str | None = None) -> Shape:
    """One catalog entry (``text``: the file's, when already read), validated. Raises
    :class:`CatalogError` listing every problem found."""
    raw = _read_entry(path, text)
    name = raw.get("name") if isinstance(raw.get("name"), str) and raw["name"].strip() else None
    where_entry = f"entry {excerpt(name)!r}: " if name else ""
    problems: list[str] = []

    def fail(where: str, what: str) -> None:
        problems.append(f"{path}: {where_entry}{where}: {what}")

    _check_fields(raw, name, fail)
    params = _params(raw, fail)
    setup = _setup_queries(raw, fail)
    on = [d for d in DIALECTS if isinstance(raw.get(d), dict)] or list(DIALECTS)
    for i, sql in enumerate(setup):
        check_sql(f"setup[{i}] sql", sql, on, ROW_KINDS, fail)
    expect_rows = _expect_rows(raw, fail)
    if "locks" in raw and not isinstance(raw["locks"], bool):
        fail("locks", "must be true or false")
    growth = raw.get("growth")
    if growth is not None and growth not in GROWTH_CLASSES:
        fail("growth", f"must be one of {', '.join(GROWTH_CLASSES)}")
        growth = None
    probes = _probes(raw.get("probe"), fail)
    max_locked = _count("max_locked_rows", raw.get("max_locked_rows"), fail)
    shape = Shape(
        name or path.stem,
        path,
        str(raw.get("description", "")).strip(),
        str(raw.get("cardinality", "")),
        expect_rows,
        bool(raw.get("locks", False)),
        params,
        setup,
        access_path=(raw.get("access_path") or "").strip() or None,
        growth=growth,
        probes=probes,
        max_locked_rows=max_locked,
    )
    available = set(params) | set(offered_params)
    for s in setup:
        available |= {a.lower() for a in _aliases(s)}
    shape.cascade = _cascade(raw.get("cascade"), available, fail)
    if shape.cascade is not None:
        check_sql("cascade.delete", shape.cascade["delete"], on, WRITE_KINDS, fail)
        check_sql("cascade.count", shape.cascade["count"], on, ROW_KINDS, fail)
    shape.race = _race(raw.get("race"), available, fail)
    shared = _shared_query(raw, fail)
    using = [d for d in on if "sql" not in raw.get(d, {})]  # the dialects [query] sql is run on
    if isinstance(shared.get("sql"), str) and shared["sql"].strip() and using:
        check_sql("[query] sql", shared["sql"], using, QUERY_KINDS, fail)
    for dialect in DIALECTS:
        variant = _variant(dialect, raw.get(dialect), shared, available, fail)
        if variant is not None:
            shape.variants[dialect] = variant
    if not any(isinstance(raw.get(d), dict) for d in DIALECTS):
        fail("[postgresql]/[mysql]", "at least one dialect section is required")
    if problems:
        raise CatalogError(problems)
    return shape


def _read_entry(path: Path, text: str | None = None) -> dict[str, Any]:
    try:
        return loads_toml(read_text(path) if text is None else text)
    except tomllib.TOMLDecodeError as exc:
        raise CatalogError(f"{path}: not valid TOML: {excerpt(str(exc), 200)}") from None
    except OSError as exc:
        raise CatalogError(problem(exc)) from None


def _check_fields(raw: dict[str, Any], name: str | None, fail: Fail) -> None:
    """The entry's required and text fields, and no unknown one."""
    if name is None:
        fail("name", "required text is missing")
    elif len(name) > MAX_NAME:
        fail("name", f"{len(name):,} characters: a shape's name has at most {MAX_NAME}")
    for key in ("cardinality",):
        if not isinstance(raw.get(key), str) or not raw[key].strip():
            fail(key, "required text is missing")
    for key in ("description", "access_path"):
        if key in raw and not isinstance(raw[key], str):
            fail(key, "must be text")
    for key in raw:
        if key not in ENTRY_FIELDS:
            fail(excerpt(key, 40), f"unknown field (expected one of {', '.join(sorted(ENTRY_FIELDS))})")


def _params(raw: dict[str, Any], fail: Fail) -> dict[str, Any]:
    params = raw.get("params", {})
    if not isinstance(params, dict):
        fail("params", "must be a table of name = value")
        params = {}
    for key, value in params.items():
        if not _is_param_value(value):
            fail(f"params.{excerpt(key, 40)}", "must be text, a number, a boolean or a date/time")
    return params


def _setup_queries(raw: dict[str, Any], fail: Fail) -> list[str]:
    """The SQL of the ``[[setup]]`` queries (their select lists name parameters)."""
    setup = []
    raw_setup = raw.get("setup", [])
    if not isinstance(raw_setup, list):
        fail("setup", 'must be [[setup]] entries with sql = "SELECT … AS name …"')
        raw_setup = []
    for i, entry in enumerate(raw_setup):
        if not isinstance(entry, dict) or not isinstance(entry.get("sql"), str) or not entry["sql"].strip():
            fail(f"setup[{i}]", 'needs sql = "SELECT … AS name …"')
            continue
        setup.append(entry["sql"])
    return setup


def _probes(value: Any, fail: Fail) -> tuple[str, ...]:
    """``probe``: the extra plans checked (:mod:`dbbench.measure.probes`), spelled as an annotated
    SQL block's ``-- dbbench: probe`` line (``"none"``, ``"values"``, ``"generic"``, ``"values,
    generic"``) or as a list of those words; both when not given."""
    if value is None:
        return sqlfiles.PROBES
    words = ", ".join(value) if isinstance(value, list) and all(isinstance(v, str) for v in value) else value
    chosen = sqlfiles.probe_words(words) if isinstance(words, str) else None
    if chosen is None:
        fail("probe", f"{excerpt(repr(value), 60)} is not {sqlfiles.PROBE_CHOICES}")
        return sqlfiles.PROBES
    return chosen


def _count(where: str, value: Any, fail: Fail) -> int | None:
    """A non-negative whole number, or None (reported when it is something else)."""
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        fail(where, "must be a non-negative integer")
        return None
    return value


RACE_FIELDS = {"holder", "params", "wait_ms"}


def _race(race: Any, available: set[str], fail: Fail) -> dict[str, Any] | None:
    """``[race]``: the shape whose statement holds its locks in another session (``holder``, a
    shape of the same catalog), the values it runs with (``params``: text starting with ``:``
    names this shape's parameter), and how long this shape may wait (``wait_ms``, default 1000)."""
    if race is None:
        return None
    if not isinstance(race, dict) or not isinstance(race.get("holder"), str) or not race["holder"].strip():
        fail("race", 'needs holder = "NAME OF THE SHAPE THAT HOLDS THE LOCKS"')
        return None
    for key in race:
        if key not in RACE_FIELDS:
            fail(
                f"race.{excerpt(key, 40)}",
                f"unknown field (expected one of {', '.join(sorted(RACE_FIELDS))})",
            )
    params = race.get("params", {})
    if not isinstance(params, dict):
        fail("race.params", "must be a table of name = value")
        params = {}
    for key, value in params.items():
        if not _is_param_value(value):
            fail(f"race.params.{excerpt(key, 40)}", "must be text, a number, a boolean or a date/time")
        elif isinstance(value, str) and value.startswith(":") and value[1:].lower() not in available:
            fail(f"race.params.{excerpt(key, 40)}", f"{excerpt(value)} is not in [params] or a setup query")
    wait = _count("race.wait_ms", race.get("wait_ms", 1000), fail)
    if wait == 0:
        fail("race.wait_ms", "must be at least 1")
    return {"holder": race["holder"].strip(), "params": dict(params), "wait_ms": wait or 1000}


def _expect_rows(raw: dict[str, Any], fail: Fail) -> int | None:
    expect_rows = raw.get("expect_rows")
    if expect_rows is not None and (
        not isinstance(expect_rows, int) or isinstance(expect_rows, bool) or expect_rows < 0
    ):
        fail("expect_rows", "must be a non-negative integer")
        expect_rows = None
    return expect_rows


def check_sql(where: str, sql: str, dialects, kinds, fail: Fail) -> None:
    """Each problem of a catalog statement's text (:func:`dbbench.catalog.sqltext.statement_problems`:
    a NUL byte, quotes, comments or parentheses left open, a second statement, a kind the
    statement is not), where it is in the field's text."""
    for offset, what in statement_problems(sql, dialects, kinds):
        line, column = line_of(sql, offset)
        at = f"line {line}, column {column}" if "\n" in sql.strip() else f"column {column}"
        fail(where, f"{what} (at {at} of the SQL)")


def _missing_param(sql: str, available: set[str]) -> str | None:
    """The first ``:name`` of ``sql`` that no parameter or setup query gives."""
    missing = [p for p in param_names(sql) if p not in available]
    return missing[0] if missing else None


def _cascade(cascade: Any, available: set[str], fail: Fail) -> dict[str, str] | None:
    """The ``[cascade]`` delete and count, each using only parameters the entry has."""
    if cascade is None:
        return None
    if not isinstance(cascade, dict) or not all(isinstance(cascade.get(k), str) for k in ("delete", "count")):
        fail("cascade", 'needs delete = "DELETE …" and count = "SELECT COUNT(*) …"')
        return None
    for key in ("delete", "count"):
        missing = _missing_param(cascade[key], available)
        if missing:
            fail(f"cascade.{key}", f"parameter :{excerpt(missing)} is not in [params] or a setup query")
    return {"delete": cascade["delete"], "count": cascade["count"]}


def _shared_query(raw: dict[str, Any], fail: Fail) -> dict[str, Any]:
    """``[query]``: the SQL every dialect section uses unless it gives its own."""
    shared = raw.get("query", {})
    if not isinstance(shared, dict):
        fail("query", 'must be a table: [query] sql = "…"')
        shared = {}
    for key in shared:
        if key != "sql":
            fail(f"[query] {excerpt(key, 40)}", "unknown field (only sql)")
    return shared


def _variant(
    dialect: str, section: Any, shared: dict[str, Any], available: set[str], fail: Fail
) -> Variant | None:
    """One dialect's section (``[postgresql]``, ``[mysql]``), validated: its variant if complete."""
    if section is None:
        return None
    where = f"[{dialect}]"
    if not isinstance(section, dict):
        fail(where, "must be a table")
        return None
    for key in section:
        if key not in DIALECT_FIELDS:
            fail(
                f"{where} {excerpt(key, 40)}",
                f"unknown field (expected one of {', '.join(sorted(DIALECT_FIELDS))})",
            )
    sql = section.get("sql", shared.get("sql"))
    if not isinstance(sql, str) or not sql.strip():
        fail(f"{where} sql", "missing (give it here or in [query])")
        sql = None
    expect: dict[str, str] | None
    if isinstance(sql, str) and inserts_values(sql) and "expect" not in section:
        # no access path: the indexes it writes are reported
        expect = {"table": _insert_target(sql), "index": ""}
    else:
        expect = _expect(where, section.get("expect"), fail)
    forbid = _forbid(where, section.get("forbid", []), fail)
    natural = section.get("natural")
    if natural is not None and (not isinstance(natural, str) or not natural.strip()):
        fail(f"{where} natural", "must be SQL text")
        natural = None
    label = section.get("natural_label")
    if label is not None and not natural:
        fail(f"{where} natural_label", "given without a natural spelling")
    for text, field_name in ((sql, "sql"), (natural, "natural")):
        missing = _missing_param(text, available) if text else None
        if missing:
            fail(
                f"{where} {field_name}", f"parameter :{excerpt(missing)} is not in [params] or a setup query"
            )
        if text and field_name in section:  # [query] sql is checked once, as [query] sql
            check_sql(f"{where} {field_name}", text, [dialect], QUERY_KINDS, fail)
    settings = _settings(where, dialect, section.get("settings", {}), fail)
    max_locked = _count(f"{where} max_locked_rows", section.get("max_locked_rows"), fail)
    if not (sql and expect):
        return None
    natural_sql = natural.strip() if natural else None
    return Variant(
        sql.strip(), expect["table"], expect["index"], forbid, natural_sql, label, settings, max_locked
    )


_INSERT_TARGET = re.compile(
    r"^\s*INSERT\s+(?:(?:LOW_PRIORITY|HIGH_PRIORITY|DELAYED|IGNORE)\s+)*(?:INTO\s+)?[`\"]?([A-Za-z_][\w$]*)",
    re.I,
)


def inserts_values(sql: str) -> bool:
    """Whether ``sql`` is a plain ``INSERT … VALUES`` (no ``SELECT``): a statement with no access
    path, whose cost is the indexes it writes; its shape needs no ``expect``."""
    return bool(_INSERT_TARGET.match(sql)) and not re.search(r"\bSELECT\b", sql, re.I)


def _insert_target(sql: str) -> str:
    m = _INSERT_TARGET.match(sql)
    return m.group(1) if m else ""


def _expect(where: str, expect: Any, fail: Fail) -> dict[str, str] | None:
    """``expect = { table = "…", index = "…" }``, or None (reported) if it is not that."""
    if (
        not isinstance(expect, dict)
        or not isinstance(expect.get("table"), str)
        or not expect.get("table")
        or not isinstance(expect.get("index"), str)
        or not expect.get("index")
    ):
        fail(f"{where} expect", 'needs { table = "…", index = "…" }')
        return None
    if set(expect) - {"table", "index"}:
        fail(
            f"{where} expect",
            f"unknown key {excerpt(sorted(set(expect) - {'table', 'index'})[0], 40)!r} (only table, index)",
        )
    return expect


def _forbid(where: str, forbid: Any, fail: Fail) -> list[str]:
    """The forbidden plan features, by their canonical names."""
    if not isinstance(forbid, list):
        fail(f"{where} forbid", 'must be a list, e.g. ["full_scan", "sort"]')
        forbid = []
    canonical = []
    for item in forbid:
        try:
            canonical += normalize_forbid([item])
        except ValueError:
            fail(
                f"{where} forbid",
                f"{excerpt(repr(item), 60)} is not one of {', '.join([*FEATURES, *FEATURE_ALIASES])} "
                "(optionally full_scan:TABLE)",
            )
    return canonical


def _settings(where: str, dialect: str, settings: Any, fail: Fail) -> dict[str, Any]:
    """Planner settings (PostgreSQL only) for the spelling's runs."""
    if not isinstance(settings, dict):
        fail(f"{where} settings", "must be a table of planner setting = value")
        settings = {}
    if settings and dialect != "postgresql":
        fail(f"{where} settings", "planner settings are supported on PostgreSQL only")
    return dict(settings)


def _aliases(sql: str) -> list[str]:
    """Output column names of a setup query's select list (``x AS name`` or a bare ``t.col``)."""
    head = re.split(r"\bFROM\b", sql, maxsplit=1, flags=re.I)[0]
    head = re.sub(r"^\s*SELECT\s+", "", head, flags=re.I)
    names = []
    for item in head.split(","):
        # the trailing name of the item, read from its end (a search from every position of a long
        # word would read the word once per position)
        text = item.strip()
        start = len(text)
        while start and (text[start - 1].isalnum() or text[start - 1] == "_"):
            start -= 1
        m = re.compile(r"[0-9]*([A-Za-z_]\w*)").fullmatch(text, start)
        if m:
            names.append(m.group(1))
    return names
