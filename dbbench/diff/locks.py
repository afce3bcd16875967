"""The lock footprint of a write or a locking read, baseline against result.

A spelling that writes (``UPDATE``, ``DELETE``, ``INSERT … SELECT``) or reads with row locks
(``FOR UPDATE``) records what it locked (``locks``: :mod:`dbbench.document.locks` reads it). Its
rows locked are judged as the rows examined are (:mod:`dbbench.diff.work`): up by more than
``Thresholds.work_factor`` **and** by at least ``Thresholds.work_min`` rows is a ``locks``
regression, one line naming the statement (``UPDATE package_relation now locks 2,048 rows (was
100), 2,061 gaps (was 101): package_relation 100 → 2,048 through PRIMARY``: an InnoDB ``UPDATE`` that lost its index locks every row it scans); down past the same
thresholds is an improvement. The gaps and the tables come beside it; they do not decide.

Each foreign-key cascade (by constraint) is compared too: a cascade into a child that had an index
on its foreign key and has none now (or a new cascade without one) is a ``cascade`` regression:
the child is read in full for every parent row changed. A cascade gone, new with an index, or
through another index is information.

A baseline that records no footprint for a shape (written before footprints were) gives no
verdict on its locks: :func:`unrecorded` names such shapes for the report's notes.
"""

from __future__ import annotations

from typing import Any

from dbbench.defaults import DIALECT_LABEL
from dbbench.diff.work import _rose
from dbbench.document import locks
from dbbench.document.diff import Finding, ShapeDiff, Thresholds
from dbbench.document.model import ShapeResult


def lock_findings(base: ShapeResult, new: ShapeResult, t: Thresholds) -> list[Finding]:
    """The ``locks`` and ``cascade`` findings of one shape and dialect; none unless both
    documents record the remediated spelling's footprint."""
    b, n = base.remediated, new.remediated
    if b.locks is None or n.locks is None:
        return []
    out: list[Finding] = []
    before, after = b.locked_rows, n.locked_rows
    if before is not None and after is not None:
        text = f"{locks.statement(n)} now locks {after:,} rows (was {before:,})"
        detail = _detail(b.locks, n.locks)
        if _rose(before, after, t.work_factor, t.work_min):
            out.append(Finding("locks", True, text + detail))
        elif _rose(after, before, t.work_factor, t.work_min):
            out.append(Finding("locks", False, text + detail, improvement=True))
    return out + cascade_findings(b.locks, n.locks, locks.statement(n))


def _detail(before: dict[str, Any], after: dict[str, Any]) -> str:
    """The gaps and each table's rows locked, before → after, where they moved: ``, 2,061 gaps
    (was 101): package_relation 100 → 2,048 through PRIMARY``."""
    text = ""
    b_gaps, a_gaps = int(before.get("gaps") or 0), int(after.get("gaps") or 0)
    if b_gaps != a_gaps:
        text = f", {a_gaps:,} gaps (was {b_gaps:,})"
    was = {t["table"]: t for t in locks.tables(before)}
    moved = []
    for t in locks.tables(after):
        old = was.get(t["table"]) or {}
        rows, old_rows = int(t.get("rows") or 0), int(old.get("rows") or 0)
        if rows != old_rows:
            via = locks.through(t)
            moved.append(f"{t['table']} {old_rows:,} → {rows:,}" + ("" if via == "—" else f" through {via}"))
    now = {t["table"] for t in locks.tables(after)}
    moved += [
        f"{name} {int(t.get('rows') or 0):,} → 0"
        for name, t in was.items()
        if name not in now and t.get("rows")
    ]
    more = [f"{len(moved) - 3} more tables"] if len(moved) > 3 else []
    return text + (": " + "; ".join(moved[:3] + more) if moved else "")


def cascade_findings(before: dict[str, Any], after: dict[str, Any], statement: str) -> list[Finding]:
    """Each cascade (by constraint) of the baseline against the result's: its child's index lost
    (a regression), regained (an improvement), changed, new or gone (information)."""
    b_by = {str(c.get("constraint")): c for c in locks.cascades(before)}
    a_by = {str(c.get("constraint")): c for c in locks.cascades(after)}
    out: list[Finding] = []
    for key, c in a_by.items():
        was = b_by.get(key)
        now = locks.cascade(c)
        if was is None:
            new_text = f"{statement} now cascades into {now}"
            out.append(Finding("cascade", not c.get("index"), new_text))
        elif was.get("index") and not c.get("index"):
            lost = f"{statement}: cascade into {now} (was through {was['index']})"
            out.append(Finding("cascade", True, lost))
        elif not was.get("index") and c.get("index"):
            regained = f"{statement}: cascade into {now} (was without an index)"
            out.append(Finding("cascade", False, regained, improvement=True))
        elif was.get("index") != c.get("index"):
            out.append(
                Finding("cascade", False, f"{statement}: cascade into {now} (was through {was['index']})")
            )
    for key, was in b_by.items():
        if key not in a_by:
            out.append(Finding("cascade", False, f"{statement} no longer cascades into {locks.cascade(was)}"))
    return out


def unrecorded(shapes: list[ShapeDiff]) -> list[str]:
    """The report's note on the shapes whose result records a lock footprint and whose baseline
    does not (saved before footprints were recorded): their locks are shown, not judged."""
    names = [
        f"{s.shape} [{DIALECT_LABEL.get(s.dialect, s.dialect)}]"
        for s in shapes
        if s.base is not None
        and s.result is not None
        and s.base.remediated.locks is None
        and s.result.remediated.locks is not None
    ]
    if not names:
        return []
    return [
        f"locks not recorded in the baseline for {', '.join(names)}: the rows they lock now are shown, "
        "not judged (save a new baseline with `dbbench baseline save`)"
    ]
