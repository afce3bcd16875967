"""Setup SQL split into statements: ``;``-separated, aware of each dialect's quotes and comments.

Part of :mod:`dbbench.setup.namespace` (which re-exports :class:`SetupError`, :class:`Statement` and
:func:`split_sql`); the text checks are :mod:`dbbench.setup.guard`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

from dbbench import dialects
from dbbench.dialects.contract import SqlSyntax
from dbbench.errors import DbbenchError


class SetupError(DbbenchError):
    """A catalog's setup SQL cannot run: refused by the text checks, not splittable, or failed on
    the server. ``problems`` holds one line per refused statement when there are several (a
    setup file's every problem is reported in one run)."""

    def __init__(self, message: str, problems: list[str] | None = None):
        super().__init__(message)
        self.problems = problems or [message]

    @classmethod
    def of(cls, problems: list[str]) -> SetupError:
        """One error for every problem found: the message is the count, then one line each."""
        if len(problems) == 1:
            return cls(problems[0])
        return cls(f"{len(problems)} setup statements refused:\n  " + "\n  ".join(problems), problems)


@dataclass(eq=False)
class CopyData:
    """The rows of a ``COPY … FROM stdin`` block in psql's input (the lines up to ``\\.``): a span
    of the script's text, handed to the server in chunks (never copied whole)."""

    text: str = field(repr=False)
    start: int
    end: int
    line: int  # the line of the first row in the script

    def chunks(self, size: int = 1 << 20) -> Iterator[str]:
        for i in range(self.start, self.end, size):
            yield self.text[i : min(i + size, self.end)]

    def __len__(self) -> int:
        return self.end - self.start


@dataclass
class Statement:
    text: str
    line: int
    code: str  # the text with string literals and comments blanked: what the guard reads
    data: CopyData | None = None  # ``COPY … FROM stdin``: its rows (PostgreSQL, psql's input)


_BIND = re.compile(r":([A-Za-z_]\w*)")
_DELIMITER_LINE = re.compile(r"[ \t]*DELIMITER[ \t]+(\S+)[ \t]*(?:\r?\n|$)", re.I)
_DOLLAR_TAG = re.compile(r"\$(?:[A-Za-z_]\w*)?\$")
# MySQL's executable comment: ``/*!`` and an optional 5- or 6-digit server version.
_CONDITIONAL = re.compile(r"/\*!\d{0,6}")
_COPY_FROM_STDIN = re.compile(r"^\s*COPY\b[^;]*\bFROM\s+STDIN\b", re.I)
# MySQL text ('…' / "…", backslash escapes, doubled quotes) and `identifiers`, for _Splitter._run
_TEXT = r"'[^'\\]*(?:(?:\\.|'')[^'\\]*)*'|\"[^\"\\]*(?:(?:\\.|\"\")[^\"\\]*)*\""
_IDENT = r"`[^`]*(?:``[^`]*)*`"
_TEXT_OR_IDENT = re.compile(rf"({_IDENT})|{_TEXT}")
# Characters that may start something other than plain code (a comment, quoted text, a dollar body,
# a bind) or end a line; the statement delimiter's first character is added per delimiter.
_SPECIAL = "\n-#/'\"`$:"
# In text where a backslash escapes: the next quote or backslash, per quote character.
_QUOTE_STOPS = {c: re.compile("[" + re.escape(c + "\\") + "]") for c in "'\"`"}


def split_sql(
    text: str, dialect: str, source: str = "setup SQL", binds: Mapping[str, str] | None = None
) -> list[Statement]:
    """Statements of a SQL script: ``;``-separated, aware of quotes, comments, PostgreSQL
    dollar-quoted bodies and the mysql client's ``DELIMITER`` lines, as ``dialect``'s
    :attr:`~dbbench.dialects.contract.Dialect.SETUP_SYNTAX` has them.

    ``binds``: ``:name`` in the code (not in string literals, quoted bodies or comments, and not a
    ``::`` cast) is replaced by ``binds[name]`` where it has one (``:scale`` for ``dbbench grow``).

    One pass over the text, each character looked at a bounded number of times and each statement
    joined once: linear in the script's length."""
    return _Splitter(text, dialects.get(dialect).SETUP_SYNTAX, source, binds or {}).split()


class _Splitter:
    """The state of one :func:`split_sql` pass: where it is (``i``, ``line``), the statement being
    built (its text pieces ``buf``, the pieces the guard reads ``code``, its first ``line``)."""

    def __init__(self, text: str, syntax: SqlSyntax, source: str, binds: Mapping[str, str]):
        self.text, self.syntax, self.source, self.binds = text, syntax, source, binds
        self.out: list[Statement] = []
        self.buf: list[str] = []
        self.code: list[str] = []
        self.blank = True  # whether ``buf`` holds only whitespace so far
        self.start: int | None = None
        self.i, self.line = 0, 1
        self.conditional = False  # inside MySQL's ``/*!NNNNN … */``, whose content is code
        self._set_delimiter(";")

    def split(self) -> list[Statement]:
        text, n = self.text, len(self.text)
        while self.i < n:
            if self._delimiter_line() or self._meta_line():
                continue
            if text.startswith(self.delim, self.i):
                self._flush()
                self.i += len(self.delim)
                self._copy_data()
                continue
            if (
                self._run()
                or self._conditional()
                or self._comment()
                or self._quoted()
                or self._dollar_body()
                or self._bind()
            ):
                continue
            self._plain()
        self._flush()
        return self.out

    # -- the statement being built -------------------------------------------------------------
    def _set_delimiter(self, delim: str) -> None:
        self.delim = delim
        special = _SPECIAL + delim[0] + ("*" if self.syntax.conditional_comments else "")
        self.plain = re.compile("[^" + re.escape(special) + "]+")
        self.run = _run_pattern(delim) if self.syntax.conditional_comments else None

    def _add(self, text: str, code: str) -> None:
        self.buf.append(text)
        self.code.append(code)
        if self.blank and text.strip():
            self.blank = False

    def _begin(self) -> None:
        if self.start is None:
            self.start = self.line

    def _flush(self) -> None:
        if not self.blank:
            body = "".join(self.buf).strip()
            self.out.append(Statement(body, self.start or self.line, "".join(self.code).strip()))
        self.buf.clear()
        self.code.clear()
        self.blank = True
        self.start = None

    def _fail(self, what: str) -> SetupError:
        return SetupError(f"{self.source}: line {self.line}: {what}")

    # -- one step each: True if it consumed something at ``i`` ---------------------------------
    def _delimiter_line(self) -> bool:
        """A ``DELIMITER x`` line of the mysql client, between statements."""
        i, text = self.i, self.text
        if not (self.syntax.delimiter_lines and (i == 0 or text[i - 1] == "\n") and self.blank):
            return False
        m = _DELIMITER_LINE.match(text, i)
        if not m:
            return False
        self._set_delimiter(m.group(1))
        self.line += m.group(0).count("\n")
        self.i = m.end()
        return True

    def _meta_line(self) -> bool:
        """A psql meta-command line (``\\restrict KEY``, ``\\connect db``), between statements: one
        statement of its own (the dump adapter skips the harmless ones; the guard refuses the rest)."""
        i, text = self.i, self.text
        if not (
            self.syntax.psql_input and text[i] == "\\" and (i == 0 or text[i - 1] == "\n") and self.blank
        ):
            return False
        j = text.find("\n", i)
        j = len(text) if j < 0 else j
        self._flush()
        meta = text[i:j].strip()
        self.out.append(Statement(meta, self.line, meta))
        self.i = j
        return True

    def _copy_data(self) -> None:
        """After ``COPY … FROM stdin;`` in psql's input: its rows, from the next line up to a line
        ``\\.``, kept with the statement (they are data, not SQL)."""
        last = self.out[-1] if self.out else None
        if not (self.syntax.psql_input and last and last.data is None and _COPY_FROM_STDIN.match(last.code)):
            return
        text = self.text
        j = text.find("\n", self.i)
        start = len(text) if j < 0 else j + 1
        end = _end_of_copy(text, start)
        if end is None:
            raise self._fail("COPY … FROM stdin without its data's closing \\. line")
        last.data = CopyData(text, start, end, self.line + 1)
        self.line += text.count("\n", self.i, end)
        self.i = end + 2  # the newline after ``\.`` is the next step's

    def _conditional(self) -> bool:
        """MySQL's ``/*!40101 SET … */``: the server runs its content, so it is code to the guard
        (the markers blanked there) and kept as written in the text."""
        i, text = self.i, self.text
        if not self.syntax.conditional_comments:
            return False
        if self.conditional and text.startswith("*/", i):
            self.conditional = False
            self._add("*/", "  ")
            self.i += 2
            return True
        if self.conditional or not text.startswith("/*!", i):
            return False
        m = _CONDITIONAL.match(text, i)
        assert m is not None
        self._begin()
        self.conditional = True
        self._add(m.group(0), " " * len(m.group(0)))
        self.i = m.end()
        return True

    def _comment(self) -> bool:
        """``-- …`` (or ``# …``) to the end of the line, dropped; ``/* … */`` kept as one space."""
        i, text = self.i, self.text
        if text.startswith("--", i) or (self.syntax.hash_comments and text[i] == "#"):
            j = text.find("\n", i)
            self.i = len(text) if j < 0 else j
            return True
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            if j < 0:
                raise self._fail("unterminated /* comment")
            self.line += text.count("\n", i, j + 2)
            self._add(" ", " ")
            self.i = j + 2
            return True
        return False

    def _quoted(self) -> bool:
        """'text', "text" or `name`: kept as written; in the code, text is ``''``."""
        i, text, c = self.i, self.text, self.text[self.i]
        if c not in "'\"`":
            return False
        self._begin()
        j = _closing_quote(text, i, self.syntax.backslash_escapes and c != "`")
        if j >= len(text):
            raise self._fail(f"unterminated {c}quoted{c} text")
        literal = text[i : j + 1]
        identifier = c == "`" or (c == '"' and self.syntax.double_quoted_identifiers)
        self._add(literal, literal if identifier else "''")
        self.line += literal.count("\n")
        self.i = j + 1
        return True

    def _dollar_body(self) -> bool:
        """PostgreSQL's ``$tag$ … $tag$`` bodies: kept as written; ``''`` in the code."""
        i, text = self.i, self.text
        if not (
            text[i] == "$"
            and self.syntax.dollar_quotes
            and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_"))
        ):
            return False
        m = _DOLLAR_TAG.match(text, i)
        if not m:
            return False
        self._begin()
        tag = m.group(0)
        j = text.find(tag, i + len(tag))
        if j < 0:
            raise self._fail(f"unterminated {tag} quoted body")
        literal = text[i : j + len(tag)]
        self._add(literal, "''")
        self.line += literal.count("\n")
        self.i = j + len(tag)
        return True

    def _bind(self) -> bool:
        """``:name`` with a value in ``binds`` (not ``::name``, not inside a longer name)."""
        i, text = self.i, self.text
        if not (
            text[i] == ":"
            and self.binds
            and (i == 0 or not (text[i - 1] == ":" or text[i - 1].isalnum() or text[i - 1] == "_"))
        ):
            return False
        m = _BIND.match(text, i)
        if not (m and m.group(1) in self.binds):
            return False
        self._begin()
        value = self.binds[m.group(1)]
        self._add(value, value)
        self.i = m.end()
        return True

    def _run(self) -> bool:
        """MySQL: plain code and quoted text up to the end of the line in one step (a dump's
        ``INSERT`` rows), taken as the one-character steps would take them; text is ``''`` in the code."""
        if self.run is None:
            return False
        m = self.run.match(self.text, self.i)
        if not m:
            return False
        chunk = m.group(0)
        code = _TEXT_OR_IDENT.sub(_blank_text, chunk) if ("'" in chunk or '"' in chunk) else chunk
        if self.start is None and not chunk.isspace():
            self.start = self.line + chunk.count("\n", 0, len(chunk) - len(chunk.lstrip()))
        self._add(chunk, code)
        self.line += chunk.count("\n")
        self.i = m.end()
        return True

    def _plain(self) -> None:
        """Plain code: a run of characters that start nothing (none is a newline), else one character."""
        m = self.plain.match(self.text, self.i)
        chunk = m.group(0) if m else self.text[self.i]
        if chunk == "\n":
            self.line += 1
        elif not chunk.isspace():
            self._begin()
        self._add(chunk, chunk)
        self.i += len(chunk)


def _run_pattern(delim: str) -> re.Pattern[str]:
    """A run of MySQL plain code, quoted text and identifiers that starts no comment, bind,
    conditional comment end or delimiter, and crosses no line outside quoted text."""
    stops = "\n-#/'\"`:*" + delim[0]
    alternatives = "[^" + re.escape(stops) + "]+|" + _TEXT + "|" + _IDENT
    for c, n in (("-", "-"), ("/", "*"), ("*", "/")):
        if c != delim[0]:
            alternatives += rf"|{re.escape(c)}(?!{re.escape(n)})"
    return re.compile("(?:" + alternatives + ")+", re.S)  # built without str.join: see the join-count test


def _blank_text(m: re.Match[str]) -> str:
    return m.group(1) or "''"


def _end_of_copy(text: str, start: int) -> int | None:
    """Where the line ``\\.`` ending psql's COPY data from ``start`` begins (``str.find`` only: a
    multi-line regex search is several times slower on a large dump), or None."""
    k = start
    while True:
        if text.startswith("\\.", k) and (k + 2 == len(text) or text[k + 2] in "\r\n"):
            return k
        j = text.find("\n\\.", k)
        if j < 0:
            return None
        k = j + 1


def _closing_quote(text: str, i: int, backslash_escapes: bool) -> int:
    """Where the quote opened at ``text[i]`` closes (a doubled quote, or one after a backslash where
    ``backslash_escapes``, does not close it); ``len(text)`` or beyond if it never does."""
    c, n = text[i], len(text)
    stops = _QUOTE_STOPS[c] if backslash_escapes else None
    j = i + 1
    while j < n:
        if stops is None:
            j = text.find(c, j)
            if j < 0:
                return n
        else:
            m = stops.search(text, j)
            if m is None:
                return n
            j = m.start()
            if text[j] == "\\":
                j += 2
                continue
        if j + 1 < n and text[j + 1] == c:
            j += 2
            continue
        return j
    return j
