"""Setup SQL split into statements: ``;``-separated, aware of each dialect's quotes and comments.

Part of :mod:`dbbench.setup.namespace` (which re-exports :class:`SetupError`, :class:`Statement` and
:func:`split_sql`); the text checks are :mod:`dbbench.setup.guard`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from dbbench import dialects
from dbbench.errors import DbbenchError


class SetupError(DbbenchError):
    pass


@dataclass
class Statement:
    text: str
    line: int
    code: str  # the text with string literals and comments blanked: what the guard reads


_BIND = re.compile(r":([A-Za-z_]\w*)")


def split_sql(
    text: str, dialect: str, source: str = "setup SQL", binds: Mapping[str, str] | None = None
) -> list[Statement]:
    """Statements of a SQL script: ``;``-separated, aware of quotes, comments, PostgreSQL
    dollar-quoted bodies and the mysql client's ``DELIMITER`` lines, as ``dialect``'s
    :attr:`~dbbench.dialects.contract.Dialect.SETUP_SYNTAX` has them.

    ``binds``: ``:name`` in the code (not in string literals, quoted bodies or comments, and not a
    ``::`` cast) is replaced by ``binds[name]`` where it has one (``:scale`` for ``dbbench grow``)."""
    syntax = dialects.get(dialect).SETUP_SYNTAX
    out: list[Statement] = []
    buf: list[str] = []
    code: list[str] = []
    start: list[int | None] = [None]
    delim = ";"
    i, n, line = 0, len(text), 1

    def flush() -> None:
        body = "".join(buf).strip()
        if body:
            out.append(Statement(body, start[0] or line, "".join(code).strip()))
        buf.clear()
        code.clear()
        start[0] = None

    def begin() -> None:
        if start[0] is None:
            start[0] = line

    while i < n:
        if syntax.delimiter_lines and (i == 0 or text[i - 1] == "\n") and not "".join(buf).strip():
            m = re.match(r"[ \t]*DELIMITER[ \t]+(\S+)[ \t]*(?:\r?\n|$)", text[i:], re.I)
            if m:
                delim = m.group(1)
                line += m.group(0).count("\n")
                i += m.end()
                continue
        c = text[i]
        if text.startswith(delim, i):
            flush()
            i += len(delim)
            continue
        if text.startswith("--", i) or (syntax.hash_comments and c == "#"):
            j = text.find("\n", i)
            i = n if j < 0 else j
            continue
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            if j < 0:
                raise SetupError(f"{source}: line {line}: unterminated /* comment")
            line += text.count("\n", i, j + 2)
            buf.append(" ")
            code.append(" ")
            i = j + 2
            continue
        if c in "'\"`":
            begin()
            j = i + 1
            while j < n:
                if text[j] == "\\" and syntax.backslash_escapes and c != "`":
                    j += 2
                    continue
                if text[j] == c:
                    if j + 1 < n and text[j + 1] == c:
                        j += 2
                        continue
                    break
                j += 1
            if j >= n:
                raise SetupError(f"{source}: line {line}: unterminated {c}quoted{c} text")
            literal = text[i : j + 1]
            buf.append(literal)
            identifier = c == "`" or (c == '"' and syntax.double_quoted_identifiers)
            code.append(literal if identifier else "''")
            line += literal.count("\n")
            i = j + 1
            continue
        if (
            c == "$"
            and syntax.dollar_quotes
            and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_"))
        ):
            m = re.match(r"\$(?:[A-Za-z_]\w*)?\$", text[i:])
            if m:
                begin()
                tag = m.group(0)
                j = text.find(tag, i + len(tag))
                if j < 0:
                    raise SetupError(f"{source}: line {line}: unterminated {tag} quoted body")
                literal = text[i : j + len(tag)]
                buf.append(literal)
                code.append("''")
                line += literal.count("\n")
                i = j + len(tag)
                continue
        if (
            c == ":"
            and binds
            and (i == 0 or not (text[i - 1] == ":" or text[i - 1].isalnum() or text[i - 1] == "_"))
        ):
            m = _BIND.match(text, i)
            if m and m.group(1) in binds:
                begin()
                buf.append(binds[m.group(1)])
                code.append(binds[m.group(1)])
                i = m.end()
                continue
        if c == "\n":
            line += 1
        elif not c.isspace():
            begin()
        buf.append(c)
        code.append(c)
        i += 1
    flush()
    return out
