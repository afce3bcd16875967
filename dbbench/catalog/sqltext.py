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
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

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


_COMPARED = re.compile(  # from a word's start only: a long word is not read once per position
    r"\b(?:([A-Za-z_]\w*+)\.)?([A-Za-z_]\w*+)\s*+(?:=|<=|>=|<>|!=|<|>|\bLIKE\b|\bIN\s*\(|\bBETWEEN\b)\s*:([A-Za-z_]\w*)",
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
