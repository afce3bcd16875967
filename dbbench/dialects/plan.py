"""One normalized plan tree for both dialects: what every dialect's parser produces.

Each dialect's parser (``dbbench.dialects.<name>.parse_plan``) turns its server's
``EXPLAIN ANALYZE`` output into :class:`PlanNode` trees. An *access* is a node that reads a table:
``kind`` is one of ``full_scan``, ``index_scan`` (whole index in order), ``index_range``,
``index_lookup`` (equality on a prefix), ``unique_lookup`` (at most one row) or ``const``
(resolved before execution); the other nodes are operators (``sort``, ``temp_table``, ``join``,
``filter``, ``limit``, ``lock``, …). What is expected of a plan (an index used, features
forbidden) is :mod:`dbbench.measure.expect`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, fields
from typing import Any

from dbbench.errors import DbbenchError
from verdict.files import text_depth_exceeds

# Plan nesting dbbench reads: real plans are a few dozen levels deep; a hostile or absurd plan
# (a query nested thousands of subqueries deep, a crafted result file) is refused with one line
# rather than exhausting the interpreter's recursion limit. Every walk below is iterative.
MAX_DEPTH = 200
_OPTIONAL = ("removed_rows", "buffers")  # left out of a plan's dict when unknown
ACCESS_KINDS = ("full_scan", "index_scan", "index_range", "index_lookup", "unique_lookup", "const")


@dataclass
class PlanNode:
    kind: str
    label: str
    table: str | None = None  # base table (aliases resolved)
    alias: str | None = None
    index: str | None = None
    est_rows: float | None = None
    actual_rows: float | None = None
    loops: float | None = None
    actual_ms: float | None = None  # time to last row, per loop
    in_subquery: bool = False  # under a correlated probe (SubPlan / dependent subquery)
    children: list[PlanNode] = field(default_factory=list)
    # PostgreSQL only (None elsewhere, and in documents before dbbench.explain/2): rows read and
    # discarded per loop (Rows Removed by Filter / Join Filter / Index Recheck), and the shared
    # buffers hit + read by this node and everything under it
    removed_rows: float | None = None
    buffers: float | None = None

    @property
    def examined(self) -> float:
        """Rows this node produced or read and discarded, times its loops: the work it did."""
        rows = (self.actual_rows or 0.0) + (self.removed_rows or 0.0)
        return rows * (self.loops if self.loops is not None else 1.0)

    def walk(self) -> Iterator[PlanNode]:
        """Every node, depth first in plan order (iterative: any depth)."""
        stack: list[PlanNode] = [self]
        while stack:
            node = stack.pop()
            yield node
            stack.extend(reversed(node.children))

    def walk_depth(self) -> Iterator[tuple[int, PlanNode]]:
        """(depth, node) for every node, depth first in plan order; the root is depth 0."""
        stack: list[tuple[int, PlanNode]] = [(0, self)]
        while stack:
            depth, node = stack.pop()
            yield depth, node
            stack.extend((depth + 1, c) for c in reversed(node.children))

    def to_dict(self) -> dict:
        def own(node: PlanNode) -> dict[str, Any]:
            out = {f.name: getattr(node, f.name) for f in fields(node) if f.name != "children"}
            return {k: v for k, v in out.items() if v is not None or k not in _OPTIONAL}

        root = own(self) | {"children": []}
        stack: list[tuple[PlanNode, dict[str, Any]]] = [(self, root)]
        while stack:
            node, out = stack.pop()
            for child in node.children:
                d = own(child) | {"children": []}
                out["children"].append(d)
                stack.append((child, d))
        return root

    @classmethod
    def from_dict(cls, d: dict) -> PlanNode:
        """The inverse of :meth:`to_dict` (the ``plan`` of a result file)."""

        def own(x: dict) -> PlanNode:
            return cls(**{k: v for k, v in x.items() if k in cls.__dataclass_fields__ and k != "children"})

        root = own(d)
        stack: list[tuple[dict, PlanNode]] = [(d, root)]
        while stack:
            x, node = stack.pop()
            for c in x.get("children") or []:
                child = own(c)
                node.children.append(child)
                stack.append((c, child))
        return root

    def render(self, depth: int = 0) -> str:
        lines = []
        for level, node in self.walk_depth():
            bits = [node.label]
            if node.index and node.index not in node.label:
                bits.append(f"[index {node.index}]")
            if node.actual_rows is not None:
                bits.append(f"(rows={node.actual_rows:g} loops={node.loops or 1:g})")
            lines.append("  " * (depth + level) + "-> " + " ".join(bits))
        return "\n".join(lines)


class PlanTooDeep(DbbenchError):
    """A plan nested deeper than :data:`MAX_DEPTH` (exit code 2)."""

    def __init__(self, what: str = "plan"):
        super().__init__(
            f"{what} is nested more than {MAX_DEPTH} levels deep, which dbbench does not read "
            "(simplify the query)"
        )


def check_depth(root: PlanNode, what: str = "plan") -> None:
    """Raise :class:`PlanTooDeep` when ``root`` has more than :data:`MAX_DEPTH` levels."""
    if any(level >= MAX_DEPTH for level, _ in root.walk_depth()):
        raise PlanTooDeep(what)


def json_depth_exceeds(doc: Any, limit: int) -> bool:
    """Whether decoded JSON ``doc`` nests lists/objects more than ``limit`` levels (iterative)."""
    stack: list[tuple[int, Any]] = [(1, doc)]
    while stack:
        level, x = stack.pop()
        if isinstance(x, (dict, list)):
            if level > limit:
                return True
            stack.extend((level + 1, v) for v in (x.values() if isinstance(x, dict) else x))
    return False


def loads_plan_json(text: str | bytes) -> Any:
    """``json.loads`` for a server's JSON plan, refusing one nested past :data:`MAX_DEPTH` plan
    levels before decoding (a PostgreSQL plan level is an object inside a ``Plans`` list)."""
    if text_depth_exceeds(text, 2 * MAX_DEPTH + 4):
        raise PlanTooDeep()
    return json.loads(text)


def mark_subqueries(
    node: PlanNode, inside: bool = False, is_probe: Callable[[PlanNode], bool] = lambda n: False
) -> None:
    """Mark every node under a correlated probe (``is_probe``). Both dialects' parsers end here, so
    this is also where a plan deeper than :data:`MAX_DEPTH` is refused (:class:`PlanTooDeep`)."""
    check_depth(node)
    stack: list[tuple[PlanNode, bool]] = [(node, inside)]
    while stack:
        n, flag = stack.pop()
        n.in_subquery = flag
        stack.extend((c, flag or is_probe(c)) for c in n.children)


def accesses(root: PlanNode) -> list[PlanNode]:
    """Nodes that read a table (a const marker without a resolved table is not one)."""
    return [n for n in root.walk() if n.kind in ACCESS_KINDS and (n.table or n.kind != "const")]


def describe_access(node: PlanNode) -> str:
    where = node.table or node.alias or "?"
    return f"{node.kind} on {where}" + (f" using {node.index}" if node.index else "")
