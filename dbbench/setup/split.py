"""Setup SQL split into statements: ``;``-separated, aware of each dialect's quotes and comments.

Part of :mod:`dbbench.setup.loader` (which re-exports :class:`SetupError`, :class:`Statement` and
:func:`split_sql`); the text checks are :mod:`dbbench.setup.guard`.

A file is split as it is read (:func:`split_file`): the splitter holds a window of whole lines,
extended a block at a time, so a dump of any size is split in memory bounded by its longest
statement (a ``COPY`` block's rows are streamed too, however long).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

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


class CopyData:
    """The rows of a ``COPY … FROM stdin`` block in psql's input (the lines up to ``\\.``), handed
    to the server in chunks: a span of the script's text when the splitter's window holds them all,
    else read from the file as they are consumed (:class:`_StreamedCopy`)."""

    line: int  # the line of the first row in the script
    streamed = False  # read from the file as consumed (by the splitter's thread, before it reads on)

    def chunks(self, size: int = 1 << 20) -> Iterator[str]:
        raise NotImplementedError


class _SpanCopy(CopyData):
    def __init__(self, text: str, start: int, end: int, line: int):
        self.text, self.start, self.end, self.line = text, start, end, line

    def chunks(self, size: int = 1 << 20) -> Iterator[str]:
        for i in range(self.start, self.end, size):
            yield self.text[i : min(i + size, self.end)]

    def __len__(self) -> int:
        return self.end - self.start


class _StreamedCopy(CopyData):
    """Rows that run past the splitter's window: read on from the file as :meth:`chunks` is
    consumed (once, before the next statement; the splitter skips what was not consumed)."""

    streamed = True

    def __init__(self, splitter: _Splitter, line: int):
        self.splitter, self.line, self.done = splitter, line, False

    def chunks(self, size: int = 1 << 20) -> Iterator[str]:
        if self.done:
            raise SetupError(f"{self.splitter.source}: line {self.line}: COPY rows read twice")
        self.done = True
        yield from self.splitter.copy_rows()


@dataclass
class Statement:
    text: str
    line: int
    # the text with string literals and comments blanked: what the guard reads (an INSERT whose
    # rows hold data only: its head, up to VALUES, since its rows hold nothing to check)
    code: str
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


# Rows of an ``INSERT … VALUES`` that hold data only: numbers, NULL, DEFAULT, TRUE/FALSE, text,
# hex, bit and introduced literals -- nothing for the text checks to find (a dump's rows are most of
# its bytes). Atomic groups and possessive repeats: rows that are not data only fail in linear time.
def data_rows(text: str) -> str:
    """The pattern of such rows, ``text`` being the pattern of one quoted text (``''`` in code)."""
    datum = (
        rf"(?>{text}|NULL|DEFAULT|TRUE|FALSE|0x[0-9A-Fa-f]*+|[-+]?(?:\d++(?:\.\d*+)?+|\.\d++)(?:[eE][-+]?\d++)?+"
        rf"|[xXbB]{text}|_\w++\s*+{text})"
    )
    row = rf"(?>\(\s*+{datum}(?:\s*+,\s*+{datum})*+\s*+\))"
    return rf"\s*+{row}(?:\s*+,\s*+{row})*+\s*+"


_NAME = r'(?:"[^"]+"|`[^`]+`|[A-Za-z_][\w$]*)'
INSERT_HEAD = (
    r"\s*(?:INSERT|REPLACE)\s+(?:(?:LOW_PRIORITY|DELAYED|HIGH_PRIORITY|IGNORE)\s+)*(?:INTO\s+)?"
    rf"{_NAME}(?:\s*\.\s*{_NAME})?\s*(?:\([^()';]*\)\s*)?VALUES?\b"
)


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
    return list(
        _Splitter(_TextSource(text), dialects.get(dialect).SETUP_SYNTAX, source, binds or {}).statements()
    )


def split_file(
    file: Path,
    dialect: str,
    binds: Mapping[str, str] | None = None,
    on_bytes: Callable[[int], object] | None = None,
    block: int = 1 << 20,
) -> Iterator[Statement]:
    """:func:`split_sql` of a file, read and split as the statements are consumed (memory bounded by
    the longest statement; a ``COPY``'s rows stream). ``on_bytes(n)``: ``n`` more bytes were read.

    The file is UTF-8 text; on MySQL, bytes that are not UTF-8 (a dump's binary columns written
    raw: mysqldump without ``--hex-blob``) are kept as they were (``surrogateescape``) and sent back
    to the server unchanged."""
    errors = "surrogateescape" if dialect == "mysql" else "strict"
    try:
        f = file.open("rb")
    except OSError as exc:
        raise SetupError(f"{file}: cannot read: {exc.strerror or exc}") from None
    with f:
        source = _FileSource(file, f, errors, on_bytes, block)
        yield from _Splitter(source, dialects.get(dialect).SETUP_SYNTAX, str(file), binds or {}).statements()


class _TextSource:
    """A script given as text: one piece."""

    def __init__(self, text: str):
        self.text: str | None = text

    def more(self, at_least: int = 0) -> str:
        text, self.text = self.text or "", None
        return text


class _FileSource:
    """A script file's text in pieces of whole lines, each of at least a block (or ``at_least``
    characters' worth of bytes) unless the file ends first."""

    def __init__(self, file: Path, f, errors: str, on_bytes: Callable[[int], object] | None, block: int):
        self.file, self.f, self.errors, self.on_bytes, self.block = file, f, errors, on_bytes, block
        self.pending = b""  # read past the last whole line
        self.offset = 0  # bytes of the file decoded so far
        self.done = False

    def more(self, at_least: int = 0) -> str:
        if self.done:
            return ""
        parts, size = [self.pending], len(self.pending)
        while True:
            try:
                piece = self.f.read(max(self.block, at_least - size))
            except OSError as exc:
                raise SetupError(f"{self.file}: cannot read: {exc.strerror or exc}") from None
            if self.on_bytes is not None and piece:
                self.on_bytes(len(piece))
            if not piece:
                self.done, self.pending = True, b""
                return self._decode(b"".join(parts))
            parts.append(piece)
            size += len(piece)
            cut = piece.rfind(b"\n") if size >= at_least else -1
            if cut >= 0:
                self.pending = piece[cut + 1 :]
                parts[-1] = piece[: cut + 1]
                return self._decode(b"".join(parts))

    def _decode(self, data: bytes) -> str:
        try:
            text = data.decode("utf-8", self.errors)
        except UnicodeDecodeError as exc:
            where = self.offset + exc.start
            raise SetupError(
                f"{self.file}: not UTF-8 text (byte {where:,}: {data[exc.start : exc.start + 4]!r})"
            ) from None
        self.offset += len(data)
        return text


class _Splitter:
    """The state of one :func:`split_sql` pass: the window of the script's text it holds (``text``,
    whole lines read so far from ``reader``, less what it has consumed), where it is (``i``,
    ``line``), the statement being built (its text pieces ``buf``, the pieces the guard reads
    ``code``, its first ``line``)."""

    def __init__(
        self, reader: _TextSource | _FileSource, syntax: SqlSyntax, source: str, binds: Mapping[str, str]
    ):
        self.reader, self.syntax, self.source, self.binds = reader, syntax, source, binds
        self.text, self.eof = "", False
        self.out: list[Statement] = []  # the statements found and not yet handed out
        self.buf: list[str] = []
        self.code: list[str] = []
        self.blank = True  # whether ``buf`` holds only whitespace so far
        self.start: int | None = None
        self.i, self.line = 0, 1
        self.conditional = False  # inside MySQL's ``/*!NNNNN … */``, whose content is code
        self._set_delimiter(";")

    def statements(self) -> Iterator[Statement]:
        while self.i < len(self.text) or self._more():
            if self.out:
                yield from self._hand_out()  # a streamed COPY's rows move ``i`` on: look again
                continue
            if self._delimiter_line() or self._meta_line():
                continue
            if self.text.startswith(self.delim, self.i):
                self._flush()
                self.i += len(self.delim)
                self._copy_data()
                continue
            if (
                self._data_insert()
                or self._run()
                or self._conditional()
                or self._comment()
                or self._quoted()
                or self._dollar_body()
                or self._bind()
            ):
                continue
            self._plain()
        self._flush()
        yield from self._hand_out()

    def _hand_out(self) -> Iterator[Statement]:
        """The statements found so far; a streamed COPY's rows the consumer left are skipped."""
        out, self.out = self.out, []
        for s in out:
            yield s
            if isinstance(s.data, _StreamedCopy) and not s.data.done:
                for _ in s.data.chunks():
                    pass

    def _more(self, at_least: int = 0) -> bool:
        """Extend the window by the next whole lines of the script (at least ``at_least``
        characters' worth); False at its end. The text before ``i`` is dropped but its last
        character (some steps look one back)."""
        if self.eof:
            return False
        piece = self.reader.more(at_least)
        if not piece:
            self.eof = True
            return False
        if not self.text:
            self.text = piece
            return True
        keep = max(self.i - 1, 0)
        self.text = self.text[keep:] + piece
        self.i -= keep
        return True

    def _grow(self, what: str) -> None:
        """Read on for a token (text, comment, body) still open at the window's end, doubling the
        window (so rescanning a long token stays linear), or fail naming it."""
        if not self._more(len(self.text)):
            raise self._fail(what)

    # -- the statement being built -------------------------------------------------------------
    def _set_delimiter(self, delim: str) -> None:
        self.delim = delim
        special = _SPECIAL + delim[0] + ("*" if self.syntax.conditional_comments else "")
        self.plain = re.compile("[^" + re.escape(special) + "]+")
        self.run = _run_pattern(delim) if self.syntax.conditional_comments else None
        self.insert = re.compile(
            rf"(?P<head>{INSERT_HEAD})(?:{data_rows(_text_pattern(self.syntax))})(?={re.escape(delim)})", re.I
        )

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
        self.line += text.count("\n", self.i, start)
        self.i = start
        end = _end_of_copy(text, start)
        if end is None and not self.eof and self._more():
            last.data = _StreamedCopy(self, self.line)  # its rows run on past the window
            return
        if end is None:
            raise self._fail("COPY … FROM stdin without its data's closing \\. line")
        last.data = _SpanCopy(text, start, end, self.line)
        self.line += text.count("\n", start, end)
        self.i = end + 2  # the newline after ``\.`` is the next step's

    def copy_rows(self) -> Iterator[str]:
        """A streamed COPY's rows from ``i``: the window's whole lines up to the line ``\\.``,
        reading on as they are consumed."""
        while True:
            text = self.text
            end = _end_of_copy(text, self.i)
            stop = len(text) if end is None else end
            if stop > self.i:
                self.line += text.count("\n", self.i, stop)
                yield text[self.i : stop]
            if end is not None:
                self.i = end + 2
                return
            self.i = stop
            if not self._more():
                raise self._fail("COPY … FROM stdin without its data's closing \\. line")

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
            while j < 0:
                self._grow("unterminated /* comment")
                i, text = self.i, self.text
                j = text.find("*/", i + 2)
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
        escapes = (self.syntax.backslash_escapes and c != "`") or self._escape_string(text, i)
        j = _closing_quote(text, i, escapes)
        while j >= len(text):
            self._grow(f"unterminated {c}quoted{c} text")
            i, text = self.i, self.text
            j = _closing_quote(text, i, escapes)
        literal = text[i : j + 1]
        identifier = c == "`" or (c == '"' and self.syntax.double_quoted_identifiers)
        self._add(literal, literal if identifier else "''")
        self.line += literal.count("\n")
        self.i = j + 1
        return True

    def _escape_string(self, text: str, i: int) -> bool:
        """PostgreSQL's ``E'…'``: a backslash escapes the quote after it, as the server reads it
        (else ``E'\\''; DROP …`` would hide a statement the server runs in what looks like text)."""
        return (
            self.syntax.dollar_quotes
            and text[i] == "'"
            and i >= 1
            and text[i - 1] in "Ee"
            and (i < 2 or not (text[i - 2].isalnum() or text[i - 2] in "_$"))
        )

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
        while j < 0:
            self._grow(f"unterminated {tag} quoted body")
            i, text = self.i, self.text
            j = text.find(tag, i + len(tag))
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

    def _data_insert(self) -> bool:
        """An INSERT whose rows hold data only (:func:`data_rows`), starting a statement and ending
        at the delimiter within the window: taken in one step, its code the head (a dump's rows)."""
        i, text = self.i, self.text
        if not (self.blank and text[i] in "IiRr"):
            return False
        m = self.insert.match(text, i)
        if not m:
            return False
        self.buf.clear()
        self.code.clear()
        body = m.group(0)
        self.out.append(Statement(body.rstrip(), self.line, m.group("head")))
        self.line += body.count("\n")
        self.i = m.end() + len(self.delim)
        self.start = None
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


def _text_pattern(syntax: SqlSyntax) -> str:
    """One quoted text of the dialect, as written in a script (for :func:`data_rows`)."""
    if syntax.backslash_escapes:
        single = r"'[^'\\]*+(?:(?:\\.|'')[^'\\]*+)*+'"
        double = r'"[^"\\]*+(?:(?:\\.|"")[^"\\]*+)*+"'
    else:
        single = r"'[^']*+(?:''[^']*+)*+'"
        double = r'"[^"]*+(?:""[^"]*+)*+"'
    return single if syntax.double_quoted_identifiers else f"(?:{single}|{double})"


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
