"""Two plans of one shape side by side: the baseline's and the result's normalized trees aligned
node by node (issue 37's model; the views render it).

Plans change in a few ways a reviewer needs named, not found in a JSON diff where every number
moved: a scan of another kind (``Seq Scan → Index Scan``), another index, a join of another type
(``Hash Join → Nested Loop``), the inputs of a join swapped (join order), a sort or a temporary
table added or gone, and the work a node does (rows examined, PostgreSQL's buffers) or the
planner's estimate of it (q-error) moving. :func:`align` pairs the nodes of the two trees:

* the roots are paired; then, under each pair, each child of one is paired with the child of the
  other it resembles most (:func:`likeness`: the same table and index, the same table, the same
  kind of operator), whatever their order, so a swapped join is two paired inputs in another
  order, not two nodes gone and two new;
* a child left alone on one side is paired with the input of a node added or gone on the other
  that only passes one input on (a ``Hash``, a ``Sort``, MySQL's ``Filter``): the same table read
  under a new node, not a table gone and another new;
* a child still without a partner is ``gone`` (only in the baseline) or ``new`` (only in the
  result), with its whole subtree.

A join whose paired inputs stand in another order says ``join order a ⋈ b → b ⋈ a`` and each input
its place in the baseline (``was_input``); a join of another operator says ``join type Nested Loop
→ Hash Join`` (:func:`join_changes`: the diff's ``join_order`` and ``join_type`` findings). A
PostgreSQL Bitmap Heap Scan reads the index of its Bitmap Index Scan (:func:`index_of`); a node's
own shared buffers (its children's taken off) are named when they move by 1.5x and 8 pages.

Each pair is a :class:`NodeDiff` with what changed in words (``changes``) and the numbers before and
after; :meth:`NodeDiff.moved` says how far its work moved, for "biggest differences first".

>>> from dbbench.dialects.plan import PlanNode
>>> a = PlanNode("full_scan", "Seq Scan on t", table="t", actual_rows=1.0, removed_rows=999.0, loops=1.0)
>>> b = PlanNode("index_range", "Index Scan on t using ix_t", table="t", index="ix_t", actual_rows=1.0, loops=1.0)
>>> d = align(a, b)
>>> d.status, d.changes
('changed', ['Seq Scan → Index Scan', 'index none → ix_t', 'rows examined 1,000 → 1 (1,000.0x fewer)'])
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from dbbench.dialects.plan import ACCESS_KINDS, PlanNode

SAME, CHANGED, NEW, GONE = "same", "changed", "new", "gone"
BUFFERS_MOVED = 8  # pages: a node's own shared buffers moving by fewer is not named


@dataclass
class NodeDiff:
    """One node of the aligned plans: ``before`` (the baseline's) and ``after`` (the result's),
    either None for a node only one plan has; what changed, in words; the aligned children."""

    status: str  # same | changed | new | gone
    before: PlanNode | None
    after: PlanNode | None
    changes: list[str] = field(default_factory=list)
    children: list[NodeDiff] = field(default_factory=list)
    # under a join whose inputs were reordered: its input number (1-based) in the baseline
    was_input: int | None = None

    @property
    def node(self) -> PlanNode:
        """The node as the result has it (the baseline's for a node gone)."""
        node = self.after if self.after is not None else self.before
        assert node is not None
        return node

    @property
    def examined(self) -> tuple[float | None, float | None]:
        """Rows this node produced or read and discarded, times its loops, before → after."""
        return _examined(self.before), _examined(self.after)

    @property
    def buffers(self) -> tuple[float | None, float | None]:
        """PostgreSQL's shared buffers of this node and everything under it, before → after."""
        return (
            None if self.before is None else self.before.buffers,
            None if self.after is None else self.after.buffers,
        )

    @property
    def own_buffers(self) -> tuple[float | None, float | None]:
        """PostgreSQL's shared buffers of this node alone (its children's taken off), before → after."""
        return own_buffers(self.before), own_buffers(self.after)

    @property
    def q_error(self) -> tuple[float | None, float | None]:
        """How far the planner's row estimate was from the rows per loop, before → after (1: exact)."""
        return q_error(self.before), q_error(self.after)

    def moved(self) -> float:
        """How far this node's work moved: the factor between its rows examined before and after
        (a node new or gone counts its own rows against none)."""
        a, b = self.examined
        return factor(a or 0.0, b or 0.0)

    def walk(self, depth: int = 0) -> Iterator[tuple[int, NodeDiff]]:
        """(depth, node) for every aligned node, depth first (iterative: any depth)."""
        stack: list[tuple[int, NodeDiff]] = [(depth, self)]
        while stack:
            level, n = stack.pop()
            yield level, n
            stack.extend((level + 1, c) for c in reversed(n.children))

    @property
    def changed(self) -> bool:
        """Whether this node or any under it is not the same."""
        return any(n.status != SAME for _, n in self.walk())


def factor(a: float, b: float) -> float:
    """How many times the larger of two counts is the smaller (a count under 1 counts as 1)."""
    return max(a, b, 1.0) / max(min(a, b), 1.0)


def own_buffers(node: PlanNode | None) -> float | None:
    """The shared buffers a PostgreSQL node touched itself: its own less its children's."""
    if node is None or node.buffers is None:
        return None
    return max(node.buffers - sum(c.buffers or 0.0 for c in node.children), 0.0)


def _examined(node: PlanNode | None) -> float | None:
    if node is None or node.actual_rows is None:
        return None
    return node.examined


def q_error(node: PlanNode | None) -> float | None:
    """max(estimated / actual, actual / estimated) rows per loop (both at least 1); None where the
    plan gives no estimate or no actual."""
    if node is None or node.est_rows is None or node.actual_rows is None:
        return None
    est, act = max(node.est_rows, 1.0), max(node.actual_rows, 1.0)
    return max(est / act, act / est)


def _operation(node: PlanNode) -> str:
    """The node's operation in the server's words, without its table and index: ``Seq Scan``,
    ``Index Range Scan``, ``Hash Join``."""
    label = node.label
    for cut in (" on ", " using ", ":", " ("):
        if cut in label:
            label = label[: label.index(cut)]
    return label.strip()


def likeness(a: PlanNode, b: PlanNode) -> int:
    """How much ``b`` looks like the same node as ``a`` (0: not at all): the same table read
    through the same index by the same operation 6; the same table 4 (a scan of another kind or
    index); the same operation on no table 3; the same kind of operator 2 (a join of another type,
    a sort); both read a table 1."""
    if a.table and a.table == b.table:
        if a.index == b.index and a.kind == b.kind:
            return 6
        return 4
    if a.table or b.table:
        return 1 if (a.kind in ACCESS_KINDS and b.kind in ACCESS_KINDS and not (a.table and b.table)) else 0
    if _operation(a) == _operation(b):
        return 3
    return 2 if a.kind == b.kind else 0


def _pairs(before: list[PlanNode], after: list[PlanNode]) -> list[tuple[int | None, int | None]]:
    """The children paired by likeness, the likest first (each child used once); the unpaired of
    either side alone. In the result's order, a baseline child gone where it stood."""
    scored = sorted(
        ((likeness(b, a), -abs(i - j), i, j) for i, b in enumerate(before) for j, a in enumerate(after)),
        reverse=True,
    )
    used_b: set[int] = set()
    used_a: set[int] = set()
    by_after: dict[int, int] = {}
    for score, _, i, j in scored:
        if score <= 0 or i in used_b or j in used_a:
            continue
        used_b.add(i)
        used_a.add(j)
        by_after[j] = i
    out: list[tuple[int | None, int | None]] = []
    for j in range(len(after)):
        for i in range(len(before)):  # the baseline's unpaired children before this one's partner
            if i not in used_b and (j not in by_after or i < by_after[j]):
                out.append((i, None))
                used_b.add(i)
        out.append((by_after.get(j), j))
    out += [(i, None) for i in range(len(before)) if i not in used_b]
    return out


def _tables_under(node: PlanNode) -> str:
    names = list(dict.fromkeys(n.table or n.alias for n in node.walk() if n.kind in ACCESS_KINDS))
    return ", ".join(str(n) for n in names if n) or _operation(node)


def _fmt(x: float) -> str:
    return f"{x:,.0f}"


def _join_order(before: PlanNode, after: PlanNode) -> str:
    """``join order package ⋈ package_relation → package_relation ⋈ package``."""

    def inputs(n: PlanNode) -> str:
        return " ⋈ ".join(_tables_under(c) for c in n.children)

    return f"join order {inputs(before)} → {inputs(after)}"


def index_of(node: PlanNode) -> str | None:
    """The index a node reads: its own, or a PostgreSQL Bitmap Heap Scan's through the one Bitmap
    Index Scan under it (the heap scan names no index of its own)."""
    if node.index or not node.table or len(node.children) != 1:
        return node.index
    return node.children[0].index if node.children[0].table == node.table else None


def _changes(before: PlanNode, after: PlanNode) -> list[str]:
    """What differs between two paired nodes, in words."""
    out = []
    was, now = _operation(before), _operation(after)
    if was != now:
        joins = before.kind == after.kind == "join"
        out.append(f"{'join type ' if joins else ''}{was} → {now}")
    b_index, a_index = index_of(before), index_of(after)
    if b_index != a_index and (b_index or a_index):
        out.append(f"index {b_index or 'none'} → {a_index or 'none'}")
    a, b = _examined(before), _examined(after)
    if a is not None and b is not None and a != b:
        times = factor(a, b)
        if times >= 1.5:
            way = "more" if b > a else "fewer"
            out.append(f"rows examined {_fmt(a)} → {_fmt(b)} ({times:,.1f}x {way})")
    a, b = own_buffers(before), own_buffers(after)
    if a is not None and b is not None and abs(b - a) >= BUFFERS_MOVED and factor(a, b) >= 1.5:
        way = "more" if b > a else "fewer"
        out.append(f"shared buffers {_fmt(a)} → {_fmt(b)} ({factor(a, b):,.1f}x {way})")
    return out


def align(before: PlanNode | None, after: PlanNode | None) -> NodeDiff:
    """The two plans aligned node by node (the module's rules); iterative, any depth."""
    root = _pair(before, after)
    stack = [root]
    while stack:
        d = stack.pop()
        if d.before is None or d.after is None:
            continue
        pairs = _through_wrappers(
            _pairs(d.before.children, d.after.children), d.before.children, d.after.children
        )
        matched = [_at(i) for i, j in pairs if i is not None and j is not None]  # in the result's order
        reordered = d.after.kind == "join" and matched != sorted(matched)
        if reordered:
            d.changes.insert(0, _join_order(d.before, d.after))  # its inputs swapped
            d.status = CHANGED
        for i, j in pairs:
            if isinstance(j, tuple):  # a wrapper added (a Hash): its input paired with ``i``
                wrapper = d.after.children[j[0]]
                child = NodeDiff(NEW, None, wrapper, [f"{_operation(wrapper)} added"])
                inner = _pair(d.before.children[i] if isinstance(i, int) else None, wrapper.children[0])
                child.children.append(inner)
                stack.append(inner)
            elif isinstance(i, tuple):  # a wrapper gone: its input paired with ``j``
                wrapper = d.before.children[i[0]]
                child = NodeDiff(GONE, wrapper, None, [f"{_operation(wrapper)} gone"])
                inner = _pair(wrapper.children[0], d.after.children[j] if isinstance(j, int) else None)
                child.children.append(inner)
                stack.append(inner)
            else:
                child = _pair(
                    None if i is None else d.before.children[i],
                    None if j is None else d.after.children[j],
                )
                stack.append(child)
            if reordered and i is not None and j is not None:
                child.was_input = _at(i) + 1
            d.children.append(child)
    return root


def _at(i: int | tuple[int]) -> int:
    """A baseline child's position, whether paired directly or through a wrapper (``(i,)``)."""
    return i[0] if isinstance(i, tuple) else i


def _wrapper(node: PlanNode) -> bool:
    """A node that only passes one input on (a Hash, a Materialize): no table of its own."""
    return len(node.children) == 1 and node.kind not in ACCESS_KINDS and not node.table


def _through_wrappers(pairs: list, before: list[PlanNode], after: list[PlanNode]) -> list:
    """Pair a child left alone on one side with the input of a wrapper left alone on the other
    (``Single-row index lookup on c`` with the ``Table scan on c`` under a new ``Hash``): a
    ``(index,)`` marks the wrapper's side."""
    lone_b = [i for i, j in pairs if j is None]
    lone_a = [j for i, j in pairs if i is None]
    out = list(pairs)
    for i in lone_b:
        for j in lone_a:
            merged = None
            if _wrapper(after[j]) and likeness(before[i], after[j].children[0]) >= 3:
                merged = (i, (j,))
            elif _wrapper(before[i]) and likeness(before[i].children[0], after[j]) >= 3:
                merged = ((i,), j)
            if merged is not None:  # where the result's child stood
                out = [merged if p == (None, j) else p for p in out if p != (i, None)]
                lone_a.remove(j)
                break
    return out


def _pair(before: PlanNode | None, after: PlanNode | None) -> NodeDiff:
    if before is None and after is None:
        raise ValueError("align needs at least one plan")
    if before is None:
        assert after is not None
        return _alone(after, NEW)
    if after is None:
        return _alone(before, GONE)
    changes = _changes(before, after)
    return NodeDiff(CHANGED if changes else SAME, before, after, changes)


def _alone(node: PlanNode, status: str) -> NodeDiff:
    """A node only one plan has, with its whole subtree."""
    root = NodeDiff(status, node if status == GONE else None, node if status == NEW else None)
    stack = [(root, node)]
    while stack:
        d, n = stack.pop()
        d.changes = [
            f"{_operation(n)}{' on ' + n.table if n.table else ''} {'added' if status == NEW else 'gone'}"
        ]
        for c in n.children:
            child = NodeDiff(status, c if status == GONE else None, c if status == NEW else None)
            d.children.append(child)
            stack.append((child, c))
    return root


JOIN_CHANGES = {"join order ": "join_order", "join type ": "join_type"}  # a change's words → finding kind


def join_changes(diff: NodeDiff) -> list[tuple[str, str]]:
    """(kind, words) of every join whose inputs were swapped (``join_order``) or whose type changed
    (``join_type``) between the aligned plans, top down; the joined tables follow a type change
    (``join type Nested Loop → Hash Join of inventory ⋈ rental``)."""
    out = []
    for _, n in diff.walk():
        for words in n.changes:
            kind = next((k for prefix, k in JOIN_CHANGES.items() if words.startswith(prefix)), None)
            if kind == "join_type" and n.after is not None:
                words += " of " + " ⋈ ".join(_tables_under(c) for c in n.after.children)
            if kind:
                out.append((kind, words))
    return out


def to_json(diff: NodeDiff) -> list[dict]:
    """The aligned plans as a flat list, depth first: per node its depth, status, labels before and
    after, what changed, rows examined before and after, and its input number in the baseline
    where its join was reordered (``dbbench diff --output``'s ``plan_diff``)."""
    out = []
    for depth, n in diff.walk():
        before, after = n.examined
        out.append(
            {
                "depth": depth,
                "status": n.status,
                "before": None if n.before is None else n.before.label,
                "after": None if n.after is None else n.after.label,
                "changes": list(n.changes),
                "rows_before": before,
                "rows_after": after,
                **({"was_input": n.was_input} if n.was_input is not None else {}),
            }
        )
    return out


def biggest_first(diffs: list[NodeDiff]) -> list[NodeDiff]:
    """The nodes of one aligned plan that changed, those whose work moved most first."""
    return sorted((n for d in diffs for _, n in d.walk() if n.status != SAME), key=lambda n: -n.moved())


def was_input(d: NodeDiff) -> str:
    """`` (input 2 in the baseline)`` for a join input the result reads in another place."""
    return "" if d.was_input is None else f" (input {d.was_input} in the baseline)"


def render(diff: NodeDiff, *, fold: bool = True) -> list[str]:
    """The aligned plans as one indented tree in plain text: ``=`` same, ``~`` changed (with what
    changed), ``+`` new, ``-`` gone; with ``fold``, a subtree in which nothing changed is one line
    (``… 3 nodes unchanged``)."""
    marks = {SAME: "=", CHANGED: "~", NEW: "+", GONE: "-"}
    lines: list[str] = []
    stack: list[tuple[int, NodeDiff]] = [(0, diff)]
    while stack:
        depth, d = stack.pop()
        pad = "  " * depth
        if fold and d.status == SAME and not d.changed and depth > 0:
            count = sum(1 for _ in d.walk())
            under = count - 1
            lines.append(
                f"{pad}= {d.node.label}{was_input(d)}"
                + (f" … {under} node{'s' if under != 1 else ''} unchanged" if under else "")
            )
            continue
        text = f"{pad}{marks[d.status]} {d.node.label}{was_input(d)}"
        if d.changes and d.status == CHANGED:
            text += "  [" + "; ".join(d.changes) + "]"
        lines.append(text)
        stack.extend((depth + 1, c) for c in reversed(d.children))
    return lines
