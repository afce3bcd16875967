"""One normalized plan tree for both dialects, and the assertions made on it.

Each dialect's parser (``dbbench.dialects.<name>.parse_plan``) turns its server's
``EXPLAIN ANALYZE`` output into :class:`PlanNode` trees. An *access* is a node that reads a table:
``kind`` is one of ``full_scan``, ``index_scan`` (whole index in order), ``index_range``,
``index_lookup`` (equality on a prefix), ``unique_lookup`` (at most one row) or ``const``
(resolved before execution); the other nodes are operators (``sort``, ``temp_table``, ``join``,
``filter``, ``limit``, ``lock``, …).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, fields
from typing import Any

from dbbench.errors import DbbenchError

# Plan nesting dbbench reads: real plans are a few dozen levels deep; a hostile or absurd plan
# (a query nested thousands of subqueries deep, a crafted result file) is refused with one line
# rather than exhausting the interpreter's recursion limit. Every walk below is iterative.
MAX_DEPTH = 200
ACCESS_KINDS = ("full_scan", "index_scan", "index_range", "index_lookup", "unique_lookup", "const")
FEATURES = ("full_scan", "sort", "temp_table")
# The servers' own words for the features, accepted wherever a feature is forbidden.
FEATURE_ALIASES = {
    "seq_scan": "full_scan",
    "table_scan": "full_scan",
    "filesort": "sort",
    "temporary": "temp_table",
}


def normalize_forbid(items) -> list[str]:
    """Forbid entries in canonical form: ``full_scan``, ``full_scan:TABLE``, ``sort``, ``temp_table``
    (``seq_scan``/``table_scan``, ``filesort`` and ``temporary`` are accepted as the servers' names).
    Raises ValueError naming the first entry that is none of these."""
    if isinstance(items, str):
        items = [items]
    out = []
    for item in items:
        if not isinstance(item, str):
            raise ValueError(f"{item!r} is not a feature name")
        feature, colon, table = item.partition(":")
        feature = FEATURE_ALIASES.get(feature, feature)
        if feature not in FEATURES or (colon and (feature != "full_scan" or not table)):
            allowed = ", ".join([*FEATURES, *FEATURE_ALIASES])
            raise ValueError(
                f"{item!r} is not one of {allowed} (full_scan:TABLE limits a full scan to one table)"
            )
        out.append(f"{feature}:{table}" if colon else feature)
    return out


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
            return {f.name: getattr(node, f.name) for f in fields(node) if f.name != "children"}

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


_JSON_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')


def text_depth_exceeds(text: str | bytes, limit: int) -> bool:
    """Whether JSON ``text`` opens more than ``limit`` nested lists/objects, counted without
    decoding (so a hostile document cannot exhaust the decoder's recursion first)."""
    if isinstance(text, (bytes, bytearray, memoryview)):
        text = bytes(text).decode("utf-8", "replace")
    depth = 0
    for m in _JSON_TOKEN.finditer(text):
        ch = m.group()
        if ch in "[{":
            depth += 1
            if depth > limit:
                return True
        elif ch in "]}":
            depth -= 1
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


@dataclass
class Verdict:
    ok: bool
    expected: str
    actual: str
    problems: list[str]


def check(root: PlanNode, table: str, index: str, forbid: list[str]) -> Verdict:
    """Whether ``index`` is used on ``table`` and no forbidden feature appears.

    ``forbid`` entries: ``full_scan`` (of any table), ``full_scan:TABLE``, ``sort``, ``temp_table``
    (or the servers' names, see :func:`normalize_forbid`).
    ``sort`` and ``temp_table`` concern the statement's own path; a bounded correlated probe that
    orders its few rows (``ORDER BY … LIMIT 1 OFFSET n`` per candidate) is not a filesort of the
    result.
    """
    forbid = normalize_forbid(forbid)
    found = accesses(root)
    expected = f"{table} using {index}"
    actual = "; ".join(describe_access(n) for n in found) or "no table access"
    problems = []
    if not any(n.table == table and n.index == index for n in found):
        problems.append(f"expected index {index} on {table} is not used")
    for item in forbid:
        feature, _, only = item.partition(":")
        for n in root.walk():
            if feature == "full_scan" and n.kind == "full_scan" and (not only or n.table == only):
                problems.append(f"forbidden full scan of {n.table}")
            elif feature in ("sort", "temp_table") and n.kind == feature and not n.in_subquery:
                problems.append(f"forbidden {feature.replace('_', ' ')}: {n.label}")
    return Verdict(not problems, expected, actual, list(dict.fromkeys(problems)))
