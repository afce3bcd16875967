"""SQL text as the places queries live write it, turned into a catalog's shape text.

One lexer reads what sqlc, aiosql, yesql, PugSQL and HugSQL files hold and what drivers and servers
record: ``:name``, ``%(name)s``, ``%s``, ``$1`` and ``?`` parameters, quoted text and identifiers,
comments. :func:`normalize` rewrites every parameter as ``:name`` (the catalog's one placeholder
syntax), naming it after the column it is compared with (``customer_id = $1`` -> ``:customer_id``),
and, for captured statements, turns literals into parameters too (their values kept as samples)
and folds an IN-list to one parameter. :func:`shape_key` is what two spellings of one shape share.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from dbbench.catalog.params import param_names
from dbbench.defaults import DIALECT_LABEL
from verdict.files import excerpt

_TOKEN = re.compile(
    r"""
    (?P<space>\s+)
  | (?P<comment>--[^\n]*|\#[^\n]*|/\*.*?(?:\*/|\Z))
  | (?P<str>(?:[eEnN]|_utf8mb4)?'(?:[^'\\]++|''|\\.)*+(?:'|\Z))
  | (?P<ident>"(?:[^"]++|"")*+(?:"|\Z)|`(?:[^`]++|``)*+(?:`|\Z))
  | (?P<param>%\((?P<pyname>\w+)\)s|%s|\$(?P<num>\d+)|\?|(?<![:\w]):(?P<colon>[A-Za-z_]\w*))
  | (?P<number>(?<![\w.])\d+(?:\.\d+)?(?:[eE][-+]?\d+)?(?![\w.]))
  | (?P<word>[A-Za-z_][\w$]*(?:\.[A-Za-z_][\w$]*)*)
  | (?P<cast>::)
  | (?P<op><=|>=|<>|!=|=|<|>)
  | (?P<other>.)
    """,
    re.X | re.S,
)
# A text literal right after one of these is a typed literal (DATE '…', INTERVAL '1 day'): kept.
_TYPED = {"date", "time", "timestamp", "interval", "timestamptz"}
_COMPARE = {"=", "<", ">", "<=", ">=", "<>", "!=", "like", "ilike"}
_KEYWORD_NAMES = {"limit": "limit", "offset": "offset"}
_GENERATED = re.compile(r"^(?:param|\w+_)\d+$")
# a cast a driver adds to a parameter (SQLAlchemy's psycopg dialect: %(x)s::INTEGER)
# a driver's cast of a parameter, its type one word or several (``::TIMESTAMP WITHOUT TIME ZONE``,
# ``::character varying(20)``, ``::double precision``, ``::int[]``)
_PARAM_CAST = re.compile(
    r"(:[A-Za-z_]\w*)::[A-Za-z_]\w*(?:\s+(?:with|without|time|zone|varying|precision)\b)*"
    r"(?:\s*\(\d+(?:,\s*\d+)?\))?(?:\[\])?",
    re.I,
)


@dataclass
class Normalized:
    """A statement with every parameter (and, when asked, every literal) as ``:name``: the text,
    one sample value per parameter (None where the statement gave none), the values of each
    folded IN-list, and the names in order of appearance."""

    sql: str
    values: dict[str, Any] = field(default_factory=dict)
    lists: dict[str, list[Any]] = field(default_factory=dict)

    @property
    def names(self) -> list[str]:
        return list(self.values)


def tokens(sql: str) -> list[tuple[str, str, re.Match[str]]]:
    """(kind, text, match) of every token of ``sql``."""
    return [(m.lastgroup or "other", m.group(), m) for m in _TOKEN.finditer(sql)]


def _literal(kind: str, text: str) -> Any:
    if kind == "number":
        return float(text) if any(c in text for c in ".eE") else int(text)
    body = text[text.index("'") + 1 : -1]
    return re.sub(r"\\(.)", r"\1", body.replace("''", "'"))


def _column_before(significant: list[tuple[str, str]]) -> str | None:
    """The name a parameter at this point gets: ``col`` of ``col = ?`` / ``col IN (?`` /
    ``col LIKE ?`` / ``col BETWEEN ? AND ?``, ``limit`` / ``offset`` after those keywords."""
    if not significant:
        return None
    kind, text = significant[-1]
    low = text.lower()
    if kind == "word" and low in _KEYWORD_NAMES:
        return _KEYWORD_NAMES[low]
    if low == "(" and len(significant) >= 3 and significant[-2][1].lower() == "in":
        significant = significant[:-1]
        kind, text, low = "op", "in", "in"
    elif low == "and" and len(significant) >= 3 and significant[-3][1].lower() == "between":
        significant = significant[:-2]
        kind, low = "op", "between"
    elif low == "between":
        kind = "op"
    if (kind == "op" or low in _COMPARE or low in ("in", "between")) and len(significant) >= 2:
        k, col = significant[-2]
        if low not in _COMPARE | {"in", "between"}:
            return None
        if k == "word" and col.lower() not in ("not", "and", "or", "where", "on"):
            return col.split(".")[-1].lower()
        if k == "ident":
            return col[1:-1].split(".")[-1].lower()
    return None


def normalize(
    sql: str,
    params: Any = None,
    *,
    literals: bool = False,
    fold_in_lists: bool = False,
) -> Normalized:
    """``sql`` with each parameter as ``:name``; ``params`` (a mapping for ``%(name)s`` / ``:name``,
    a sequence for ``%s`` / ``?`` / ``$n``) gives their sample values. ``literals``: quoted text
    and numbers become parameters too (typed literals such as ``DATE '…'`` stay). ``fold_in_lists``:
    ``IN (a, b, c)`` becomes ``IN (:name)``, its values kept in ``lists``."""
    toks = tokens(sql)
    out: list[str] = []
    result = Normalized("")
    by_source: dict[str, str] = {}  # "$1" / "%(x)s" / ":x" -> the name given
    positional = 0
    significant: list[tuple[str, str]] = []
    i = 0
    while i < len(toks):
        kind, text, m = toks[i]
        is_value = kind == "param" or (
            literals
            and kind in ("str", "number")
            and not (significant and significant[-1][1].lower() in _TYPED)
        )
        if not is_value:
            out.append(text)
            if kind not in ("space", "comment"):
                significant.append((kind, text))
            i += 1
            continue
        if fold_in_lists and significant[-2:] and [t.lower() for _, t in significant[-2:]] == ["in", "("]:
            items, j = _in_list(toks, i, literals)
            if items is not None:
                base = _column_before(significant) or "p"
                name = _fresh(base, result.values)
                vals = [_value(k, t, mm, params, positional + n) for n, (k, t, mm) in enumerate(items)]
                positional += sum(1 for k, t, _ in items if k == "param" and _is_positional(t))
                result.values[name] = vals[0] if vals else None
                result.lists[name] = vals
                out.append(f":{name}")
                significant.append(("param", f":{name}"))
                i = j
                continue
        # a named placeholder, or $n, is one parameter wherever it appears again
        named = kind == "param" and (not _is_positional(text) or text.startswith("$"))
        source = text if named else None
        value = _value(kind, text, m, params, positional)
        if kind == "param" and _is_positional(text) and not text.startswith("$"):
            positional += 1
        if source is not None and source in by_source:
            name = by_source[source]
        else:
            wanted = m.group("pyname") or m.group("colon") if kind == "param" else None
            if wanted and _GENERATED.match(wanted):  # SQLAlchemy's param_1, account_id_1
                wanted = None
            base = wanted or _column_before(significant) or "p"
            name = wanted if wanted and wanted not in result.values else _fresh(base, result.values)
            if source is not None:
                by_source[source] = name
            result.values[name] = value
        out.append(f":{name}")
        significant.append(("param", f":{name}"))
        i += 1
    result.sql = "".join(out)
    return result


def _is_positional(text: str) -> bool:
    return text in ("%s", "?") or text.startswith("$")


def _value(kind: str, text: str, m: re.Match[str], params: Any, position: int) -> Any:
    """A parameter's sample value: the literal's, or the one ``params`` gives for it."""
    if kind in ("str", "number"):
        return _literal(kind, text)
    if params is None:
        return None
    try:
        if m.group("pyname") or m.group("colon"):
            return params[m.group("pyname") or m.group("colon")]
        if m.group("num"):
            return params[int(m.group("num")) - 1]
        return params[position]
    except (KeyError, IndexError, TypeError):
        return None


def _in_list(toks, i: int, literals: bool):
    """The value tokens of an IN-list starting at ``i`` and the index after its ``)``; (None, i)
    when the list holds anything but values and commas."""
    items = []
    j = i
    while j < len(toks):
        kind, text, m = toks[j]
        if kind in ("space", "comment") or text == ",":
            j += 1
        elif kind == "param" or (literals and kind in ("str", "number")):
            items.append((kind, text, m))
            j += 1
        elif text == ")":
            return items, j
        else:
            return None, i
    return None, i


def _fresh(base: str, taken: dict[str, Any]) -> str:
    if base not in taken:
        return base
    n = 2
    while f"{base}_{n}" in taken:
        n += 1
    return f"{base}_{n}"


def shape_key(sql: str) -> str:
    """What every spelling of one shape has in common: parameters and literals as ``?``, IN-lists
    folded, comments dropped, whitespace collapsed, words lowercased, no trailing ``;``."""
    parts = []
    norm = drop_param_casts(normalize(sql, literals=True, fold_in_lists=True).sql)
    for kind, text, _ in tokens(norm):
        if kind == "comment":
            continue
        if kind == "space":
            parts.append(" ")
        elif kind == "param":
            parts.append("?")
        elif kind == "word":
            parts.append(text.lower())
        else:
            parts.append(text)
    return re.sub(r"\s+", " ", "".join(parts)).strip().rstrip(";").strip()


def drop_param_casts(sql: str) -> str:
    """``:name::INTEGER`` as ``:name``: the casts a driver adds to its parameters."""
    return _PARAM_CAST.sub(r"\1", sql)


def statement_kind(sql: str) -> str:
    """The first word of the statement (comments skipped), lowercased: select, with, update, …"""
    for kind, m in significant(sql):  # the first token only: the rest is never lexed
        return m[0].split(".")[0].lower() if kind == "word" else ""
    return ""


_TABLE_REF = re.compile(  # FROM / JOIN items, an UPDATE's table, a DELETE's USING items
    r"(?:\b(?:FROM|JOIN|USING)|(?<!FOR\s)(?<!KEY\s)\bUPDATE)\s+([A-Za-z_][\w.]*)(?:\s+(?:AS\s+)?(?!(?:WHERE|JOIN|ON|USING|INNER|LEFT|RIGHT|"
    r"FULL|CROSS|NATURAL|GROUP|ORDER|LIMIT|HAVING|UNION|FOR|WINDOW|STRAIGHT_JOIN|SET)\b)([A-Za-z_]\w*))?",
    re.I,
)


def table_aliases(sql: str) -> dict[str, str]:
    """alias (and table) -> table, lowercased, of the FROM / JOIN items of ``sql``, an UPDATE's
    table and a DELETE's USING items."""
    out: dict[str, str] = {}
    for table, alias in _TABLE_REF.findall(sql):
        name = table.split(".")[-1].lower()
        out[name] = name
        if alias:
            out[alias.lower()] = name
    return out


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# What ends an operand at its own depth: clause and boolean keywords.
_BOUNDARY = _words(
    "select from where and or not on having when then else end case set values by limit offset join "
    "group order union intersect except returning using into update delete insert with as exists "
    "distinct all any some window fetch for lateral inner left right full cross natural "
    "straight_join asc desc nulls is"
)
# Words that are never a column: literals, types, time zones.
_NOT_COLUMN = _words(
    "null true false unknown interval date time timestamp timestamptz current_date current_time "
    "current_timestamp localtime localtimestamp current_user session_user user binary collate signed "
    "unsigned char varchar text integer int bigint smallint numeric decimal float double real "
    "boolean bool json jsonb uuid bytea precision varying character zone at"
)
# Calls that keep a value of the column's kind (``lower(title)``, ``CAST(id AS char)``,
# ``date(created_at)``): a column seen through them gives the parameter its values. Others
# (``EXTRACT(YEAR FROM …)``, ``length(…)``, ``to_char(…)``) compute another kind of value.
_SEE_THROUGH = _words(
    "lower upper lcase ucase trim ltrim rtrim btrim coalesce ifnull nullif nvl cast convert date "
    "datetime timestamp date_trunc trunc truncate round floor ceil ceiling abs concat unaccent "
    "binary substr substring left right greatest least"
)
_COMPARE_OPS = frozenset({"=", "<", ">", "<=", ">=", "<>", "!=", "like", "ilike", "in", "between"})
_REACH = 256  # significant tokens an operand is read over, each way: longer is no column expression


@dataclass(frozen=True)
class Comparison:
    """How a parameter is compared: the columns the other side reads (``(qualifier, column)``,
    first one first), and ``how``: ``eq`` (``=``, ``IN``) or ``range`` (the other operators)."""

    columns: tuple[tuple[str | None, str], ...]
    how: str


def significant(sql: str) -> Iterator[tuple[str, re.Match[str]]]:
    """(kind, match) of every token but spaces and comments, as the lexer reads them: for a reader
    that keeps what it needs of each, not the matches (on a long text the garbage collector's
    passes over a list of them cost more than the lexing)."""
    for m in _TOKEN.finditer(sql):
        if (kind := m.lastgroup or "other") not in ("space", "comment"):
            yield kind, m


def _significant(sql: str) -> list[tuple[str, str]]:
    """(kind, lowercased text) of every token but spaces and comments."""
    return [(kind, m.group().lower()) for kind, m in significant(sql)]


def _is_subquery(sig: list[tuple[str, str]], open_at: int) -> bool:
    return open_at + 1 < len(sig) and sig[open_at + 1][1] in ("select", "with", "values", "table")


def _operand_left(sig: list[tuple[str, str]], end: int) -> int:
    """The start of the operand ending at ``end`` (inclusive), read leftwards at its own depth."""
    depth, j = 0, end
    while j >= 0 and end - j < _REACH:
        kind, t = sig[j]
        if t == ")":
            depth += 1
        elif t == "(":
            if not depth:
                break
            depth -= 1
        elif not depth and (t == "," or t in _BOUNDARY or (kind == "op") or t in _COMPARE_OPS):
            break
        j -= 1
    return j + 1


def _operand_right(sig: list[tuple[str, str]], start: int, between: bool = False) -> int:
    """The end (exclusive) of the operand starting at ``start``, read rightwards at its own depth;
    ``between``: ``x AND y`` is one operand."""
    depth, j = 0, start
    while j < len(sig) and j - start < _REACH:
        kind, t = sig[j]
        if t == "(":
            depth += 1
        elif t == ")":
            if not depth:
                break
            depth -= 1
        elif not depth and t == "and" and between:
            between = False
        elif not depth and (t == "," or t in _BOUNDARY or kind == "op" or t in _COMPARE_OPS):
            break
        j += 1
    return j


def _columns_in(sig: list[tuple[str, str]], start: int, end: int) -> list[tuple[str | None, str]]:
    """The words of ``sig[start:end]`` that may be columns whose values the operand keeps: not a
    function's name, a type, a keyword or a typed literal's type, nor inside a subquery or a call
    that computes another kind of value (:data:`_SEE_THROUGH`)."""
    out: list[tuple[str | None, str]] = []
    calls: list[bool] = []  # per open '(' of the operand: whether a value seen through it is kept
    j = start
    while j < end:
        kind, t = sig[j]
        if t == "(" and _is_subquery(sig, j):
            depth = 0
            while j < end:  # skip the subquery
                depth += {"(": 1, ")": -1}.get(sig[j][1], 0)
                if depth == 0:
                    break
                j += 1
        elif t == "(":
            calls.append(_keeps_value(sig, j))
        elif t == ")":
            if calls:
                calls.pop()
        elif kind == "word" and all(calls):
            after = sig[j + 1] if j + 1 < len(sig) else ("", "")
            before = sig[j - 1][1] if j > 0 else ""
            name = t.split(".")
            if (
                after[1] != "("
                and after[0] != "str"
                and before not in ("::", "as")
                and name[-1] not in _NOT_COLUMN
                and name[-1] not in _BOUNDARY
                and name[-1] not in _COMPARE_OPS
                and len(name) <= 3
            ):
                out.append((name[-2] if len(name) > 1 else None, name[-1]))
        j += 1
    return list(dict.fromkeys(out))


def _keeps_value(sig: list[tuple[str, str]], open_at: int) -> bool:
    """Whether the ``(`` at ``open_at`` groups (no call) or calls a function that keeps its
    argument's kind of value (:data:`_SEE_THROUGH`)."""
    before = sig[open_at - 1] if open_at else ("", "")
    if before[0] != "word" or before[1] in _BOUNDARY or before[1] in _COMPARE_OPS:
        return True
    return before[1].split(".")[-1] in _SEE_THROUGH


def _value_side(sig: list[tuple[str, str]], start: int, end: int, at: int) -> bool:
    """Whether ``sig[start:end]``, the operand holding the parameter at ``at``, is that parameter
    alone, wrapped (``lower(:x)``, ``CAST(:x AS int)``, ``:x + 0``, ``coalesce(:x, 0)``): no
    column, no other parameter, no call that does not hold it (``now() - :x`` is no value of the
    column)."""
    holding: set[int] = set()  # the '(' offsets whose group holds the parameter
    stack: list[int] = []
    for j in range(start, end):
        t = sig[j][1]
        if t == "(":
            stack.append(j)
        elif t == ")" and stack:
            stack.pop()
        if j == at:
            holding = set(stack)
    for j in range(start, end):
        kind, t = sig[j]
        if j != at and kind == "param":
            return False
        if t == "(" and (j not in holding or not _keeps_value(sig, j)):
            return False
    return not _columns_in(sig, start, end)


def comparisons(sql: str) -> dict[str, Comparison]:
    """parameter -> :class:`Comparison` for each ``:name`` compared with an expression that reads a
    column, on either side and through what wraps it: ``o.customer_id = :customer_id``,
    ``status IN (:status)``, ``lower(email) = lower(:email)``, ``customer_id + 0 = :customer_id``,
    ``CAST(placed_at AS date) >= :day``, ``:limit_id > id``, ``created_at BETWEEN :a AND :b``.
    The side of the parameter must be the parameter alone or wrapped (:func:`_value_side`)."""
    sig = _significant(sql)
    out: dict[str, Comparison] = {}
    for p, (kind, t) in enumerate(sig):
        if kind != "param" or not t.startswith(":"):
            continue
        name = t[1:]
        if name in out:
            continue
        found = _comparison(sig, p)
        if found is not None and found.columns:
            out[name] = found
    for group in in_lists(sql):  # a long list's later items are past the reach of its IN
        first = next((out[n] for n in group if n in out), None)
        if first is not None:
            for n in group:
                out.setdefault(n, first)
    return out


def _comparison(sig: list[tuple[str, str]], p: int) -> Comparison | None:
    """The comparison the parameter at ``p`` takes part in, read outwards from it."""
    # leftwards: an operator at the parameter's depth, or the '(' of an IN-list, climbing out of
    # the calls and groups that hold it
    depth, j, climbed, comma = 0, p - 1, 0, False
    op_at: int | None = None
    while j >= 0 and p - j < _REACH:
        kind, t = sig[j]
        if t == ")":
            depth += 1
        elif t == "(":
            if depth:
                depth -= 1
            elif j and sig[j - 1][1] == "in":
                op_at = j - 1
                break
            elif _is_subquery(sig, j) or (j and sig[j - 1][1] in _BOUNDARY and sig[j - 1][1] != "not"):
                break
            else:
                climbed, comma = climbed + 1, False
        elif not depth:
            if t == ",":
                comma = True
            elif kind == "op" or t in _COMPARE_OPS:
                op_at = None if comma else j
                break
            elif t == "and" and _between_before(sig, j):
                op_at = _between_before(sig, j)
                break
            elif t in _BOUNDARY:
                break
        j -= 1
    if op_at is not None:
        op = sig[op_at][1]
        left_end = op_at - 1 - (op_at > 0 and sig[op_at - 1][1] == "not")
        side_start = op_at + 1 + (op == "in")
        side_end = _operand_right(sig, side_start, between=op == "between")
        if op == "between":  # the half of `x AND y` that holds the parameter
            half = _and_of(sig, side_start, side_end)
            side_start, side_end = (half + 1, side_end) if p > half else (side_start, half)
        if op != "in" and not _value_side(sig, side_start, side_end, p):
            return None
        start = _operand_left(sig, left_end)
        return Comparison(tuple(_columns_in(sig, start, left_end + 1)), _how(op))
    # rightwards: the parameter is the left operand
    start = j + 1 if op_at is None else op_at + 1
    depth, k = 0, p + 1
    while k < len(sig) and k - p < _REACH:
        kind, t = sig[k]
        if t == "(":
            depth += 1
        elif t == ")":
            if depth:
                depth -= 1
            elif climbed:
                climbed -= 1
            else:
                break
        elif not depth:
            if t == "," and not climbed:
                break
            if t == "not" and k + 1 < len(sig) and sig[k + 1][1] in ("in", "like", "ilike", "between"):
                k += 1
                continue
            if kind == "op" or t in _COMPARE_OPS:
                if not _value_side(sig, start, k, p):
                    return None
                op = t
                other = k + 1 + (op == "in")
                end = _operand_right(sig, other, between=op == "between")
                return Comparison(tuple(_columns_in(sig, other, end)), _how(op))
            if t in _BOUNDARY:
                break
        k += 1
    return None


def _between_before(sig: list[tuple[str, str]], at: int) -> int:
    """The offset of the ``BETWEEN`` whose ``AND`` is at ``at`` (0 when it is a boolean AND)."""
    depth, j = 0, at - 1
    while j >= 0 and at - j < _REACH:
        kind, t = sig[j]
        if t == ")":
            depth += 1
        elif t == "(":
            if not depth:
                return 0
            depth -= 1
        elif not depth:
            if t == "between":
                return j
            if t == "," or t in _BOUNDARY or kind == "op" or t in _COMPARE_OPS:
                return 0
        j -= 1
    return 0


def _and_of(sig: list[tuple[str, str]], start: int, end: int) -> int:
    """The offset of the ``AND`` of a ``BETWEEN``'s ``x AND y`` in ``sig[start:end]``."""
    depth = 0
    for j in range(start, end):
        t = sig[j][1]
        depth += {"(": 1, ")": -1}.get(t, 0)
        if not depth and t == "and":
            return j
    return end


def _how(op: str) -> str:
    return "eq" if op in ("=", "in") else "range"


def compared_columns(sql: str) -> dict[str, tuple[str | None, str, str]]:
    """parameter -> (table or alias as written, column, how: ``eq`` or ``range``) for each ``:name``
    compared with a column, its first candidate (:func:`comparisons`)."""
    return {name: (*c.columns[0], c.how) for name, c in comparisons(sql).items()}


MAX_LIST = 1000  # values of an IN-list kept (a capture's longest list; a `param NAME = [...]` line)


def expand_lists(sql: str, values: dict[str, Any]) -> tuple[str, dict[str, Any], dict[str, list[str]]]:
    """``sql`` with each IN-list of one parameter whose value is a list (``IN (:status)``, status =
    ["open", "pending"]) written out as one parameter per value (``IN (:status, :status_2)``): the
    text, the values by parameter and, per list, the names of its parameters. A list value of a
    parameter that is not alone in an IN-list is left as it is (:func:`list_problem` names it)."""
    lists = {k: list(v) for k, v in values.items() if isinstance(v, (list, tuple)) and v}
    if not lists:
        return sql, dict(values), {}
    taken = {**dict.fromkeys(param_names(sql)), **values}
    groups: dict[str, list[str]] = {}
    for name, items in lists.items():
        names = [name]
        for _ in items[1:]:
            names.append(_fresh(name, taken))
            taken[names[-1]] = None
        groups[name] = names
    out, flat = [], {k: v for k, v in values.items() if k not in lists}
    toks = tokens(sql)
    for i, (kind, text, m) in enumerate(toks):
        used = m.group("colon") if kind == "param" else None
        if used is not None and used in groups and _alone_in_list(toks, i):
            out.append(", ".join(f":{n}" for n in groups[used]))
            flat.update(zip(groups[used], lists[used], strict=True))
        else:
            out.append(text)
    for name in lists:  # not alone in an IN-list: kept as given
        if groups[name][0] not in flat:
            flat[name] = values[name]
            groups.pop(name)
    return "".join(out), flat, groups


def _alone_in_list(toks: list[tuple[str, str, re.Match[str]]], at: int) -> bool:
    """Whether the parameter at ``at`` is all an ``IN (…)`` holds."""
    before = [t.lower() for k, t, _ in reversed(toks[:at]) if k not in ("space", "comment")][:2]
    after = next((t for k, t, _ in toks[at + 1 :] if k not in ("space", "comment")), "")
    return before == ["(", "in"] and after == ")"


def list_problem(sql: str, name: str, value: Any) -> str | None:
    """What is wrong with the list ``value`` of parameter ``name`` in ``sql``, if anything."""
    if not value:
        return "an empty list: an IN-list holds at least one value"
    if len(value) > MAX_LIST:
        return f"a list of {len(value):,} values: at most {MAX_LIST:,}"
    if any(isinstance(v, (list, dict)) for v in value):
        return "a list of lists or tables: the values of an IN-list are text, numbers, booleans or dates"
    toks = tokens(sql)
    uses = [i for i, (k, _, m) in enumerate(toks) if k == "param" and m.group("colon") == name]
    if not uses or not all(_alone_in_list(toks, i) for i in uses):
        return f"a list is the values of an IN-list: write IN (:{name})"
    return None


def in_lists(sql: str) -> list[list[str]]:
    """The parameters of each IN-list of ``sql`` that holds nothing else (``IN (:a, :a_2)``), in order."""
    sig = _significant(sql)
    out = []
    for j in range(len(sig) - 1):
        if sig[j][1] == "in" and sig[j + 1][1] == "(":
            names, k = [], j + 2
            while k < len(sig) and sig[k][0] == "param" and sig[k][1].startswith(":"):
                names.append(sig[k][1][1:])
                if k + 1 < len(sig) and sig[k + 1][1] == ",":
                    k += 2
                elif k + 1 < len(sig) and sig[k + 1][1] == ")":
                    out.append(names)
                    break
                else:
                    break
    return out


# -- the one check of a catalog's SQL text (TOML fields and annotated blocks alike) ---------------
# What EXPLAIN ANALYZE takes, per dialect: a catalog statement of another kind (DROP, CREATE,
# SET, CALL, SHOW, EXPLAIN, …) is refused before anything runs.
QUERY_KINDS: dict[str, tuple[str, ...]] = {
    "postgresql": ("select", "with", "table", "values", "insert", "update", "delete", "merge"),
    "mysql": ("select", "with", "table", "values", "insert", "replace", "update", "delete"),
}
# What the other catalog statements are: a [[setup]] query's row, a cascade's delete and count.
ROW_KINDS: tuple[str, ...] = ("select", "with", "table", "values")
WRITE_KINDS: tuple[str, ...] = ("delete", "update", "with")

_SCAN = re.compile(
    r"""
    (?P<plain>[^'"`$()/;\#*\-]+)
  | (?P<line_comment>--[^\n]*)
  | (?P<hash>\#[^\n]*)
  | (?P<block>/\*)
  | (?P<quote>['"`])
  | (?P<dollar>\$(?:[A-Za-z_\x80-\U0010ffff][\w\x80-\U0010ffff]*)?\$)
  | (?P<open>\()
  | (?P<close>\))
  | (?P<semi>;)
  | (?P<other>.)
    """,
    re.X | re.S,
)
_CODE_COMMENT = re.compile(r"/\*!\d*")  # MySQL runs what follows, up to the */
_WORD = re.compile(r"\s*([A-Za-z_\x80-\U0010ffff]\w*)?")
_NAMES = {"'": "quoted text", '"': "quoted name", "`": "quoted name"}


@dataclass
class Scan:
    """What :func:`scan` found in one statement's text: ``problems`` as (offset, what), the
    statement's ``kind`` (its first word, lowercased, leading parentheses skipped) and whether it
    ends with its ``;`` (``terminated``)."""

    problems: list[tuple[int, str]] = field(default_factory=list)
    kind: str = ""
    terminated: bool = False


def _quote_end(sql: str, start: int, quote: str, backslash: bool) -> int:
    """The offset after the quote closing the one at ``start`` (doubled quotes and, where
    ``backslash``, ``\\x`` escapes kept inside), or -1 when the text ends first."""
    i = start + 1
    while True:
        j = sql.find(quote, i)
        if j < 0:
            return -1
        if backslash:
            k = j - 1
            while k >= i and sql[k] == "\\":
                k -= 1
            if (j - 1 - k) % 2:  # an odd run of backslashes escapes this quote
                i = j + 1
                continue
        if sql.startswith(quote, j + 1):  # a doubled quote
            i = j + 2
            continue
        return j + 1


def _comment_end(sql: str, start: int, nested: bool) -> int:
    """The offset after the ``*/`` closing the ``/*`` at ``start`` (PostgreSQL nests them), or -1."""
    depth, i = 1, start + 2
    for m in re.compile(r"/\*|\*/").finditer(sql, i):
        if m.group() == "*/":
            depth -= 1
            if depth == 0 or not nested:
                return m.end()
        elif nested:
            depth += 1
    return -1


def scan(sql: str, dialect: str) -> Scan:
    """Read ``sql`` as ``dialect``'s server would, up to what makes it no statement to run: a NUL
    byte (the drivers' C strings end there: PostgreSQL would run the text before it), quoted text,
    a quoted name, a dollar-quoted body or a comment that is not closed, parentheses that do not
    pair up, and a second statement after the first one's ``;``. MySQL's ``/*! … */`` is code."""
    out = Scan()
    nul = sql.find("\x00")
    if nul >= 0:
        out.problems.append((nul, "holds a NUL byte, where the server would cut the statement"))
    mysql = dialect == "mysql"
    depth: list[int] = []  # offsets of the open parentheses
    ended_at = -1  # offset of the statement's ';'
    code_comment = -1  # offset of an open MySQL /*! … */, whose content the server runs
    i, n = 0, len(sql)
    while i < n:
        if code_comment >= 0 and sql.startswith("*/", i):
            code_comment, i = -1, i + 2
            continue
        m = _SCAN.match(sql, i)
        assert m is not None  # `other` takes any character
        kind, end = m.lastgroup, m.end()
        if kind == "hash" and not mysql:  # PostgreSQL's # is an operator
            kind, end = "other", i + 1
        if kind == "line_comment" and mysql and not re.match(r"--(?:\s|$)", sql[i : i + 3]):
            kind, end = "other", i + 1  # MySQL: `--` starts a comment only before a space
        if kind == "dollar" and (mysql or (i and re.match(r"[\w$\x80-\U0010ffff]", sql[i - 1]))):
            kind, end = "other", i + 1  # a $ inside a name, or MySQL's plain $
        if kind in ("line_comment", "hash") or (kind == "plain" and m.group().isspace()):
            i = end
            continue
        if kind == "block" and mysql and sql.startswith("/*!", i) and code_comment < 0:
            opening = _CODE_COMMENT.match(sql, i)
            code_comment, i = i, opening.end() if opening else i + 3
            continue
        if kind == "block":
            end = _comment_end(sql, i, nested=not mysql)
            if end < 0:
                out.problems.append((i, "a /* comment is not closed: the text ends inside it"))
                return out
            i = end
            continue
        if ended_at >= 0:
            at = i + len(m.group()) - len(m.group().lstrip()) if kind == "plain" else i
            out.problems.append(
                (at, "holds a second statement after the first one's ';' (a shape is one statement)")
            )
            return out
        if not out.kind and kind != "open":
            word = _WORD.match(sql, i) if kind == "plain" else None
            out.kind = word.group(1).lower() if word and word.group(1) else "?"
        if kind == "quote":
            quote = m.group()
            escapes = (mysql and quote != "`") or (
                quote == "'"
                and i > 0
                and sql[i - 1] in "eE"
                and not re.match(r"\w", sql[i - 2 : i - 1] or " ")
            )
            if quote == "`" and not mysql:
                i = end
                continue
            end = _quote_end(sql, i, quote, escapes)
            if end < 0:
                what = "quoted text" if quote == "'" or (mysql and quote == '"') else _NAMES[quote]
                out.problems.append((i, f"{what} is not closed: the text ends inside it"))
                return out
        elif kind == "dollar":
            tag = m.group()
            close = sql.find(tag, end)
            if close < 0:
                out.problems.append((i, f"the {tag} body is not closed: the text ends inside it"))
                return out
            end = close + len(tag)
        elif kind == "open":
            depth.append(i)
        elif kind == "close":
            if not depth:
                out.problems.append((i, "')' closes no '('"))
                return out
            depth.pop()
        elif kind == "semi":
            if depth:
                break  # reported below: the '(' is not closed
            ended_at = i
            out.terminated = True
        i = end
    if code_comment >= 0 and not out.problems:
        out.problems.append((code_comment, "a /*! comment is not closed: the text ends inside it"))
    if depth:
        out.problems.append((depth[-1], "'(' is not closed: the text ends before its ')'"))
    return out


Kinds = dict[str, tuple[str, ...]] | tuple[str, ...]


def statement_problems(
    sql: str, dialects: Iterable[str], kinds: Kinds | None = None
) -> list[tuple[int, str]]:
    """Every problem of one catalog statement ``sql`` run on ``dialects``, as (offset, what):
    those of :func:`scan` and a statement of a kind the dialect does not run there (``kinds``:
    per dialect, or one tuple for all; by default :data:`QUERY_KINDS`, what ``EXPLAIN ANALYZE``
    takes). A problem only some of the dialects have names them."""
    wanted = QUERY_KINDS if kinds is None else kinds
    found: dict[tuple[int, str], list[str]] = {}
    on_dialects = list(dialects)
    for dialect in on_dialects:
        s = scan(sql, dialect)
        problems = list(s.problems)
        allowed = wanted[dialect] if isinstance(wanted, dict) else wanted
        if not s.problems or all("NUL" in p for _, p in s.problems):
            if not s.kind:
                problems.append((0, "holds no statement"))
            elif s.kind not in allowed:
                said = "this" if s.kind == "?" else excerpt(s.kind.upper(), 30)
                problems.append((_first_word(sql), f"{said} is not {_kinds_text(wanted)}"))
        for p in problems:
            found.setdefault(p, []).append(dialect)
    out = []
    for (offset, what), on in found.items():
        if len(on) < len(on_dialects):
            what = f"{' and '.join(DIALECT_LABEL.get(d, d) for d in on)}: {what}"
        out.append((offset, what))
    return sorted(out)


def _kinds_text(kinds: Kinds) -> str:
    """What a statement of ``kinds`` is, in words: ``a query shape (SELECT, …; MERGE on PostgreSQL)``."""
    if isinstance(kinds, tuple):
        return f"one of {', '.join(k.upper() for k in kinds)}"
    common = [k for k in next(iter(kinds.values())) if all(k in ks for ks in kinds.values())]
    extra = [
        f"{', '.join(k.upper() for k in ks if k not in common)} on {DIALECT_LABEL.get(d, d)}"
        for d, ks in kinds.items()
        if any(k not in common for k in ks)
    ]
    return f"a query shape EXPLAIN ANALYZE runs ({', '.join(k.upper() for k in common)}; {'; '.join(extra)})"


def _first_word(sql: str) -> int:
    m = re.search(r"[^\s(]", re.sub(r"--[^\n]*|/\*.*?\*/", lambda m: " " * len(m.group()), sql, flags=re.S))
    return m.start() if m else 0


def line_of(sql: str, offset: int) -> tuple[int, int]:
    """(line, column), from 1, of ``offset`` in ``sql``."""
    line = sql.count("\n", 0, offset) + 1
    return line, offset - (sql.rfind("\n", 0, offset) + 1) + 1
