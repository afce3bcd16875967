"""What a shape without an expectation should expect: proposed from the plan observed on the
loaded data (the index the planner used, and the full scan and sort it did without), for
``dbbench catalog accept`` to write down."""

from __future__ import annotations

from dataclasses import dataclass

from dbbench.dialects.plan import PlanNode, accesses, describe_access


@dataclass(frozen=True)
class Proposal:
    """``expect table.index`` and ``forbid …`` (None: the plan used no index, nothing to expect)."""

    table: str | None
    index: str | None
    forbid: tuple[str, ...]
    seen: str  # the plan's accesses, in words

    @property
    def line(self) -> str:
        if self.table is None:
            return f"no index used ({self.seen}): nothing to expect"
        forbid = f"; forbid {', '.join(self.forbid)}" if self.forbid else ""
        return f"expect {self.table}.{self.index}{forbid}"


def propose(tree: PlanNode) -> Proposal:
    """The first index access of ``tree`` (the driving table's), and the features it avoided."""
    found = accesses(tree)
    seen = "; ".join(describe_access(n) for n in found) or "no table access"
    indexed = [n for n in found if n.index and n.table]
    kinds = {n.kind for n in tree.walk() if not n.in_subquery}
    forbid = tuple(f for f in ("full_scan", "sort") if f not in kinds)
    if not indexed:
        return Proposal(None, None, forbid, seen)
    return Proposal(indexed[0].table, indexed[0].index, forbid, seen)
