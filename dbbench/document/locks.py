"""A spelling's lock footprint in words: what every output and ``dbbench diff`` say about it.

A write's or a locking read's spelling holds ``locks`` (:func:`dbbench.dialects.common.footprint`
builds it; see ``docs/writes.md``): the rows and gaps it locked, per table with the indexes the
locks went through, the rows it changed, and the foreign-key cascades it caused. These functions
read that dict only, so a result file renders exactly like the run that wrote it, and a read
(``locks`` None) renders as nothing:

>>> locks = {"rows": 2002, "gaps": 2011, "tables": [{"table": "group_binding", "rows": 2000},
...          {"table": "group_snapshot_stage", "rows": 2}]}
>>> summary(locks)
'2,002 rows (group_binding 2,000, group_snapshot_stage 2), 2,011 gaps'
"""

from __future__ import annotations

import re
from typing import Any

from dbbench.dialects import common
from dbbench.dialects.plan import PlanNode
from dbbench.document.model import Spelling

# a locking read's clause: its strength, and what it does about a row another session holds
_LOCKING = re.compile(
    r"\b(FOR\s+(?:UPDATE|SHARE|NO\s+KEY\s+UPDATE|KEY\s+SHARE)|LOCK\s+IN\s+SHARE\s+MODE)\b"
    r"(?:\s+OF\s+[\w\s,.`\"]+?)?(?:\s+(SKIP\s+LOCKED|NOWAIT))?\s*;?\s*$",
    re.I,
)


def _int(value: Any) -> int:
    """A count of the footprint (a missing or malformed one counts 0)."""
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0


def tables(locks: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The footprint's tables (each a dict: ``table``, ``rows``, ``gaps``, ``indexes``, …)."""
    if not isinstance(locks, dict):
        return []
    return [t for t in locks.get("tables") or [] if isinstance(t, dict) and t.get("table")]


def cascades(locks: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The footprint's foreign-key cascades (each a dict: ``constraint``, ``child``, ``index``, …)."""
    if not isinstance(locks, dict):
        return []
    return [c for c in locks.get("cascades") or [] if isinstance(c, dict)]


def summary(locks: dict[str, Any] | None) -> str:
    """The footprint in a few words (:func:`dbbench.dialects.common.footprint_summary`)."""
    return common.footprint_summary(locks)


def _rows(n: int) -> str:
    return f"{n:,} row{'' if n == 1 else 's'}"


def statement(m: Spelling) -> str:
    """The statement in a few words, its verb and the table(s) it changes or locks:
    ``UPDATE package_relation``, ``DELETE group_snapshot_stage``, ``SELECT … FOR UPDATE on
    group_snapshot_stage``."""
    modify = m.plan is not None and m.plan.kind == "modify"
    verb = common.verb(m.plan.label if modify and m.plan is not None else m.sql).upper() or "?"
    names = _changed_tables(m.plan, m.locks)
    if verb in ("SELECT", "WITH") and not any(
        _int(v) for t in tables(m.locks) for v in (t.get("changed") or {}).values()
    ):
        lock = _LOCKING.search(m.sql)
        clause = " ".join(g.upper() for g in (lock.groups() if lock else ()) if g)
        head = f"SELECT … {' '.join(clause.split())}" if clause else verb
        locked = [t["table"] for t in tables(m.locks) if _int(t.get("rows"))]
        return head + (f" on {', '.join(locked)}" if locked else "")
    return " ".join([verb, ", ".join(names)]) if names else verb


def _changed_tables(plan: PlanNode | None, locks: dict[str, Any] | None) -> list[str]:
    """The table a write's plan root modifies, else the tables whose rows the footprint says it
    changed."""
    if plan is not None and plan.kind == "modify" and plan.table:
        return [plan.table]
    return [t["table"] for t in tables(locks) if any(_int(v) for v in (t.get("changed") or {}).values())]


def changed(locks: dict[str, Any] | None) -> str:
    """The rows the statement itself changed (``affected``), "—" when not known (a locking read)."""
    if not isinstance(locks, dict) or locks.get("affected") is None:
        return "—"
    return f"{_int(locks.get('affected')):,}"


def cascade(c: dict[str, Any]) -> str:
    """One cascade in a few words: the child table, the foreign key, the index the child's rows
    were found through (``WITHOUT AN INDEX``: read in full for every parent row) and what it cost
    (PostgreSQL: the RI trigger's time and calls, the child's full scans; MySQL: the child rows
    locked, InnoDB timing no cascade apart from its statement)."""
    key = str(c.get("constraint") or "?")
    if c.get("rule"):
        key += f" {str(c['rule']).lower()}"
    through = f"through {c['index']}" if c.get("index") else "WITHOUT AN INDEX"
    cost = []
    if isinstance(c.get("ms"), int | float):
        calls = _int(c.get("calls"))
        cost.append(f"{c['ms']:g} ms" + (f" in {calls:,} call{'s' if calls != 1 else ''}" if calls else ""))
    if _int(c.get("rows")):
        cost.append(_rows(_int(c["rows"])))
    scans = _int(c.get("child_full_scans"))
    if scans:
        cost.append(f"{scans:,} full scan{'s' if scans != 1 else ''}")
    return f"{c.get('child') or '?'} ({key}) {through}" + (f": {', '.join(cost)}" if cost else "")


def cascades_words(locks: dict[str, Any] | None) -> str:
    """Every cascade of the footprint (:func:`cascade`), ``; ``-separated; "—" when none."""
    return "; ".join(cascade(c) for c in cascades(locks)) or "—"


def through(t: dict[str, Any] | None) -> str:
    """The indexes a table's locks went through (MySQL), "—" when none were named (PostgreSQL
    keeps row locks in the rows themselves)."""
    names = [str(i) for i in (t or {}).get("indexes") or []]
    return ", ".join(names) or "—"
