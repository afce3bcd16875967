"""Database targets: one reachable, version-checked server per dialect.

>>> target = connect("postgresql+psycopg://dbbench:secret@127.0.0.1:55432/dbbench")
>>> target.version_text
'12.22'

:func:`connect` turns every way a connection can fail into a one-line :class:`ConnectionFailed`
with the password removed, and applies dbbench's version policy:

* PostgreSQL 12.x is the reference; any other version works with a warning.
* MySQL 8.0.x is the reference; 8.0.18+ and later lines (same optimizer and tree-format
  ``EXPLAIN ANALYZE``) work with a warning; older servers and MariaDB are refused, because they
  have no tree-format ``EXPLAIN ANALYZE``.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import URL, Engine
from sqlalchemy.exc import DBAPIError, SQLAlchemyError

from dbbench.access import urls
from dbbench.defaults import DIALECT_LABEL, DIALECTS, Dialect
from dbbench.errors import ConnectionFailed, UnsupportedServer

REFERENCE_LINE = {"postgresql": (12,), "mysql": (8, 0)}
MYSQL_MIN_EXPLAIN_ANALYZE = (8, 0, 18)


@dataclass
class Target:
    """A connected database server of one dialect."""

    dialect: Dialect
    url: URL
    engine: Engine = field(repr=False)
    version: tuple[int, ...]
    version_text: str
    warnings: list[str] = field(default_factory=list)
    connect_args: dict[str, Any] = field(default_factory=dict, repr=False)

    def __repr__(self) -> str:  # the URL redacted (any form of its password), as in every output
        return (
            f"Target(dialect={self.dialect!r}, url={self.safe_url}, version={self.version!r}, "
            f"version_text={self.version_text!r}, warnings={self.warnings!r})"
        )

    @property
    def label(self) -> str:
        return DIALECT_LABEL[self.dialect]

    @property
    def safe_url(self) -> str:
        return urls.redact(self.url)

    def dispose(self) -> None:
        self.engine.dispose()

    @contextlib.contextmanager
    def all_or_nothing(self) -> Iterator[Any]:
        """The driver connection for work that must land whole (a seed, a setup): on any error,
        Ctrl-C included, it is rolled back and the connection discarded (it may be mid-COPY);
        otherwise it goes back to the pool. Committing is the caller's last step."""
        raw = self.engine.raw_connection()
        conn: Any = raw.driver_connection
        try:
            yield conn
        except BaseException:
            try:
                # a Ctrl-C between sending a statement and reading its result leaves the connection
                # busy, refusing even this: it is discarded, and the server undoes the transaction
                with contextlib.suppress(Exception):
                    conn.rollback()
            finally:
                raw.invalidate()
            raise  # the error or Ctrl-C itself, never the failed rollback
        raw.close()

    @contextlib.contextmanager
    def loader(self) -> Iterator[Any]:
        """:meth:`all_or_nothing` for the seeder, whose bulk load streams client files. On MySQL a
        connection of its own, the only one with ``local_infile``, which sends nothing but the
        prepared file being loaded (see :class:`dbbench.dialects.mysql.LoaderConnection`)."""
        if self.dialect != "mysql":
            with self.all_or_nothing() as conn:
                yield conn
            return
        from dbbench.dialects import mysql

        try:
            conn = mysql.loader_connection(self.url, self.connect_args)
        except Exception as exc:  # the server went away since connect(): one line, no password
            raise ConnectionFailed(
                f"cannot open the loader connection to {self.label} at "
                f"{_host_port(self.url)}: {urls.scrub(str(exc), self.url)}"
            ) from None
        try:
            yield conn
        except BaseException:
            with contextlib.suppress(Exception):
                conn.rollback()
            raise
        finally:
            with contextlib.suppress(Exception):
                conn.close()


def connect(
    url: str | URL, *, dialect: Dialect | None = None, source: str = "URL", timeout: int = 10
) -> Target:
    """Connect to ``url``, read the server version and check it against the version policy."""
    if isinstance(url, URL):
        url = url.render_as_string(hide_password=False)
    if dialect is None:
        dialect = "mysql" if url.lstrip().startswith("mysql") else "postgresql"
    parsed = urls.parse(url, dialect, source)
    connect_args = {"connect_timeout": timeout}
    if dialect == "mysql":
        # local_infile is the loader's only (Target.loader); a ?local_infile=1 in the URL is overridden.
        # The server's greeting is read within ``timeout`` (another server on that port, which
        # waits for the client to speak first, answers nothing), later reads within READ_TIMEOUT_S.
        connect_args.update(read_timeout=timeout, local_infile=False)
    engine = None
    try:  # SQLAlchemy converts the URL's query values (?read_timeout=) when it creates the engine
        engine = sa.create_engine(parsed, connect_args=dict(connect_args), pool_pre_ping=True)
        if dialect == "mysql" and "read_timeout" not in parsed.query:
            sa.event.listen(engine, "connect", _after_greeting)
        with engine.connect() as conn:
            raw_version = _server_version(conn, dialect)
    except SQLAlchemyError as exc:
        if engine is not None:
            engine.dispose()
        raise ConnectionFailed(describe_failure(exc, parsed, dialect)) from None
    except (TypeError, ValueError) as exc:
        # PyMySQL refuses an unknown keyword (an unknown ?key= of the URL) with a TypeError, and a
        # value it cannot convert (?read_timeout=abc) with a ValueError: either is the URL's query
        if engine is not None:
            engine.dispose()
        keys = ", ".join(sorted(parsed.query)) or "none"
        raise ConnectionFailed(
            f"{DIALECT_LABEL[dialect]} at {_host_port(parsed)}: the driver does not accept a "
            f"query parameter of the {source} (given: {keys}): {urls.scrub(str(exc), parsed)}"
        ) from None
    version, text = _parse_version(raw_version, dialect, parsed)
    if dialect == "mysql":  # the loader's own connections (Target.loader) go to a server known to be MySQL
        connect_args["read_timeout"] = max(timeout, MYSQL_READ_TIMEOUT_S)
    target = Target(dialect, parsed, engine, version, text, connect_args=connect_args)
    target.warnings.extend(_version_warnings(target))
    return target


MYSQL_READ_TIMEOUT_S = 60


def _after_greeting(dbapi_connection: Any, _record: Any) -> None:
    """A PyMySQL connection, once the server greeted it: reads wait up to MYSQL_READ_TIMEOUT_S."""
    dbapi_connection._read_timeout = MYSQL_READ_TIMEOUT_S  # PyMySQL applies it at the next read


def _server_version(conn: sa.Connection, dialect: Dialect) -> str:
    if dialect == "postgresql":
        return conn.exec_driver_sql("SHOW server_version").scalar_one()
    return conn.exec_driver_sql("SELECT VERSION()").scalar_one()


def _parse_version(raw: str, dialect: Dialect, url: URL) -> tuple[tuple[int, ...], str]:
    where = f"{DIALECT_LABEL[dialect]} at {_host_port(url)}"
    if dialect == "mysql" and "mariadb" in raw.lower():
        raise UnsupportedServer(
            f"{where} is MariaDB {raw.split('-')[0]}; dbbench needs MySQL 8.0.18+ "
            "(tree-format EXPLAIN ANALYZE)"
        )
    match = re.match(r"(\d+)(?:\.(\d+))?(?:\.(\d+))?", raw)
    if not match:
        raise UnsupportedServer(f"{where} reported an unreadable version {raw!r}")
    version = tuple(int(p) for p in match.groups() if p is not None)
    if dialect == "mysql" and version < MYSQL_MIN_EXPLAIN_ANALYZE:
        raise UnsupportedServer(
            f"{where} is MySQL {match.group(0)}; EXPLAIN ANALYZE needs MySQL 8.0.18 or later"
        )
    return version, match.group(0)


def _version_warnings(target: Target) -> list[str]:
    line = REFERENCE_LINE[target.dialect]
    if target.version[: len(line)] == line:
        return []
    ref = ".".join(map(str, line)) + ".x"
    return [
        f"{target.label} {target.version_text} is not the reference {target.label} {ref}; "
        "plans and timings may differ from the reference results"
    ]


def _host_port(url: URL) -> str:
    host = url.host or url.query.get("host") or "localhost"
    return f"{host}:{url.port}" if url.port else str(host)


_NOISE = re.compile(
    r'^(connection failed: |connection to server at "[^"]*" \([^)]*\), port \d+ failed: |'
    r'connection to server at "[^"]*", port \d+ failed: )'
)


def describe_failure(exc: SQLAlchemyError, url: URL, dialect: Dialect) -> str:
    """One line saying which server could not be used and why, without the password."""
    where = f"{DIALECT_LABEL[dialect]} at {_host_port(url)}"
    orig = exc.orig if isinstance(exc, DBAPIError) else exc
    args: tuple[object, ...] = getattr(orig, "args", ())
    if dialect == "mysql" and len(args) >= 2 and isinstance(args[0], int):
        code, text = args[0], str(args[1])
        if code in (1045, 1130):
            return f"{where} rejected user {url.username!r}: wrong password or no such user"
        if code in (2003, 2013):
            if code == 2013 or "timed out" in text.lower():  # connected, and nothing came back
                return (
                    f"cannot connect to {where}: no MySQL greeting came back (is that port a MySQL "
                    "server's? PostgreSQL's, for one, waits for the client to speak first)"
                )
            reason = "connection refused" if "111" in text or "refused" in text.lower() else text
            return f"cannot connect to {where}: {urls.scrub(reason, url)}"
        if code == 1049:
            return f"{where} has no database {url.database!r}"
        return f"{where}: {urls.scrub(text, url)} (MySQL error {code})"
    text = str(orig).strip().splitlines()[0] if str(orig).strip() else type(orig).__name__
    for _ in range(2):
        text = _NOISE.sub("", text)
    low = text.lower()
    if "password authentication failed" in low or "no password supplied" in low:
        return f"{where} rejected user {url.username!r}: wrong password or no such user"
    if "connection refused" in low:
        return f"cannot connect to {where}: connection refused"
    if "does not exist" in low and "database" in low:
        return f"{where} has no database {url.database!r}"
    return f"cannot use {where}: {urls.scrub(text, url)}"


def open_targets(
    urls_given: dict[Dialect, str | None], only: Dialect | None = None, *, home=None
) -> list[Target]:
    """Connect to one target per dialect: the URL given, else the env var, else the local server.

    ``only`` skips the other dialect. Raises :class:`ConnectionFailed` naming the first target that
    cannot be used (and disposes of those already opened).
    """
    from dbbench import servers  # local: servers is optional machinery for the library user

    targets: list[Target] = []
    try:
        for dialect in DIALECTS:
            if only and dialect != only:
                continue
            option = urls.URL_OPTIONS[dialect]
            raw, source = urls_given.get(dialect), option
            if raw is None and (raw := urls.from_env(dialect)) is not None:
                source = urls.ENV_VARS[dialect]
            if raw is None and (raw := servers.local_url(dialect, home=home)) is not None:
                source = f"the local {DIALECT_LABEL[dialect]} server"
            if raw is None:
                raise ConnectionFailed(
                    f"no {DIALECT_LABEL[dialect]} target: pass {option}, set "
                    f"{urls.ENV_VARS[dialect]}, or start the local servers with `dbbench servers up`"
                )
            targets.append(connect(raw, dialect=dialect, source=source))
    except BaseException:
        for t in targets:
            t.dispose()
        raise
    return targets
