"""Index changes: the indexes the baseline's namespace had against the result's, set against the
plans that read them.

Each document records, per dialect, the namespace's indexes when its run measured it
(:class:`dbbench.document.model.IndexDefinition`; documents written before issue 35 do not, and
then nothing is said here). Indexes are matched by table and name; one whose definition changed
under the same name counts as dropped and added (*redefined*).

An index **dropped** that a shape's baseline plan read is judged as ``dbbench indexes`` judges
an index it hides, except that the result run *is* the run without the index: what hiding an
index always changes (the access it served: ``index_lost``, ``access_changed``,
``access_gone``, ``scan_kind``, ``misestimate``) is judged by the work instead. When nothing else
regressed (no check newly failing, no new full scan, sort or temporary table, no timeout, no
more work), another index *took over*: those findings become equivalent and an
``index_dropped`` finding names the index that took over (information). Otherwise the shape
*needed* the index: an ``index_dropped`` regression names it first, with how the table is read
now. Without the work of both plans (an older document) nothing is judged equivalent.

An index **added** that no shape's result plan reads is a report note (``index added that no
shape of this catalog uses``): it costs every write and buys this catalog nothing. One that
shapes read is noted with their names; neither fails. An index dropped that no baseline plan read
is a note too.
"""

from __future__ import annotations

from collections.abc import Iterable

from dbbench.defaults import DIALECT_LABEL
from dbbench.dialects.plan import PlanNode
from dbbench.document.diff import Finding, ShapeDiff, _describe, _is_access, entry_tree
from dbbench.document.model import Document, IndexDefinition

# what dropping an index always changes, judged by the work instead (as dbbench.indexmap judges
# an index it hides)
TAKEN_OVER = frozenset({"index_lost", "access_changed", "access_gone", "scan_kind", "misestimate"})

Key = tuple[str, str]  # (table, index), lower-cased: IndexDefinition.key


def reads(tree: PlanNode | None, key: Key) -> bool:
    """Whether a plan reads index ``key`` (an access node naming it on its table; a node that
    names the index without its table, as a PostgreSQL Bitmap Index Scan, counts)."""
    if tree is None:
        return False
    table, index = key
    return any(
        (n.index or "").lower() == index and (n.table is None or n.table.lower() == table)
        for n in tree.walk()
    )


def changes(base: Document, new: Document, shapes: list[ShapeDiff]) -> list[str]:
    """Judge every index change of every dialect both documents record indexes for: the
    ``index_dropped`` findings go into ``shapes`` (their taken-over findings made equivalent
    where another index took over); the notes are returned."""
    notes: list[str] = []
    bd, nd = base.datasets or {}, new.datasets or {}
    for d in sorted(set(bd) & set(nd)):
        b_idx, n_idx = bd[d].indexes, nd[d].indexes
        if b_idx is None or n_idx is None:
            continue
        before, after = {i.key: i for i in b_idx}, {i.key: i for i in n_idx}
        dropped = [k for k in before if k not in after or after[k].definition != before[k].definition]
        added = [k for k in after if k not in before or before[k].definition != after[k].definition]
        if not dropped and not added:
            continue
        label = DIALECT_LABEL.get(d, d)
        mine = [s for s in shapes if s.dialect == d]
        read: set[Key] = set()
        for s in mine:
            gone = [k for k in dropped if reads(entry_tree(s.base), k)]
            read.update(gone)
            if gone and s.result is not None:
                judge_dropped(s, [before[k] for k in gone], after)
        for k in dropped:
            if k not in after and k not in read:
                notes.append(
                    f"{label}: index dropped that no shape of this catalog read: {_name(before[k])} "
                    f"({before[k].definition})"
                )
        for k in added:
            users = [s.shape for s in mine if reads(entry_tree(s.result), k)]
            notes.append(f"{label}: {_added(before.get(k), after[k], users)}")
    return notes


def _name(i: IndexDefinition) -> str:
    return f"{i.table}.{i.index}"


def _added(was: IndexDefinition | None, now: IndexDefinition, users: list[str]) -> str:
    """The note of an index added (``was`` None) or redefined."""
    if was is None:
        head, what = "index added", f"{_name(now)} ({now.definition})"
    else:
        head, what = "index redefined", f"{_name(now)} (was {was.definition}; now {now.definition})"
    if not users:
        return f"{head} that no shape of this catalog uses: {what}"
    return f"{head}: {what}, read by {_listed(users)}"


def _listed(names: Iterable[str]) -> str:
    return ", ".join(dict.fromkeys(names))


def judge_dropped(s: ShapeDiff, gone: list[IndexDefinition], after: dict[Key, IndexDefinition]) -> None:
    """One shape whose baseline plan read the ``gone`` indexes (dropped or redefined; ``after``:
    the result's indexes by key): needed, or taken over (see the module doc)."""
    tree = entry_tree(s.result)
    others = [f for f in s.findings if f.regression and f.kind not in TAKEN_OVER]
    took_over = s.work is not None and not others
    if took_over:
        for f in s.findings:
            if f.regression and f.kind in TAKEN_OVER:
                f.regression = False
                f.message += f" (equivalent: {_listed(_name(i) for i in gone)} dropped; no more work)"
    needed = s.regressed
    found = []
    for i in gone:
        redefined = after.get(i.key)
        what = f"index redefined (now {redefined.definition})" if redefined else "index dropped"
        if needed:
            now = _now(tree, i.table, s)
            text = f"{what} that this shape needed: {_name(i)} (the baseline read it; now {now})"
        elif s.work is not None:
            work = f"rows examined {s.work.before:,.0f} → {s.work.after:,.0f}"
            text = (
                f"{what}: {_name(i)}, which the baseline read; {_instead(tree, i)} with no more work ({work})"
            )
        else:
            text = f"{what}: {_name(i)}, which the baseline read; now {_now(tree, i.table, s)} (work unknown)"
        found.append(Finding("index_dropped", needed, text))
    s.findings[:0] = found


def _accesses(tree: PlanNode | None, table: str) -> list[PlanNode]:
    if tree is None:
        return []
    return [n for n in tree.walk() if _is_access(n) and (n.table or "").lower() == table.lower()]


def _now(tree: PlanNode | None, table: str, s: ShapeDiff) -> str:
    """How the result reads ``table``, in words."""
    if tree is None:
        timeout = s.result.remediated.timeout if s.result is not None else None
        return f"timed out: {timeout}" if timeout else "no plan"
    found = [_describe(n) for n in _accesses(tree, table)]
    return "; ".join(dict.fromkeys(found)) or f"{table} is not read"


def _instead(tree: PlanNode | None, gone: IndexDefinition) -> str:
    """What took over from ``gone``: the indexes the result reads its table through (the
    redefined index itself, when it still reads that), else how it reads the table."""
    found = _accesses(tree, gone.table)
    names = [n.index for n in found if n.index]
    if any(x.lower() == gone.index.lower() for x in names):
        return f"the shape still reads {gone.index} as redefined"
    if names:
        return f"{_listed(names)} took over"
    if found:
        return f"{'; '.join(dict.fromkeys(_describe(n) for n in found))} took over"
    return f"the plan no longer reads {gone.table}"
