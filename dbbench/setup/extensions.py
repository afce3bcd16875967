"""PostgreSQL extensions a setup names, and the ones the server already has.

Only a superuser may create an extension, and it lives outside the namespace: dbbench never
creates, alters or drops one. Setup SQL that asks for an extension (``CREATE EXTENSION [IF NOT
EXISTS] x [WITH] [SCHEMA s]``, as every dump and Rails ``structure.sql`` that uses one does) is
read against what the server has, read once per setup (:func:`read`, bounded):

* an extension the server already has: its ``CREATE EXTENSION``, ``COMMENT ON EXTENSION`` and
  ``DROP EXTENSION [IF EXISTS]`` (``pg_dump --clean``) are skipped, each counted under
  :func:`installed_reason`, and its schema follows the namespace in the setup's ``search_path``
  (:meth:`Extensions.search_path`), so that unqualified names of its functions, operators and
  types resolve; in a dump, names qualified with the dumped schema that are objects of an
  extension installed there (``public.gin_trgm_ops``, ``OPERATOR(public.%)``,
  ``public.similarity(…)``) are left as they are (:mod:`dbbench.setup.pgdump`), and the text checks
  read them as what they are, a read (:mod:`dbbench.setup.references`);
* one it does not have: refused by the text checks, saying to have a superuser install it;
* ``dbbench validate`` reads no server (:func:`unread`): it leaves the statement to the seed,
  counted under :func:`unread_reason`.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from dbbench.setup.split import SetupError, Statement

# The most extension objects one server may have for a setup to read them (a server with every
# contrib extension installed has about 4,000).
MAX_OBJECTS = 100_000

_IDENT = r'(?:"(?:[^"]|"")+"|[A-Za-z_][\w$]*)'
# What a statement does to an extension: CREATE EXTENSION [IF NOT EXISTS] x [WITH] [SCHEMA s]
# [VERSION v] [CASCADE], COMMENT ON EXTENSION x IS …, DROP EXTENSION [IF EXISTS] x [CASCADE|RESTRICT]
_CREATE = re.compile(
    rf"^\s*CREATE\s+EXTENSION\s+(?:IF\s+NOT\s+EXISTS\s+)?(?P<name>{_IDENT})"
    rf"(?:\s+WITH)?(?:\s+SCHEMA\s+(?P<schema>{_IDENT}))?"
    rf"(?:\s+VERSION\s+(?:{_IDENT}|''))?(?:\s+CASCADE)?\s*$",
    re.I,
)
_COMMENT = re.compile(rf"^\s*COMMENT\s+ON\s+EXTENSION\s+(?P<name>{_IDENT})\s+IS\b", re.I)
_DROP = re.compile(
    rf"^\s*DROP\s+EXTENSION\s+(?:IF\s+EXISTS\s+)?(?P<name>{_IDENT})(?:\s+(?:CASCADE|RESTRICT))?\s*$", re.I
)
# plpgsql is the dump adapter's (built into the server: pgdump.SKIP_PLPGSQL)
_BUILTIN = frozenset({"plpgsql"})


def installed_reason(name: str, schema: str) -> str:
    return (
        f"extension {name} already installed on the server (in schema {schema}): its CREATE / COMMENT / "
        "DROP EXTENSION skipped"
    )


def unread_reason(name: str) -> str:
    return (
        f"CREATE / COMMENT / DROP EXTENSION {name} left to the seed (validate reads no server): skipped "
        "when the server has the extension installed, refused otherwise"
    )


def unquote(name: str) -> str:
    return name[1:-1].replace('""', '"') if name.startswith('"') else name.lower()


@dataclass
class Extensions:
    """The extensions a PostgreSQL server has (:func:`read`), and those the setup asked for."""

    installed: dict[str, str]  # extension -> the schema it is installed in
    objects: dict[str, frozenset[str]]  # schema -> names of the extensions' objects in it
    known: bool = True  # False: no server was read (validate)
    # the installed extensions the setup SQL asked for (-> their schema), filled as it is read
    asked: dict[str, str] = field(default_factory=dict)

    def is_object(self, schema: str, name: str) -> bool:
        """Whether ``name`` (as the server spells it) in ``schema`` is an installed extension's
        function, operator, operator class or family, or type."""
        return name in self.objects.get(schema, ())

    def search_path(self, namespace: str) -> list[str]:
        """The setup's search_path: the namespace, then the schemas of the installed extensions
        the setup SQL asked for (each once, in the order asked)."""
        out = [namespace]
        for schema in self.asked.values():
            if schema not in out:
                out.append(schema)
        return out

    def skip(self, statements: Iterable[Statement], skipped: Counter[str]) -> Iterator[Statement]:
        """``statements`` without the ones about an extension the server has (or, not known, any
        extension): counted in ``skipped``."""
        for s in statements:
            m = _CREATE.match(s.code) or _COMMENT.match(s.code) or _DROP.match(s.code)
            name = unquote(m.group("name")) if m else ""
            if not m or name in _BUILTIN:
                yield s
            elif not self.known:
                skipped[unread_reason(name)] += 1
            elif name in self.installed:
                schema = self.installed[name]
                self.asked.setdefault(name, schema)
                skipped[installed_reason(name, schema)] += 1
            else:
                yield s


def none() -> Extensions:
    """A server with no extension (what a setup read without one assumes)."""
    return Extensions({}, {})


def unread() -> Extensions:
    """No server read (``dbbench validate``): what a setup does to extensions is left to the seed."""
    return Extensions({}, {}, known=False)


# Objects of an extension (pg_depend deptype 'e') that setup SQL names: functions, operators,
# operator classes and families, types (and their array types).
_OBJECTS = """
SELECT n.nspname, o.name FROM (
    SELECT p.pronamespace AS ns, p.proname::text AS name FROM pg_catalog.pg_proc p
     WHERE p.oid IN (SELECT objid FROM pg_catalog.pg_depend WHERE deptype = 'e'
                       AND classid = 'pg_catalog.pg_proc'::regclass)
    UNION SELECT o.oprnamespace, o.oprname::text FROM pg_catalog.pg_operator o
     WHERE o.oid IN (SELECT objid FROM pg_catalog.pg_depend WHERE deptype = 'e'
                       AND classid = 'pg_catalog.pg_operator'::regclass)
    UNION SELECT c.opcnamespace, c.opcname::text FROM pg_catalog.pg_opclass c
     WHERE c.oid IN (SELECT objid FROM pg_catalog.pg_depend WHERE deptype = 'e'
                       AND classid = 'pg_catalog.pg_opclass'::regclass)
    UNION SELECT f.opfnamespace, f.opfname::text FROM pg_catalog.pg_opfamily f
     WHERE f.oid IN (SELECT objid FROM pg_catalog.pg_depend WHERE deptype = 'e'
                       AND classid = 'pg_catalog.pg_opfamily'::regclass)
    UNION SELECT t.typnamespace, t.typname::text FROM pg_catalog.pg_type t
     WHERE t.oid IN (SELECT objid FROM pg_catalog.pg_depend WHERE deptype = 'e'
                       AND classid = 'pg_catalog.pg_type'::regclass)
        OR t.typelem IN (SELECT objid FROM pg_catalog.pg_depend WHERE deptype = 'e'
                           AND classid = 'pg_catalog.pg_type'::regclass)
) o JOIN pg_catalog.pg_namespace n ON n.oid = o.ns
WHERE n.nspname NOT IN ('pg_catalog', 'information_schema')
LIMIT %s
"""


def read_installed(conn) -> Extensions:
    """The extensions installed on the server ``conn`` (a psycopg connection) is logged in to,
    and their objects' names per schema (at most :data:`MAX_OBJECTS`; more is refused)."""
    with conn.cursor() as cur:
        cur.execute(
            "SELECT e.extname, n.nspname FROM pg_catalog.pg_extension e "
            "JOIN pg_catalog.pg_namespace n ON n.oid = e.extnamespace ORDER BY e.extname LIMIT %s",
            (MAX_OBJECTS,),
        )
        installed = {str(name): str(schema) for name, schema in cur.fetchall()}
        cur.execute(_OBJECTS, (MAX_OBJECTS + 1,))
        rows = cur.fetchall()
    conn.rollback()  # read only: end the transaction the reads opened
    if len(rows) > MAX_OBJECTS:
        raise SetupError(
            f"the server's extensions have more than {MAX_OBJECTS:,} functions, operators and types: "
            "more than a setup reads"
        )
    objects: dict[str, set[str]] = {}
    for schema, name in rows:
        objects.setdefault(str(schema), set()).add(str(name))
    return Extensions(installed, {s: frozenset(names) for s, names in objects.items()})
