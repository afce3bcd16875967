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
from dataclasses import dataclass, field
from typing import Any

_TOKEN = re.compile(
    r"""
    (?P<space>\s+)
  | (?P<comment>--[^\n]*|\#[^\n]*|/\*.*?\*/)
  | (?P<str>(?:[eEnN]|_utf8mb4)?'(?:[^'\\]|''|\\.)*')
  | (?P<ident>"(?:[^"]|"")*"|`(?:[^`]|``)*`)
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
_PARAM_CAST = re.compile(r"(:[A-Za-z_]\w*)::[A-Za-z_][\w ]*?(?:\(\d+(?:,\s*\d+)?\))?(?=[\s,)]|$)")


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
    for kind, text, _ in tokens(sql):
        if kind == "word":
            return text.split(".")[0].lower()
        if kind not in ("space", "comment"):
            return ""
    return ""


_TABLE_REF = re.compile(
    r"\b(?:FROM|JOIN)\s+([A-Za-z_][\w.]*)(?:\s+(?:AS\s+)?(?!(?:WHERE|JOIN|ON|USING|INNER|LEFT|RIGHT|"
    r"FULL|CROSS|NATURAL|GROUP|ORDER|LIMIT|HAVING|UNION|FOR|WINDOW|STRAIGHT_JOIN)\b)([A-Za-z_]\w*))?",
    re.I,
)


def table_aliases(sql: str) -> dict[str, str]:
    """alias (and table) -> table, lowercased, of the FROM / JOIN items of ``sql``."""
    out: dict[str, str] = {}
    for table, alias in _TABLE_REF.findall(sql):
        name = table.split(".")[-1].lower()
        out[name] = name
        if alias:
            out[alias.lower()] = name
    return out


_COMPARED = re.compile(
    r"(?:([A-Za-z_]\w*)\.)?([A-Za-z_]\w*)\s*(?:=|<=|>=|<>|!=|<|>|\bLIKE\b|\bIN\s*\(|\bBETWEEN\b)\s*:([A-Za-z_]\w*)",
    re.I,
)


def compared_columns(sql: str) -> dict[str, tuple[str | None, str, str]]:
    """parameter -> (table or alias as written, column, how: ``eq`` or ``range``) for each ``:name``
    compared with a column (``o.customer_id = :customer_id``, ``status IN (:status)``)."""
    out: dict[str, tuple[str | None, str, str]] = {}
    for m in _COMPARED.finditer(sql):
        qualifier, column, name = m.group(1), m.group(2), m.group(3)
        how = "eq" if re.search(r"(?<![<>!])=\s*:|IN\s*\(\s*:", m.group(0).upper()) else "range"
        out.setdefault(name, (qualifier.lower() if qualifier else None, column.lower(), how))
    return out
