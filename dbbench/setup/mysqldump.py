"""``mysqldump`` output (and published MySQL sample dumps) mapped onto the namespace (see :mod:`dbbench.setup.dumps`).

A file is a dump when it starts with mysqldump's ``-- MySQL dump`` header, or when its first
statements (before any table) are a sample dump's ``SET @OLD_…`` lines or name the dumped
database (``DROP SCHEMA IF EXISTS x``, ``CREATE SCHEMA x``, ``USE x``). Anything else is ordinary
setup SQL and passes through unchanged. In a dump:

* the dumped database -- the header's ``Database: x``, else the first ``CREATE``/``DROP``/``USE``
  -- is the namespace: its ``DROP``/``CREATE``/``ALTER SCHEMA|DATABASE`` and ``USE`` are skipped
  (dbbench re-creates the namespace and the session already uses it), and its qualified names
  ``x.t`` become ``namespace.t`` where ``t`` is an object the dump creates (``x.c`` may be a table
  ``x``'s column ``c``), in the code only, never inside quoted text. Any other database named
  stays as written, so the text checks (or the server) refuse it;
* ``LOCK TABLES … WRITE`` / ``UNLOCK TABLES``, ``SET AUTOCOMMIT`` and ``COMMIT`` are skipped: one
  session loads the namespace and dbbench commits each statement;
* session settings the namespace user may set and that change what the load means are kept:
  ``FOREIGN_KEY_CHECKS=0`` (a dump creates tables in name order, before the tables they
  reference), ``UNIQUE_CHECKS``, ``SQL_MODE`` (``NO_AUTO_VALUE_ON_ZERO`` keeps a 0 id),
  ``TIME_ZONE`` (``TIMESTAMP`` values), ``SQL_NOTES``, ``collation_connection`` (stored with views
  and routines) and the ``@OLD_…`` user variables saving them;
* the client character set (``SET NAMES``, ``character_set_client``/``_results``) is skipped:
  dbbench reads the file as UTF-8 and sends it as utf8mb4, whatever the dump says;
* the binary log and GTID state (``SQL_LOG_BIN``, ``@@GLOBAL.GTID_PURGED``) are skipped: they are
  the dumped server's replication bookkeeping, and need privileges the namespace user has not; so
  is ``FLUSH [BINARY] LOGS`` (the employees sample's script writes it before its data: it closes
  the server's log files, changes nothing the schema holds, and needs ``RELOAD``); any other
  ``FLUSH`` stays for the text checks to refuse;
* ``DEFINER=user@host`` on views, triggers and routines (plain or inside ``/*!50013 … */``)
  becomes ``DEFINER=CURRENT_USER``: the namespace user owns its objects (naming another user needs
  ``SET_ANY_DEFINER``);
* a dump of a dbbench namespace carries its ``dbbench_meta`` marker: those statements are skipped
  (dbbench writes the namespace's own marker).

Conditional comments (``/*!40101 … */``) are code to the splitter, so all of this reads their
content as the server would run it.
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace

from dbbench.setup.split import Statement

_NAME = r"(?:`(?:[^`]|``)+`|[A-Za-z0-9_$]+)"
_HEADER = re.compile(r"^(?:/\*M![^\n]*\n)?-- (?:MySQL|MariaDB) dump\b")
_HEADER_DATABASE = re.compile(r"^-- Host: .*?\bDatabase: (\S+)\s*$", re.M)
_DATABASE_DDL = re.compile(
    rf"^\s*(?P<verb>DROP|CREATE|ALTER)\s+(?:SCHEMA|DATABASE)\s+(?:IF\s+(?:NOT\s+)?EXISTS\s+)?(?P<name>{_NAME})",
    re.I,
)
_CREATED = re.compile(
    rf"^\s*CREATE\b[^(;]*?\b(?:TABLE|VIEW|PROCEDURE|FUNCTION|TRIGGER)\s+(?:IF\s+NOT\s+EXISTS\s+)?"
    rf"(?:{_NAME}\s*\.\s*)?(?P<name>{_NAME})",
    re.I,
)
_USE = re.compile(rf"^\s*USE\s+(?P<name>{_NAME})\s*$", re.I)
_LOCKS = re.compile(r"^\s*(?:LOCK\s+TABLES?\b|UNLOCK\s+TABLES?\s*$)", re.I)
_TRANSACTION = re.compile(
    r"^\s*(?:SET\s+(?:SESSION\s+|@@(?:SESSION\.)?)?AUTOCOMMIT\s*=\s*@?\w+|COMMIT)\s*$", re.I
)
_SET = re.compile(r"^\s*SET\s+(?!(?:GLOBAL|PERSIST|PERSIST_ONLY)\b)(?P<rest>.*)$", re.I | re.S)
_TARGET = re.compile(
    r"^\s*(?:(?P<user>@[\w$.]+|@`[^`]*`)|(?:SESSION\s+|LOCAL\s+|@@(?:SESSION\.|LOCAL\.)?)?(?P<var>\w+))", re.I
)
# FLUSH [NO_WRITE_TO_BINLOG | LOCAL] [BINARY | ENGINE | ERROR | GENERAL | RELAY | SLOW] LOGS
_FLUSH_LOGS = re.compile(
    r"^\s*FLUSH\s+(?:(?:NO_WRITE_TO_BINLOG|LOCAL)\s+)?(?:(?:BINARY|ENGINE|ERROR|GENERAL|RELAY|SLOW)\s+)?LOGS\s*$",
    re.I,
)
_GTID_PURGED = re.compile(r"^\s*SET\s+@@GLOBAL\.GTID_PURGED\s*=", re.I)
_DEFINES = {"CREATE", "ALTER "}  # the statements a DEFINER= clause may be in
_CHARSET_VARS = {"names", "character_set_client", "character_set_results"}
_BINLOG_VARS = {"sql_log_bin"}
_DEFINER = re.compile(
    r"\bDEFINER\s*=\s*(?:`(?:[^`]|``)*`|'(?:[^'\\]|\\.|'')*'|[\w.$-]+)\s*@\s*(?:`(?:[^`]|``)*`|'(?:[^'\\]|\\.|'')*'|[\w.$%-]+)",
    re.I,
)
# Quoted text in a statement's text (MySQL: backslash escapes, doubled quotes): left alone by rewrites.
_LITERAL = r"'[^'\\]*(?:(?:\\.|'')[^'\\]*)*'|\"[^\"\\]*(?:(?:\\.|\"\")[^\"\\]*)*\""  # unrolled: fast on data
_META = re.compile(
    r"^\s*(?:DROP\s+TABLE\s+IF\s+EXISTS|CREATE\s+TABLE|LOCK\s+TABLES|ALTER\s+TABLE|INSERT\s+INTO)\s+"
    r"(?:`dbbench_meta`|dbbench_meta)(?:\s+(?:WRITE|READ|DISABLE\s+KEYS|ENABLE\s+KEYS|VALUES\b.*|\(.*))?\s*$",
    re.I | re.S,
)


@dataclass
class Facts:
    """What an adapter learns over a whole file, for a later pass over it (a file is streamed, never
    held): the objects a mysqldump creates (its ``db.name`` is the dumped database's only where
    ``name`` is one of them, and a foreign key may name a table the dump creates later)."""

    created: set[str] = field(default_factory=set)


DATABASE = "the dumped database's DROP/CREATE/ALTER SCHEMA|DATABASE and USE skipped (dbbench re-creates the namespace, and the session already uses it)"
QUALIFIED = "names qualified with the dumped database rewritten to the namespace"
LOCKS = "LOCK TABLES / UNLOCK TABLES skipped (one session loads the namespace)"
TRANSACTION = "SET AUTOCOMMIT / COMMIT skipped (dbbench commits each statement)"
CHARSET = "SET NAMES / character_set_client / character_set_results skipped (dbbench reads the file as UTF-8 and sends utf8mb4)"
BINLOG = "SQL_LOG_BIN / GTID_PURGED skipped (the dumped server's replication state; needs privileges the namespace user has not)"
DEFINER = "DEFINER= rewritten to CURRENT_USER (the namespace user owns its views, triggers and routines)"
FLUSH_LOGS = "FLUSH LOGS skipped (the dumped server's logs: nothing the schema holds, and it needs RELOAD)"
META = "the dumped namespace's dbbench_meta marker skipped (dbbench writes the namespace's own)"


def _unquote(name: str) -> str:
    return name[1:-1].replace("``", "`") if name.startswith("`") else name


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _dumped_database(head: str, stmts: Iterator[Statement], seen: list[Statement]) -> tuple[bool, str | None]:
    """Whether the file is a dump, and the database it dumps (None: not named); the statements
    read from ``stmts`` to tell are appended to ``seen``."""
    header = bool(_HEADER.match(head))
    m = _HEADER_DATABASE.search(head) if header else None
    if m:
        return True, m.group(1)
    saves = False
    for s in stmts:
        seen.append(s)
        found = _DATABASE_DDL.match(s.code) or _USE.match(s.code)
        if found:
            return True, _unquote(found.group("name"))
        if _SET.match(s.code) or _TRANSACTION.match(s.code):
            saves = saves or "@OLD_" in s.code.upper()
            continue
        break  # the preamble ended: ordinary setup SQL names no dumped database
    return header or saves, None


def _set_targets(rest: str) -> list[str] | None:
    """The variables a ``SET`` assigns (``@user`` ones as ``@``), or None if it cannot tell."""
    targets = []
    depth, start = 0, 0
    parts = []
    for k, c in enumerate(rest):
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif c == "," and depth == 0:
            parts.append(rest[start:k])
            start = k + 1
    parts.append(rest[start:])
    for part in parts:
        m = _TARGET.match(part)
        if not m:
            return None
        targets.append("@" if m.group("user") else m.group("var").lower())
    return targets


def _skip_set(code: str) -> str | None:
    """Why a dump's ``SET`` is skipped, or None to run it."""
    if _GTID_PURGED.match(code):
        return BINLOG
    m = _SET.match(code)
    if not m:
        return None
    targets = _set_targets(m.group("rest"))
    if not targets:
        return None
    variables = {t for t in targets if t != "@"}
    if variables and variables <= _CHARSET_VARS:
        return CHARSET
    if variables and variables <= _BINLOG_VARS:
        return BINLOG
    return None


def _rewrite(text: str, pattern: re.Pattern[str], fn: Callable[[re.Match[str]], str]) -> tuple[str, int]:
    """``text`` with each match of ``pattern`` outside quoted text replaced by ``fn(match)``;
    how many were changed."""
    combined = re.compile(f"(?P<lit>{_LITERAL})|(?P<hit>{pattern.pattern})", pattern.flags)
    count = 0

    def sub(m: re.Match[str]) -> str:
        nonlocal count
        if m.group("lit") is not None:
            return m.group(0)
        out = fn(m)
        count += out != m.group(0)
        return out

    return combined.sub(sub, text), count


def _qualified_rewrite(database: str, namespace: str, created: set[str]):
    """The pattern of ``database.name`` and the replacement that maps it onto the namespace, where
    ``name`` is an object the dump creates (``x.y`` may also be a table ``x``'s column ``y``):
    ``created``: the objects the dump creates, as far as known."""
    quoted = re.escape(_quote(database))
    pattern = re.compile(
        rf"(?<![\w$.`])(?:{quoted}|{re.escape(database)}(?![\w$]))(?P<dot>\s*\.\s*)(?P<obj>{_NAME})"
    )

    def mapped(m: re.Match[str]) -> str:
        if _unquote(m.group("obj")).lower() not in created:
            return m.group(0)
        return _quote(namespace) + m.group("dot") + m.group("obj")

    return pattern, mapped


def adapt(
    statements: Iterable[Statement], namespace: str, skipped: Counter[str], head: str, facts: Facts
) -> Iterator[Statement]:
    """The statements of a dump as the namespace runs them (see the module docstring); ordinary
    setup SQL passes through unchanged. ``head``: the file's first lines (the dump header);
    ``facts.created``: the objects the dump creates, as far as known (all of them after a first
    pass over the file), filled as the statements go by."""
    rest = iter(statements)
    preamble: list[Statement] = []
    is_dump, database = _dumped_database(head, rest, preamble)
    if not is_dump:
        yield from preamble
        yield from rest
        return
    created = facts.created  # the tables, views, routines and triggers it creates (lower case)
    qualified = None
    if database is not None and database != namespace:
        qualified = _qualified_rewrite(database, namespace, created)
    for s in itertools.chain(preamble, rest):
        why = _skip(s, database)
        if why:
            skipped[why] += 1
            continue
        text, code = s.text, s.code
        made = _CREATED.match(code)
        if made:
            created.add(_unquote(made.group("name")).lower())
        if code.lstrip()[:6].upper() in _DEFINES and _DEFINER.search(code):
            text, n = _rewrite(text, _DEFINER, lambda m: "DEFINER=CURRENT_USER")
            if n:
                skipped[DEFINER] += 1
        if qualified is not None and qualified[0].search(code):
            text, n = _rewrite(text, *qualified)
            code = _rewrite(code, *qualified)[0]
            if n:
                skipped[QUALIFIED] += 1
        yield s if text is s.text else replace(s, text=text, code=code)


def _skip(s: Statement, database: str | None) -> str | None:
    """Why a dump's statement is skipped, or None."""
    code = s.code
    found = _DATABASE_DDL.match(code) or _USE.match(code)
    if found:
        return DATABASE if database is not None and _unquote(found.group("name")) == database else None
    if _LOCKS.match(code):
        return LOCKS
    if _TRANSACTION.match(code):
        return TRANSACTION
    if _META.match(code):
        return META
    if _FLUSH_LOGS.match(code):
        return FLUSH_LOGS
    return _skip_set(code)
