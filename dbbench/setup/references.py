"""Names of another database or schema in setup SQL: the text checks' reference rule.

Part of :mod:`dbbench.setup.guard`. A qualified name ``q.name`` whose qualifier is not the namespace
(nor, on PostgreSQL, ``pg_catalog`` / ``pg_temp``) is a reference outside the namespace wherever it
names a relation, a routine or a sequence of names: after ``FROM``, ``JOIN``, ``INTO``, ``UPDATE``,
``TABLE``, ``CALL`` …, in a ``FROM`` list after a comma, followed by ``(`` (a call), with three parts
or more (``db.table.column``). It is a column of a table or alias (``o.id``) only where an expression
is certain to stand: after ``SELECT``, ``WHERE``, ``ON``, ``SET``, an operator and the like; any other
place counts as a reference. On PostgreSQL a type or operator class (``col public.citext``,
``x::public.mood``) reads no data and passes, and so does any object of an extension the server
has installed there (``public.similarity(…)``, ``OPERATOR(public.%)``: :mod:`dbbench.setup.extensions`),
but in the DDL of operators, aggregates and the like, where every name is a target.

PostgreSQL function and ``DO`` bodies (dollar- or single-quoted) are read as the SQL they are,
and checked the same way, nested bodies included; ``EXECUTE`` in a body (dynamic SQL, whose text
cannot be read) is refused, as are ``set_config()`` (its setting name is text), the functions that
run SQL given as text (``query_to_xml`` …) and ``U&"…"`` identifiers.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from dbbench.setup.extensions import Extensions

_COMMON = r"""
 (?P<ws>\s+)
|(?P<qident>"(?:[^"]|"")*"|`(?:[^`]|``)*`)
|(?P<text>'(?:[^']|'')*')
|(?P<cast>::)
|(?P<assign>:=)
|(?P<dot>\.)
|(?P<punct>[(),;\[\]{}])
"""
_TOKENS = {
    "postgresql": re.compile(
        r"(?P<uident>[Uu]&\")|"
        + _COMMON
        + r"""
|(?P<param>\$\d+)
|(?P<num>(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)
|(?P<word>[^\W\d][\w$]*)
|(?P<op>[-+*/<>=~!@\#%^&|`?:]+)
|(?P<other>.)""",
        re.X | re.S,
    ),
    "mysql": re.compile(
        _COMMON
        + r"""
|(?P<var>@@?(?:[\w$.]+|`(?:[^`]|``)*`|'(?:[^']|'')*')?)
|(?P<num>(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?(?![\w$]))
|(?P<word>[\w$]+)
|(?P<op>[-+*/<>=~!\#%^&|?:]+)
|(?P<other>.)""",
        re.X | re.S,
    ),
}


@dataclass
class _Tok:
    kind: str
    text: str

    @property
    def upper(self) -> str:
        return self.text.upper() if self.kind == "word" else ""


def _tokens(code: str, dialect: str) -> list[_Tok]:
    return [
        _Tok(m.lastgroup or "other", m.group(0))
        for m in _TOKENS[dialect].finditer(code)
        if m.lastgroup != "ws"
    ]


# After these words a qualified name is an operand of an expression: a column of a table or alias.
_EXPRESSION = frozenset(
    [
        "SELECT",
        "WHERE",
        "ON",
        "SET",
        "BY",
        "HAVING",
        "AND",
        "OR",
        "NOT",
        "XOR",
        "WHEN",
        "THEN",
        "ELSE",
        "ELSIF",
        "ELSEIF",
        "IF",
        "WHILE",
        "UNTIL",
        "RETURNING",
        "RETURN",
        "VALUES",
        "VALUE",
        "IN",
        "IS",
        "LIKE",
        "ILIKE",
        "SIMILAR",
        "BETWEEN",
        "CASE",
        "DISTINCT",
        "ALL",
        "ANY",
        "SOME",
        "EXISTS",
        "LIMIT",
        "OFFSET",
        "DEFAULT",
        "CHECK",
        "RAISE",
        "PERFORM",
        "INTERVAL",
        "ESCAPE",
        "ZONE",
        "OVER",
        "ARRAY",
        "MOD",
        "DIV",
        "REGEXP",
        "RLIKE",
        "BEGIN",
        "LOOP",
        "DO",
        "EXCEPTION",
        "QUERY",
    ]
)
# A comma list governed by one of these holds expressions ...
_EXPRESSION_LISTS = frozenset(["SELECT", "BY", "SET", "RETURNING", "RAISE", "LIMIT", "VALUES", "DISTINCT"])
# ... by one of these, names of relations (also a parenthesized group right after one).
_RELATION_LISTS = frozenset(
    [
        "FROM",
        "JOIN",
        "STRAIGHT_JOIN",
        "USING",
        "UPDATE",
        "INTO",
        "TABLE",
        "TABLES",
        "LATERAL",
        "ONLY",
        "DELETE",
        "TRUNCATE",
        "DROP",
        "LOCK",
        "REFERENCES",
        "INHERITS",
        "OF",
        "LIKE",
        "CALL",
        "HANDLER",
        "INDEX",
    ]
)
# Words that are keywords, never a column or parameter name before a type (PostgreSQL type positions).
_KEYWORDS = (
    _EXPRESSION
    | _RELATION_LISTS
    | frozenset(
        [
            "AS",
            "TO",
            "WITH",
            "CREATE",
            "ALTER",
            "VIEW",
            "FUNCTION",
            "PROCEDURE",
            "TRIGGER",
            "SEQUENCE",
            "TYPE",
            "DOMAIN",
            "SCHEMA",
            "COLLATE",
            "RETURNS",
            "SETOF",
            "EXECUTE",
            "COPY",
            "ANALYZE",
            "CLUSTER",
            "REINDEX",
            "COMMENT",
            "SECURITY",
            "LABEL",
            "OWNED",
            "GRANT",
            "REVOKE",
            "FOR",
            "EACH",
            "ROW",
            "STATEMENT",
            "AFTER",
            "BEFORE",
            "INSTEAD",
            "NATURAL",
            "LEFT",
            "RIGHT",
            "FULL",
            "INNER",
            "OUTER",
            "CROSS",
        ]
    )
)
# PostgreSQL statements whose every name is an object, never an expression's column.
_OBJECT_DDL = re.compile(
    r"^\s*(?:CREATE|ALTER|DROP)\s+(?:OR\s+REPLACE\s+)?(?:AGGREGATE|OPERATOR|CAST|CONVERSION|COLLATION|"
    r"TEXT\s+SEARCH|ACCESS\s+METHOD|LANGUAGE|TRANSFORM|STATISTICS|PUBLICATION|SUBSCRIPTION|FOREIGN|"
    r"SERVER|EVENT\s+TRIGGER)\b",
    re.I,
)
_OPERATOR = re.compile(r"\bOPERATOR\s*\(\s*([^\s.()]+)\s*\.\s*([^\s()]*)", re.I)
_SYSTEM_SCHEMAS = {"postgresql": frozenset({"pg_catalog", "pg_temp"}), "mysql": frozenset()}


def _name(tok: _Tok, dialect: str) -> str:
    if tok.kind == "qident":
        q = tok.text[0]
        return tok.text[1:-1].replace(q + q, q)
    return tok.text.lower() if dialect == "postgresql" else tok.text


def foreign_reference(
    code: str, namespace: str, dialect: str, extensions: Extensions | None = None
) -> str | None:
    """The first name in ``code`` (a statement with its text blanked) that refers to another
    database or schema, as written, or None. ``extensions``: the PostgreSQL server's; naming an
    object of one is a read (but in object DDL)."""
    allowed = {namespace} | _SYSTEM_SCHEMAS[dialect]
    strict = dialect == "postgresql" and bool(_OBJECT_DDL.match(code))
    objects = None if strict else extensions
    for m in _OPERATOR.finditer(code):
        schema = m.group(1)
        schema = schema[1:-1].replace('""', '"') if schema.startswith('"') else schema.lower()
        if schema in allowed or (objects is not None and objects.is_object(schema, m.group(2))):
            continue
        return f"OPERATOR({m.group(1)}.{m.group(2)})"
    toks = _tokens(code, dialect)
    for start, end in _chains(toks):
        if _name(toks[start], dialect) in allowed:
            continue
        if (
            objects is not None
            and end - start == 3
            and objects.is_object(_name(toks[start], dialect), _name(toks[start + 2], dialect))
        ):
            continue  # an installed extension's function, type, operator class: a read
        written = "".join(t.text for t in toks[start:end])
        if strict or _is_reference(toks, start, end, dialect):
            return written
    return None


def _chains(toks: list[_Tok]) -> Iterator[tuple[int, int]]:
    """``(start, end)`` of every qualified name: a name, then ``.name`` (or ``.*``) once or more."""
    i, n = 0, len(toks)
    while i < n:
        if toks[i].kind in ("word", "qident"):
            j = i + 1
            while (
                j + 1 < n
                and toks[j].kind == "dot"
                and (toks[j + 1].kind in ("word", "qident") or toks[j + 1].text == "*")
            ):
                j += 2
            if j > i + 1:
                yield i, j
            i = j
        else:
            i += 1


def _is_reference(toks: list[_Tok], start: int, end: int, dialect: str) -> bool:
    parts = (end - start + 1) // 2
    if toks[end - 1].text == "*":
        parts -= 1
        if parts == 1:
            return False  # alias.*
    if parts >= 3:
        return True  # db.table.column, schema.table.column
    after = toks[end] if end < len(toks) else None
    if after is not None and after.text == "(":
        return True  # a call of a routine elsewhere
    if after is not None and after.text == "%" and end + 1 < len(toks):
        return toks[end + 1].upper != "TYPE"  # table.column%TYPE; schema.table%ROWTYPE is one
    prev = toks[start - 1] if start else None
    if prev is None or prev.text == ";":
        return False  # a body's assignment target: NEW.x := …
    if prev.kind == "cast":
        return dialect != "postgresql"  # a type reads no data
    if prev.kind in ("op", "assign") or prev.text in ("[", "{"):
        return False
    if prev.kind == "word" and prev.upper in _EXPRESSION:
        if prev.upper == "LIKE":  # CREATE TABLE t LIKE x.y / (LIKE x.y)
            before = toks[start - 2] if start >= 2 else None
            return before is None or before.text == "(" or _after_table(toks, start - 2)
        return False
    if prev.kind == "word" and prev.upper == "AS":  # CAST(x AS schema.type)
        return not (dialect == "postgresql" and _opened_by(toks, start - 1) == "CAST")
    if prev.text == "(":
        return _governs_relations(toks, start - 1)
    if prev.text == ",":
        return _comma_governor(toks, start - 1)
    if dialect == "postgresql" and (
        prev.kind == "qident" or (prev.kind == "word" and prev.upper not in _KEYWORDS)
    ):
        before = toks[start - 2] if start >= 2 else None
        if before is not None and before.text in ("(", ","):
            return False  # a column's or parameter's type, an index column's operator class
    return True


def _after_table(toks: list[_Tok], i: int) -> bool:
    """Whether the name ending at ``toks[i]`` follows ``TABLE`` (``CREATE TABLE t LIKE …``)."""
    while i >= 0 and toks[i].kind in ("word", "qident", "dot"):
        if toks[i].upper == "TABLE":
            return True
        i -= 1
    return False


def _opened_by(toks: list[_Tok], i: int) -> str:
    """The word before the ``(`` that encloses ``toks[i]`` (upper case), or ''."""
    depth = 0
    while i >= 0:
        t = toks[i].text
        if t == ")":
            depth += 1
        elif t == "(":
            if depth == 0:
                return toks[i - 1].upper if i else ""
            depth -= 1
        elif t == ";" and depth == 0:
            return ""
        i -= 1
    return ""


def _governs_relations(toks: list[_Tok], paren: int) -> bool:
    """Whether the group opened at ``toks[paren]`` holds relations (``FROM (a, b)``, ``JOIN (x)``)."""
    before = toks[paren - 1] if paren else None
    return before is not None and before.upper in _RELATION_LISTS


def _comma_governor(toks: list[_Tok], comma: int) -> bool:
    """Whether the list the comma at ``toks[comma]`` continues names relations: the nearest list
    word before it at the same depth decides (closed groups skipped); an enclosing group, what
    opened it; none, a reference."""
    depth = 0
    i = comma - 1
    while i >= 0:
        t = toks[i]
        if t.text == ")":
            depth += 1
        elif t.text == "(":
            if depth == 0:
                return _governs_relations(toks, i)
            depth -= 1
        elif depth == 0:
            if t.text == ";":
                return True
            if t.upper in _EXPRESSION_LISTS:
                return False
            if t.upper in _RELATION_LISTS:
                return True
        i -= 1
    return True


# -- PostgreSQL bodies ---------------------------------------------------------------------------
_HAS_BODY = re.compile(r"\b(?:CREATE\s+(?:OR\s+REPLACE\s+)?(?:FUNCTION|PROCEDURE)|DO)\b", re.I)
_PG_TEXT = re.compile(
    r"""
 (?P<comment>--[^\n]*|/\*.*?\*/)
|(?P<ident>"(?:[^"]|"")*")
|(?<![\w$])[Ee](?P<estring>'(?:[^'\\]|\\.|'')*')
|(?P<string>'(?:[^']|'')*')
|(?<![\w$])(?P<dollar>(?P<tag>\$(?:[^\W\d]\w*)?\$).*?(?P=tag))
|(?P<word>[^\W\d][\w$]*)
|(?P<ws>\s+)
|.
""",
    re.X | re.S,
)


def bodies(text: str) -> Iterator[str]:
    """The function or ``DO`` bodies of one PostgreSQL statement's text: every dollar-quoted text,
    and a quoted text right after ``AS`` or ``DO``, as the SQL they hold."""
    prev = ""
    for m in _PG_TEXT.finditer(text):
        kind = m.lastgroup
        if kind in ("ws", "comment"):
            continue
        if m.group("dollar") is not None:
            body = m.group("dollar")
            tag = m.group("tag")
            yield body[len(tag) : -len(tag)]
        elif kind in ("string", "estring") and prev in ("AS", "DO"):
            inner = m.group(kind)[1:-1].replace("''", "'")
            if kind == "estring":
                inner = re.sub(r"\\(.)", r"\1", inner, flags=re.S)
            yield inner
        prev = m.group(0).upper() if kind == "word" else m.group(0)


def has_body(code: str) -> bool:
    return bool(_HAS_BODY.search(code))
