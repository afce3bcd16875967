"""PostgreSQL's plain ``pg_dump`` output mapped onto the namespace (see :mod:`dbbench.setup.dumps`).

A script is a dump when, after psql meta lines and ``SET``s only, it sets
``pg_catalog.set_config('search_path', '', false)`` (every plain dump of pg_dump 10.3 to 17 does);
or, after those and what pg_dump writes before it (the dumped schema's ``CREATE`` / ``DROP`` /
``COMMENT ON SCHEMA`` and owner, extensions, 8.x's ``CREATE [OR REPLACE] PROCEDURAL LANGUAGE
plpgsql``), sets ``SET search_path = x, pg_catalog`` (pg_dump 8.x to 10.2: names after it are
unqualified); or creates a database and connects to it (``CREATE DATABASE x`` … ``\\c x``:
``pg_dump --create``, and generated psql scripts such as chinook's). Anything else passes through
unchanged. In a dump:

* the dumped schema (from its ``CREATE SCHEMA x``, else the first schema its statements qualify
  names with: ``public`` or any one schema) becomes the namespace: ``x.`` qualifiers in the code
  (not in string literals or function bodies) are rewritten to the namespace, and so are the
  ``'x.name'`` literals pg_dump writes for sequences (``nextval('x.s'::regclass)``, ``setval``);
* skipped, each counted under its reason: psql's ``\\restrict`` / ``\\unrestrict`` lines, the
  ``search_path`` settings (the setup already runs inside the namespace), session settings meant for
  the dumped server's client (timeouts, ``client_encoding``, ``default_tablespace``), ownership
  (``OWNER TO``, ``SET SESSION AUTHORIZATION``), privileges (``GRANT``, ``REVOKE``, ``ALTER DEFAULT
  PRIVILEGES``), the dumped schema's ``CREATE`` / ``DROP`` / ``COMMENT ON SCHEMA``, ``CREATE EXTENSION
  plpgsql`` and its comment (or 8.x's ``CREATE PROCEDURAL LANGUAGE plpgsql``), and the
  ``dbbench_meta`` marker of a dumped dbbench namespace;
* ``ALTER TABLE … DISABLE/ENABLE TRIGGER ALL`` (``--disable-triggers`` data-only dumps) runs as
  ``… TRIGGER USER``: disabling the foreign-key (system) triggers needs a superuser; the table's own
  triggers are disabled during its load as the dump asks (a full dump loads its data before it
  creates triggers and foreign keys at all);
* the other session ``SET``s (``check_function_bodies``, ``xmloption``, ``row_security``, …) run as
  ``SET LOCAL``: for the setup's transaction only.

A statement naming another schema than the dumped one is left as it is, so the text checks and the
server refuse it. Extensions (:mod:`dbbench.setup.extensions`): ``CREATE`` / ``COMMENT ON`` / ``DROP
EXTENSION`` of one the server already has is skipped (in any setup SQL, a dump or not); of one it
has not, left for the text checks to refuse (only a superuser may create one: they say how to
proceed). Names qualified with the dumped schema that are objects of an extension installed in it
(``public.gin_trgm_ops``, ``OPERATOR(public.%)``, ``public.similarity(…)``) are left as they are:
the server's, not the namespace's.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Iterator

from dbbench.setup.extensions import Extensions, none
from dbbench.setup.split import Statement

SKIP_META = "psql's \\restrict / \\unrestrict lines skipped (psql meta-commands, not SQL)"
SKIP_SEARCH_PATH = "search_path settings skipped (the setup already runs inside the namespace)"
SKIP_SESSION = (
    "settings for the dumped server's client skipped (timeouts, client_encoding, default_tablespace)"
)
SKIP_OWNER = (
    "ownership skipped (OWNER TO, SET SESSION AUTHORIZATION: the namespace's role owns what it creates)"
)
SKIP_PRIVILEGES = "GRANT / REVOKE skipped (they name the dumped server's roles)"
SKIP_SCHEMA = "the dumped schema's CREATE / DROP / COMMENT ON SCHEMA skipped (the namespace stands in for it)"
SKIP_DATABASE = (
    "the dumped database's CREATE / DROP / ALTER / COMMENT ON DATABASE and \\connect skipped "
    "(pg_dump --create: the namespace stands in for it)"
)
SKIP_PLPGSQL = "CREATE EXTENSION plpgsql and its COMMENT skipped (built into the server)"
SKIP_MARKER = "dbbench_meta of a dumped dbbench namespace skipped (the namespace has its own)"
MAPPED_TRIGGERS = (
    "DISABLE/ENABLE TRIGGER ALL run as TRIGGER USER (the foreign-key triggers need a superuser; "
    "the table's own triggers are still off during its load)"
)
MAPPED_SETTINGS = "the dump's other session settings run as SET LOCAL (for the setup's transaction only)"


def mapped_names(schema: str) -> str:
    return f"names qualified with the dumped schema {schema} rewritten to the namespace"


def kept_names(schema: str) -> str:
    return (
        f"names of objects of the extensions installed in {schema} (functions, operators, operator "
        f"classes, types) left qualified with {schema}"
    )


_IDENT = r'(?:"(?:[^"]|"")+"|[A-Za-z_][\w$]*)'
_SET_CONFIG = re.compile(
    r"^\s*SELECT\s+(?:pg_catalog\s*\.\s*)?set_config\s*\(\s*'search_path'\s*,\s*'([^']*)'\s*,\s*false\s*\)\s*$",
    re.I,
)
_SET = re.compile(r"^\s*SET\s+(?:SESSION\s+)?(?!LOCAL\b)(\w+)\b\s*(?:=|\bTO\b)?\s*(.*)$", re.I | re.S)
_SESSION_AUTH = re.compile(
    r"^\s*(?:SET\s+(?:SESSION\s+)?(?:SESSION\s+AUTHORIZATION|ROLE)\b|RESET\s+ROLE\b)", re.I
)
_CLIENT_SETTINGS = {
    "statement_timeout",
    "lock_timeout",
    "idle_in_transaction_session_timeout",
    "transaction_timeout",
    "idle_session_timeout",
    "client_encoding",
    "default_tablespace",
    "default_with_oids",
}
_META_SKIPPED = re.compile(r"^\\(?:restrict|unrestrict)\b")
_OWNER = re.compile(r"^\s*ALTER\b.*\bOWNER\s+TO\b", re.I | re.S)
_PRIVILEGES = re.compile(r"^\s*(?:GRANT|REVOKE|ALTER\s+DEFAULT\s+PRIVILEGES)\b", re.I)
_CREATE_SCHEMA = re.compile(rf"^\s*CREATE\s+SCHEMA\s+(?:IF\s+NOT\s+EXISTS\s+)?({_IDENT})\s*$", re.I)
_COMMENT_SCHEMA = re.compile(rf"^\s*COMMENT\s+ON\s+SCHEMA\s+({_IDENT})\s+IS\b", re.I)
_DROP_SCHEMA = re.compile(
    rf"^\s*DROP\s+SCHEMA\s+(?:IF\s+EXISTS\s+)?({_IDENT})\s*(?:CASCADE|RESTRICT)?\s*$", re.I
)
_DATABASE = re.compile(
    rf"^\s*(?:(?P<verb>CREATE|DROP)\s+DATABASE\s+(?:IF\s+EXISTS\s+)?|ALTER\s+DATABASE\s+|COMMENT\s+ON\s+DATABASE\s+)"
    rf"(?P<name>{_IDENT})",
    re.I,
)
# psql strips a trailing semicolon from \\connect's database name (generated scripts write one)
_CONNECT = re.compile(rf"^\\(?:connect|c)\s+(?:-reuse-previous=\S+\s+)?(?P<name>{_IDENT})\s*;?\s*$")
# pg_dump 8.x to 10.2 set the dumped schema's search_path so (10.3 and later: set_config)
_OLD_SEARCH_PATH = re.compile(rf"^\s*SET\s+search_path\s*(?:=|\bTO\b)\s*{_IDENT}\s*,\s*pg_catalog\s*$", re.I)
# what pg_dump writes before it sets the search_path, besides SETs and psql lines: the dumped
# schema (-n, --clean), extensions (plpgsql first), the procedural language of 8.x, their owners
_HEAD = re.compile(
    r"^\s*(?:(?:CREATE|DROP)\s+SCHEMA|ALTER\s+SCHEMA\b.*\bOWNER\s+TO|COMMENT\s+ON\s+(?:SCHEMA|EXTENSION)"
    r"|CREATE\s+EXTENSION|CREATE\s+(?:OR\s+REPLACE\s+)?(?:TRUSTED\s+)?(?:PROCEDURAL\s+)?LANGUAGE\s+\"?plpgsql\b"
    r"|ALTER\s+(?:PROCEDURAL\s+)?LANGUAGE\s+\"?plpgsql\b.*\bOWNER\s+TO)\b",
    re.I | re.S,
)
_PLPGSQL = re.compile(
    r"^\s*(?:CREATE\s+EXTENSION\s+(?:IF\s+NOT\s+EXISTS\s+)?|COMMENT\s+ON\s+EXTENSION\s+"
    r"|CREATE\s+(?:OR\s+REPLACE\s+)?(?:TRUSTED\s+)?(?:PROCEDURAL\s+)?LANGUAGE\s+)(?:plpgsql|\"plpgsql\")(?:\s|$)",
    re.I,
)
_TRIGGER_ALL = re.compile(r"^(\s*ALTER\s+TABLE\b.*\b(?:DISABLE|ENABLE)\s+TRIGGER\s+)ALL\s*$", re.I | re.S)
_NAMES_A_SCHEMA = re.compile(r"^\s*(?:CREATE|ALTER|COMMENT|COPY|INSERT|SELECT)\b", re.I)
_QUALIFIER = re.compile(rf"(?<![\w$.\"])({_IDENT})\s*\.\s*(?=[\"A-Za-z_])")
_MARKER = re.compile(
    rf"^\s*(?:CREATE\s+TABLE|COPY|ALTER\s+TABLE(?:\s+ONLY)?|INSERT\s+INTO)\s+({_IDENT})\s*\.\s*dbbench_meta\b",
    re.I,
)
_BUILTIN_SCHEMAS = {"pg_catalog", "information_schema"}
# In a statement's text: what is not code (literals, quoted bodies, comments) and quoted names.
_TOKENS = re.compile(
    r"""(?P<ident>"(?:[^"]|"")*")"""
    r"""|(?P<estr>(?<![\w$])[Ee]'(?:[^'\\]|\\.|'')*')"""
    r"""|(?P<lit>'(?:[^']|'')*')"""
    r"""|(?P<dollar>(?<![\w$])(\$(?:[A-Za-z_]\w*)?\$)(?s:.*?)\5)"""
    r"""|(?P<comment>--[^\n]*|/\*(?s:.*?)\*/)"""
)
_REG_CAST = re.compile(  # unquoted, or quoted by --quote-all-identifiers
    r'\s*::\s*(?:"?pg_catalog"?\s*\.\s*)?"?reg(?:class|type|proc|procedure|oper|operator|config|dictionary|collation)\b',
    re.I,
)
_SETVAL_BEFORE = re.compile(r'\bsetval"?\s*\(\s*$', re.I)
# what follows a qualifier: the name it qualifies (quoted, a word, or an operator)
_AFTER_DOT = re.compile(r'\s*\.\s*(?:"((?:[^"]|"")+)"|([A-Za-z_][\w$]*)|([-+*/<>=~!@#%^&|`?]+))')


def _unquote(name: str) -> str:
    return name[1:-1].replace('""', '"') if name.startswith('"') else name.lower()


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def adapt(
    statements: Iterable[Statement],
    namespace: str,
    skipped: Counter[str],
    extensions: Extensions | None = None,
) -> Iterator[Statement]:
    """A dump's statements as the namespace runs them (see the module docstring); ordinary setup
    SQL passes through unchanged but for the extensions the server has (``extensions``, read by
    the setup; None: a server without any)."""
    ext = none() if extensions is None else extensions
    head: list[Statement] = []
    it = ext.skip(statements, skipped)
    created: set[str] = set()  # the databases the head creates (pg_dump --create, a psql script)
    for s in it:
        head.append(s)
        connect = _CONNECT.match(s.code)
        if (
            _SET_CONFIG.match(s.text)
            or _OLD_SEARCH_PATH.match(s.code)
            or (connect and _unquote(connect.group("name")) in created)
        ):
            dump = _Dump(namespace, skipped, ext)
            for h in head:
                yield from dump.map(h)
            for s in it:
                yield from dump.map(s)
            return
        database = _DATABASE.match(s.code)
        if database and (database.group("verb") or "").upper() == "CREATE":
            created.add(_unquote(database.group("name")))
        if not (s.code.startswith("\\") or _SET.match(s.code) or database or _HEAD.match(s.code)):
            break
    yield from head
    yield from it


class _Dump:
    """The mapping of one dump: its dumped schema once known."""

    def __init__(self, namespace: str, skipped: Counter[str], extensions: Extensions):
        self.namespace, self.skipped, self.extensions = namespace, skipped, extensions
        self.target = _quote(namespace)
        self.schema: str | None = None
        self.names: re.Pattern[str] | None = None
        self.database: str | None = None  # pg_dump --create: the database it creates and connects to

    def _skip(self, reason: str) -> Iterator[Statement]:
        self.skipped[reason] += 1
        return iter(())

    def _dumped(self, name: str) -> bool:
        """Whether ``name`` (as written) is the dumped schema; the first schema seen becomes it."""
        schema = _unquote(name)
        if self.schema is None and schema not in _BUILTIN_SCHEMAS:
            self.schema = schema
            alternatives = [re.escape(_quote(schema))]
            if re.fullmatch(r"[a-z_][a-z0-9_$]*", schema):
                alternatives.append(f"(?i:{re.escape(schema)})(?![\\w$])")
            self.names = re.compile(rf"(?<![\w$.\"])(?:{'|'.join(alternatives)})(?=\s*\.)")
        return schema == self.schema

    def map(self, s: Statement) -> Iterator[Statement]:
        code = s.code
        if code.startswith("\\"):
            if _META_SKIPPED.match(code):
                return self._skip(SKIP_META)
            m = _CONNECT.match(code)
            return self._skip(SKIP_DATABASE) if m and self._database(m.group("name"), None) else iter((s,))
        m = _DATABASE.match(code)
        if m:
            return (
                self._skip(SKIP_DATABASE) if self._database(m.group("name"), m.group("verb")) else iter((s,))
            )
        m = _SET_CONFIG.match(s.text)
        if m:
            return self._search_path(s, m.group(1))
        if _SESSION_AUTH.match(code):
            return self._skip(SKIP_OWNER)
        m = _SET.match(code)
        if m:
            return self._setting(s, m.group(1).lower(), m.group(2))
        if _OWNER.match(code):
            return self._skip(SKIP_OWNER)
        if _PRIVILEGES.match(code):
            return self._skip(SKIP_PRIVILEGES)
        if _PLPGSQL.match(code):
            return self._skip(SKIP_PLPGSQL)
        for pattern in (_CREATE_SCHEMA, _COMMENT_SCHEMA, _DROP_SCHEMA):
            m = pattern.match(code)
            if m:
                return self._skip(SKIP_SCHEMA) if self._dumped(m.group(1)) else iter((s,))
        if self.schema is None and _NAMES_A_SCHEMA.match(code):
            for q in _QUALIFIER.finditer(code):
                if _unquote(q.group(1)) not in _BUILTIN_SCHEMAS:
                    self._dumped(q.group(1))
                    break
        marker = _MARKER.match(code)
        if marker and self.schema is not None and _unquote(marker.group(1)) == self.schema:
            return self._skip(SKIP_MARKER)
        s = self._rename(s)
        m = _TRIGGER_ALL.match(s.code)
        if m:
            self.skipped[MAPPED_TRIGGERS] += 1
            text = re.sub(r"\bALL(\s*)$", r"USER\1", s.text.rstrip(), flags=re.I)
            return iter((Statement(text, s.line, m.group(1) + "USER", s.data),))
        return iter((s,))

    def _database(self, name: str, verb: str | None) -> bool:
        """Whether ``name`` is the database the dump creates (its first DROP or CREATE DATABASE
        names it: pg_dump --create, with or without --clean)."""
        database = _unquote(name)
        if self.database is None and verb is not None:
            self.database = database
        return database == self.database

    def _search_path(self, s: Statement, value: str) -> Iterator[Statement]:
        """``set_config('search_path', …)`` / ``SET search_path``: skipped when it names nothing but
        the dumped schema (and pg_catalog); otherwise left for the text checks to refuse."""
        names = [n.strip() for n in value.split(",") if n.strip() not in ("", "''", '"$user"', "$user")]
        if all(_unquote(n) in _BUILTIN_SCHEMAS or self._dumped(n) for n in names):
            return self._skip(SKIP_SEARCH_PATH)
        return iter((s,))

    def _setting(self, s: Statement, name: str, value: str) -> Iterator[Statement]:
        if name == "search_path":
            return self._search_path(s, value)
        if name in _CLIENT_SETTINGS:
            return self._skip(SKIP_SESSION)
        self.skipped[MAPPED_SETTINGS] += 1
        local = re.compile(r"^(\s*SET)\s+(?:SESSION\s+)?", re.I)
        return iter(
            (Statement(local.sub(r"\1 LOCAL ", s.text, 1), s.line, local.sub(r"\1 LOCAL ", s.code, 1)),)
        )

    def _rename(self, s: Statement) -> Statement:
        """The dumped schema's qualifiers in the code, and its ``'schema.name'`` sequence literals,
        rewritten to the namespace; but those of an installed extension's objects."""
        names, text = self.names, s.text
        if names is None or self.schema is None:
            return s
        if not names.search(s.code) and not ("'" in text and self.schema in text.lower()):
            return s
        kept = [False]
        out: list[str] = []
        pos = 0
        for m in _TOKENS.finditer(text):
            kind, token = m.lastgroup, m.group(0)
            if kind == "ident":
                q = names.match(text, m.start())
                if q and q.end() == m.end():
                    token = self._qualifier(text, m.end(), token, kept)
            elif kind == "lit" and (
                _REG_CAST.match(text, m.end())
                or _SETVAL_BEFORE.search(text, max(0, m.start() - 64), m.start())
            ):
                token = self._literal(token)
            out.append(self._sub(text, pos, m.start(), kept))
            out.append(token)
            pos = m.end()
        out.append(self._sub(text, pos, len(text), kept))
        renamed = "".join(out)
        if kept[0]:
            self.skipped[kept_names(self.schema)] += 1
        if renamed == text:
            return s
        self.skipped[mapped_names(self.schema)] += 1
        return Statement(renamed, s.line, self._sub(s.code, 0, len(s.code), [False]), s.data)

    def _sub(self, text: str, start: int, end: int, kept: list[bool]) -> str:
        """``text[start:end]`` with the dumped schema's qualifiers rewritten (read in the whole
        text: the name after a qualifier may be the next token)."""
        assert self.names is not None
        out: list[str] = []
        pos = start
        for m in self.names.finditer(text, start):
            if m.start() >= end:
                break
            out.append(text[pos : m.start()])
            out.append(self._qualifier(text, m.end(), m.group(0), kept))
            pos = m.end()
        out.append(text[pos:end])
        return "".join(out)

    def _qualifier(self, text: str, at: int, written: str, kept: list[bool]) -> str:
        """The dumped schema's qualifier ``written`` before ``text[at:]`` (``.name``): the
        namespace, or as written when the name is an installed extension's object there."""
        m = _AFTER_DOT.match(text, at)
        if m and self.schema is not None:
            quoted, word, op = m.groups()
            name = quoted.replace('""', '"') if quoted is not None else word.lower() if word else op
            if self.extensions.is_object(self.schema, name):
                kept[0] = True
                return written
        return self.target

    def _literal(self, token: str) -> str:
        """``'schema.name'`` (a regclass or setval argument) with the dumped schema → the namespace."""
        assert self.names is not None
        inner = token[1:-1].replace("''", "'")
        m = self.names.match(inner)
        if not m or self._qualifier(inner, m.end(), "", [False]) == "":
            return token
        inner = self.target + inner[m.end() :]
        return "'" + inner.replace("'", "''") + "'"
