"""MySQL specifics: a dbbench-owned database, LOAD DATA LOCAL loading, canonical row text."""

from __future__ import annotations

import contextlib
import json as _json
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import pymysql

from dbbench.dialects import common
from dbbench.dialects.common import commit, execute  # noqa: F401 (commit: dialect API)
from dbbench.dialects.contract import SqlSyntax
from dbbench.dialects.encode import tsv
from dbbench.dialects.mysql_plan import alias_map, json_accesses, parse_plan

NAME = "mysql"
NAMESPACE_KIND = "database"
META = "dbbench_meta"
# DDL commits implicitly, so after the index step other sessions see the loaded rows.
LOAD_COMMITTED_BEFORE_VERIFY = True


def quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def namespace_state(conn, ns: str) -> str:
    return common.namespace_state(
        conn,
        ("SELECT 1 FROM information_schema.schemata WHERE schema_name = %s", (ns,)),
        ("SELECT 1 FROM information_schema.tables WHERE table_schema = %s AND table_name = %s", (ns, META)),
        _read_meta(ns),
    )


def begin_reload(conn, ns: str, meta: dict[str, str]) -> None:
    """Replace the owned database. MySQL DDL commits implicitly, so the new database is marked
    ``loading`` first and only marked ``complete`` at the very end: an interrupted seed leaves a
    clearly incomplete dataset that the next seed replaces and that `explain` refuses."""
    with conn.cursor() as cur:
        cur.execute(f"DROP DATABASE IF EXISTS {quote(ns)}")
        cur.execute(f"CREATE DATABASE {quote(ns)} CHARACTER SET utf8mb4 COLLATE utf8mb4_bin")
        cur.execute(f"USE {quote(ns)}")
        cur.execute(f"CREATE TABLE {META} (`key` varchar(64) PRIMARY KEY, value longtext NOT NULL)")
    write_meta(conn, ns, {**meta, "owner": "dbbench", "state": "loading"})
    conn.commit()


def drop_namespace(conn, ns: str) -> None:
    """Drop ``ns`` if it is dbbench's (complete or not); anything else is left alone."""
    common.drop_if_ours(conn, namespace_state(conn, ns), f"DROP DATABASE {quote(ns)}")


def use(conn, ns: str) -> None:
    execute(conn, [f"USE {quote(ns)}"])


def write_meta(conn, ns: str, meta: dict[str, str]) -> None:
    common.write_meta(
        conn,
        f"INSERT INTO {quote(ns)}.{META} (`key`, value) VALUES (%s, %s) "
        "ON DUPLICATE KEY UPDATE value = VALUES(value)",
        meta,
    )


def _read_meta(ns: str) -> str:
    return f"SELECT `key`, value FROM {quote(ns)}.{META}"


def read_meta(conn, ns: str) -> dict[str, str]:
    return common.read_meta(conn, _read_meta(ns))


def _bytes(value: bytes) -> str:
    return value.hex()


encode_bytes = _bytes  # one binary value as LOAD DATA text, UNHEX-ed on the way in (dbbench.volume)


def encode(rows, kinds: list[str]) -> str:
    return tsv(rows, kinds, _bytes)


class LoaderConnection(pymysql.connections.Connection):
    """The seeder's own connection: the only one dbbench opens with ``local_infile``, and it sends
    a client file only when the server asks for the one prepared file :func:`bulk_load` is loading
    at that moment. Any other request (a ``LOAD DATA LOCAL`` in user SQL, or a hostile server
    asking for ``/etc/shadow``) is answered with no data and fails. Every other connection dbbench
    opens has ``local_infile`` off, so the server may not ask at all."""

    allowed: str | None = None
    stream: Iterable[bytes] | None = None  # the content of ``allowed`` when it is a stream, not a file

    def _read_query_result(self, unbuffered: bool = False) -> int:
        self._result = None
        result = _PreparedFileResult(self)
        if unbuffered:
            result.init_unbuffered_query()
        else:
            result.read()
        self._result = result
        if result.server_status is not None:
            self.server_status = result.server_status
        return result.affected_rows


class _PreparedFileResult(pymysql.connections.MySQLResult):
    def _read_load_local_packet(self, first_packet) -> None:
        asked = pymysql.protocol.LoadLocalPacketWrapper(first_packet).filename
        name = asked.decode("utf-8", "replace") if isinstance(asked, bytes) else str(asked)
        if name != getattr(self.connection, "allowed", None):
            conn = self.connection
            conn.write_packet(b"")  # no data: the protocol goes on, nothing is read
            conn._read_packet()
            raise pymysql.err.OperationalError(
                3948,
                f"refused the server's request for the client file {name!r}: dbbench sends only "
                "the prepared file it is loading",
            )
        stream = getattr(self.connection, "stream", None)
        if stream is None:
            super()._read_load_local_packet(first_packet)
            return
        self._send_stream(stream)

    def _send_stream(self, stream: Iterable[bytes]) -> None:
        """The chunks as the file's content (in packets of at most 1 MiB), then the end of it; the
        server's answer is read even when the stream fails, so the connection stays usable."""
        conn = self.connection
        size = min(conn.max_allowed_packet, 1 << 20)
        try:
            for chunk in stream:
                view = memoryview(chunk)
                for at in range(0, len(view), size):
                    conn.write_packet(view[at : at + size])
        finally:
            conn.write_packet(b"")
            ok = conn._read_packet()
        if not ok.is_ok_packet():
            raise pymysql.err.OperationalError(2014, "Commands Out of Sync")
        self._read_ok_packet(ok)


def loader_connection(url, connect_args: dict) -> LoaderConnection:
    """A :class:`LoaderConnection` to the server of ``url`` (a SQLAlchemy URL)."""
    from sqlalchemy.dialects.mysql.pymysql import MySQLDialect_pymysql

    _, params = MySQLDialect_pymysql().create_connect_args(url)
    return LoaderConnection(**{**params, **connect_args, "local_infile": True})


def _load_sql(table: str, columns: list[str], binary: frozenset[str]) -> str:
    """LOAD DATA LOCAL INFILE of tab-separated text into ``columns``; hex columns through UNHEX."""
    targets = [f"@{c}" if c in binary else c for c in columns]
    sets = [f"{c} = UNHEX(@{c})" for c in columns if c in binary]
    return f"LOAD DATA LOCAL INFILE %s INTO TABLE {table} CHARACTER SET utf8mb4 ({', '.join(targets)})" + (
        f" SET {', '.join(sets)}" if sets else ""
    )


def _load(conn, table: str, sql: str, name: str, stream: Iterable[bytes] | None = None) -> None:
    """Run a LOAD DATA LOCAL ``sql`` that asks for the client file ``name`` (the only one
    :class:`LoaderConnection` sends; ``stream``: its content as it comes); refused when it warns."""
    with conn.cursor() as cur:
        conn.allowed, conn.stream = name, stream
        try:
            cur.execute(sql, (name,))
        finally:
            conn.allowed = conn.stream = None
        cur.execute("SHOW WARNINGS LIMIT 3")  # right after the load: its own warnings
        warned = cur.fetchall()
        if warned:
            raise RuntimeError(f"LOAD DATA into {table} warned: {warned}")


def bulk_load(conn, table) -> None:
    """LOAD DATA LOCAL INFILE from the prepared file; hex columns go through UNHEX. ``conn`` must
    be a :class:`LoaderConnection`, which sends this one file and nothing else."""
    _load(
        conn,
        table.name,
        _load_sql(table.name, table.columns, table.binary_columns),
        str(table.files["mysql"]),
    )


def stream_load(conn, table: str, columns: list[str], binary: frozenset[str], chunks) -> None:
    """LOAD DATA LOCAL of ``chunks`` (tab-separated text, binary columns as hex) as they come, on
    a :class:`LoaderConnection`: the server's request for the stream's own name is answered with
    the chunks, any other request refused."""
    _load(conn, table, _load_sql(table, columns, binary), f"dbbench-stream:{table}", chunks)


def update_from(table: str, source: str, keys: list[str], columns: list[str]) -> str:
    """UPDATE ``table`` with the ``columns`` of the ``source`` row of the same ``keys``."""
    sets = ", ".join(f"t.{c} = s.{c}" for c in columns)
    on = " AND ".join(f"t.{k} = s.{k}" for k in keys)
    return f"UPDATE {table} AS t JOIN {source} AS s ON {on} SET {sets}"


def empty_tables(conn, tables: list[str]) -> None:
    """Every row of ``tables`` gone: TRUNCATE each, foreign keys among them not checked meanwhile
    (InnoDB refuses to truncate a referenced table otherwise)."""
    with conn.cursor() as cur:
        cur.execute("SET SESSION foreign_key_checks = 0")
        try:
            for t in tables:
                cur.execute(f"TRUNCATE TABLE {t}")
        finally:
            cur.execute("SET SESSION foreign_key_checks = 1")


_FOREIGN_KEYS = """SELECT k.table_name, k.constraint_name, k.referenced_table_schema, k.referenced_table_name,
       GROUP_CONCAT(k.column_name ORDER BY k.ordinal_position SEPARATOR '\\t'),
       GROUP_CONCAT(k.referenced_column_name ORDER BY k.ordinal_position SEPARATOR '\\t'),
       r.update_rule, r.delete_rule
  FROM information_schema.key_column_usage k JOIN information_schema.referential_constraints r
    ON r.constraint_schema = k.constraint_schema AND r.constraint_name = k.constraint_name
   AND r.table_name = k.table_name
 WHERE k.table_schema = DATABASE() AND k.table_name IN ({})
 GROUP BY k.table_name, k.constraint_name, k.referenced_table_schema, k.referenced_table_name,
          r.update_rule, r.delete_rule"""


def defer_constraints(conn, tables: list[str], early: list[str]) -> Callable[[Any], None]:
    """Before a bulk load into ``tables`` (of the database in use), of which ``early`` hold values
    that reference rows loaded after them: the foreign keys of ``early`` dropped (InnoDB checks the
    others row by row, and its indexes stay: its foreign keys need them). Returns
    ``restore(conn)``: commits the load (MySQL's DDL commits anyway; the namespace is marked
    complete only afterwards), adds those foreign keys again and checks each over all its rows at
    once (a row referencing nothing fails the fill)."""
    if not early:
        return lambda conn: None
    with conn.cursor() as cur:
        cur.execute(_FOREIGN_KEYS.format(", ".join(["%s"] * len(early))), early)
        keys = cur.fetchall()
        for table, name, *_ in keys:
            cur.execute(f"ALTER TABLE {quote(table)} DROP FOREIGN KEY {quote(name)}")

    def restore(conn) -> None:
        conn.commit()
        with conn.cursor() as cur:
            cur.execute("SET SESSION foreign_key_checks = 0")  # added back as they were, then checked
            try:
                for table, name, schema, parent, columns, referenced, on_update, on_delete in keys:
                    cols = ", ".join(quote(c) for c in columns.split("\t"))
                    refs = ", ".join(quote(r) for r in referenced.split("\t"))
                    cur.execute(
                        f"ALTER TABLE {quote(table)} ADD CONSTRAINT {quote(name)} FOREIGN KEY ({cols}) "
                        f"REFERENCES {quote(schema)}.{quote(parent)} ({refs}) "
                        f"ON UPDATE {on_update} ON DELETE {on_delete}"
                    )
            finally:
                cur.execute("SET SESSION foreign_key_checks = 1")
            for table, name, schema, parent, columns, referenced, *_ in keys:
                cols, refs = columns.split("\t"), referenced.split("\t")
                present = " AND ".join(f"c.{quote(c)} IS NOT NULL" for c in cols)
                match = " AND ".join(f"p.{quote(r)} = c.{quote(c)}" for c, r in zip(cols, refs))
                cur.execute(
                    f"SELECT COUNT(*) FROM {quote(table)} AS c WHERE {present} AND NOT EXISTS "
                    f"(SELECT 1 FROM {quote(schema)}.{quote(parent)} AS p WHERE {match})"
                )
                dangling = cur.fetchone()[0]
                if dangling:
                    raise pymysql.err.IntegrityError(
                        1452,
                        f"{dangling:,} rows of {table} reference no row of {parent} "
                        f"(foreign key {name}: {', '.join(cols)})",
                    )

    return restore


_COLUMNS = """SELECT c.table_name, c.column_name, c.data_type, c.column_type, c.is_nullable = 'YES',
       c.character_maximum_length, c.numeric_precision, c.numeric_scale,
       c.extra LIKE '%%GENERATED%%' AND c.extra <> 'DEFAULT_GENERATED', c.extra LIKE '%%auto_increment%%'
  FROM information_schema.columns c JOIN information_schema.tables t
    ON t.table_schema = c.table_schema AND t.table_name = c.table_name AND t.table_type = 'BASE TABLE'
 WHERE c.table_schema = %s ORDER BY c.table_name, c.ordinal_position"""


def _enum_labels(column_type: str) -> list[str] | None:
    """The labels of ``enum('a','b')``, else None."""
    if not column_type.lower().startswith("enum("):
        return None
    import re

    return [m.replace("''", "'") for m in re.findall(r"'((?:[^']|'')*)'", column_type)]


def schema_columns(conn, ns: str) -> list[tuple]:
    """(table, column, type, nullable, max length, precision, scale, generated, auto, enum labels)
    of every column of ``ns``'s tables; ``tinyint(1)`` is ``boolean``."""
    with conn.cursor() as cur:
        cur.execute(_COLUMNS, (ns,))
        out = []
        for table, column, dtype, ctype, *rest in cur.fetchall():
            kind = "boolean" if str(ctype).lower().startswith("tinyint(1)") else str(dtype).lower()
            numbers = [None if v is None else int(v) for v in rest[1:4]]
            out.append(
                (
                    table,
                    column,
                    kind,
                    bool(rest[0]),
                    *numbers,
                    bool(rest[4]),
                    bool(rest[5]),
                    _enum_labels(str(ctype)),
                )
            )
        return out


_KEYS = """SELECT k.table_name, k.constraint_name, t.constraint_type, k.column_name,
       k.referenced_table_name, k.referenced_column_name
  FROM information_schema.key_column_usage k JOIN information_schema.table_constraints t
    ON t.constraint_schema = k.constraint_schema AND t.constraint_name = k.constraint_name
   AND t.table_name = k.table_name
 WHERE k.table_schema = %s ORDER BY k.table_name, k.constraint_name, k.ordinal_position"""
_CHECKS = """SELECT t.table_name, c.constraint_name, c.check_clause FROM information_schema.check_constraints c
  JOIN information_schema.table_constraints t ON t.constraint_schema = c.constraint_schema
   AND t.constraint_name = c.constraint_name AND t.constraint_type = 'CHECK'
 WHERE c.constraint_schema = %s ORDER BY 1, 2"""
_KEY_KINDS = {"PRIMARY KEY": "primary", "UNIQUE": "unique", "FOREIGN KEY": "foreign"}


def schema_keys(conn, ns: str) -> list[tuple]:
    """(table, name, primary|unique|foreign|check, columns, referenced table, referenced columns,
    definition) of every key, unique index and check constraint of ``ns``'s tables."""
    keys: dict[tuple[str, str], list] = {}
    with conn.cursor() as cur:
        cur.execute(_KEYS, (ns,))
        for table, name, kind, column, ref, ref_column in cur.fetchall():
            entry = keys.setdefault((table, name), [table, name, _KEY_KINDS[kind], [], ref, [], ""])
            entry[3].append(column)
            if ref_column is not None:
                entry[5].append(ref_column)
        cur.execute(_CHECKS, (ns,))
        checks = [(t, name, "check", (), None, (), f"CHECK {clause}") for t, name, clause in cur.fetchall()]
    return [(t, n, k, tuple(c), r, tuple(rc), d) for t, n, k, c, r, rc, d in keys.values()] + checks


def freeze_statistics(conn, tables: list[str]) -> None:
    """Persistent statistics that only an explicit ANALYZE changes. InnoDB otherwise recalculates a
    table's statistics in the background once 10 % of its rows changed -- and the rolled-back
    writes of a measurement count (a cascade DELETE of one of 2 stages removes 50,000 bindings
    before the rollback), so a run would re-sample the statistics the next run plans with."""
    with conn.cursor() as cur:
        # ALTER TABLE checks the columns' defaults again under this session's sql_mode: a table a
        # dump created under its own SQL_MODE (WordPress: DEFAULT '0000-00-00 00:00:00') would be
        # refused by the server's NO_ZERO_DATE; the options changed here touch no column.
        cur.execute("SELECT @@SESSION.sql_mode")
        (mode,) = cur.fetchone()
        lenient = ",".join(m for m in mode.split(",") if m not in ("NO_ZERO_DATE", "NO_ZERO_IN_DATE"))
        if lenient != mode:
            cur.execute("SET SESSION sql_mode = %s", (lenient,))
        try:
            for t in tables:
                cur.execute(f"ALTER TABLE {t} STATS_PERSISTENT = 1, STATS_AUTO_RECALC = 0")
        finally:
            if lenient != mode:
                cur.execute("SET SESSION sql_mode = %s", (mode,))


def analyze(conn, tables: list[str]) -> None:
    """Freeze the owned tables' statistics (see :func:`freeze_statistics`), then ANALYZE them."""
    freeze_statistics(conn, tables)
    execute(conn, ["ANALYZE TABLE " + ", ".join(tables)])  # its result rows are read with it


def restore_statistics(conn, ns: str) -> bool:
    """Back to the persisted statistics of every table in ``ns``. InnoDB decrements its in-memory
    row count on every DELETE and a ROLLBACK does not restore it: after one rolled-back cascade
    of the orphan-stage shape, group_snapshot_stage counts 0 rows instead of 2 (group_binding
    2,000 fewer per run) and the next plan flips from a covering range scan to a covering index
    scan. Closing the table's last handle (FLUSH TABLES) makes InnoDB reload the persisted values
    exactly; ANALYZE would re-sample them. Returns False when the account may not flush
    (no RELOAD privilege): the drift then stays until the next ANALYZE."""
    import pymysql

    with conn.cursor() as cur:
        cur.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = %s "
            "AND table_type = 'BASE TABLE'",
            (ns,),
        )
        tables = [f"{quote(ns)}.{quote(r[0])}" for r in cur.fetchall()]
        if not tables:
            return True
        try:
            cur.execute("FLUSH TABLES " + ", ".join(tables))
        except pymysql.err.OperationalError:
            return False
    return True


def statistics_frozen(conn, ns: str) -> dict[str, bool]:
    """Table -> whether automatic statistics recalculation is off (STATS_AUTO_RECALC=0)."""
    with conn.cursor() as cur:
        cur.execute(
            "SELECT table_name, create_options FROM information_schema.tables "
            "WHERE table_schema = %s AND table_type = 'BASE TABLE' AND table_name <> %s",
            (ns, META),
        )
        return {name: "stats_auto_recalc=0" in (opts or "").lower() for name, opts in cur.fetchall()}


_CANONICAL = {
    "bytes": "LOWER(HEX({c}))",
    "datetime": "DATE_FORMAT({c}, '%Y-%m-%d %H:%i:%s.%f')",
    "bool": "CAST({c} AS SIGNED)",
    "text": "{c}",
}


def canonical(column: str, kind: str) -> str:
    return common.canonical(column, kind, _CANONICAL, "'\\\\N'")


def fingerprint_sql(table: str, row_text: str) -> str:
    return (
        f"SELECT COUNT(*), COALESCE(SUM(CAST(CONV(SUBSTR(SHA2({row_text}, 256), 1, 15), 16, 10) AS UNSIGNED)), 0) "
        f"FROM {table}"
    )


def concat(parts: list[str]) -> str:
    return "CONCAT_WS('|', " + ", ".join(parts) + ")"


# -- setup SQL (dbbench.setup.loader) ---------------------------------------------------------------
SETUP_SYNTAX = SqlSyntax(
    delimiter_lines=True, hash_comments=True, backslash_escapes=True, conditional_comments=True
)
COMMIT_EACH_SETUP_STATEMENT = True  # its DDL commits implicitly anyway
COLUMN_TYPE = "column_type"  # tinyint(1) is a bool


def run_setup_statement(conn, text: str, rows: Iterable[str] | None = None) -> None:
    with conn.cursor() as cur:  # ``rows``: never (MySQL setup SQL has no COPY data)
        # bytes: a dump's binary columns that are not UTF-8 go back as they were read (surrogateescape)
        cur.execute(text.encode("utf-8", "surrogateescape"))
        while cur.nextset():  # a CALL returns a result set per SELECT in the procedure
            pass


def outside_relations(conn, ns: str) -> dict[int, str]:
    """Nothing to compare against: without the namespace user a MySQL setup is not verified
    (each statement commits), and with it the user's grants cover its database only."""
    return {}


def outside_changes(conn, ns: str, before: dict[int, str]) -> list[str]:
    """Nothing found (see :func:`outside_relations`)."""
    return []


# -- EXPLAIN (the plan text is read by dbbench.dialects.mysql_plan) ------------------------------


def _json_version_1(cur) -> None:
    """MySQL 8.3+ may default to JSON format version 2, which names no key for const tables;
    version 1 (the only one on 8.0) does."""
    import contextlib

    import pymysql

    with contextlib.suppress(pymysql.err.Error):  # 8.0: no such variable, and version 1 is the format
        cur.execute("SET SESSION explain_json_format_version = 1")


TIMEOUT_ERRORS = (3024, 1317)  # max_execution_time exceeded / query interrupted


def _is_timeout(exc: BaseException) -> bool:
    return isinstance(exc, pymysql.err.OperationalError) and bool(exc.args) and exc.args[0] in TIMEOUT_ERRORS


def _explain_frame(conn, timeout_ms: int):
    """:func:`~dbbench.dialects.common.explain_frame` with the sample's ``max_execution_time``;
    yields the cursor and the thread performance_schema knows this session by (None: it is off).
    Inside the caller's open transaction (a test's uncommitted rows) BEGIN would commit them: the
    frame uses a savepoint then."""

    @contextlib.contextmanager
    def limits(cur) -> Iterator[int | None]:
        cur.execute("SELECT @@SESSION.max_execution_time, PS_CURRENT_THREAD_ID()")
        previous, thread = cur.fetchone()  # the caller's setting, restored after the sample
        cur.execute(f"SET SESSION max_execution_time = {int(timeout_ms)}")
        try:
            yield None if thread is None else int(thread)
        finally:  # a session setting: the rollback does not restore it
            execute(conn, [f"SET SESSION max_execution_time = {int(previous)}"])

    return common.explain_frame(
        conn,
        conn.cursor(),
        in_transaction=bool((conn.server_status or 0) & 1),  # SERVER_STATUS_IN_TRANS
        begin=lambda cur: conn.begin(),
        limits=limits,
        is_timeout=_is_timeout,
        timeout=f"max_execution_time of {timeout_ms} ms",
    )


def run_explain(conn, sql: str, params: dict, timeout_ms: int, settings: dict | None = None):
    """:func:`run_sample` as (raw plan, tree, executor ms)."""
    sample = run_sample(conn, sql, params, timeout_ms, settings)
    return sample.raw, sample.tree, sample.executor_ms


def run_sample(conn, sql: str, params: dict, timeout_ms: int, settings: dict | None = None, observer=None):
    """One ``EXPLAIN ANALYZE`` inside a transaction that is always rolled back, as a
    :class:`~dbbench.dialects.timing.Sample`. Point lookups that MySQL resolves before execution
    (no index in the tree) are resolved with ``EXPLAIN FORMAT=JSON`` (access type const/eq_ref +
    key). The statement's own time is its ``TIMER_WAIT`` in
    ``performance_schema.events_statements_history``, read on ``observer`` (a connection that
    may read performance_schema: dbbench's own; ``conn`` itself when not given); None when the
    server does not record it or ``observer`` may not read it. Raises TimeoutError past
    ``timeout_ms``."""
    import secrets

    from dbbench.dialects.timing import Sample

    aliases = alias_map(sql)
    marker = f"/* dbbench sample {secrets.token_hex(8)} */"  # finds this statement's event
    with _explain_frame(conn, timeout_ms) as (cur, thread):
        text = _explain_analyze(cur, sql, params, marker)
        tree, ms = parse_plan(text, aliases)
        if thread is not None and observer is not None and observer is not conn:
            # the server records a statement's event after the client has its result: one
            # more round trip on this connection, and the event is in the history
            cur.execute("DO 0")
        statement = _statement_ms(observer if observer is not None else conn, thread, marker)
        raw: dict[str, object] = {"tree": text}
        if any(n.kind == "const" for n in tree.walk()):
            raw["json"] = _resolve_consts(cur, sql, params, tree, aliases)
    return Sample(raw, tree, ms, statement)


# The statement's own time: the EXPLAIN ANALYZE that carries the sample's marker, among the last
# statements its thread ended (performance_schema_events_statements_history_size, 10 by default).
_STATEMENT_TIME = (
    "/* dbbench */ SELECT TIMER_WAIT FROM performance_schema.events_statements_history "
    "WHERE THREAD_ID = %s AND SQL_TEXT LIKE %s ORDER BY EVENT_ID DESC LIMIT 1"
)


def _statement_ms(observer, thread: int | None, marker: str) -> float | None:
    """The ``TIMER_WAIT`` (picoseconds) of the ``EXPLAIN ANALYZE`` marked ``marker`` that thread
    ``thread`` ran, in ms; None when performance_schema is off (no ``thread``), did not record it
    (the consumer or the instrument off, the user not instrumented, the row already pushed out of
    the history) or ``observer`` may not read it."""
    import pymysql

    if thread is None:
        return None
    was_in_tx = bool((observer.server_status or 0) & 1)
    try:
        with observer.cursor() as cur:
            cur.execute(_STATEMENT_TIME, (thread, f"EXPLAIN ANALYZE {marker}%"))
            row = cur.fetchone()
    except pymysql.err.MySQLError:  # 1142: SELECT denied on performance_schema
        return None
    finally:
        if not was_in_tx:  # the observer's own transaction, if it had none, is not left open
            observer.rollback()
    if row is None or row[0] is None:
        return None
    return round(int(row[0]) / 1e9, 6)


def _explain_analyze(cur, sql: str, params: dict, marker: str = "") -> str:
    """The tree-format ``EXPLAIN ANALYZE`` text of ``sql`` (``marker``: a comment after the
    keywords, which finds the statement in performance_schema); a single-table write MySQL cannot
    analyze is refused."""
    cur.execute(f"EXPLAIN ANALYZE {marker} " + sql if marker else "EXPLAIN ANALYZE " + sql, params)
    text = cur.fetchone()[0]
    if "not executable by iterator executor" in text:
        from dbbench.errors import DbbenchError

        raise DbbenchError(
            "MySQL cannot EXPLAIN ANALYZE a single-table UPDATE/DELETE "
            "(<not executable by iterator executor>); time the selecting statement "
            "and prove the write separately"
        )
    return text


def _resolve_consts(cur, sql: str, params: dict, tree, aliases: dict[str, str]) -> dict:
    """Under each ``const`` node of ``tree`` (rows MySQL fetched before execution), the tables
    ``EXPLAIN FORMAT=JSON`` reads by const/eq_ref/system access and their keys; the JSON document."""
    from dbbench.dialects.plan import MAX_DEPTH, PlanNode, PlanTooDeep
    from verdict.files import text_depth_exceeds

    _json_version_1(cur)
    cur.execute("EXPLAIN FORMAT=JSON " + sql, params)
    text_json = cur.fetchone()[0]
    if text_depth_exceeds(text_json, 4 * MAX_DEPTH):
        raise PlanTooDeep("the EXPLAIN FORMAT=JSON document")
    doc = _json.loads(text_json)
    for n in [n for n in tree.walk() if n.kind == "const"]:
        n.children += [
            PlanNode(
                kind="const",
                label=f"{access} on {t}" + (f" using {key}" if key else ""),
                table=t,
                index=key,
            )
            for t, key, access in json_accesses(doc, aliases)
            if access in ("const", "eq_ref", "system")
        ]
    return doc


def query_row(conn, sql: str, params: dict) -> dict | None:
    import pymysql.cursors

    return common.query_row(conn, conn.cursor(pymysql.cursors.DictCursor), sql, params)


# -- the namespace user (see dbbench.access.isolation) ---------------------------------------------------
ROLE_PRIVILEGE = "CREATE USER and GRANT OPTION"


def is_driver_error(exc: BaseException) -> bool:
    return isinstance(exc, pymysql.err.Error)


def _account(role: str, formatted: bool = False) -> str:
    """``'role'@'%'``; ``formatted``: for a statement with parameters, where ``%`` is ``%%``."""
    return f"'{role}'@'%%'" if formatted else f"'{role}'@'%'"


def _grant_pattern(conn, ns: str) -> str:
    """``ns`` as a database-level grant names it: ``_`` and ``%`` are wildcards there unless
    escaped (and literal when ``partial_revokes`` is on)."""
    with conn.cursor() as cur:
        cur.execute("SELECT @@partial_revokes")
        literal = bool(int(cur.fetchone()[0] or 0))
    return ns if literal else ns.replace("_", "\\_").replace("%", "\\%")


def _grants(conn, role: str) -> list[str]:
    with conn.cursor() as cur:
        cur.execute(f"SHOW GRANTS FOR {_account(role)}")
        return [str(r[0]) for r in cur.fetchall()]


def open_role(conn, ns: str, role: str, password: str) -> None:
    """Create or re-arm the user ``role``@``%``: its only grant is ALL on ``ns`` (no GRANT OPTION,
    no global privilege), unlocked with ``password``. A user of that name with any other grant,
    or at another host, is not dbbench's and is refused."""
    from dbbench.errors import NotOurs

    pattern = _grant_pattern(conn, ns)
    with conn.cursor() as cur:
        cur.execute("SELECT host FROM mysql.user WHERE user = %s", (role,))
        hosts = [r[0] for r in cur.fetchall()]
        if hosts and (hosts != ["%"] or not _only_namespace_grants(_grants(conn, role), role, pattern)):
            raise NotOurs(
                f"a MySQL user named {role!r} exists and is not dbbench's namespace user; nothing was "
                "changed. Choose another --namespace or remove the user yourself"
            )
        if not hosts:
            cur.execute(
                f"CREATE USER {_account(role, True)} IDENTIFIED BY %s WITH MAX_USER_CONNECTIONS 16 ACCOUNT LOCK",
                (password,),
            )
        cur.execute(f"REVOKE ALL PRIVILEGES, GRANT OPTION FROM {_account(role)}")
        cur.execute(f"GRANT ALL PRIVILEGES ON {quote(pattern)}.* TO {_account(role)}")
        cur.execute(f"ALTER USER {_account(role, True)} IDENTIFIED BY %s ACCOUNT UNLOCK", (password,))


def grant_namespace(conn, ns: str, role: str) -> None:
    """Nothing to do: ``open_role``'s grant names the database, which MySQL keeps across its
    DROP and CREATE (a grant may name a database that does not exist yet)."""


def _only_namespace_grants(grants: list[str], role: str, pattern: str) -> bool:
    mine = f"TO `{role}`@`%`"
    allowed = (f"GRANT USAGE ON *.* {mine}", f"GRANT ALL PRIVILEGES ON {quote(pattern)}.* {mine}")
    return all(g in allowed for g in grants)


def close_role(conn, role: str) -> None:
    """No more logins for ``role``: locked, with a password nobody knows."""
    import secrets

    with conn.cursor() as cur:
        cur.execute("SELECT 1 FROM mysql.user WHERE user = %s AND host = '%%'", (role,))
        if cur.fetchone():
            cur.execute(
                f"ALTER USER {_account(role, True)} IDENTIFIED BY %s ACCOUNT LOCK",
                (secrets.token_urlsafe(24),),
            )


def owned_outside(conn, ns: str, role: str) -> list[str]:
    """Nothing: the user's grants cover its database only."""
    return []


def drop_owned(conn, role: str) -> None:
    """Nothing to drop outside the namespace (see :func:`owned_outside`)."""


def drop_role(conn, ns: str, role: str) -> None:
    """Drop the namespace user if it is dbbench's (only namespace grants); otherwise leave it."""
    with conn.cursor() as cur:
        cur.execute("SELECT host FROM mysql.user WHERE user = %s", (role,))
        if [r[0] for r in cur.fetchall()] == ["%"] and _only_namespace_grants(
            _grants(conn, role), role, _grant_pattern(conn, ns)
        ):
            cur.execute(f"DROP USER {_account(role)}")


# -- prepared statements and captured statements (issue 24) ---------------------------------------
GENERIC_PLAN = "server-side prepared statement (PREPARE / EXECUTE … USING)"


def run_explain_generic(conn, sql: str, params: dict, timeout_ms: int, settings: dict | None = None):
    """``EXPLAIN ANALYZE`` of ``sql`` as a server-side prepared statement, ``?`` parameters bound
    from user variables at ``EXECUTE``: what a driver using the binary protocol (Connector/J with
    server-side statements, Go's driver) gets. Rolled back as :func:`run_explain`; ``settings``
    (PostgreSQL's planner settings) are not MySQL's, as in :func:`run_sample`."""
    text, values = common.positional(sql, params, numbered=False)
    aliases = alias_map(text)
    prepared = False
    try:
        with _explain_frame(conn, timeout_ms) as (cur, _):
            cur.execute("PREPARE dbbench_prepared FROM %s", ("EXPLAIN ANALYZE " + text,))
            prepared = True
            for i, value in enumerate(values):
                cur.execute(f"SET @dbbench_p{i} = %s", (value,))
            using = " USING " + ", ".join(f"@dbbench_p{i}" for i in range(len(values))) if values else ""
            cur.execute("EXECUTE dbbench_prepared" + using)
            raw = cur.fetchone()[0]
            tree, ms = parse_plan(raw, aliases)
            if any(n.kind == "const" for n in tree.walk()):
                _resolve_consts(cur, sql, params, tree, aliases)
        return {"tree": raw}, tree, ms
    finally:
        if prepared:  # after the undo: a PREPARE outlives a rollback
            execute(conn, ["DEALLOCATE PREPARE dbbench_prepared"])


_DIGESTS = (
    "/* dbbench */ SELECT QUERY_SAMPLE_TEXT, COUNT_STAR FROM performance_schema.events_statements_summary_by_digest "
    "WHERE SCHEMA_NAME = %s AND QUERY_SAMPLE_TEXT IS NOT NULL ORDER BY COUNT_STAR DESC, DIGEST"
)


def _performance_schema_problem(cur) -> str | None:
    cur.execute("SELECT @@performance_schema")
    if not int(cur.fetchone()[0]):
        return (
            "performance_schema is off on this MySQL server: start it with performance_schema=ON "
            "to capture statements (or capture with --only postgresql)"
        )
    return None


def captured_statements(conn, ns: str) -> list[tuple[str, int]]:
    """(a sample of the statement with its real values, executions) of every statement digest
    performance_schema summarised for the default database ``ns``."""
    with common.statement_statistics(conn, _performance_schema_problem, keep=False) as cur:
        cur.execute(_DIGESTS, (ns,))
        return [(str(q), int(c)) for q, c in cur.fetchall()]


def reset_captured(conn) -> None:
    """Forget the statement digests performance_schema summarised (before the run to capture)."""
    with common.statement_statistics(conn, _performance_schema_problem, keep=True) as cur:
        cur.execute("TRUNCATE TABLE performance_schema.events_statements_summary_by_digest")
