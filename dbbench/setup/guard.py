"""The text checks of setup SQL: statements refused before anything runs.

Part of :mod:`dbbench.setup.loader` (which re-exports :func:`check_statement` and :func:`statements_for`).
The checks are early, friendly errors naming the file, the statement and its line; the server's
privileges (the namespace user, :mod:`dbbench.access.isolation`) are the boundary.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from dbbench.setup import dumps, references
from dbbench.setup.extensions import Extensions
from dbbench.setup.split import INSERT_HEAD, SetupError, Statement, data_rows, split_file, split_sql

_Q = r'(?:"[^"]+"|`[^`]+`|[A-Za-z_][\w$]*)'
# why a setup statement is refused, and the pattern (case-insensitive) that finds it; the first found counts
_REFUSED_PATTERNS = {
    "is a psql meta-command (dbbench runs SQL statements only)": r"^\\",
    "is the mysql client's source command, which dbbench does not follow (put the files it reads in a "
    "setup/ folder, in that order)": r"^\s*SOURCE\s",
    "switches database (USE)": r"^\s*USE\b",
    "changes search_path": r"\bsearch_path\b",
    "creates, drops or alters a schema/database": r"\b(?:CREATE|DROP|ALTER)\s+(?:SCHEMA|DATABASE)\b",
    "controls the transaction (dbbench does that)": r"^\s*(?:BEGIN|COMMIT|ROLLBACK|START\s+TRANSACTION|SAVEPOINT|RELEASE|END)\b(?!\s*\()",
    "changes privileges": r"^\s*(?:GRANT|REVOKE)\b",
    "creates server-wide objects": r"\b(?:CREATE|DROP|ALTER)\s+(?:ROLE|USER|EXTENSION|TABLESPACE|SERVER)\b",
    "schedules an event, which would run while dbbench measures (dump without --events)": (
        r"^\s*(?:CREATE|ALTER)\b[^;]*?\bEVENT\s+(?:IF\s+NOT\s+EXISTS\s+)?\S+\s+ON\s+SCHEDULE\b"
    ),
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
    # The server's administration: no setup builds a schema with it, and as dbbench's own user
    # (--no-isolation) it would stop the server or end the sessions of others; also as the body of a
    # MySQL routine (after its parameter list, a BEGIN, THEN, ELSE, DO, LOOP or REPEAT, or a ';').
    "administers the server (stops it, ends sessions, loads code, changes replication or logs)": (
        r"(?:^|[;)]|\b(?:BEGIN|THEN|ELSE|DO|LOOP|REPEAT)\b)\s*(?:LOAD\s+'|(?:SHUTDOWN|RESTART|KILL|CLONE|BINLOG|"
        r"(?:INSTALL|UNINSTALL)\s+(?:PLUGIN|COMPONENT)|(?:LOCK|UNLOCK|ALTER)\s+INSTANCE|"
        r"PURGE\s+(?:BINARY|MASTER)\s+LOGS|RESET\s+(?:MASTER|REPLICA|SLAVE|BINARY|PERSIST)|"
        r"CHANGE\s+(?:MASTER|REPLICATION)|(?:START|STOP)\s+(?:REPLICA|SLAVE|GROUP_REPLICATION)|"
        r"SET\s+PASSWORD|RENAME\s+USER|FLUSH\s+(?!TABLES?\b))\b)|"
        r"\b(?:pg_terminate_backend|pg_cancel_backend|pg_reload_conf|pg_rotate_logfile\w*|pg_promote|"
        r"pg_switch_wal|pg_create_restore_point|pg_drop_replication_slot|pg_create_\w*replication_slot)\s*\("
    ),
}
_REFUSED_PATTERNS.update(
    {
        'uses a Unicode-escaped identifier (U&"…"), which the text checks cannot read': r'\bU&"',
        "changes a setting with set_config(), whose setting name the text checks cannot read (use SET LOCAL)": (
            r"\bset_config\s*\("
        ),
        "runs SQL given as text, whose target cannot be checked": (
            r"\b(?:query_to_xml\w*|table_to_xml\w*|cursor_to_xml\w*|schema_to_xml\w*|database_to_xml\w*|"
            r"ts_stat|dblink\w*)\s*\("
        ),
    }
)
_REFUSED = [(re.compile(pattern, re.I), why) for why, pattern in _REFUSED_PATTERNS.items()]
# In a PostgreSQL function or DO body, where a statement may follow BEGIN, THEN, LOOP …: the
# refusals that are not tied to the start of a statement, and dynamic SQL.
_IN_BODIES = [(p, why) for p, why in _REFUSED if not p.pattern.startswith("^")] + [
    (
        re.compile(r"\bEXECUTE\b(?!\s+(?:FUNCTION|PROCEDURE)\b)", re.I),
        "runs dynamic SQL (EXECUTE in a function or DO body), whose target cannot be checked",
    )
]
_BODY_DEPTH = 4  # bodies within bodies checked, deeper is refused
_EXTENSION = re.compile(
    rf"^\s*CREATE\s+EXTENSION\s+(?:IF\s+NOT\s+EXISTS\s+)?({_Q})(?:\s+WITH)?(?:\s+SCHEMA\s+({_Q}))?", re.I
)
# PostgreSQL DDL of objects the write patterns below do not name (operators, their classes and
# families, aggregates …): its qualified name is a target.
_QUALIFIED_OBJECT_DDL = re.compile(
    rf"^\s*(?:CREATE|ALTER|DROP|COMMENT\s+ON)\s+(?:OR\s+REPLACE\s+)?(?:OPERATOR(?:\s+CLASS|\s+FAMILY)?|AGGREGATE|"
    rf"COLLATION|CONVERSION|TEXT\s+SEARCH\s+\w+|STATISTICS)\s+(?:IF\s+(?:NOT\s+)?EXISTS\s+)?({_Q})\s*\.\s*"
    r"([\w$]+|\"[^\"]+\"|[-+*/<>=~!@#%^&|`?]+)",
    re.I,
)
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


# An INSERT's rows that hold data only (text blanked to '' in the code): only its head is checked.
_DATA_ROWS = re.compile(data_rows("''"), re.I)
_INSERT_HEAD = re.compile(INSERT_HEAD, re.I)


def _without_data_rows(code: str) -> str:
    """``code`` without the rows of an ``INSERT … VALUES`` that holds data only (see
    :func:`~dbbench.setup.split.data_rows`; the splitter takes most such statements whole, their code
    their head, and leaves those that span its window or carry comments)."""
    if len(code) < 4096:
        return code
    head = _INSERT_HEAD.match(code)
    if head and _DATA_ROWS.fullmatch(code, head.end()):
        return code[: head.end()]
    return code


def check_statement(
    stmt: Statement,
    namespace: str,
    dialect: str | None = None,
    *,
    any_reference: bool = True,
    extensions: Extensions | None = None,
) -> str | None:
    """Why ``stmt`` may not run in a setup script, or None. ``dialect``: the one it runs on (None:
    either; every dialect's reading of names applies).

    ``any_reference`` (for SQL that runs as dbbench's own user, ``--no-isolation``, where the text is
    the only boundary): any name of another schema or database is refused, in views and in function,
    procedure, trigger and DO bodies too, and so is dynamic SQL in a body. Without it (the SQL runs
    as the namespace's own role, and the server refuses what reaches outside) a dump that calls an
    extension's function in ``public`` or runs dynamic SQL in its functions still loads; writes to
    another schema's names are refused early either way. ``extensions``: the PostgreSQL server's
    (:mod:`dbbench.setup.extensions`): naming an object of one (``public.similarity(…)``) is a read."""
    code = _without_data_rows(stmt.code)
    why = _check_code(stmt, code, namespace)
    if why or not any_reference:
        return why
    return _check_references(stmt, code, namespace, dialect, 0, extensions)


def _check_references(
    stmt: Statement,
    code: str,
    namespace: str,
    dialect: str | None,
    depth: int,
    extensions: Extensions | None = None,
) -> str | None:
    """Names of another database or schema (:mod:`dbbench.setup.references`), in the code and, on
    PostgreSQL, in the function and DO bodies it holds."""
    for d in (dialect,) if dialect else ("postgresql", "mysql"):
        ref = references.foreign_reference(code, namespace, d, extensions if d == "postgresql" else None)
        if ref:
            return (
                f"names {ref}, outside the namespace {namespace!r} (another schema or database; "
                "leave names unqualified)"
            )
    if dialect == "mysql" or not references.has_body(code):
        return None
    for body in references.bodies(stmt.text):
        if depth >= _BODY_DEPTH:
            return "nests function bodies deeper than the text checks read"
        try:
            inner = split_sql(body, "postgresql")
        except SetupError:
            return "has a function body the text checks cannot read as SQL"
        for s in inner:
            for pattern, why in _IN_BODIES:
                if pattern.search(s.code):
                    return why
            found = _check_references(s, s.code, namespace, "postgresql", depth + 1, extensions)
            if found:
                return found
    return None


def _check_code(stmt: Statement, code: str, namespace: str) -> str | None:
    """The checks of the statement's own text (not its bodies): refused statements and writes
    to a name qualified with another schema."""
    ext = _EXTENSION.match(code)
    if ext:
        name, schema = ext.group(1), ext.group(2) or "public"
        return (
            f"creates server-wide objects (the extension {name}, which only a superuser may create): have one "
            f"install it on the server first, outside the namespace (CREATE EXTENSION {name} SCHEMA {schema}); "
            "the setup then skips this statement"
        )
    for pattern, why in _REFUSED:
        if pattern.search(code):
            return why
    found = [
        m
        for pattern in (_QUALIFIED_WRITE, _QUALIFIED_ON, _QUALIFIED_OBJECT_DDL)
        for m in pattern.finditer(code)
    ]
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


def _head(file: Path) -> str:
    """The first lines of a setup file, where a dump tool writes its header."""
    try:
        with file.open("rb") as f:
            return f.read(2048).decode("utf-8", "replace")
    except OSError as exc:
        raise SetupError(f"{file}: cannot read: {exc.strerror or exc}") from None


def statements(
    file: Path,
    dialect: str,
    namespace: str,
    *,
    binds: Mapping[str, str] | None = None,
    skipped: Counter[str] | None = None,
    on_bytes: Callable[[int], object] | None = None,
    facts: dumps.Facts | None = None,
    extensions: Extensions | None = None,
) -> Iterator[Statement]:
    """The statements of one setup file as it is read (:func:`~dbbench.setup.split.split_file`;
    ``binds`` and ``on_bytes`` are its), after its dump adapter (:mod:`dbbench.setup.dumps`; what
    it skips is counted in ``skipped``; ``facts``: what :func:`check_file` learned of the whole
    file; ``extensions``: the PostgreSQL server's, :mod:`dbbench.setup.extensions`). Not checked:
    see :func:`check_file`."""
    counts: Counter[str] = Counter() if skipped is None else skipped
    split = split_file(file, dialect, binds, on_bytes)
    return dumps.adapt(
        dialect, split, namespace, counts, head=_head(file), facts=facts, extensions=extensions
    )


@dataclass
class FileCheck:
    """One setup file, read once and kept nowhere: its statement count, every statement the text
    checks refuse (``FILE: statement K (line L) WHY: SQL``) and what its dump adapter learned."""

    statements: int
    problems: list[str]
    facts: dumps.Facts


def check_file(
    file: Path,
    dialect: str,
    namespace: str,
    *,
    text_checks: bool = True,
    any_reference: bool = True,
    binds: Mapping[str, str] | None = None,
    skipped: Counter[str] | None = None,
    on_bytes: Callable[[int], object] | None = None,
    extensions: Extensions | None = None,
) -> FileCheck:
    """Check every statement of one setup file (a file that cannot be read or split raises). A file
    with refused statements is read once more knowing all it creates (a foreign key may name a
    table of the dump created later). The checks are early, friendly errors: the server's
    privileges are the boundary. ``extensions``: the PostgreSQL server's (None: none)."""
    facts = dumps.Facts()
    counts: Counter[str] = Counter()
    checks = _Checks(text_checks, any_reference, extensions)
    count, problems = _check_pass(file, dialect, namespace, checks, binds, counts, on_bytes, facts)
    if problems and facts.created:
        counts = Counter()
        count, problems = _check_pass(file, dialect, namespace, checks, binds, counts, None, facts)
    if skipped is not None:
        skipped.update(counts)
    return FileCheck(count, problems, facts)


@dataclass(frozen=True)
class _Checks:
    text: bool  # the text checks at all (False: tests showing that the server refuses)
    any_reference: bool  # any reference outside the namespace (check_statement)
    extensions: Extensions | None = None  # the PostgreSQL server's

    def why(self, stmt: Statement, namespace: str, dialect: str) -> str | None:
        if not self.text:
            return None
        return check_statement(
            stmt, namespace, dialect, any_reference=self.any_reference, extensions=self.extensions
        )


def _check_pass(
    file: Path,
    dialect: str,
    namespace: str,
    checks: _Checks,
    binds: Mapping[str, str] | None,
    skipped: Counter[str],
    on_bytes: Callable[[int], object] | None,
    facts: dumps.Facts,
) -> tuple[int, list[str]]:
    count, problems = 0, []
    stmts = statements(
        file,
        dialect,
        namespace,
        binds=binds,
        skipped=skipped,
        on_bytes=on_bytes,
        facts=facts,
        extensions=checks.extensions,
    )
    for count, s in enumerate(stmts, 1):
        why = checks.why(s, namespace, dialect)
        if why:
            problems.append(_problem(file, count, s, why))
    if not count:
        raise SetupError(f"{file}: no SQL statements")
    return count, problems


def checked_statements(
    file: Path,
    dialect: str,
    namespace: str,
    facts: dumps.Facts,
    *,
    text_checks: bool = True,
    any_reference: bool = True,
    binds: Mapping[str, str] | None = None,
    on_bytes: Callable[[int], object] | None = None,
    extensions: Extensions | None = None,
) -> Iterator[Statement]:
    """The statements of a file :func:`check_file` passed (``facts``: what it learned), as read
    again to run them, each checked again (the file may have changed since): the first refused
    one raises."""
    stmts = statements(
        file, dialect, namespace, binds=binds, on_bytes=on_bytes, facts=facts, extensions=extensions
    )
    checks = _Checks(text_checks, any_reference, extensions)
    for k, s in enumerate(stmts, 1):
        why = checks.why(s, namespace, dialect)
        if why:
            raise SetupError(_problem(file, k, s, why))
        yield s


def statements_for(
    file: Path,
    dialect: str,
    namespace: str,
    *,
    text_checks: bool = True,
    any_reference: bool = True,
    binds: Mapping[str, str] | None = None,
    skipped: Counter[str] | None = None,
    extensions: Extensions | None = None,
) -> list[Statement]:
    """The checked statements of one (small) setup file as a list; every refused statement is
    found before one :class:`SetupError` lists them all."""
    found = check_file(
        file,
        dialect,
        namespace,
        text_checks=text_checks,
        any_reference=any_reference,
        binds=binds,
        skipped=skipped,
        extensions=extensions,
    )
    if found.problems:
        raise SetupError.of(found.problems)
    return list(statements(file, dialect, namespace, binds=binds, facts=found.facts, extensions=extensions))


def _problem(file: Path, k: int, s: Statement, why: str) -> str:
    first = " ".join(s.text[:400].split())[:100].encode("utf-8", "backslashreplace").decode("utf-8")
    return f"{file}: statement {k} (line {s.line}) {why}: {first}"
