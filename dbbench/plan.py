"""One normalized plan tree for both dialects, and the assertions made on it.

Each dialect's parser (``dbbench.dialects.<name>.parse_plan``) turns its server's
``EXPLAIN ANALYZE`` output into :class:`PlanNode` trees. An *access* is a node that reads a table:
``kind`` is one of ``full_scan``, ``index_scan`` (whole index in order), ``index_range``,
``index_lookup`` (equality on a prefix), ``unique_lookup`` (at most one row) or ``const``
(resolved before execution); the other nodes are operators (``sort``, ``temp_table``, ``join``,
``filter``, ``limit``, ``lock``, …).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Iterator

ACCESS_KINDS = ("full_scan", "index_scan", "index_range", "index_lookup", "unique_lookup", "const")
FEATURES = ("full_scan", "sort", "temp_table")
# The servers' own words for the features, accepted wherever a feature is forbidden.
FEATURE_ALIASES = {"seq_scan": "full_scan", "table_scan": "full_scan", "filesort": "sort",
                   "temporary": "temp_table"}


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
            raise ValueError(f"{item!r} is not one of {allowed} (full_scan:TABLE limits a full scan to one table)")
        out.append(f"{feature}:{table}" if colon else feature)
    return out


@dataclass
class PlanNode:
    kind: str
    label: str
    table: str | None = None       # base table (aliases resolved)
    alias: str | None = None
    index: str | None = None
    est_rows: float | None = None
    actual_rows: float | None = None
    loops: float | None = None
    actual_ms: float | None = None  # time to last row, per loop
    in_subquery: bool = False       # under a correlated probe (SubPlan / dependent subquery)
    children: list["PlanNode"] = field(default_factory=list)

    def walk(self) -> Iterator["PlanNode"]:
        yield self
        for child in self.children:
            yield from child.walk()

    def to_dict(self) -> dict:
        d = asdict(self)
        d["children"] = [c.to_dict() for c in self.children]
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "PlanNode":
        """The inverse of :meth:`to_dict` (the ``plan`` of a result file)."""
        known = {k: v for k, v in d.items() if k in cls.__dataclass_fields__ and k != "children"}
        return cls(**known, children=[cls.from_dict(c) for c in d.get("children") or []])

    def render(self, depth: int = 0) -> str:
        bits = [self.label]
        if self.index and self.index not in self.label:
            bits.append(f"[index {self.index}]")
        if self.actual_rows is not None:
            bits.append(f"(rows={self.actual_rows:g} loops={self.loops or 1:g})")
        lines = ["  " * depth + "-> " + " ".join(bits)]
        lines += [c.render(depth + 1) for c in self.children]
        return "\n".join(lines)


def mark_subqueries(node: PlanNode, inside: bool = False, is_probe=lambda n: False) -> None:
    node.in_subquery = inside
    for child in node.children:
        mark_subqueries(child, inside or is_probe(child), is_probe)


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
