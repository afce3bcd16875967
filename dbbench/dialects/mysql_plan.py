"""MySQL's plans read: tree-format ``EXPLAIN ANALYZE`` text and ``EXPLAIN FORMAT=JSON`` accesses.

Part of the MySQL dialect: :mod:`dbbench.dialects.mysql` re-exports :func:`parse_plan`,
:func:`alias_map` and :func:`json_accesses`, and runs the EXPLAINs
(:func:`~dbbench.dialects.mysql.run_explain`).
"""

from __future__ import annotations

import re

_ACCESS = [
    (re.compile(r"^(?:Covering )?[Ii]ndex range scan on (\S+) using (\S+)"), "index_range"),
    (re.compile(r"^Single-row (?:covering )?index lookup on (\S+) using (\S+)"), "unique_lookup"),
    (re.compile(r"^(?:Covering )?[Ii]ndex lookup on (\S+) using (\S+)"), "index_lookup"),
    (re.compile(r"^(?:Covering )?[Ii]ndex scan on (\S+) using (\S+)"), "index_scan"),
    # a MATCH … AGAINST through a FULLTEXT index
    (re.compile(r"^Full-text index search on (\S+) using (\S+)"), "index_lookup"),
    (re.compile(r"^Table scan on ([^<\s]\S*)"), "full_scan"),  # not <temporary>, a buffer of its own
]
_OPS = [
    ("Rows fetched before execution", "const"),
    ("Zero rows", "const"),
    ("Sort", "sort"),
    ("Temporary table", "temp_table"),
    ("Materialize", "temp_table"),
    ("Filter", "filter"),
    ("Limit", "limit"),
    ("Nested loop", "join"),
    ("Inner hash join", "join"),
    ("Left hash join", "join"),
    ("Hash antijoin", "join"),
    ("Hash semijoin", "join"),
    ("Select #", "subquery"),
    ("Window", "window"),
    ("Aggregate", "aggregate"),
    ("Group aggregate", "aggregate"),
    ("Stream results", "stream"),
    ("Delete from", "modify"),
    ("Update ", "modify"),
    ("Insert into", "modify"),
]
_ACTUAL = re.compile(r"\(actual time=([-\d.e+]+)\.\.([-\d.e+]+) rows=([-\d.e+]+) loops=([\d.e+]+)\)")
_TABLE_REF = re.compile(
    r"(?:\b(?:FROM|JOIN|STRAIGHT_JOIN)|^\s*UPDATE(?:\s+(?:LOW_PRIORITY|IGNORE))*)\s+"
    r"`?([A-Za-z_]\w*)`?(?:\s+(?:AS\s+)?(?!(?:WHERE|JOIN|ON|FORCE|USE|IGNORE|"
    r"STRAIGHT_JOIN|LEFT|RIGHT|INNER|CROSS|ORDER|GROUP|LIMIT|FOR|USING|NATURAL|SET)\b)`?([A-Za-z_]\w*)`?)?",
    re.I,
)


def alias_map(sql: str) -> dict[str, str]:
    """alias → table for the FROM/JOIN items of ``sql`` (tables map to themselves)."""
    out = {}
    for table, alias in _TABLE_REF.findall(sql):
        out[table] = table
        if alias:
            out[alias] = table
    return out


def parse_plan(text: str, aliases: dict[str, str] | None = None):
    """Tree-format ``EXPLAIN ANALYZE`` (8.0.18+ and 9.x; times may be in exponent notation) →
    (normalized tree, executor ms = the root's time to last row)."""
    from dbbench.dialects.plan import PlanNode, mark_subqueries

    aliases = aliases or {}
    stack: list[tuple[int, PlanNode]] = []
    root = None
    for line in text.splitlines():
        stripped = line.lstrip(" ")
        if not stripped.startswith("-> "):
            continue
        depth = len(line) - len(stripped)
        node = _node(stripped[3:], aliases)
        while stack and stack[-1][0] >= depth:
            stack.pop()
        if stack:
            stack[-1][1].children.append(node)
        else:
            root = node
        stack.append((depth, node))
    if root is None:
        raise ValueError("no plan in EXPLAIN ANALYZE output")
    mark_subqueries(root, is_probe=lambda n: n.kind == "subquery")
    return root, root.actual_ms or 0.0


def _node(body: str, aliases: dict[str, str]):
    """One ``-> …`` line of the tree (without the arrow) as a node: its label, kind (an access
    with table, alias and index, or an operator), estimated and actual rows, actual time."""
    from dbbench.dialects.plan import PlanNode

    cut = [
        i
        for i in (
            body.find("  (cost="),
            body.find(" (cost="),
            body.find(" (actual time="),
            body.find(" (never executed)"),
        )
        if i >= 0
    ]
    label = body[: min(cut)].strip() if cut else body.strip()
    node = PlanNode(kind="operator", label=label)
    for pattern, kind in _ACCESS:
        m = pattern.match(label)
        if m:
            node.kind, node.alias = kind, m.group(1)
            node.table = aliases.get(m.group(1), m.group(1))
            node.index = m.group(2) if m.lastindex and m.lastindex >= 2 else None
            break
    else:
        for prefix, kind in _OPS:
            if label.startswith(prefix):
                node.kind = kind
                break
    m = _ACTUAL.search(body)
    if m:
        node.actual_ms, node.actual_rows, node.loops = (
            float(m.group(2)),
            float(m.group(3)),
            float(m.group(4)),
        )
    est = re.search(r"\(cost=[^)]*rows=([\d.e+]+)\)", body)
    if est:
        node.est_rows = float(est.group(1))
    if label.startswith("Select #") and "subquery" in label:
        node.kind = "subquery"
    if node.kind == "modify":  # "Delete from g (buffered)", "Update t, u", "Insert into t"
        m = _MODIFIED.match(label)
        if m:
            node.alias = m.group(1)
            node.table = aliases.get(m.group(1), m.group(1))
    return node


_MODIFIED = re.compile(r"^(?:Delete from|Update|Insert into)\s+`?([A-Za-z_]\w*)`?")


def json_accesses(doc: dict, aliases: dict[str, str]) -> list[tuple[str, str | None, str]]:
    """(table, key, access_type) of every table in ``EXPLAIN FORMAT=JSON`` (version 1 names aliases)."""
    found = []
    stack = [doc]  # iterative: a hostile server's nesting cannot exhaust the stack
    while stack:
        x = stack.pop()
        if isinstance(x, dict):
            if "access_type" in x and "table_name" in x:
                name = x["table_name"]
                found.append((aliases.get(name, name), x.get("key"), x["access_type"]))
            stack.extend(reversed(list(x.values())))
        elif isinstance(x, list):
            stack.extend(reversed(x))
    return found


# EXPLAIN FORMAT=JSON's access types as the normalized tree's access kinds
_JSON_ACCESS = {
    "ALL": "full_scan",
    "index": "index_scan",
    "range": "index_range",
    "ref": "index_lookup",
    "ref_or_null": "index_lookup",
    "fulltext": "index_lookup",
    "index_merge": "index_range",
    "eq_ref": "unique_lookup",
    "const": "unique_lookup",
    "system": "unique_lookup",
}


# the words the tree format uses for each access kind
_JSON_LABEL = {
    "full_scan": "Table scan on {table}",
    "index_scan": "Index scan on {table} using {key}",
    "index_range": "Index range scan on {table} using {key}",
    "index_lookup": "Index lookup on {table} using {key}",
    "unique_lookup": "Single-row index lookup on {table} using {key}",
}


def write_tree(doc: dict, aliases: dict[str, str], verb: str, examined: float | None, affected: float | None):
    """The normalized tree of a single-table ``UPDATE`` / ``DELETE``, which MySQL's iterator
    executor cannot ``EXPLAIN ANALYZE`` (``<not executable by iterator executor>``): a ``modify``
    root over the access ``EXPLAIN FORMAT=JSON`` (version 1) names for each table, a ``sort``
    where it sorts (``using_filesort``) and a ``temp_table`` where it buffers the rows to change.
    The rows the statement examined and changed (performance_schema's ``ROWS_EXAMINED`` and
    ``ROWS_AFFECTED``, when read) are the target access's and the root's actual rows."""
    from dbbench.dialects.plan import PlanNode, mark_subqueries

    found: list[tuple[dict, bool, bool]] = []  # (table object, sorted, buffered)
    stack: list[tuple[object, bool, bool]] = [(doc, False, False)]
    while stack:  # iterative: a hostile server's nesting cannot exhaust the stack
        x, sorted_, temp = stack.pop()
        if isinstance(x, dict):
            sorted_ = sorted_ or bool(x.get("using_filesort"))
            temp = temp or bool(x.get("using_temporary_table"))
            if "access_type" in x and "table_name" in x:
                found.append((x, sorted_, temp))
            stack.extend((v, sorted_, temp) for v in reversed(list(x.values())))
        elif isinstance(x, list):
            stack.extend((v, sorted_, temp) for v in reversed(x))
    target = next((t for t, _, _ in found if t.get(verb) is True), found[0][0] if found else None)
    name = None if target is None else aliases.get(target["table_name"], target["table_name"])
    root = PlanNode(
        kind="modify", label=f"{verb.capitalize()} {name or '?'}", table=name, actual_rows=affected
    )
    root.loops = 1.0
    parent = root
    if any(s for _, s, _ in found):
        parent = PlanNode(kind="sort", label="Sort (filesort)")
        root.children.append(parent)
    if any(t for _, _, t in found):
        buffered = PlanNode(kind="temp_table", label="Temporary table (rows to change)")
        parent.children.append(buffered)
        parent = buffered
    for t, _, _ in found:
        table = aliases.get(t["table_name"], t["table_name"])
        kind = _JSON_ACCESS.get(str(t["access_type"]), "operator")
        key = t.get("key")
        if kind == "index_scan" and key == "PRIMARY":  # every row, in the clustered index's order
            kind, key = "full_scan", None
        label = _JSON_LABEL.get(kind, f"{t['access_type']} access on {{table}}").format(table=table, key=key)
        est = t.get("rows_examined_per_scan")
        node = PlanNode(
            kind=kind,
            label=label,
            table=table,
            alias=t["table_name"],
            index=key,
            est_rows=float(est) if isinstance(est, (int, float)) else None,
            actual_rows=examined if t is target else None,
            loops=1.0 if t is target and examined is not None else None,
        )
        parent.children.append(node)
    mark_subqueries(root)
    return root
