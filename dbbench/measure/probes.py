"""Every parameter, not one: a shape's plan under values drawn from the loaded data and under the
plan a prepared statement gets.

For each parameter compared with a column (``customer_id = :customer_id``, ``status IN (:status)``)
the column's hottest value (the most rows) and its rarest are looked up in the namespace, and the
shape is planned with each in turn (the other parameters at their sample values); then once more
as the driver's prepared statement would run it (:attr:`Dialect.GENERIC_PLAN`: PostgreSQL's generic
plan, MySQL's server-side prepared statement). A parameter with no value given gets the column's
typical one (the median value by frequency). Every lookup runs on the namespace's own connection
and is tagged ``/* dbbench */`` so that ``dbbench capture`` leaves it out.
"""

from __future__ import annotations

import contextlib
import weakref
from dataclasses import dataclass
from typing import Any

from dbbench import defaults
from dbbench.catalog.entries import Shape, Variant
from dbbench.catalog.params import param_names, to_pyformat
from dbbench.catalog.sqltext import comparisons, in_lists, table_aliases
from dbbench.dialects.contract import Dialect
from dbbench.dialects.plan import PlanNode, accesses, describe_access
from dbbench.errors import DbbenchError
from dbbench.measure.expect import check

TAG = defaults.QUERY_TAG
# a LIMIT / OFFSET parameter without a value (a statement captured by pg_stat_statements)
_KEYWORD_VALUES = {"limit": 10, "offset": 0}


@dataclass(frozen=True)
class Column:
    table: str
    column: str
    how: str  # eq | range


@dataclass
class Probe:
    """One more plan of the shape: ``label`` says which (the value, or the generic plan)."""

    label: str
    params: dict[str, Any]
    generic: bool = False


def columns(conn, d: Dialect, sql: str) -> dict[str, Column]:
    """parameter -> the namespace column it is compared with, where one is found: the first column
    the other side of its comparison reads, through what wraps it (``lower(email) = lower(:email)``,
    ``customer_id + 0 = :customer_id``: :func:`dbbench.catalog.sqltext.comparisons`)."""
    aliases = table_aliases(sql)
    tables = list(dict.fromkeys(aliases.values()))
    out: dict[str, Column] = {}
    known: dict[tuple[str, str], bool] = {}
    for name, compared in comparisons(sql).items():
        for qualifier, column in compared.columns:
            candidates = [aliases[qualifier]] if qualifier and qualifier in aliases else tables
            table = next((t for t in candidates if _known(known, conn, d, t, column)), None)
            if table is not None:
                out[name] = Column(table, column, compared.how)
                break
    return out


def _known(known: dict[tuple[str, str], bool], conn, d: Dialect, table: str, column: str) -> bool:
    if (table, column) not in known:
        known[table, column] = _has_column(conn, d, table, column)
    return known[table, column]


def _has_column(conn, d: Dialect, table: str, column: str) -> bool:
    try:
        d.query_row(conn, f"{TAG}SELECT {column} FROM {table} WHERE 1 = 0", {})
        return True
    except Exception as exc:
        if d.is_driver_error(exc):
            return False
        raise


def _frequency(conn, d: Dialect, col: Column, order: str, offset: int = 0) -> tuple[Any, int] | None:
    """(value, rows holding it) of ``col`` by frequency (``order`` DESC: hottest first)."""
    row = d.query_row(
        conn,
        f"{TAG}SELECT {d.GROUPING_HINT}{col.column} AS v, COUNT(*) AS n FROM {col.table} "
        f"WHERE {col.column} IS NOT NULL "
        f"GROUP BY {col.column} ORDER BY n {order}, v LIMIT 1 OFFSET {int(offset)}",
        {},
    )
    return None if row is None else (row["v"], int(row["n"]))


Extremes = tuple[tuple[Any, int], tuple[Any, int], int]
# per connection, the extremes of each (table, column) read on it: the shapes of a run share
# columns, and every sample is rolled back, so the data a connection sees does not change
_EXTREMES: weakref.WeakKeyDictionary[Any, dict[tuple[str, str], Extremes | None]] = (
    weakref.WeakKeyDictionary()
)


def extremes(conn, d: Dialect, col: Column) -> Extremes | None:
    """((value, rows) of the hottest value, of the rarest, the table's rows) of ``col``, in one
    reading of the column; None when it holds no value."""
    try:
        known = _EXTREMES.setdefault(conn, {})
    except TypeError:  # a connection that takes no weak reference: read every time
        known = {}
    key = (col.table, col.column)
    if key not in known:
        c, t = col.column, col.table
        row = d.query_row(
            conn,
            f"{TAG}WITH g AS (SELECT {c} AS v, COUNT(*) AS n FROM {t} WHERE {c} IS NOT NULL GROUP BY {c}) "
            f"SELECT {d.GROUPING_HINT}h.v AS hv, h.n AS hn, r.v AS rv, r.n AS rn, "
            f"(SELECT COUNT(*) FROM {t}) AS total "
            "FROM (SELECT v, n FROM g ORDER BY n DESC, v LIMIT 1) h "
            "CROSS JOIN (SELECT v, n FROM g ORDER BY n, v LIMIT 1) r",
            {},
        )
        known[key] = (
            None
            if row is None
            else ((row["hv"], int(row["hn"])), (row["rv"], int(row["rn"])), int(row["total"]))
        )
    return known[key]


def values_read(conn) -> dict[tuple[str, str], Extremes | None]:
    """The columns' extremes ``conn`` has read (:func:`extremes`), to hand to another connection
    that reads the same data (:func:`assume_values`)."""
    try:
        return dict(_EXTREMES.get(conn, {}))
    except TypeError:
        return {}


def assume_values(conn, values: dict[tuple[str, str], Extremes | None]) -> None:
    """``conn`` takes the extremes another connection read of the same data, unchanged since (an
    index hidden or added changes no value): they are not read again."""
    with contextlib.suppress(TypeError):  # a connection that takes no weak reference: read every time
        _EXTREMES.setdefault(conn, {}).update(values)


def _count(conn, d: Dialect, col: Column, distinct: bool) -> int:
    what = f"DISTINCT {col.column}" if distinct else "*"
    row = d.query_row(conn, f"{TAG}SELECT COUNT({what}) AS n FROM {col.table}", {})
    return int(row["n"]) if row else 0


def typical(conn, d: Dialect, col: Column, nth: int = 0) -> Any:
    """The column's median value by frequency (equality), or its median row's value (a range);
    ``nth``: the one ``nth`` places after it (the items of an IN-list get distinct values)."""
    if col.how == "eq":
        distinct = _count(conn, d, col, True)
        found = _frequency(conn, d, col, "DESC", (distinct // 2 + nth) % max(distinct, 1))
        return None if found is None else found[0]
    rows = _count(conn, d, col, False)
    row = d.query_row(
        conn,
        f"{TAG}SELECT {col.column} AS v FROM {col.table} WHERE {col.column} IS NOT NULL "
        f"ORDER BY {col.column} LIMIT 1 OFFSET {(rows // 2 + nth) % max(rows, 1)}",
        {},
    )
    return None if row is None else row["v"]


def fill(conn, d: Dialect, shape: Shape, sql: str, params: dict[str, Any]) -> dict[str, Any]:
    """``params`` with a value for every parameter of ``sql`` that has none: the one the baseline
    measured the shape with (``shape.samples``, ``dbbench diff``), else the data's typical one
    (the parameters of one IN-list: distinct values). Raises :class:`DbbenchError` naming the
    parameter when neither offers one."""
    missing = [p for p in param_names(sql) if params.get(p) is None]
    if not missing:
        return params
    sampled = shape.samples.get(d.NAME, {})
    out = dict(params)
    for name in missing:
        if sampled.get(name) is not None:
            out[name] = sampled[name]
    missing = [p for p in missing if out.get(p) is None]
    found = columns(conn, d, sql) if missing else {}
    rank = {name: i for group in in_lists(sql) for i, name in enumerate(group)}
    for name in missing:
        value = (
            typical(conn, d, found[name], rank.get(name, 0)) if name in found else _KEYWORD_VALUES.get(name)
        )
        if value is None:
            where = f"{shape.path}:{shape.line}" if shape.line else str(shape.path)
            raise DbbenchError(
                f"{where}: shape {shape.name!r}: parameter :{name} has no value and is compared with "
                f"no column holding data; add `-- dbbench: param {name} = …`"
            )
        out[name] = value
    return out


def probes(conn, d: Dialect, shape: Shape, sql: str, params: dict[str, Any]) -> list[Probe]:
    """The extra plans ``shape`` asks for (``shape.probes``): its hottest and rarest values per
    equality parameter, and the generic plan."""
    out: list[Probe] = []
    if "values" in shape.probes:
        later = {name for group in in_lists(sql) for name in group[1:]}
        for name, col in columns(conn, d, sql).items():
            if col.how != "eq" or name in later:  # an IN-list: its first value swapped, the others kept
                continue
            ends = extremes(conn, d, col)
            if ends is None:
                continue
            hottest, rarest, total = ends
            for found, word in ((hottest, "hottest"), (rarest, "rarest")):
                if any(found[0] == p.params[name] for p in out if name in p.params):
                    continue
                if found[0] == params.get(name):
                    continue
                label = f"{word} value {name} = {found[0]!r} ({found[1]:,} of {total:,} rows)"
                out.append(Probe(label, {**params, name: found[0]}))
    if "generic" in shape.probes:
        out.append(Probe(d.GENERIC_PLAN, dict(params), generic=True))
    return out


def _access_words(tree: PlanNode, table: str) -> str:
    """The plan's access to ``table`` with its estimated and actual rows (why the planner chose it)."""
    nodes = [n for n in accesses(tree) if n.table == table] or list(accesses(tree))
    if not nodes:
        return "no table access"
    n = nodes[0]
    said = [f"estimated {n.est_rows:,.0f} rows"] if n.est_rows is not None else []
    said += [f"{n.actual_rows:,.0f} actual"] if n.actual_rows is not None else []
    return describe_access(n) + (f" ({', '.join(said)})" if said else "")


def run(
    conn, d: Dialect, shape: Shape, v: Variant, params: dict[str, Any], timeout_ms: int, access_only: bool
) -> list[str]:
    """The problems of every probe of ``shape`` on ``conn``: one line each, naming the value or
    the generic plan, what the plan did instead and each broken expectation."""
    if not v.expect_index:
        return []
    problems = []
    stmt = to_pyformat(v.sql)
    forbid = [f for f in v.forbid if f.startswith("full_scan")] if access_only else v.forbid
    for probe in probes(conn, d, shape, v.sql, params):
        try:
            explain = d.run_explain_generic if probe.generic else d.run_explain
            _, tree, _ = explain(conn, stmt, probe.params, timeout_ms, v.settings)
        except TimeoutError as exc:
            problems.append(f"{probe.label}: {exc}")
            continue
        except Exception as exc:
            # a write the server will not execute with this value (a foreign key that restricts
            # the hottest parent's deletion, NOT NULL): its plan is what the planner would do
            if not (d.is_driver_error(exc) and d.refuses_data(exc)) or probe.generic:
                raise
            tree, _ = d.estimate_plan(conn, stmt, probe.params, timeout_ms, v.settings)
        if not accesses(tree):
            # MySQL read the unique key's row while planning and found none (the probe's value
            # with the others' sample values matches no row): nothing was left to execute
            continue
        verdict = check(tree, v.expect_table, v.expect_index, forbid)
        if not verdict.ok:
            problems.append(
                f"{probe.label}: {_access_words(tree, v.expect_table)}: " + "; ".join(verdict.problems)
            )
    return problems
