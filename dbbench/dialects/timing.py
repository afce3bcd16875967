"""What a timed ``EXPLAIN ANALYZE`` sample measured, and which times may be compared.

A spelling's samples (``samples_ms`` in the result document) are one of three kinds, named by its
``timing`` field (docs/statistics.md, "What a time is"):

* ``statement`` -- what the server spent on the statement: PostgreSQL's ``Planning Time`` +
  ``Execution Time``; MySQL's ``TIMER_WAIT`` of the ``EXPLAIN ANALYZE`` statement in
  ``performance_schema.events_statements_history`` (parse, optimize, execute);
* ``executor`` -- the executor's time alone (MySQL's root time to last row) where the statement's
  time could not be read (``performance_schema`` off or not readable by dbbench's user), and in
  every file written before the statement time was recorded (no ``timing`` field);
* ``resolved-while-planning`` -- an executor time whose plan's root is MySQL's ``Rows fetched
  before execution`` / ``Zero rows``: the row was read while the statement was optimized, so
  the executor's ``61e-6`` ms is not the query's time at all.

Two times compare only when they are of one kind; :func:`comparable` finds the samples two
spellings share (a statement-timed spelling keeps its executor times too, for files of the older
kind) or says why there are none.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

STATEMENT = "statement"
EXECUTOR = "executor"
RESOLVED = "resolved-while-planning"
KINDS = (STATEMENT, EXECUTOR, RESOLVED)

# what each kind is, in words (the tables' legends, docs/statistics.md)
MEANING = {
    STATEMENT: "statement time: PostgreSQL planning + execution, MySQL the statement's own time "
    "(performance_schema)",
    EXECUTOR: "executor time only (the statement's own time could not be read: MySQL's "
    "performance_schema off or not readable, or a file written before statement times)",
    RESOLVED: "executor time only, and MySQL read the row while planning (Rows fetched before "
    "execution): not the query's time",
}
# the mark a rendered time carries when it is not a statement time
MARK = {STATEMENT: "", EXECUTOR: "‡", RESOLVED: "†"}


@dataclass
class Sample:
    """One timed ``EXPLAIN ANALYZE``: the server's output, the normalized tree, the executor's
    time, and the statement's time (None where it could not be read) and planning time
    (PostgreSQL), and the lock footprint when it was asked for."""

    raw: Any
    tree: Any  # dbbench.dialects.plan.PlanNode
    executor_ms: float
    statement_ms: float | None = None
    planning_ms: float | None = None
    # what a write or a locking read locked and changed, read before the rollback (asked for:
    # :func:`dbbench.dialects.common.footprint`), else None
    footprint: dict | None = None


def resolved_while_planning(tree: Any) -> bool:
    """Whether the plan's root was resolved while MySQL optimized the statement (its ``const``
    root: ``Rows fetched before execution`` / ``Zero rows``)."""
    return tree is not None and getattr(tree, "kind", None) == "const"


def kind_of(statement_timed: bool, tree: Any) -> str:
    """The kind of a spelling's samples: statement time when every sample has one, else executor
    time, marked when the plan's root was resolved while planning."""
    if statement_timed:
        return STATEMENT
    return RESOLVED if resolved_while_planning(tree) else EXECUTOR


def legend(kinds: Sequence[str | None]) -> list[str]:
    """One line per marked kind among ``kinds``: ``† executor time only, …``."""
    return [f"{MARK[k]} {MEANING[k]}" for k in (RESOLVED, EXECUTOR) if k in kinds]


def comparable(
    a_kind: str,
    a_samples: Sequence[float],
    a_executor: Sequence[float] | None,
    b_kind: str,
    b_samples: Sequence[float],
    b_executor: Sequence[float] | None,
) -> tuple[list[float], list[float], str | None] | str:
    """The samples of two spellings that measure one thing, and a note when they are not the
    spellings' own (``(a, b, note)``), or why none do (a sentence). Statement times compare with
    statement times; executor times with executor times (a statement-timed spelling's executor
    times stand in against an executor-timed one); a time resolved while planning compares with
    nothing but another such time."""
    if a_kind == b_kind:
        return list(a_samples), list(b_samples), None
    if RESOLVED in (a_kind, b_kind):
        other = b_kind if a_kind == RESOLVED else a_kind
        return (
            "not compared: one time is MySQL's executor time of a row read while planning (not the "
            f"query's time), the other a {_short(other)}"
        )
    a_exec = list(a_samples) if a_kind == EXECUTOR else list(a_executor or [])
    b_exec = list(b_samples) if b_kind == EXECUTOR else list(b_executor or [])
    if a_exec and b_exec:
        return a_exec, b_exec, "compared on executor time (one side records no statement time)"
    return f"not compared: a {_short(a_kind)} against a {_short(b_kind)}"


def _short(kind: str) -> str:
    return {STATEMENT: "statement time", EXECUTOR: "executor time", RESOLVED: "time resolved while planning"}[
        kind
    ]
