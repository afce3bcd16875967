"""MySQL specifics: a dbbench-owned database, LOAD DATA LOCAL loading, canonical row text."""

from __future__ import annotations

import contextlib
import datetime
import hashlib
import json as _json
import re
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
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
        # its statistics frozen, as the tables' (freeze_statistics): the records a run writes and
        # removes would queue it for InnoDB's background recalculation, 10 s later
        cur.execute(
            f"CREATE TABLE {META} (`key` varchar(64) PRIMARY KEY, value longtext NOT NULL) "
            "STATS_PERSISTENT = 1, STATS_AUTO_RECALC = 0"
        )
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


# Warnings that say nothing of the rows loaded: 1287 a deprecated syntax or variable, 6414 (MySQL
# 9) a transaction writing a MEMORY table beside InnoDB ones (friendica's schema has MEMORY tables).
_HARMLESS_WARNINGS = frozenset({1287, 6414})


def _load(conn, table: str, sql: str, name: str, stream: Iterable[bytes] | None = None) -> None:
    """Run a LOAD DATA LOCAL ``sql`` that asks for the client file ``name`` (the only one
    :class:`LoaderConnection` sends; ``stream``: its content as it comes); refused when it warns."""
    with conn.cursor() as cur:
        conn.allowed, conn.stream = name, stream
        try:
            cur.execute(sql, (name,))
        finally:
            conn.allowed = conn.stream = None
        cur.execute("SHOW WARNINGS LIMIT 20")  # right after the load: its own warnings
        warned = [w for w in cur.fetchall() if w[1] not in _HARMLESS_WARNINGS][:3]
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


def stream_load(
    conn, table: str, columns: list[str], binary: frozenset[str], chunks, *, emptied: bool = False
) -> None:
    """LOAD DATA LOCAL of ``chunks`` (tab-separated text, binary columns as hex) as they come, on
    a :class:`LoaderConnection`: the server's request for the stream's own name is answered with
    the chunks, any other request refused (``emptied``: nothing more to do for InnoDB)."""
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


DEFERRED = "volume.deferred"  # dbbench_meta: the keys and indexes a load set aside, until put back


def _plain_keys(cur, table: str) -> list[str]:
    """The plain (non-unique, non-fulltext, non-spatial) indexes of ``table`` as SHOW CREATE TABLE
    prints them, in its order: ``KEY `ix` (`a`,`b`) COMMENT '…'``, re-addable word for word."""
    cur.execute(f"SHOW CREATE TABLE {quote(table)}")
    ddl = cur.fetchone()[1]
    return [ln.strip().rstrip(",") for ln in ddl.splitlines() if ln.startswith("  KEY `")]


def _key_name(clause: str) -> str:
    return clause[len("KEY `") :].split("` (", 1)[0].replace("``", "`")


def _put_back(cur, deferred: dict[str, Any]) -> None:
    """The indexes, then the foreign keys a load set aside added again where missing, as they were
    (each table's indexes in one ALTER: InnoDB builds each bottom-up from sorted rows; its keys
    added unchecked: :func:`defer_constraints`'s restore checks them over all rows at once)."""
    for table, clauses in deferred["indexes"].items():
        have = {_key_name(c) for c in _plain_keys(cur, table)}
        missing = [c for c in clauses if _key_name(c) not in have]
        if missing:
            cur.execute(f"ALTER TABLE {quote(table)} " + ", ".join(f"ADD {c}" for c in missing))
    cur.execute("SET SESSION foreign_key_checks = 0")  # added back as they were, then checked
    try:
        cur.execute(
            "SELECT table_name, constraint_name FROM information_schema.referential_constraints "
            "WHERE constraint_schema = DATABASE()"
        )
        present = {(t, n) for t, n in cur.fetchall()}
        for table, name, schema, parent, columns, referenced, on_update, on_delete in deferred["keys"]:
            if (table, name) in present:
                continue
            cols = ", ".join(quote(c) for c in columns.split("\t"))
            refs = ", ".join(quote(r) for r in referenced.split("\t"))
            cur.execute(
                f"ALTER TABLE {quote(table)} ADD CONSTRAINT {quote(name)} FOREIGN KEY ({cols}) "
                f"REFERENCES {quote(schema)}.{quote(parent)} ({refs}) "
                f"ON UPDATE {on_update} ON DELETE {on_delete}"
            )
    finally:
        cur.execute("SET SESSION foreign_key_checks = 1")


def recover_deferred(conn) -> None:
    """Put back what a load interrupted after setting keys and indexes aside left out (recorded
    in the namespace's ``dbbench_meta`` before anything was dropped)."""
    with conn.cursor() as cur:
        cur.execute("SELECT DATABASE()")
        ns = cur.fetchone()[0]
        pending = read_meta(conn, ns).get(DEFERRED)
        if pending:
            _put_back(cur, _json.loads(pending))
            cur.execute(f"DELETE FROM {quote(ns)}.{META} WHERE `key` = %s", (DEFERRED,))
    conn.commit()


def _dangling(table: str, cols: list[str], parent: str, refs: list[str]) -> str:
    """How many rows of ``table`` whose ``cols`` are all set match no row of ``parent`` on ``refs``.
    A hash anti-join over both tables at once (the parent's indexes hinted away: on MySQL 8.0.20+
    it reads each table once instead of looking every child row up in the parent's index, 0.5 s
    instead of 4 s for a million rows; 8.0.18/19 ignore the hint with a warning and look up)."""
    present = " AND ".join(f"c.{quote(c)} IS NOT NULL" for c in cols)
    match = " AND ".join(f"p.{quote(r)} = c.{quote(c)}" for c, r in zip(cols, refs))
    return (
        f"SELECT /*+ NO_INDEX(p) */ COUNT(*) FROM {quote(table)} AS c LEFT JOIN {parent} AS p "
        f"ON {match} WHERE {present} AND p.{quote(refs[0])} IS NULL"
    )


def defer_constraints(
    conn, tables: list[str], early: list[str], *, indexes: bool = True
) -> Callable[[Any], None]:
    """Before a bulk load into ``tables`` (of the database in use): their foreign keys dropped, then
    their plain indexes (InnoDB would otherwise insert every row into each secondary index one by
    one; an index a foreign key needs can only go with the key). What is set aside is recorded in
    ``dbbench_meta`` first (:func:`recover_deferred` puts it back after a kill). Returns
    ``restore(conn)``: commits the load (MySQL's DDL commits anyway; the namespace is marked
    complete only afterwards), adds each table's indexes back in one ALTER (a sorted bottom-up
    build each, in SHOW CREATE TABLE's order, so the table reads as before), the foreign keys as
    they were, and checks each over all its rows at once (a row referencing nothing fails the
    fill). ``early`` (tables whose rows reference rows loaded after them) needs nothing more now.
    ``indexes=False`` (the benchmark's *before*, ``benchmarks/bench_volume.py --before``): only the
    foreign keys of ``early`` set aside, every index kept and filled row by row."""
    recover_deferred(conn)
    aside = tables if indexes else early
    if not aside:
        return lambda conn: None
    with conn.cursor() as cur:
        cur.execute(_FOREIGN_KEYS.format(", ".join(["%s"] * len(aside))), aside)
        keys = [list(k) for k in cur.fetchall()]
        plain = {t: clauses for t in aside if indexes and (clauses := _plain_keys(cur, t))}
        cur.execute("SELECT DATABASE()")
        ns = cur.fetchone()[0]
    deferred = {"indexes": plain, "keys": keys}
    write_meta(conn, ns, {DEFERRED: _json.dumps(deferred)})
    conn.commit()
    with conn.cursor() as cur:
        for table, name, *_ in keys:
            cur.execute(f"ALTER TABLE {quote(table)} DROP FOREIGN KEY {quote(name)}")
        for table, clauses in plain.items():
            drops = ", ".join(f"DROP INDEX {quote(_key_name(c))}" for c in clauses)
            cur.execute(f"ALTER TABLE {quote(table)} {drops}")

    def restore(conn) -> None:
        conn.commit()
        with conn.cursor() as cur:
            _put_back(cur, deferred)
            # The hash anti-join sizes its spill by the parent's row estimate: the statistics of a
            # table loaded just now still say how many rows it had before (1 s instead of 4 s).
            loaded = sorted({p for _, _, schema, p, *_ in keys if schema == ns and p in tables})
            if loaded:
                cur.execute("ANALYZE TABLE " + ", ".join(quote(t) for t in loaded))
                cur.fetchall()
            for table, name, schema, parent, columns, referenced, *_ in keys:
                cols, refs = columns.split("\t"), referenced.split("\t")
                cur.execute(_dangling(table, cols, f"{quote(schema)}.{quote(parent)}", refs))
                dangling = cur.fetchone()[0]
                if dangling:
                    raise pymysql.err.IntegrityError(
                        1452,
                        f"{dangling:,} rows of {table} reference no row of {parent} "
                        f"(foreign key {name}: {', '.join(cols)})",
                    )
            cur.execute(f"DELETE FROM {quote(ns)}.{META} WHERE `key` = %s", (DEFERRED,))
        conn.commit()

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


def settle_pending(conn, ns: str, tables: list[str]) -> None:
    """Nothing to record: :func:`settle_writes` has nothing to do."""


def settle_writes(conn, ns: str, tables: list[str]) -> None:
    """Nothing to do after rolled-back writes: InnoDB's rollback puts each row back in place and
    its purge removes what a rollback delete-marked; the row counts plans use are put back by
    :func:`restore_statistics`."""


def unchanged_digests(conn, ns: str, tables: list[str]) -> dict[str, str]:
    """Per table, InnoDB's own checksum of its rows (``CHECKSUM TABLE``, one scan in the server,
    no row turned into text: a quarter of the :func:`fingerprint_sql` of a seed): a committed
    change of any row's values moves it, a rollback puts every row back as it was."""
    if not tables:
        return {}
    with conn.cursor() as cur:
        cur.execute("CHECKSUM TABLE " + ", ".join(f"{quote(ns)}.{quote(t)}" for t in tables))
        rows = cur.fetchall()
    # one row per table, in the order named ("ns.table", the checksum; NULL for a missing table)
    return {table: str(row[1]) for table, row in zip(tables, rows, strict=True)}


def recover_settle(conn, ns: str) -> list[str]:
    """Nothing a killed run's writes leave to settle (:func:`settle_writes`)."""
    return []


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
# InnoDB queues a table for a background recalculation of its statistics once 10 % of it changed,
# and runs it 10 s after the last one whatever STATS_AUTO_RECALC says by then: a table the setup
# fills is frozen before its first row, or its statistics move 10 s after the final ANALYZE
FREEZE_EACH_CREATED_TABLE = True
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


def run_sample(
    conn,
    sql: str,
    params: dict,
    timeout_ms: int,
    settings: dict | None = None,
    observer=None,
    footprint: bool = False,
):
    """One ``EXPLAIN ANALYZE`` inside a transaction that is always rolled back, as a
    :class:`~dbbench.dialects.timing.Sample`. Point lookups that MySQL resolves before execution
    (no index in the tree) are resolved with ``EXPLAIN FORMAT=JSON`` (access type const/eq_ref +
    key). The statement's own time is its ``TIMER_WAIT`` in
    ``performance_schema.events_statements_history``, read on ``observer`` (a connection that
    may read performance_schema: dbbench's own; ``conn`` itself when not given); None when the
    server does not record it or ``observer`` may not read it. Raises TimeoutError past
    ``timeout_ms``.

    A single-table ``UPDATE`` / ``DELETE``, which MySQL cannot ``EXPLAIN ANALYZE``, is planned
    with ``EXPLAIN FORMAT=JSON`` and then executed in the same rolled-back transaction, its time
    and rows examined read from performance_schema (:func:`_run_write`). ``footprint``: for a
    write or a locking read, the locks the transaction holds (``performance_schema.data_locks``)
    before the rollback (:func:`_footprint`)."""
    import secrets

    from dbbench.dialects.timing import Sample

    aliases = alias_map(sql)
    token = secrets.token_hex(8)
    marker = f"/* dbbench sample {token} */"  # finds this statement's event
    watch = observer if observer is not None else conn
    found = None
    with _explain_frame(conn, timeout_ms) as (cur, thread):
        cur.execute(f"EXPLAIN ANALYZE {marker} " + sql, params)
        text = cur.fetchone()[0]
        if _NOT_EXECUTABLE in text:
            tree, ms, statement, raw = _run_write(cur, sql, params, aliases, marker, watch, thread)
        else:
            tree, ms = parse_plan(text, aliases)
            raw = {"tree": text}
            if any(n.kind == "const" for n in tree.walk()):
                raw["json"] = _resolve_consts(cur, sql, params, tree, aliases)
            if common.locks_rows(sql):
                # EXPLAIN ANALYZE reads a write's rows but changes none and locks none of a
                # locking read's: the statement itself runs too, and its time is the sample's
                lock = f"/* dbbench lock {token} */"
                statement, _, _, affected = _execute_marked(cur, sql, params, lock, watch, thread)
                if tree.kind == "modify":
                    tree.actual_rows, tree.loops = float(affected), 1.0
            else:
                _flush_history(cur, thread, watch, conn)
                event = _statement_event(watch, thread, f"EXPLAIN ANALYZE {marker}%")
                statement = None if event is None else event[0]
        if footprint and thread is not None and common.locks_rows(sql):
            found = _footprint(watch, thread, tree, conn)
    return Sample(raw, tree, ms, statement, None, found)


_NOT_EXECUTABLE = "not executable by iterator executor"


def _flush_history(cur, thread: int | None, watch, conn) -> None:
    """The server records a statement's event after the client has its result: one more round
    trip on this connection, and the event is in the history another connection reads."""
    if thread is not None and watch is not conn:
        cur.execute("DO 0")


def _run_write(cur, sql: str, params: dict, aliases: dict[str, str], marker: str, watch, thread: int | None):
    """A single-table ``UPDATE`` / ``DELETE``: its plan from ``EXPLAIN FORMAT=JSON`` (version 1,
    which names the key), then the statement itself executed (the caller's frame rolls it back);
    its time and rows examined / changed from performance_schema, else the client's clock and the
    driver's row count. (tree, executor ms, statement ms, raw)."""
    from dbbench.dialects.mysql_plan import write_tree

    _json_version_1(cur)
    cur.execute("EXPLAIN FORMAT=JSON " + sql, params)
    doc = _json_plan(cur.fetchone()[0])
    statement, wall, examined, affected = _execute_marked(cur, sql, params, marker, watch, thread)
    tree = write_tree(doc, aliases, common.verb(sql), examined, affected)
    return tree, (wall if statement is None else statement), statement, {"json": doc, "executed": True}


def _execute_marked(
    cur, sql: str, params: dict, marker: str, watch, thread: int | None
) -> tuple[float | None, float, int | None, int]:
    """Execute ``sql`` itself (in the caller's rolled-back frame), marked with ``marker``: (its
    time in ms, performance_schema's ``TIMER_WAIT``, None when not recorded; the client's clock
    in ms; the rows it examined, None when not recorded; the rows it changed or returned)."""
    started = time.perf_counter()
    cur.execute(f"{marker} " + sql, params)
    if cur.description:
        while cur.fetchmany(10_000):  # a locking read's rows, drained
            pass
    wall = round((time.perf_counter() - started) * 1000, 6)
    affected = max(int(cur.rowcount or 0), 0)
    _flush_history(cur, thread, watch, cur.connection)
    event = _statement_event(watch, thread, f"{marker}%")
    if event is None:
        return None, wall, None, affected
    ms, examined, changed = event
    return ms, wall, examined, (affected if cur.description else changed)


def _footprint(watch, thread: int, tree, conn) -> dict | None:
    """What the transaction holds locked, from ``performance_schema.data_locks`` (read on
    ``watch``): per table, the rows locked (the most records any one of its indexes has locked,
    the supremum left out), the gaps (next-key, gap and supremum locks), the table lock modes and
    the indexes locked through; the rows the statement changed (its root's rows, for a write); the
    foreign-key cascades into child tables whose rows it locked (InnoDB does not time them). None
    when ``watch`` may not read performance_schema."""
    was_in_tx = bool((watch.server_status or 0) & 1)
    try:
        with watch.cursor() as cur:
            try:
                cur.execute(_DATA_LOCKS, (thread,))
            except pymysql.err.MySQLError:  # 1142: SELECT denied on performance_schema
                return None
            locks = cur.fetchall()
            target = tree.table if tree.kind == "modify" else None
            children, child_indexes = [], {}
            if target and common.verb(tree.label) in ("delete", "update"):
                cur.execute(_CHILD_KEYS, (target,))
                children = cur.fetchall()
                for child in sorted({str(r[1]) for r in children}):
                    cur.execute(_INDEX_COLUMNS, (child,))
                    child_indexes[child] = [(str(i), str(cols).split(",")) for i, cols in cur.fetchall()]
    finally:
        if not was_in_tx and watch is not conn:
            watch.rollback()
    tables: dict[str, dict] = {}
    per_index: dict[tuple[str, str], int] = {}
    written: dict[str, int] = {}  # exclusive record locks on the clustered index: rows changed
    for table, index, kind, mode, supremum, count in locks:
        t = tables.setdefault(str(table), {"rows": 0, "gaps": 0, "modes": [], "indexes": []})
        if kind == "TABLE":
            t["modes"].append(str(mode))
            continue
        t["indexes"].append(str(index))
        if index == "PRIMARY" and mode == "X,REC_NOT_GAP":
            written[str(table)] = written.get(str(table), 0) + int(count)
        if "REC_NOT_GAP" not in mode and "INSERT_INTENTION" not in mode:
            t["gaps"] += int(count)
        if "GAP" in mode.replace("REC_NOT_GAP", "") or supremum:
            continue
        key = (str(table), str(index))
        per_index[key] = per_index.get(key, 0) + int(count)
    for (table, _), count in per_index.items():
        tables[table]["rows"] = max(tables[table]["rows"], count)
    affected = None
    if tree.kind == "modify" and tree.actual_rows is not None:
        affected = int(tree.actual_rows)
        if target:
            tables.setdefault(target, {"rows": 0, "gaps": 0, "modes": [], "indexes": []})["changed"] = {
                _CHANGED.get(common.verb(tree.label), "changed"): affected
            }
    cascades = []
    by_constraint: dict[str, dict] = {}
    for constraint, child, column, delete_rule, update_rule in children:
        c = by_constraint.setdefault(
            str(constraint),
            {"constraint": str(constraint), "parent": target, "child": str(child), "columns": [], "rule": ""},
        )
        c["columns"].append(str(column))
        c["rule"] = str(delete_rule if common.verb(tree.label) == "delete" else update_rule)
    for c in by_constraint.values():
        locked = tables.get(c["child"])
        if not locked or not (locked["rows"] or locked["gaps"]):
            continue  # no child row read: no child references the rows changed, or no check ran
        changed = written.get(c["child"], 0) if c["rule"] in ("CASCADE", "SET NULL", "SET DEFAULT") else 0
        if c["child"] == target:  # a self-referencing key: the statement's own rows are not a cascade
            changed = max(changed - (affected or 0), 0)
            if not changed:
                continue
        if changed:
            verb = "deleted" if c["rule"] == "CASCADE" and common.verb(tree.label) == "delete" else "updated"
            locked["changed"] = {verb: changed}
        cascades.append(
            c
            | {
                "index": _key_index(child_indexes.get(c["child"], []), c["columns"]),
                "rows": changed,
                "ms": None,
                "calls": None,
            }
        )
    return common.footprint(tables, cascades, affected)


def _key_index(indexes: list[tuple[str, list[str]]], columns: list[str]) -> str | None:
    """The index InnoDB reads a foreign key's child rows through: the first whose leading columns
    are the key's (InnoDB keeps one for every foreign key)."""
    wanted = [c.lower() for c in columns]
    for name, cols in sorted(indexes, key=lambda x: x[0] != "PRIMARY"):
        if [c.lower() for c in cols[: len(wanted)]] == wanted:
            return name
    return None


# each index of a table of the namespace with its columns in order
_INDEX_COLUMNS = (
    "/* dbbench */ SELECT INDEX_NAME, GROUP_CONCAT(COLUMN_NAME ORDER BY SEQ_IN_INDEX) "
    "FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = %s "
    "GROUP BY INDEX_NAME ORDER BY INDEX_NAME"
)
_CHANGED = {"delete": "deleted", "update": "updated", "insert": "inserted", "replace": "inserted"}
# the locks a thread holds, per table, index, kind and mode, the supremum pseudo-records apart
_DATA_LOCKS = (
    "/* dbbench */ SELECT OBJECT_NAME, INDEX_NAME, LOCK_TYPE, LOCK_MODE, "
    "LOCK_DATA = 'supremum pseudo-record', COUNT(*) FROM performance_schema.data_locks "
    "WHERE THREAD_ID = %s GROUP BY 1, 2, 3, 4, 5"
)
# the foreign keys of the namespace that reference a table: constraint, child table, column
_CHILD_KEYS = (
    "/* dbbench */ SELECT rc.CONSTRAINT_NAME, rc.TABLE_NAME, k.COLUMN_NAME, rc.DELETE_RULE, rc.UPDATE_RULE "
    "FROM information_schema.REFERENTIAL_CONSTRAINTS rc JOIN information_schema.KEY_COLUMN_USAGE k "
    "ON k.CONSTRAINT_SCHEMA = rc.CONSTRAINT_SCHEMA AND k.CONSTRAINT_NAME = rc.CONSTRAINT_NAME "
    "AND k.TABLE_NAME = rc.TABLE_NAME WHERE rc.CONSTRAINT_SCHEMA = DATABASE() "
    "AND rc.REFERENCED_TABLE_NAME = %s ORDER BY rc.CONSTRAINT_NAME, k.ORDINAL_POSITION"
)


# The statement's own time: the statement that carries the sample's marker, among the last
# statements its thread ended (performance_schema_events_statements_history_size, 10 by default).
_STATEMENT_EVENT = (
    "/* dbbench */ SELECT TIMER_WAIT, ROWS_EXAMINED, ROWS_AFFECTED FROM "
    "performance_schema.events_statements_history "
    "WHERE THREAD_ID = %s AND SQL_TEXT LIKE %s ORDER BY EVENT_ID DESC LIMIT 1"
)


def _statement_event(observer, thread: int | None, like: str) -> tuple[float | None, int, int] | None:
    """(``TIMER_WAIT`` in ms, rows examined, rows affected) of the statement thread ``thread``
    ran whose text is ``like``; None when performance_schema is off (no ``thread``), did not
    record it (the consumer or the instrument off, the user not instrumented, the row already
    pushed out of the history) or ``observer`` may not read it."""
    import pymysql

    if thread is None:
        return None
    was_in_tx = bool((observer.server_status or 0) & 1)
    try:
        with observer.cursor() as cur:
            cur.execute(_STATEMENT_EVENT, (thread, like))
            row = cur.fetchone()
    except pymysql.err.MySQLError:  # 1142: SELECT denied on performance_schema
        return None
    finally:
        if not was_in_tx:  # the observer's own transaction, if it had none, is not left open
            observer.rollback()
    if row is None or row[0] is None:
        return None
    return round(int(row[0]) / 1e9, 6), int(row[1] or 0), int(row[2] or 0)


def _resolve_consts(cur, sql: str, params: dict, tree, aliases: dict[str, str]) -> dict:
    """Under each ``const`` node of ``tree`` (rows MySQL fetched before execution), the tables
    ``EXPLAIN FORMAT=JSON`` reads by const/eq_ref/system access and their keys; the JSON document."""
    from dbbench.dialects.plan import PlanNode

    _json_version_1(cur)
    cur.execute("EXPLAIN FORMAT=JSON " + sql, params)
    doc = _json_plan(cur.fetchone()[0])
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


def _json_plan(text: str) -> dict:
    """An ``EXPLAIN FORMAT=JSON`` document, refused (one line) when nested past what dbbench reads."""
    from dbbench.dialects.plan import MAX_DEPTH, PlanTooDeep
    from verdict.files import text_depth_exceeds

    if text_depth_exceeds(text, 4 * MAX_DEPTH):
        raise PlanTooDeep("the EXPLAIN FORMAT=JSON document")
    return _json.loads(text)


def query_row(conn, sql: str, params: dict) -> dict | None:
    import pymysql.cursors

    return common.query_row(conn, conn.cursor(pymysql.cursors.DictCursor), sql, params)


# -- the namespace user (see dbbench.access.isolation) ---------------------------------------------------
ROLE_PRIVILEGE = "CREATE USER and GRANT OPTION"


# the errors of the data a statement would write: NOT NULL, a unique key, a foreign key (either
# side), a value out of its type or too long, a check constraint
_DATA_ERRORS = frozenset({1048, 1062, 1216, 1217, 1264, 1292, 1364, 1366, 1406, 1451, 1452, 3819})


def refuses_data(exc: BaseException) -> bool:
    """Whether the server refused a statement for the data it would write (an integrity or a
    value error): the shape fails, not the run. A privilege refused is not one."""
    code = exc.args[0] if isinstance(exc, pymysql.err.MySQLError) and exc.args else None
    return code in _DATA_ERRORS


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
# dbbench's own GROUP BY of a whole column (the hottest and rarest values a shape is probed with):
# past tmp_table_size (16 MB by default) the group table is moved to disk, which for 100k distinct
# long paths doubled its time; TempTable's own memory limit (temptable_max_ram) still holds
GROUPING_HINT = "/*+ SET_VAR(tmp_table_size = 268435456) */ "


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
            if _NOT_EXECUTABLE in raw:  # a single-table UPDATE / DELETE: its prepared plan as JSON
                from dbbench.dialects.mysql_plan import write_tree

                execute(conn, ["DEALLOCATE PREPARE dbbench_prepared"])
                _json_version_1(cur)
                cur.execute("PREPARE dbbench_prepared FROM %s", ("EXPLAIN FORMAT=JSON " + text,))
                cur.execute("EXECUTE dbbench_prepared" + using)
                doc = _json_plan(cur.fetchone()[0])
                return {"json": doc}, write_tree(doc, aliases, common.verb(sql), None, None), 0.0
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


# -- index trials (dbbench.advise) --
# DDL commits: an index under trial is added for real and dropped afterwards. What is in flight is
# recorded first (a dbbench_meta row, with the table's persisted statistics, which some ALTERs
# throw away), so the next dbbench command undoes a trial whose process died; the trial's session
# holds a named lock meanwhile, which tells a live trial from a dead one (the server releases it
# when the session ends, kill -9 included).
TRIAL_IN_TRANSACTION = False
_IDENT = r"(?:`(?:[^`]|``)+`|[A-Za-z0-9_$]+)"
_QUALIFIED = rf"(?:(?P<schema>{_IDENT})\s*\.\s*)?(?P<table>{_IDENT})"
_ONLINE = r"(?:\s*,?\s*(?:ALGORITHM|LOCK)\s*=?\s*\w+)"
# the one statement a trial may run: its index name, table and the parenthesised rest
TRIAL_CREATE: tuple[re.Pattern[str], ...] = (
    re.compile(
        rf"ALTER\s+TABLE\s+{_QUALIFIED}\s+ADD\s+(?:UNIQUE\s+)?(?:INDEX|KEY)\s+(?P<name>{_IDENT})\s*"
        r"(?:USING\s+BTREE\s*)?(?P<rest>\(.*)",
        re.I | re.S,
    ),
    re.compile(
        rf"CREATE\s+(?:UNIQUE\s+)?INDEX\s+(?P<name>{_IDENT})\s+(?:USING\s+BTREE\s+)?ON\s+{_QUALIFIED}\s*(?P<rest>\(.*)",
        re.I | re.S,
    ),
)
TRIAL_DROP: tuple[re.Pattern[str], ...] = (
    re.compile(rf"ALTER\s+TABLE\s+{_QUALIFIED}\s+DROP\s+(?:INDEX|KEY)\s+(?P<name>{_IDENT}){_ONLINE}*", re.I),
    re.compile(rf"DROP\s+INDEX\s+(?P<name>{_IDENT})\s+ON\s+{_QUALIFIED}{_ONLINE}*", re.I),
)
# after the key parts: index options and the ALTER's algorithm and lock (text literals emptied)
TRIAL_TAIL = re.compile(rf"(?:\s*USING\s+BTREE|\s*COMMENT\s*''|\s*(?:IN)?VISIBLE|{_ONLINE})*\s*", re.I)
_TRIAL_KEY = "advise.in_flight."  # + the index name: the meta row of a trial in flight
_TRIAL_KEYS = "advise.in\\_flight.%"
_NOT_ONLINE = (1845, 1846)  # ALGORITHM / LOCK not supported for this operation
_INDEX_STATS = ("index_name", "last_update", "stat_name", "stat_value", "sample_size", "stat_description")
_TABLE_STATS = ("last_update", "n_rows", "clustered_index_size", "sum_of_other_index_sizes")


def identifier(text: str) -> str:
    """A name as written in SQL, as the server stores it: ```Name``` unquoted."""
    if text.startswith("`"):
        return text[1:-1].replace("``", "`")
    return text


def trial_connection(url, connect_args: dict) -> Any:
    """A connection of its own to the server of ``url`` (a SQLAlchemy URL) for one index trial:
    the session that holds the trial's lock, so that its end (whatever ends it) frees it."""
    from sqlalchemy.dialects.mysql.pymysql import MySQLDialect_pymysql

    _, params = MySQLDialect_pymysql().create_connect_args(url)
    # FOUND_ROWS as SQLAlchemy's pool opens them: an UPDATE counts the rows it matched
    flags = int(params.get("client_flag", 0)) | pymysql.constants.CLIENT.FOUND_ROWS
    return pymysql.connect(**{**params, **connect_args, "local_infile": False, "client_flag": flags})


def _trial_key(name: str) -> str:
    """The meta row of a trial in flight: ``advise.in_flight.<name>``, a digest of a name too
    long for the 64 characters of its key (the record names the index itself too)."""
    key = _TRIAL_KEY + name
    return key if len(key) <= 64 else _TRIAL_KEY + hashlib.sha256(name.encode()).hexdigest()[:32]


def _trial_lock(ns: str) -> str:
    """The named lock a trial in ``ns`` holds (GET_LOCK names are at most 64 characters)."""
    name = f"dbbench_adv.{ns}"
    return name if len(name) <= 64 else f"dbbench_adv.{hashlib.sha256(ns.encode()).hexdigest()}"


def _get_lock(conn, name: str, wait_s: float) -> bool:
    with conn.cursor() as cur:
        cur.execute("SELECT GET_LOCK(%s, %s)", (name, max(0, round(wait_s))))
        return cur.fetchone()[0] == 1


def _release_lock(conn, name: str) -> None:
    with conn.cursor() as cur:
        cur.execute("SELECT RELEASE_LOCK(%s)", (name,))


@contextlib.contextmanager
def _trials_locked(conn, ns: str, wait_s: float) -> Iterator[None]:
    """The block holding ``ns``'s trial lock (waited for up to ``wait_s``: one trial, hidden index
    or write copy at a time in a database), with DDL waiting at most 120 s for another session's
    table lock (an error, not a hang); refused (DbbenchError) when another holds it."""
    from dbbench.errors import DbbenchError

    lock = _trial_lock(ns)
    with conn.cursor() as cur:
        cur.execute("SET SESSION lock_wait_timeout = 120")
    if not _get_lock(conn, lock, wait_s):
        raise DbbenchError(
            f"another index trial holds database {ns!r} (a dbbench advise or indexes still running); "
            "try again when it has finished"
        )
    try:
        yield
    finally:
        _release_lock(conn, lock)


def _has_index(conn, ns: str, table: str, name: str) -> bool:
    with conn.cursor() as cur:
        cur.execute(
            "SELECT 1 FROM information_schema.statistics WHERE table_schema = %s AND table_name = %s "
            "AND index_name = %s LIMIT 1",
            (ns, table, name),
        )
        found = cur.fetchone() is not None
    conn.rollback()
    return found


def _plain(value):
    return str(value) if isinstance(value, datetime.datetime) else value


def _statistics_rows(conn, ns: str, table: str) -> dict[str, list]:
    """``table``'s rows in InnoDB's persisted statistics (what its plans are made from)."""
    with conn.cursor() as cur:
        saved = {}
        for key, source, columns in (
            ("index", "innodb_index_stats", _INDEX_STATS),
            ("table", "innodb_table_stats", _TABLE_STATS),
        ):
            cur.execute(
                f"SELECT {', '.join(columns)} FROM mysql.{source} WHERE database_name = %s AND table_name = %s "
                f"ORDER BY {', '.join(columns)}",
                (ns, table),
            )
            saved[key] = [[_plain(v) for v in row] for row in cur.fetchall()]
    conn.rollback()
    return saved


def _restore_statistics_rows(
    conn, ns: str, table: str, saved: dict[str, list], keep: Sequence[str] = ()
) -> None:
    """``table``'s persisted statistics back to ``saved`` (the rows of the indexes ``keep`` stay as
    they are), reloaded by closing the table (FLUSH TABLES, as :func:`restore_statistics`)."""
    with conn.cursor() as cur:
        for key, source, columns in (
            ("index", "innodb_index_stats", _INDEX_STATS),
            ("table", "innodb_table_stats", _TABLE_STATS),
        ):
            kept = list(keep) if key == "index" else []
            keeping = f" AND index_name NOT IN ({', '.join(['%s'] * len(kept))})" if kept else ""
            cur.execute(
                f"DELETE FROM mysql.{source} WHERE database_name = %s AND table_name = %s{keeping}",
                (ns, table, *kept),
            )
            if saved[key]:
                cur.executemany(
                    f"INSERT INTO mysql.{source} (database_name, table_name, {', '.join(columns)}) "
                    f"VALUES (%s, %s, {', '.join(['%s'] * len(columns))})",
                    [(ns, table, *row) for row in saved[key]],
                )
        conn.commit()
        cur.execute(f"FLUSH TABLES {quote(ns)}.{quote(table)}")


def _add_online(conn, ddl: str) -> float:
    """Run ``ddl`` with ALGORITHM=INPLACE, LOCK=NONE unless it names an algorithm (without them
    where the server refuses them for this index, e.g. a functional key part); its seconds."""
    online = ddl
    if not re.search(r"\bALGORITHM\b", ddl, re.I):
        alter = ddl.lstrip()[:5].upper() == "ALTER"
        online = ddl + (", ALGORITHM=INPLACE, LOCK=NONE" if alter else " ALGORITHM=INPLACE LOCK=NONE")
    with conn.cursor() as cur:
        for statement in dict.fromkeys([online, ddl]):
            try:
                start = time.perf_counter()
                cur.execute(statement)
                return time.perf_counter() - start
            except pymysql.err.OperationalError as exc:
                if statement == ddl or exc.args[0] not in _NOT_ONLINE:
                    raise
    raise AssertionError("unreachable")


def _statistics_of_new_index(
    conn, ns: str, table: str, name: str, saved: dict[str, list], built: Sequence[str]
) -> None:
    """Persisted statistics for index ``name`` (an ALTER that rebuilds the table writes none, and
    removes the others': ANALYZE TABLE then) and those ``built`` before it in the trial, every
    other index's and the table's as ``saved``."""
    with conn.cursor() as cur:
        cur.execute(
            "SELECT 1 FROM mysql.innodb_index_stats WHERE database_name = %s AND table_name = %s "
            "AND index_name = %s AND stat_name = 'size'",
            (ns, table, name),
        )
        if cur.fetchone() is None:
            cur.execute(f"ANALYZE TABLE {quote(ns)}.{quote(table)}")
            cur.fetchall()
    _restore_statistics_rows(conn, ns, table, saved, keep=[*built, name])


@contextlib.contextmanager
def index_trial(
    conn, ns: str, indexes: Sequence[tuple[str, str, str, str]], wait_s: float
) -> Iterator[list[float]]:
    """Each of ``indexes`` ((table, name, ddl, drop): index ``name`` on ``table`` of ``ns``, made by
    ``ddl``) added for real on ``conn`` (a :func:`trial_connection` using ``ns``) in turn, each
    ``drop`` run at the end (in reverse); yields the seconds each ALTER took. Before them: the
    trial's named lock (waited for up to ``wait_s``: one trial at a time in a database) and a
    meta row recording each, committed. While present, the tables' persisted statistics are as
    before and each new index has its own (its size on disk); at the end they are exactly as
    before, and the records are removed."""
    from dbbench.errors import DbbenchError

    with _trials_locked(conn, ns, wait_s):
        saved = {
            table: _statistics_rows(conn, ns, table) for table in dict.fromkeys(t for t, _, _, _ in indexes)
        }
        records = {
            _trial_key(name): _json.dumps({"index": name, "table": table, "statistics": saved[table]})
            for table, name, _, _ in indexes
        }
        write_meta(conn, ns, records)
        conn.commit()
        try:
            seconds: list[float] = []
            for table, name, ddl, _ in indexes:
                seconds.append(_add_online(conn, ddl))
                if not _has_index(conn, ns, table, name):
                    raise DbbenchError(f"{ddl!r} made no index {name!r} on {ns}.{table}")
                built = [n for t, n, _, _ in indexes[: len(seconds) - 1] if t == table]
                _statistics_of_new_index(conn, ns, table, name, saved[table], built)
            yield seconds
        finally:
            for table, name, _, drop in reversed(indexes):
                if _has_index(conn, ns, table, name):
                    execute(conn, [drop])
            for table, statistics in saved.items():
                _restore_statistics_rows(conn, ns, table, statistics)
            with conn.cursor() as cur:
                cur.execute(
                    f"DELETE FROM {quote(ns)}.{META} WHERE `key` IN ({', '.join(['%s'] * len(records))})",
                    list(records),
                )
            conn.commit()


_HIDDEN_KEY = "advise.hidden."  # + a digest of table and index: the meta row of an index hidden
_HIDDEN_KEYS = "advise.hidden.%"
_CANNOT_BE_INVISIBLE = 3522  # a primary key (or the unique key InnoDB uses as one) cannot be invisible


def _hidden_key(table: str, name: str) -> str:
    return _HIDDEN_KEY + hashlib.sha256(f"{table}\0{name}".encode()).hexdigest()[:40]


def _visible(conn, ns: str, table: str, name: str) -> bool | None:
    """Whether index ``name`` of ``table`` is visible to the optimizer (None: no such index)."""
    with conn.cursor() as cur:
        cur.execute(
            "SELECT MIN(is_visible) FROM information_schema.statistics WHERE table_schema = %s "
            "AND table_name = %s AND index_name = %s",
            (ns, table, name),
        )
        (found,) = cur.fetchone()
    conn.rollback()
    return None if found is None else found == "YES"


def _set_visible(conn, ns: str, table: str, name: str) -> None:
    execute(conn, [f"ALTER TABLE {quote(ns)}.{quote(table)} ALTER INDEX {quote(name)} VISIBLE"])


@contextlib.contextmanager
def index_hidden(conn, ns: str, indexes: Sequence[tuple[str, str]], wait_s: float) -> Iterator[list[str]]:
    """Each of ``indexes`` ((table, name) of ``ns``) made INVISIBLE on ``conn`` (a
    :func:`trial_connection` using ``ns``; metadata only, instant) for the block, VISIBLE again at
    the end; yields "" for each (nothing goes with an invisible index). Before it: the trial's
    named lock (waited for up to ``wait_s``) and a meta row per index recording it and its
    table's persisted statistics, committed; at the end the statistics are as before and the
    records are removed. Refused (DbbenchError) for an index already invisible and for one the
    server cannot hide (a primary key, or the unique key InnoDB clusters by)."""
    from dbbench.errors import CannotHide, DbbenchError

    for table, name in indexes:
        visible = _visible(conn, ns, table, name)
        if visible is None:
            raise DbbenchError(f"no index {name!r} on {ns}.{table}")
        if not visible:
            raise CannotHide(
                f"index {name!r} on {ns}.{table} is invisible already: the optimizer never uses it"
            )
        if name == "PRIMARY":
            raise CannotHide(f"MySQL cannot make a primary key invisible ({ns}.{table})")
    with _trials_locked(conn, ns, wait_s):
        saved = {table: _statistics_rows(conn, ns, table) for table in dict.fromkeys(t for t, _ in indexes)}
        keys = {
            _hidden_key(table, name): _json.dumps({"index": name, "table": table, "statistics": saved[table]})
            for table, name in indexes
        }
        write_meta(conn, ns, keys)
        conn.commit()
        try:
            for table, name in indexes:
                try:
                    execute(
                        conn, [f"ALTER TABLE {quote(ns)}.{quote(table)} ALTER INDEX {quote(name)} INVISIBLE"]
                    )
                except pymysql.err.MySQLError as exc:
                    if exc.args[0] == _CANNOT_BE_INVISIBLE:
                        raise CannotHide(
                            f"MySQL cannot make index {name!r} invisible: InnoDB uses it as {ns}.{table}'s primary key"
                        ) from None
                    raise
            yield [""] * len(indexes)
        finally:
            for table, name in indexes:
                if _visible(conn, ns, table, name) is False:
                    _set_visible(conn, ns, table, name)
            for table, statistics in saved.items():
                if _statistics_rows(conn, ns, table) != statistics:
                    _restore_statistics_rows(conn, ns, table, statistics)
            with conn.cursor() as cur:
                cur.execute(
                    f"DELETE FROM {quote(ns)}.{META} WHERE `key` IN ({', '.join(['%s'] * len(keys))})",
                    list(keys),
                )
            conn.commit()


def _hidden_records(conn, ns: str) -> list[str]:
    return [v for k, v in read_meta(conn, ns).items() if k.startswith(_HIDDEN_KEY)]


def index_keys(conn, ns: str) -> list[tuple[str, str, str, tuple[str, ...], str]]:
    """(table, index, primary|unique|index, key parts (a column's name, else the expression), definition)
    of every index of ``ns``'s tables, in that order."""
    with conn.cursor() as cur:
        cur.execute(
            "SELECT table_name, index_name, column_name, expression FROM information_schema.statistics "
            "WHERE table_schema = %s ORDER BY table_name, index_name, seq_in_index",
            (ns,),
        )
        rows = cur.fetchall()
    conn.rollback()
    parts: dict[tuple[str, str], list[str]] = {}
    for table, index, column, expression in rows:
        parts.setdefault((str(table), str(index)), []).append(
            str(column if column is not None else expression)
        )
    definitions = {(t, i): d for t, i, d in index_definitions(conn, ns)}
    out = []
    for (table, index), columns in parts.items():
        definition = definitions[(table, index)]
        kind = "primary" if index == "PRIMARY" else "unique" if definition.startswith("UNIQUE") else "index"
        out.append((table, index, kind, tuple(columns), definition))
    return out


def _trial_indexes(conn, ns: str) -> dict[str, str]:
    """Index -> table of every ``dbbench_adv_…`` index in ``ns``."""
    with conn.cursor() as cur:
        cur.execute(
            "SELECT DISTINCT index_name, table_name FROM information_schema.statistics "
            "WHERE table_schema = %s AND index_name LIKE 'dbbench\\_adv\\_%%'",
            (ns,),
        )
        return {str(i): str(t) for i, t in cur.fetchall()}


def _trial_records(conn, ns: str) -> list[str]:
    return [v for k, v in read_meta(conn, ns).items() if k.startswith(_TRIAL_KEY)]


def recover_index_trials(conn, ns: str, wait_s: float) -> list[str]:
    """Undo every trial in flight in ``ns`` whose session is gone: drop each ``dbbench_adv_…``
    index (recorded or not), put back the persisted statistics its record saved, remove the
    records; make visible again each index a killed run hid (:func:`index_hidden`); committed.
    Only in a database that is dbbench's, and only once the trials' lock is free (waited for up
    to ``wait_s``): a live trial is left alone. The names dropped, then those made visible."""
    if namespace_state(conn, ns) not in ("complete", "incomplete"):
        conn.rollback()
        return []
    if not _trial_records(conn, ns) and not _trial_indexes(conn, ns) and not _hidden_records(conn, ns):
        conn.rollback()
        return []
    conn.rollback()
    lock = _trial_lock(ns)
    if not _get_lock(conn, lock, wait_s):
        return []
    try:
        records, found = _trial_records(conn, ns), _trial_indexes(conn, ns)
        conn.rollback()
        if _table_exists(conn, ns, _WRITE_COPY):
            execute(conn, [f"DROP TABLE {quote(ns)}.{quote(_WRITE_COPY)}"])
        for name, table in sorted(found.items()):
            execute(conn, [f"ALTER TABLE {quote(ns)}.{quote(table)} DROP INDEX {quote(name)}"])
        for text in records:
            try:
                record = _json.loads(text)
                table, saved = str(record["table"]), record["statistics"]
            except (ValueError, KeyError, TypeError):
                continue  # not a record dbbench wrote: removed below
            if _table_exists(conn, ns, table):
                _restore_statistics_rows(conn, ns, table, saved)
        shown = _restore_hidden(conn, ns)
        with conn.cursor() as cur:
            cur.execute(f"DELETE FROM {quote(ns)}.{META} WHERE `key` LIKE %s", (_TRIAL_KEYS,))
        conn.commit()
    finally:
        _release_lock(conn, lock)
    return sorted(found) + shown


def _restore_hidden(conn, ns: str) -> list[str]:
    """Each index a record says was hidden made visible again, its table's persisted statistics
    as the record saved them, the records removed (committed); the indexes made visible."""
    shown = []
    for text in _hidden_records(conn, ns):
        try:
            record = _json.loads(text)
            table, name, saved = str(record["table"]), str(record["index"]), record["statistics"]
        except (ValueError, KeyError, TypeError):
            continue  # not a record dbbench wrote: removed below
        if not _table_exists(conn, ns, table):
            continue
        if _visible(conn, ns, table, name) is False:
            _set_visible(conn, ns, table, name)
            shown.append(name)
        if _statistics_rows(conn, ns, table) != saved:
            _restore_statistics_rows(conn, ns, table, saved)
    with conn.cursor() as cur:
        cur.execute(f"DELETE FROM {quote(ns)}.{META} WHERE `key` LIKE %s", (_HIDDEN_KEYS,))
    conn.commit()
    return shown


def _table_exists(conn, ns: str, table: str) -> bool:
    with conn.cursor() as cur:
        cur.execute(
            "SELECT 1 FROM information_schema.tables WHERE table_schema = %s AND table_name = %s", (ns, table)
        )
        found = cur.fetchone() is not None
    conn.rollback()
    return found


def index_definitions(conn, ns: str) -> list[tuple[str, str, str]]:
    """(table, index, definition) of every index of ``ns``'s tables, in that order; a definition
    names its kind, key parts (prefix length, expression, direction) and visibility."""
    with conn.cursor() as cur:
        cur.execute(
            "SELECT table_name, index_name, non_unique, index_type, is_visible, column_name, expression, "
            "sub_part, collation FROM information_schema.statistics WHERE table_schema = %s "
            "ORDER BY table_name, index_name, seq_in_index",
            (ns,),
        )
        rows = cur.fetchall()
    conn.rollback()
    found: dict[tuple[str, str], tuple[str, list[str]]] = {}
    for table, index, non_unique, kind, visible, column, expression, sub_part, collation in rows:
        head = f"{'' if int(non_unique) else 'UNIQUE '}{kind}{'' if visible == 'YES' else ' INVISIBLE'}"
        part = quote(column) if column is not None else f"({expression})"
        part += f"({sub_part})" if sub_part is not None else ""
        part += " DESC" if collation == "D" else ""
        found.setdefault((str(table), str(index)), (head, []))[1].append(part)
    return [(t, i, f"{head} ({', '.join(parts)})") for (t, i), (head, parts) in found.items()]


def index_size_bytes(conn, ns: str, table: str, name: str) -> int:
    """Bytes on disk of index ``name`` (of ``table`` in ``ns``): its pages in InnoDB's persisted
    statistics (an index under trial has them) times the page size."""
    with conn.cursor() as cur:
        cur.execute(
            "SELECT s.stat_value * @@innodb_page_size FROM mysql.innodb_index_stats s "
            "WHERE s.database_name = %s AND s.table_name = %s AND s.index_name = %s AND s.stat_name = 'size'",
            (ns, table, name),
        )
        row = cur.fetchone()
    conn.rollback()
    if row is None:
        raise LookupError(f"no persisted size of index {name!r} on {ns}.{table}")
    return int(row[0])


def write_frame(conn, timeout_ms: int):
    """The frame a write-cost batch runs in (:func:`~dbbench.dialects.common.explain_frame`): a
    transaction, or a savepoint inside the caller's, always undone; yields (cursor, thread)."""
    return _explain_frame(conn, timeout_ms)


def write_copy(conn, ns: str, table: str, columns: list[str], without: str | None = None) -> str:
    """Where a write-cost batch writes: ``table`` itself. InnoDB plans from its persisted
    statistics, which rolled-back writes leave alone (the in-memory row count they move is put
    back by :func:`restore_statistics`); a copy is DDL, which commits: one ``without`` an index
    is made before the batch's frame (:func:`write_outside`)."""
    return f"{quote(ns)}.{quote(table)}"


_WRITE_COPY = "dbbench_adv_write"


@contextlib.contextmanager
def write_outside(conn, ns: str, table: str, columns: list[str], without: str | None) -> Iterator[str | None]:
    """With ``without`` (an index name, or "" for none): a copy of ``table`` in ``ns`` (CREATE
    TABLE … LIKE: its columns and indexes, no foreign key) lacking that index, holding
    ``columns`` of every row, for a write batch to write to; dropped at the end. Recorded in
    ``dbbench_meta`` before it is made, under the trials' lock: :func:`recover_index_trials`
    drops a copy a killed run left. Without ``without``: nothing (the batch writes ``table``)."""

    if without is None:
        yield None
        return
    copy, key = f"{quote(ns)}.{quote(_WRITE_COPY)}", _trial_key(_WRITE_COPY)
    with _trials_locked(conn, ns, 10):
        write_meta(conn, ns, {key: _json.dumps({"copy": _WRITE_COPY, "table": table})})
        conn.commit()
        try:
            cols = ", ".join(quote(c) for c in columns)
            statements = [
                f"DROP TABLE IF EXISTS {copy}",
                f"CREATE TABLE {copy} LIKE {quote(ns)}.{quote(table)}",
            ]
            if without:
                statements.append(f"ALTER TABLE {copy} DROP INDEX {quote(without)}")
            statements.append(f"INSERT INTO {copy} ({cols}) SELECT {cols} FROM {quote(ns)}.{quote(table)}")
            execute(conn, statements)
            conn.commit()
            yield copy
        finally:
            conn.rollback()
            with conn.cursor() as cur:
                cur.execute(f"DROP TABLE IF EXISTS {copy}")
                cur.execute(f"DELETE FROM {quote(ns)}.{META} WHERE `key` = %s", (key,))
            conn.commit()


_SESSION_COUNTERS = ("Handler_write", "Handler_update", "Handler_delete")
_SERVER_COUNTERS = ("Innodb_rows_inserted", "Innodb_rows_updated")


def write_counters(conn, ns: str, relation: str) -> tuple[int | None, dict[str, int]]:
    """(InnoDB's redo log position in bytes, MySQL 8.0.30+, else None; the session's handler
    calls and the server's InnoDB row counts). The position and the row counts move with every
    session's writes: a difference is an upper bound of one's own."""
    names = _SESSION_COUNTERS + _SERVER_COUNTERS + ("Innodb_redo_log_current_lsn",)
    found: dict[str, int] = {}
    with conn.cursor() as cur:
        for scope, wanted in (("SESSION", _SESSION_COUNTERS), ("GLOBAL", names[len(_SESSION_COUNTERS) :])):
            cur.execute(
                f"SHOW {scope} STATUS WHERE Variable_name IN ({', '.join(['%s'] * len(wanted))})", wanted
            )
            found.update({str(k): int(v) for k, v in cur.fetchall()})
    position = found.pop("Innodb_redo_log_current_lsn", None)
    return position, {k.lower(): v for k, v in found.items()}


def trial_session(conn) -> int:
    """The server's id of ``conn``'s session (CONNECTION_ID())."""
    return int(conn.thread_id())


def end_trial_session(conn, session: int) -> None:
    """End session ``session`` (a trial's, whose client is gone or broken) from ``conn``: a
    statement it still runs stops and its lock is freed now, not when that statement ends."""
    with contextlib.suppress(pymysql.err.MySQLError), conn.cursor() as cur:  # 1094: already gone
        cur.execute(f"KILL CONNECTION {int(session)}")


# -- planner estimates (dbbench.advise) --
def estimate_plan(conn, sql: str, params: dict, timeout_ms: int, settings: dict | None = None):
    """What the optimizer alone says of ``sql``, nothing executed: ``EXPLAIN FORMAT=TREE`` read as
    :func:`run_sample` reads its plans (rows resolved before execution from ``EXPLAIN
    FORMAT=JSON``), and that document's ``query_block.cost_info.query_cost``. (tree, cost)."""
    aliases = alias_map(sql)
    with _explain_frame(conn, timeout_ms) as (cur, _):
        cur.execute("EXPLAIN FORMAT=TREE " + sql, params)
        text = cur.fetchone()[0]
        if _NOT_EXECUTABLE in text:  # a single-table UPDATE / DELETE: its plan as JSON
            from dbbench.dialects.mysql_plan import write_tree

            _json_version_1(cur)
            cur.execute("EXPLAIN FORMAT=JSON " + sql, params)
            doc = _json_plan(cur.fetchone()[0])
            tree = write_tree(doc, aliases, common.verb(sql), None, None)
        else:
            tree, _ = parse_plan(text, aliases)
            doc = _resolve_consts(cur, sql, params, tree, aliases)
    cost = (doc.get("query_block") or {}).get("cost_info", {}).get("query_cost")  # "1234.50"
    return tree, None if cost is None else float(cost)


# -- the two-session race check (dbbench.measure.race) -------------------------------------------
@contextlib.contextmanager
def race_limits(conn, settings: dict | None, timeout_ms: int, lock_wait_ms: int) -> Iterator[None]:
    """A race session's statement bounds (``max_execution_time``; ``innodb_lock_wait_timeout`` in
    whole seconds), session settings restored after; ``settings`` (PostgreSQL's planner
    settings) are not MySQL's."""
    import math

    conn.rollback()
    with conn.cursor() as cur:
        cur.execute("SELECT @@SESSION.max_execution_time, @@SESSION.innodb_lock_wait_timeout")
        previous = cur.fetchone()
        cur.execute(f"SET SESSION max_execution_time = {int(timeout_ms)}")
        cur.execute(f"SET SESSION innodb_lock_wait_timeout = {max(1, math.ceil(lock_wait_ms / 1000))}")
    try:
        yield
    finally:
        execute(
            conn,
            [
                f"SET SESSION max_execution_time = {int(previous[0])}",
                f"SET SESSION innodb_lock_wait_timeout = {int(previous[1])}",
            ],
        )


def race_cursor(conn):
    """A plain cursor: PyMySQL binds parameters on the client."""
    return conn.cursor()


_RACE_REASONS = {1205: "lock wait timeout", 3024: "statement timeout", 1317: "cancelled", 1213: "deadlock"}


def race_error(exc: BaseException) -> tuple[str, str | None]:
    """A driver error's message and, for a timeout or a deadlock, which one."""
    from verdict.files import excerpt

    code = exc.args[0] if exc.args else None
    text = str(exc.args[1]) if len(exc.args) > 1 else str(exc)
    return excerpt(text, 200), _RACE_REASONS.get(code if isinstance(code, int) else -1)


def race_session(conn) -> int:
    """How the watcher knows ``conn``'s session: its performance_schema thread id."""
    with conn.cursor() as cur:
        cur.execute("SELECT PS_CURRENT_THREAD_ID()")
        (thread,) = cur.fetchone()
    conn.rollback()
    return int(thread)


def race_cancel(admin, conn) -> None:
    """Cancel ``conn``'s running statement from ``admin`` (``KILL QUERY``: its session stays)."""
    with admin.cursor() as cur:
        cur.execute(f"KILL QUERY {int(conn.thread_id())}")
    admin.rollback()


# the row lock a session waits for, the blocking thread and the lock it holds
_RACE_WAITS = """/* dbbench race */ SELECT r.OBJECT_NAME, r.INDEX_NAME, r.LOCK_MODE, r.LOCK_DATA,
 w.BLOCKING_THREAD_ID, h.LOCK_MODE FROM performance_schema.data_lock_waits w
 JOIN performance_schema.data_locks r ON r.ENGINE = w.ENGINE AND r.ENGINE_LOCK_ID = w.REQUESTING_ENGINE_LOCK_ID
 LEFT JOIN performance_schema.data_locks h ON h.ENGINE = w.ENGINE AND h.ENGINE_LOCK_ID = w.BLOCKING_ENGINE_LOCK_ID
 WHERE w.REQUESTING_THREAD_ID = %s LIMIT 1"""
# a metadata (table) lock a session waits for
_RACE_METADATA = """/* dbbench race */ SELECT OBJECT_NAME, LOCK_TYPE FROM performance_schema.metadata_locks
 WHERE OWNER_THREAD_ID = %s AND LOCK_STATUS = 'PENDING' LIMIT 1"""


def race_wait(admin, session: int, holder: int) -> dict | None:
    """The lock thread ``session`` waits for (:func:`~dbbench.dialects.common.lock_wait`), read on
    ``admin``: a row lock from ``data_lock_waits``, else a pending metadata lock."""
    with admin.cursor() as cur:
        cur.execute(_RACE_WAITS, (session,))
        row = cur.fetchone()
        if row is not None:
            table, index, mode, data, blocker, _ = row
            return common.lock_wait(table, mode, index=index, row=data, holds=blocker == holder)
        cur.execute(_RACE_METADATA, (session,))
        row = cur.fetchone()
    return None if row is None else common.lock_wait(row[0], f"metadata {row[1]}")
