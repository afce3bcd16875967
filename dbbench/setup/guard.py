"""The text checks of setup SQL: statements refused before anything runs.

Part of :mod:`dbbench.setup.namespace` (which re-exports :func:`check_statement` and :func:`statements_for`).
The checks are early, friendly errors naming the file, the statement and its line; the server's
privileges (the namespace user, :mod:`dbbench.access.isolation`) are the boundary.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from pathlib import Path

from dbbench.setup import dumps
from dbbench.setup.split import SetupError, Statement, split_sql

_Q = r'(?:"[^"]+"|`[^`]+`|[A-Za-z_][\w$]*)'
# why a setup statement is refused, and the pattern (case-insensitive) that finds it; the first found counts
_REFUSED_PATTERNS = {
    "is a psql meta-command (dbbench runs SQL statements only)": r"^\\",
    "switches database (USE)": r"^\s*USE\b",
    "changes search_path": r"\bsearch_path\b",
    "creates, drops or alters a schema/database": r"\b(?:CREATE|DROP|ALTER)\s+(?:SCHEMA|DATABASE)\b",
    "controls the transaction (dbbench does that)": r"^\s*(?:BEGIN|COMMIT|ROLLBACK|START\s+TRANSACTION|SAVEPOINT|RELEASE|END)\b(?!\s*\()",
    "changes privileges": r"^\s*(?:GRANT|REVOKE)\b",
    "creates server-wide objects": r"\b(?:CREATE|DROP|ALTER)\s+(?:ROLE|USER|EXTENSION|TABLESPACE|SERVER|EVENT)\b",
    "changes server-wide settings": r"^\s*(?:ALTER\s+SYSTEM|SET\s+(?:GLOBAL|PERSIST|PERSIST_ONLY)\b|SET\s+@@(?:global|persist))",
    "touches dbbench's ownership marker": r"\bdbbench_meta\b",
    "is not allowed in setup SQL": r"^\s*(?:VACUUM|CHECKPOINT|LOAD\s+DATA\s+INFILE|COPY\b[^;]*\b(?:FROM|TO)\s+(?:PROGRAM|''))",
    "reads or writes server-side files": (
        r"\bINTO\s+(?:OUTFILE|DUMPFILE)\b|\bLOAD\s+(?:DATA|XML)\s+(?:(?:LOW_PRIORITY|CONCURRENT)\s+)?INFILE\b|"
        r"\b(?:load_file|pg_read_file|pg_read_binary_file|pg_ls_dir|pg_stat_file|lo_import|lo_export|"
        r"pg_file_write|pg_file_rename|pg_file_unlink)\s*\("
    ),
    "runs dynamic SQL (PREPARE … FROM), whose target cannot be checked": r"\bPREPARE\s+\S+\s+FROM\b",
    "moves an object to another schema": r"\bSET\s+SCHEMA\b",
}
_REFUSED = [(re.compile(pattern, re.I), why) for why, pattern in _REFUSED_PATTERNS.items()]
_EXTENSION = re.compile(rf"^\s*CREATE\s+EXTENSION\s+(?:IF\s+NOT\s+EXISTS\s+)?({_Q})", re.I)
_QUALIFIED_WRITE = re.compile(
    rf"\b(?:INTO|UPDATE|TABLE|VIEW|SEQUENCE|TRIGGER|PROCEDURE|FUNCTION|TYPE|DOMAIN|REFERENCES|TRUNCATE|COPY|"
    rf"DELETE\s+FROM)\s+(?:ONLY\s+)?(?:IF\s+(?:NOT\s+)?EXISTS\s+)?({_Q})\s*\.\s*({_Q})",
    re.I,
)
_QUALIFIED_ON = re.compile(
    rf"\b(?:INDEX|TRIGGER|POLICY|RULE)\b.*?\bON\s+(?:ONLY\s+)?({_Q})\s*\.\s*({_Q})", re.I | re.S
)
_QUALIFIED_NAME = re.compile(rf"({_Q})\s*\.\s*({_Q})")
# Statements whose every qualified name is a target: DROP / TRUNCATE / RENAME lists, CALL.
_ALL_TARGETS = re.compile(r"^\s*(?:DROP|TRUNCATE|RENAME|CALL)\b", re.I)
# Target lists inside a statement, each scanned for qualified names: ALTER … RENAME [TO|AS] x,
# MySQL's multi-table DELETE (targets before FROM, or FROM … USING) and UPDATE (table references
# before SET: the first, and each after JOIN or a comma).
_TARGET_LISTS = [
    re.compile(rf"\bRENAME\s+(?:TO\s+|AS\s+)?((?:{_Q})\s*\.\s*(?:{_Q}))", re.I),
    re.compile(r"^\s*DELETE\s+(?:(?:LOW_PRIORITY|QUICK|IGNORE)\s+)*(?!FROM\b)(.*?)\bFROM\b", re.I | re.S),
    re.compile(
        r"^\s*DELETE\s+(?:(?:LOW_PRIORITY|QUICK|IGNORE)\s+)*FROM\s+((?:(?!\bWHERE\b)[^()])*?)\bUSING\b",
        re.I | re.S,
    ),
]
# Table references a multi-table write may write through (its targets can be aliases of them).
_WRITE_REFS = [
    re.compile(r"^\s*UPDATE\s+(?:(?:LOW_PRIORITY|IGNORE|ONLY)\s+)*(.*?)\bSET\b", re.I | re.S),
    re.compile(
        r"^\s*DELETE\s+(?:(?:LOW_PRIORITY|QUICK|IGNORE)\s+)*(?!FROM\b).*?\bFROM\b(.*?)(?:\bWHERE\b|$)",
        re.I | re.S,
    ),
]
_TABLE_REF = re.compile(rf"(?:^|,|\bJOIN\b)\s*({_Q})\s*\.\s*({_Q})", re.I)


def _unquote(name: str) -> str:
    if name[:1] in '"`':
        return name[1:-1]
    return name.lower()


# An INSERT's (or REPLACE's) rows that hold data only -- numbers, NULL, DEFAULT, TRUE/FALSE, text
# (blanked to '' in the code), hex, bit and introduced literals -- hold nothing for the checks to
# find: only the statement's head is checked then (a dump's rows are most of its bytes).
# Atomic groups and possessive repeats: a row list that is not data only fails in linear time.
_DATUM = r"(?>''|NULL|DEFAULT|TRUE|FALSE|0x[0-9A-Fa-f]*+|[-+]?(?:\d++(?:\.\d*+)?+|\.\d++)(?:[eE][-+]?\d++)?+|[xXbB]''|_\w++\s*+'')"
_ROW = rf"(?>\(\s*+{_DATUM}(?:\s*+,\s*+{_DATUM})*+\s*+\))"
_DATA_ROWS = re.compile(rf"\s*+{_ROW}(?:\s*+,\s*+{_ROW})*+\s*+", re.I)
_INSERT_HEAD = re.compile(
    rf"^\s*(?:INSERT|REPLACE)\s+(?:(?:LOW_PRIORITY|DELAYED|HIGH_PRIORITY|IGNORE)\s+)*(?:INTO\s+)?"
    rf"{_Q}(?:\s*\.\s*{_Q})?\s*(?:\([^()]*\)\s*)?VALUES?\b",
    re.I,
)


def _without_data_rows(code: str) -> str:
    """``code`` without the rows of an ``INSERT … VALUES`` that holds data only (see ``_DATUM``)."""
    if len(code) < 4096:
        return code
    head = _INSERT_HEAD.match(code)
    if head and _DATA_ROWS.fullmatch(code, head.end()):
        return code[: head.end()]
    return code


def check_statement(stmt: Statement, namespace: str) -> str | None:
    """Why ``stmt`` may not run in a setup script, or None."""
    code = _without_data_rows(stmt.code)
    ext = _EXTENSION.match(code)
    if ext:
        name = ext.group(1)
        return (
            f"creates server-wide objects (the extension {name}, which only a superuser may create): have one "
            f"install it on the server first, outside the namespace (CREATE EXTENSION {name} SCHEMA public), "
            "and leave it out of the setup SQL (pg_dump -n SCHEMA dumps no extensions)"
        )
    for pattern, why in _REFUSED:
        if pattern.search(code):
            return why
    found = [m for pattern in (_QUALIFIED_WRITE, _QUALIFIED_ON) for m in pattern.finditer(code)]
    if _ALL_TARGETS.search(code):
        found += _QUALIFIED_NAME.finditer(code)
    for pattern in _TARGET_LISTS:
        for lst in pattern.finditer(code):
            found += _QUALIFIED_NAME.finditer(lst.group(1))
    for pattern in _WRITE_REFS:
        refs = pattern.search(code)
        if refs:
            found += _TABLE_REF.finditer(refs.group(1))
    for m in found:
        qualifier = _unquote(m.group(1))
        if qualifier not in (namespace, "pg_temp"):
            return (
                f"writes to {m.group(1)}.{m.group(2)}, outside the namespace {namespace!r} "
                "(leave names unqualified)"
            )
    return None


def read_setup(file: Path, dialect: str) -> str:
    """A setup file's text, UTF-8. On MySQL, bytes that are not UTF-8 are kept as they are
    (``surrogateescape``) and sent back to the server unchanged: mysqldump writes binary columns
    raw unless given ``--hex-blob``."""
    errors = "surrogateescape" if dialect == "mysql" else "strict"
    try:
        return file.read_bytes().decode("utf-8", errors)
    except UnicodeDecodeError:
        raise SetupError(f"{file}: not UTF-8 text") from None
    except OSError as exc:
        raise SetupError(f"{file}: cannot read: {exc.strerror or exc}") from None


def statements_for(
    file: Path,
    dialect: str,
    namespace: str,
    *,
    text_checks: bool = True,
    binds: Mapping[str, str] | None = None,
    skipped: Counter[str] | None = None,
) -> list[Statement]:
    """The checked statements of one setup file (``binds``: :func:`split_sql`'s), after its dump
    adapter (:mod:`dbbench.setup.dumps`; what it skips is counted in ``skipped``). Every refused
    statement is found before one :class:`SetupError` lists them all. The checks are early,
    friendly errors: the server's privileges are the boundary."""
    stmts, problems = checked(file, dialect, namespace, text_checks=text_checks, binds=binds, skipped=skipped)
    if problems:
        raise SetupError.of(problems)
    return stmts


def checked(
    file: Path,
    dialect: str,
    namespace: str,
    *,
    text_checks: bool = True,
    binds: Mapping[str, str] | None = None,
    skipped: Counter[str] | None = None,
) -> tuple[list[Statement], list[str]]:
    """:func:`statements_for`'s statements and its problems (``FILE: statement K (line L) WHY: SQL``),
    without raising for refused statements (a file that cannot be read or split still raises)."""
    text = read_setup(file, dialect)
    counts: Counter[str] = Counter() if skipped is None else skipped
    statements = split_sql(text, dialect, str(file), binds)
    stmts = list(dumps.adapt(dialect, statements, namespace, counts, head=text[:2048]))
    if not stmts:
        raise SetupError(f"{file}: no SQL statements")
    problems = []
    for k, s in enumerate(stmts, start=1):
        why = check_statement(s, namespace) if text_checks else None
        if why:
            first = " ".join(s.text.split())[:100].encode("utf-8", "backslashreplace").decode("utf-8")
            problems.append(f"{file}: statement {k} (line {s.line}) {why}: {first}")
    return stmts, problems
