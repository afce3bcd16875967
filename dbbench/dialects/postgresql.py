"""PostgreSQL specifics: a dbbench-owned schema, COPY loading, canonical row text."""

from __future__ import annotations

import contextlib
import functools
import json
import re
import time
from typing import TYPE_CHECKING, Any

from dbbench.dialects import common
from dbbench.dialects.common import commit, execute  # noqa: F401 (commit: dialect API)
from dbbench.dialects.contract import SqlSyntax
from dbbench.dialects.encode import tsv

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Sequence

    from dbbench.dialects.plan import PlanNode

NAME = "postgresql"
NAMESPACE_KIND = "schema"
META = "dbbench_meta"
# The whole seed is one transaction: no other session sees the rows before the commit.
LOAD_COMMITTED_BEFORE_VERIFY = False


def quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def namespace_state(conn, ns: str) -> str:
    """absent | foreign | incomplete | complete: who owns ``ns`` and whether its data is whole."""
    return common.namespace_state(
        conn,
        ("SELECT 1 FROM pg_namespace WHERE nspname = %s", (ns,)),
        ("SELECT to_regclass(%s)", (f"{quote(ns)}.{META}",)),
        _read_meta(ns),
    )


def begin_reload(conn, ns: str, meta: dict[str, str]) -> None:
    """Replace the owned schema. PostgreSQL DDL is transactional: the whole seed is one transaction,
    so an interrupted seed leaves the previous dataset untouched."""
    with conn.cursor() as cur:
        cur.execute(f"DROP SCHEMA IF EXISTS {quote(ns)} CASCADE")
        cur.execute(f"CREATE SCHEMA {quote(ns)}")
        cur.execute(f"COMMENT ON SCHEMA {quote(ns)} IS 'owned by dbbench: re-created by dbbench seed'")
        cur.execute(f"SET LOCAL search_path TO {quote(ns)}")
        # no autoanalyze of the records a run writes and removes (freeze_statistics)
        cur.execute(
            f"CREATE TABLE {META} (key varchar(64) PRIMARY KEY, value text NOT NULL) "
            "WITH (autovacuum_enabled = false, toast.autovacuum_enabled = false)"
        )
        write_meta(conn, ns, {**meta, "owner": "dbbench", "state": "loading"})


def drop_namespace(conn, ns: str) -> None:
    """Drop ``ns`` if it is dbbench's (complete or not); anything else is left alone."""
    common.drop_if_ours(conn, namespace_state(conn, ns), f"DROP SCHEMA {quote(ns)} CASCADE")


def use(conn, ns: str) -> None:
    execute(conn, [f"SET search_path TO {quote(ns)}"])


def write_meta(conn, ns: str, meta: dict[str, str]) -> None:
    common.write_meta(
        conn,
        f"INSERT INTO {quote(ns)}.{META} (key, value) VALUES (%s, %s) "
        "ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
        meta,
    )


def _read_meta(ns: str) -> str:
    return f"SELECT key, value FROM {quote(ns)}.{META}"


def read_meta(conn, ns: str) -> dict[str, str]:
    return common.read_meta(conn, _read_meta(ns))


def _bytes(value: bytes) -> str:
    return "\\\\x" + value.hex()


encode_bytes = _bytes  # one bytea value as COPY text (dbbench.volume)


def encode(rows, kinds: list[str]) -> str:
    return tsv(rows, kinds, _bytes)


def bulk_load(conn, table) -> None:
    """COPY FROM STDIN, streaming the prepared file (works against any server, local or not)."""
    with (
        conn.cursor() as cur,
        open(table.files["postgresql"], "rb") as fh,
        cur.copy(f"COPY {table.name} ({', '.join(table.columns)}) FROM STDIN") as copy,
    ):
        while chunk := fh.read(1 << 20):
            copy.write(chunk)


def stream_load(
    conn, table: str, columns: list[str], binary: frozenset[str], chunks, *, emptied: bool = False
) -> None:
    """COPY FROM STDIN of ``chunks`` (COPY text, bytea already as ``\\x`` hex) as they come.
    ``emptied`` (truncated in this transaction) and a plain table: ``FREEZE``, the rows written
    already frozen and visible to all, so the ANALYZE and reads after the load do not write every
    page again to set its hint bits (a partitioned table cannot be frozen through its parent)."""
    with conn.cursor() as cur:
        if emptied:
            cur.execute("SELECT relkind = 'r' FROM pg_class WHERE oid = %s::regclass", (table,))
            emptied = bool(cur.fetchone()[0])
        freeze = " WITH (FREEZE)" if emptied else ""
        with cur.copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN{freeze}") as copy:
            for chunk in chunks:
                copy.write(chunk)


def update_from(table: str, source: str, keys: list[str], columns: list[str]) -> str:
    """UPDATE ``table`` with the ``columns`` of the ``source`` row of the same ``keys``."""
    sets = ", ".join(f"{c} = s.{c}" for c in columns)
    on = " AND ".join(f"t.{k} = s.{k}" for k in keys)
    return f"UPDATE {table} AS t SET {sets} FROM {source} AS s WHERE {on}"


def empty_tables(conn, tables: list[str]) -> None:
    """Every row of ``tables`` gone, in one TRUNCATE (foreign keys among them allow it)."""
    with conn.cursor() as cur:
        cur.execute("TRUNCATE " + ", ".join(tables))


_DEFERRED = """
SELECT 'index', i.indrelid::regclass::text, x.relname, pg_get_indexdef(i.indexrelid),
       obj_description(i.indexrelid, 'pg_class')
  FROM pg_index i JOIN pg_class x ON x.oid = i.indexrelid
 WHERE i.indrelid = ANY (%(tables)s::regclass[]) AND NOT i.indisprimary
   AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = i.indexrelid)
   AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.refobjid = i.indexrelid)
   AND NOT EXISTS (SELECT 1 FROM pg_inherits h WHERE h.inhrelid = i.indexrelid)
UNION ALL
SELECT 'foreign key', c.conrelid::regclass::text, c.conname, pg_get_constraintdef(c.oid),
       obj_description(c.oid, 'pg_constraint')
  FROM pg_constraint c WHERE c.contype = 'f' AND c.conrelid = ANY (%(tables)s::regclass[])"""


def defer_constraints(conn, tables: list[str], early: list[str]) -> Callable[[Any], None]:
    """Before a bulk load into ``tables`` (of the namespace in use; ``early`` among them hold values
    that reference rows loaded after them), in its transaction:
    drop their foreign keys and the indexes no constraint or other object needs (each row then
    costs no trigger and no index insert). Returns ``restore(conn)``: every index built again in one
    pass (with their comments), then every foreign key added again, which checks all its rows at
    once (a row referencing nothing fails the load). Primary keys and unique constraints stay."""
    with conn.cursor() as cur:
        cur.execute(_DEFERRED, {"tables": [quote(t) for t in tables]})
        found = cur.fetchall()
        for kind, table, name, _, _ in found:
            if kind == "index":
                cur.execute(f"DROP INDEX {quote(name)}")
            else:
                cur.execute(f"ALTER TABLE {table} DROP CONSTRAINT {quote(name)}")

    def restore(conn) -> None:
        with conn.cursor() as cur:
            cur.execute("SET LOCAL maintenance_work_mem = '256MB'")
            for kind, table, name, definition, comment in sorted(found, key=lambda f: f[0] != "index"):
                if kind == "index":
                    cur.execute(definition)
                    on = f"INDEX {quote(name)}"
                else:
                    cur.execute(f"ALTER TABLE {table} ADD CONSTRAINT {quote(name)} {definition}")
                    on = f"CONSTRAINT {quote(name)} ON {table}"
                if comment is not None:
                    cur.execute(f"COMMENT ON {on} IS %s", (comment,))

    return restore


_ENUMS = """SELECT t.typname, e.enumlabel FROM pg_enum e JOIN pg_type t ON t.oid = e.enumtypid
 JOIN pg_namespace n ON n.oid = t.typnamespace WHERE n.nspname = %s ORDER BY t.typname, e.enumsortorder"""
_COLUMNS = """SELECT c.table_name, c.column_name, c.data_type, c.udt_name, c.is_nullable = 'YES',
       c.character_maximum_length, c.numeric_precision, c.numeric_scale, c.is_generated = 'ALWAYS',
       c.is_identity = 'YES' OR COALESCE(c.column_default, '') LIKE 'nextval(%%'
  FROM information_schema.columns c JOIN information_schema.tables t
    ON t.table_schema = c.table_schema AND t.table_name = c.table_name AND t.table_type = 'BASE TABLE'
 WHERE c.table_schema = %s ORDER BY c.table_name, c.ordinal_position"""


def schema_columns(conn, ns: str) -> list[tuple]:
    """(table, column, type, nullable, max length, precision, scale, generated, auto, enum labels)
    of every column of ``ns``'s tables; an enum's type is ``enum``."""
    with conn.cursor() as cur:
        cur.execute(_ENUMS, (ns,))
        enums: dict[str, list[str]] = {}
        for name, label in cur.fetchall():
            enums.setdefault(name, []).append(label)
        cur.execute(_COLUMNS, (ns,))
        out = []
        for table, column, dtype, udt, *rest in cur.fetchall():
            labels = enums.get(udt) if dtype == "USER-DEFINED" else None
            out.append((table, column, "enum" if labels else dtype.lower(), *rest, labels))
        return out


_KEYS = """
SELECT c.relname, con.conname, con.contype::text,
       ARRAY(SELECT a.attname::text FROM unnest(con.conkey) WITH ORDINALITY k(n, i)
             JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.n ORDER BY k.i),
       f.relname::text,
       ARRAY(SELECT a.attname::text FROM unnest(con.confkey) WITH ORDINALITY k(n, i)
             JOIN pg_attribute a ON a.attrelid = con.confrelid AND a.attnum = k.n ORDER BY k.i),
       pg_get_constraintdef(con.oid)
  FROM pg_constraint con JOIN pg_class c ON c.oid = con.conrelid
  JOIN pg_namespace n ON n.oid = c.relnamespace LEFT JOIN pg_class f ON f.oid = con.confrelid
 WHERE n.nspname = %(ns)s AND con.contype IN ('p', 'u', 'f', 'c')
UNION ALL
SELECT c.relname, i.relname, 'u',
       ARRAY(SELECT a.attname::text FROM unnest(x.indkey::int2[]) WITH ORDINALITY k(n, o)
             JOIN pg_attribute a ON a.attrelid = x.indrelid AND a.attnum = k.n ORDER BY k.o),
       NULL, ARRAY[]::text[], pg_get_indexdef(x.indexrelid)
  FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class c ON c.oid = x.indrelid
  JOIN pg_namespace n ON n.oid = c.relnamespace
 WHERE n.nspname = %(ns)s AND x.indisunique AND NOT 0 = ANY (x.indkey::int2[])
   AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = x.indexrelid)
 ORDER BY 1, 2"""
_KEY_KINDS = {"p": "primary", "u": "unique", "f": "foreign", "c": "check"}


def schema_keys(conn, ns: str) -> list[tuple]:
    """(table, name, primary|unique|foreign|check, columns, referenced table, referenced columns,
    definition) of every key, unique index and check constraint of ``ns``'s tables."""
    with conn.cursor() as cur:
        cur.execute(_KEYS, {"ns": ns})
        return [
            (t, name, _KEY_KINDS[kind], tuple(cols), ref, tuple(ref_cols), text)
            for t, name, kind, cols, ref, ref_cols, text in cur.fetchall()
        ]


def freeze_statistics(conn, tables: list[str]) -> None:
    """No autovacuum / autoanalyze on the owned tables: only an explicit ANALYZE changes their
    statistics. Otherwise autoanalyze re-samples a table soon after the seed's own ANALYZE (seen on
    group_binding here), and every sample drawn differs, so plans could change between runs. A
    partitioned table has no storage options (autovacuum works on its partitions): skipped."""
    with conn.cursor() as cur:
        for t in tables:
            cur.execute("SELECT relkind FROM pg_class WHERE oid = %s::regclass", (t,))
            if cur.fetchone()[0] != "p":
                cur.execute(
                    f"ALTER TABLE {t} SET (autovacuum_enabled = false, toast.autovacuum_enabled = false)"
                )


def analyze(conn, tables: list[str]) -> None:
    """Freeze the owned tables' statistics (see :func:`freeze_statistics`), then ANALYZE them."""
    freeze_statistics(conn, tables)
    execute(conn, [f"ANALYZE {t}" for t in tables])


def restore_statistics(conn, ns: str) -> bool:
    """Nothing to restore: PostgreSQL plans from pg_statistic and the relation's page and tuple
    counts, which a rolled-back write does not change (autoanalyze is off on owned tables)."""
    return True


_SETTLE_KEY = "settle.pending"  # dbbench_meta: tables rolled-back writes may have grown, not yet settled


def settle_pending(conn, ns: str, tables: list[str]) -> None:
    """Record (committed) that rolled-back writes are about to grow ``tables``, before they run:
    a run killed before :func:`settle_writes` leaves the record, and the next run settles them
    (:func:`recover_settle`)."""
    held = json.loads(read_meta(conn, ns).get(_SETTLE_KEY) or "[]")
    write_meta(conn, ns, {_SETTLE_KEY: json.dumps(sorted({*held, *tables}))})
    conn.commit()


def settle_writes(conn, ns: str, tables: list[str]) -> None:
    """After rolled-back inserts or updates into ``tables``: ``VACUUM FULL`` each (outside a
    transaction, then back as the connection was), and the record of :func:`settle_pending`
    removed. A rolled-back row version stays in the table and its indexes (an update that found
    no room on its page grew both); left there, later reads step over it and later plans cost
    the grown files. ``VACUUM FULL`` writes the table and its indexes again as a bulk load builds
    them (the sizes the seed left: about 0.4 s per 100k rows, the table locked meanwhile).
    Autovacuum is off on owned tables (frozen statistics): dbbench removes what it left. A
    rolled-back delete leaves nothing to remove."""
    conn.rollback()
    was = conn.autocommit
    conn.autocommit = True
    try:
        with conn.cursor() as cur:
            for table in tables:
                cur.execute(_CLASS_COUNTS, {"t": f"{quote(ns)}.{quote(table)}"})
                counts = cur.fetchall()  # what plans were made from: VACUUM FULL recounts them
                cur.execute(f"VACUUM FULL {quote(ns)}.{quote(table)}")
                _restore_counts(cur, counts)
            cur.execute(f"DELETE FROM {quote(ns)}.{META} WHERE key = %s", (_SETTLE_KEY,))
    finally:
        conn.autocommit = was


# a table's and its indexes' page and row counts, the planner's statistics VACUUM FULL rewrites
_CLASS_COUNTS = """/* dbbench */ SELECT c.oid, c.relpages, c.reltuples FROM pg_class c
 WHERE c.oid = %(t)s::regclass OR c.oid IN (SELECT indexrelid FROM pg_index WHERE indrelid = %(t)s::regclass)"""


def _restore_counts(cur, counts: list[tuple]) -> None:
    """Put back the page and row counts the planner read before a ``VACUUM FULL`` (which counts
    the rows again: an exact count where the seed's ANALYZE sampled would change later plans).
    Only a superuser may; elsewhere the recounted values stay."""
    cur.execute("SELECT rolsuper FROM pg_roles WHERE rolname = current_user")
    row = cur.fetchone()
    if not (row and row[0]):
        return
    for oid, pages, tuples in counts:
        cur.execute("UPDATE pg_class SET relpages = %s, reltuples = %s WHERE oid = %s", (pages, tuples, oid))


def unchanged_digests(conn, ns: str, tables: list[str]) -> dict[str, str]:
    """Per table, its row count and a sum over its visible row versions, each a hash of where it is
    and which transaction wrote it (``ctid``, ``xmin``): a committed insert, update or delete moves
    it (an update that writes the same values too); a rolled-back one leaves every visible version
    where it was. One scan of each table, no row turned into text (the :func:`fingerprint_sql` of a
    seed costs three to four times as much). Compared only within one run: a ``VACUUM FULL`` moves
    every row."""
    if not tables:
        return {}
    sql = " UNION ALL ".join(
        f"SELECT {i}, COUNT(*), COALESCE(SUM(hashtext(t.ctid::text || ':' || t.xmin::text)::bigint), 0) "
        f"FROM {quote(ns)}.{quote(table)} t"
        for i, table in enumerate(tables)
    )
    with conn.cursor() as cur:
        cur.execute(sql)
        return {tables[i]: f"{count}:{total}" for i, count, total in cur.fetchall()}


def recover_settle(conn, ns: str) -> list[str]:
    """Settle what a killed run's rolled-back writes left (:func:`settle_pending`); the tables."""
    tables = json.loads(read_meta(conn, ns).get(_SETTLE_KEY) or "[]")
    conn.rollback()
    if tables:
        settle_writes(conn, ns, [str(t) for t in tables])
    return tables


def statistics_frozen(conn, ns: str) -> dict[str, bool]:
    """Table -> whether autovacuum (and so autoanalyze) is off for it."""
    with conn.cursor() as cur:
        cur.execute(
            "SELECT c.relname, c.reloptions FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = %s AND c.relkind = 'r' AND c.relname <> %s",
            (ns, META),
        )
        return {name: "autovacuum_enabled=false" in (opts or []) for name, opts in cur.fetchall()}


_CANONICAL = {
    "bytes": "encode({c}, 'hex')",
    "datetime": "to_char({c}, 'YYYY-MM-DD HH24:MI:SS.US')",
    "bool": "({c})::int::text",
    "text": "({c})::text",
}


def canonical(column: str, kind: str) -> str:
    """SQL text of one column, identical on both dialects for identical values."""
    return common.canonical(column, kind, _CANONICAL, "'\\N'")


def fingerprint_sql(table: str, row_text: str) -> str:
    """Order-independent: row count and the sum of 60-bit prefixes of each row's SHA-256."""
    return (
        f"SELECT COUNT(*), COALESCE(SUM(('x' || substr(encode(sha256(convert_to({row_text}, 'UTF8')), 'hex'), 1, 15))::bit(60)::bigint), 0) "
        f"FROM {table}"
    )


_MOST_ARGUMENTS = 100  # a PostgreSQL function takes at most 100 arguments (FUNC_MAX_ARGS)


def concat(parts: list[str]) -> str:
    """The parts (text, never NULL: :func:`canonical`) joined by ``|``; a wide table's (zabbix has
    tables of over 100 columns) passed as one array, the same text."""
    if len(parts) < _MOST_ARGUMENTS:
        return "concat_ws('|', " + ", ".join(parts) + ")"
    return "concat_ws('|', VARIADIC ARRAY[" + ", ".join(parts) + "]::text[])"


# -- setup SQL (dbbench.setup.loader) ---------------------------------------------------------------
SETUP_SYNTAX = SqlSyntax(double_quoted_identifiers=True, dollar_quotes=True, psql_input=True)
# One transaction the caller commits: without the namespace role it is verified before the commit.
COMMIT_EACH_SETUP_STATEMENT = False
FREEZE_EACH_CREATED_TABLE = False  # autovacuum reads autovacuum_enabled each time it looks: the end suffices
COLUMN_TYPE = "data_type"


def run_setup_statement(conn, text: str, rows: Iterable[str] | None = None) -> None:
    """One statement; a ``COPY … FROM stdin`` streams its ``rows`` (chunks of COPY text) to the server."""
    with conn.cursor() as cur:
        if rows is None:
            cur.execute(text)
            return
        with cur.copy(text) as copy:
            for chunk in rows:
                copy.write(chunk)


_OUTSIDE = (
    "n.nspname <> %(ns)s AND n.nspname <> 'pg_catalog' AND n.nspname NOT LIKE 'pg\\_temp\\_%%' "
    "AND n.nspname NOT LIKE 'pg\\_toast%%'"
)


def outside_relations(conn, ns: str) -> dict[int, str]:
    """Every relation outside ``ns`` (and the system schemas) before the setup runs."""
    with conn.cursor() as cur:
        cur.execute(
            "SELECT c.oid, n.nspname || '.' || c.relname FROM pg_class c "
            f"JOIN pg_namespace n ON n.oid = c.relnamespace WHERE {_OUTSIDE}",
            {"ns": ns},
        )
        return dict(cur.fetchall())


def outside_changes(conn, ns: str, before: dict[int, str]) -> list[str]:
    """Relations outside ``ns`` that the current transaction created, altered, dropped or wrote
    rows to. Catalog rows it created carry its transaction id; any write, DDL or drop (also from
    dynamic SQL, functions and subtransactions) holds a lock stronger than a read's on the
    relation until the transaction ends. ``before``: :func:`outside_relations` at the start."""
    with conn.cursor() as cur:
        cur.execute(
            "SELECT n.nspname || '.' || c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            f"WHERE c.xmin::text = (txid_current() %% 4294967296)::text AND {_OUTSIDE}",
            {"ns": ns},
        )
        found = [r[0] for r in cur.fetchall()]
        cur.execute(
            "SELECT l.relation, n.nspname || '.' || c.relname, "
            f"  c.oid IS NOT NULL AND {_OUTSIDE} "
            "FROM pg_locks l LEFT JOIN pg_class c ON c.oid = l.relation "
            "LEFT JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE l.pid = pg_backend_pid() AND l.locktype = 'relation' AND l.granted "
            "AND l.mode NOT IN ('AccessShareLock', 'RowShareLock')",
            {"ns": ns},
        )
        for oid, name, outside_now in cur.fetchall():
            if oid in before:
                found.append(before[oid])  # existed outside: written to, altered or dropped
            elif outside_now:
                found.append(name)  # created outside (or moved there)
    return sorted(set(found))


# -- EXPLAIN ------------------------------------------------------------------------------------
TIMEOUT_SQLSTATE = "57014"

_KINDS = {
    "Seq Scan": "full_scan",
    "Sort": "sort",
    "Incremental Sort": "sort",
    "LockRows": "lock",
    "Limit": "limit",
    "Nested Loop": "join",
    "Hash Join": "join",
    "Merge Join": "join",
    "Result": "result",
    "ModifyTable": "modify",
}


# the rows a node read and discarded (per loop, as its Actual Rows): a sequential scan returning one
# row of a million examined a million
REMOVED_ROWS = ("Rows Removed by Filter", "Rows Removed by Join Filter", "Rows Removed by Index Recheck")


def parse_plan(doc) -> tuple[PlanNode, float]:
    """``EXPLAIN (ANALYZE, FORMAT JSON)`` output → (normalized tree, Execution Time in ms); plain
    ``EXPLAIN (FORMAT JSON)`` reads the same, with no actuals (None) and 0 ms."""
    from dbbench.dialects.plan import MAX_DEPTH, PlanNode, PlanTooDeep, json_depth_exceeds, mark_subqueries

    if json_depth_exceeds(doc, 2 * MAX_DEPTH + 4):  # before the recursive walk below
        raise PlanTooDeep()
    top = doc[0] if isinstance(doc, list) else doc

    def node(p: dict, parent_table: str | None = None, parent_alias: str | None = None) -> PlanNode:
        ntype = p["Node Type"]
        # A Bitmap Index Scan reads its Bitmap Heap Scan's table, also under BitmapAnd / BitmapOr.
        combiner = ntype in ("BitmapAnd", "BitmapOr")
        inherit = ntype == "Bitmap Index Scan" or combiner
        table = p.get("Relation Name") or (parent_table if inherit else None)
        alias = p.get("Alias") or (parent_alias if inherit else None)
        if ntype in ("Index Scan", "Index Only Scan", "Bitmap Index Scan"):
            kind = "index_range" if p.get("Index Cond") else "index_scan"
        else:
            kind = _KINDS.get(ntype, ntype.lower().replace(" ", "_"))
        shown = ntype + (" Backward" if p.get("Scan Direction") == "Backward" else "")
        if ntype == "ModifyTable":  # as the text format says it: "Delete on t"
            shown = str(p.get("Operation") or "Modify")
        own = None if combiner else table
        label = (
            shown
            + (f" on {own}" if own else "")
            + (f" using {p['Index Name']}" if p.get("Index Name") else "")
        )
        n = PlanNode(
            kind=kind,
            label=label,
            table=own,
            alias=None if combiner else alias,
            index=p.get("Index Name"),
            est_rows=p.get("Plan Rows"),
            actual_rows=p.get("Actual Rows"),
            loops=p.get("Actual Loops"),
            actual_ms=p.get("Actual Total Time"),
            in_subquery=p.get("Parent Relationship") in ("SubPlan", "InitPlan"),
            removed_rows=float(sum(p.get(k, 0) for k in REMOVED_ROWS)),
            buffers=(p["Shared Hit Blocks"] + p.get("Shared Read Blocks", 0))
            if "Shared Hit Blocks" in p
            else None,
        )
        n.children = [node(c, table, alias) for c in p.get("Plans", [])]
        return n

    root = node(top["Plan"])
    mark_subqueries(root, is_probe=lambda n: n.in_subquery)
    return root, float(top.get("Execution Time", 0.0))


def explain_sql(sql: str) -> str:
    return f"EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) {sql}"


def planning_ms(doc) -> float | None:
    """``EXPLAIN ANALYZE``'s ``Planning Time`` (ms), None when the output has none."""
    top = doc[0] if isinstance(doc, list) else doc
    value = top.get("Planning Time") if isinstance(top, dict) else None
    return float(value) if isinstance(value, (int, float)) else None


def run_explain(conn, sql: str, params: dict, timeout_ms: int, settings: dict | None = None):
    """:func:`run_sample` as (raw plan, tree, executor ms)."""
    sample = run_sample(conn, sql, params, timeout_ms, settings)
    return sample.raw, sample.tree, sample.executor_ms


def _set_local(cur, timeout_ms: int, settings: dict | None) -> None:
    """The sample's ``statement_timeout`` and the shape's planner ``settings``, for its transaction."""
    cur.execute(f"SET LOCAL statement_timeout = {int(timeout_ms)}")
    for name, value in (settings or {}).items():
        cur.execute("SELECT set_config(%s, %s, true)", (name, str(value)))


def _in_transaction(conn) -> bool:
    import psycopg

    return conn.info.transaction_status == psycopg.pq.TransactionStatus.INTRANS


def _begin(cur) -> None:
    """An autocommit connection would commit what EXPLAIN ANALYZE executes: BEGIN (otherwise
    psycopg opens the transaction itself)."""
    if cur.connection.autocommit:
        cur.execute("BEGIN")


def _explain_frame(conn, timeout_ms: int, settings: dict | None):
    """:func:`~dbbench.dialects.common.explain_frame` with the sample's ``statement_timeout`` and
    planner ``settings`` (``SET LOCAL``, undone with it), in a cursor that reads plan JSON."""
    import psycopg
    from psycopg.types.json import set_json_loads

    from dbbench.dialects.plan import loads_plan_json

    cursor = psycopg.ClientCursor(conn)
    set_json_loads(loads_plan_json, cursor)  # a plan nested too deep is one line, not a RecursionError
    return common.explain_frame(
        conn,
        cursor,
        in_transaction=_in_transaction(conn),
        begin=_begin,
        limits=lambda cur: _set_local(cur, timeout_ms, settings),
        is_timeout=lambda exc: isinstance(exc, psycopg.errors.QueryCanceled),
        timeout=f"statement_timeout of {timeout_ms} ms",
    )


def run_sample(
    conn,
    sql: str,
    params: dict,
    timeout_ms: int,
    settings: dict | None = None,
    observer=None,
    footprint: bool = False,
):
    """One ``EXPLAIN ANALYZE`` inside a transaction that is always rolled back, with the shape's
    planner ``settings`` (``SET LOCAL``) if it declares any, as a
    :class:`~dbbench.dialects.timing.Sample`: the statement's time is ``Planning Time`` +
    ``Execution Time`` (``observer`` is MySQL's; PostgreSQL reports both itself). Raises
    TimeoutError past ``timeout_ms``. Inside the caller's open transaction (a test's
    uncommitted rows) it runs under a savepoint and rolls back to it, keeping the caller's work.
    ``footprint``: for a write or a locking read, what it locked and changed, read inside the
    transaction before the rollback (:func:`_footprint`)."""
    from dbbench.dialects.timing import Sample

    found = None
    with _explain_frame(conn, timeout_ms, settings) as (cur, _):
        before = _table_counters(cur) if footprint and common.locks_rows(sql) else None
        cur.execute(explain_sql(sql), params)
        row = cur.fetchone()
        if row is None:
            raise ValueError("no plan in EXPLAIN ANALYZE output")
        raw = row[0]
        tree, ms = parse_plan(raw)
        if before is not None:
            found = _footprint(cur, raw, tree, before)
    planned = planning_ms(raw)
    return Sample(raw, tree, ms, None if planned is None else round(planned + ms, 6), planned, found)


# this transaction's own reads and writes per table of the namespace (the search path's schema)
_XACT_COUNTERS = """/* dbbench */ SELECT relname, seq_scan, coalesce(idx_scan, 0), n_tup_ins, n_tup_upd,
 n_tup_del FROM pg_stat_xact_user_tables WHERE schemaname = current_schema()"""
# the relation locks this session holds on the namespace's tables
_RELATION_LOCKS = """/* dbbench */ SELECT c.relname, l.mode FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
 WHERE l.pid = pg_backend_pid() AND l.locktype = 'relation' AND l.granted
   AND c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'p')"""
# a foreign key of the namespace by name: the child, the parent, the child's key columns, and an
# index of the child whose leading columns are those columns (in any order), if there is one
_FOREIGN_KEY = """/* dbbench */ SELECT child.relname, parent.relname,
   ARRAY(SELECT a.attname::text FROM unnest(con.conkey) WITH ORDINALITY k(n, o)
          JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.n ORDER BY k.o),
   (SELECT ic.relname FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid
     WHERE i.indrelid = con.conrelid AND i.indisvalid AND i.indpred IS NULL
       AND ARRAY(SELECT x FROM unnest((i.indkey::int2[])[0:cardinality(con.conkey) - 1]) x ORDER BY x)
         = ARRAY(SELECT x FROM unnest(con.conkey) x ORDER BY x)
     ORDER BY ic.relname LIMIT 1)
 FROM pg_constraint con JOIN pg_class child ON child.oid = con.conrelid
 JOIN pg_class parent ON parent.oid = con.confrelid
 WHERE con.contype = 'f' AND con.conname = %s AND child.relnamespace = current_schema()::regnamespace"""


def _table_counters(cur) -> dict[str, tuple[int, ...]]:
    cur.execute(_XACT_COUNTERS)
    return {str(r[0]): tuple(int(x or 0) for x in r[1:]) for r in cur.fetchall()}


def _footprint(cur, raw, tree: PlanNode, before: dict[str, tuple[int, ...]]) -> dict:
    """What the statement locked and changed: per table, the rows it changed (inserted, updated,
    deleted: a changed row is locked until the transaction ends; cascades included) and the rows
    a ``LockRows`` node locked (``FOR UPDATE`` / ``FOR SHARE``), the relation lock modes held;
    each foreign-key trigger's time and calls, and whether the child table it scans has an index
    on the key (PostgreSQL keeps row locks in the rows themselves: ``pg_locks`` shows relations)."""
    after = _table_counters(cur)
    tables: dict[str, dict] = {}
    zero = (0, 0, 0, 0, 0)
    for name, now in after.items():
        _, _, ins, upd, dele = (a - b for a, b in zip(now, before.get(name, zero), strict=True))
        if ins or upd or dele:
            t = tables.setdefault(name, {})
            t["changed"] = {"inserted": ins, "updated": upd, "deleted": dele}
            t["rows"] = upd + dele
    for node in tree.walk():
        if node.kind == "lock":
            under = next((n.table for n in node.walk() if n.table), None)
            if under:
                t = tables.setdefault(under, {})
                t["rows"] = int(t.get("rows") or 0) + int((node.actual_rows or 0) * (node.loops or 1))
    cur.execute(_RELATION_LOCKS)
    for name, mode in cur.fetchall():
        tables.setdefault(str(name), {}).setdefault("modes", []).append(str(mode))
    cascades = []
    top = raw[0] if isinstance(raw, list) else raw
    for trig in top.get("Triggers") or []:
        name = str(trig.get("Trigger Name") or "")
        if not name.startswith(
            "RI_ConstraintTrigger_a_"
        ):  # a check on the child's side reads the parent's key
            continue
        cur.execute(_FOREIGN_KEY, (trig.get("Constraint Name"),))
        row = cur.fetchone()
        if row is None:
            continue
        child, parent, columns, index = row
        scans = after.get(child, zero)[0] - before.get(child, zero)[0]
        cascades.append(
            {
                "constraint": trig.get("Constraint Name"),
                "parent": parent,
                "child": child,
                "columns": list(columns),
                "index": index,
                "calls": trig.get("Calls"),
                "ms": trig.get("Time"),
                "child_full_scans": scans,
            }
        )
    root = tree
    affected = None
    if root.kind == "modify" and root.table:
        changed = (tables.get(root.table) or {}).get("changed") or {}
        affected = int(sum(changed.values()))
    return common.footprint(tables, cascades, affected)


def query_row(conn, sql: str, params: dict) -> dict | None:
    import psycopg
    from psycopg.rows import dict_row

    return common.query_row(conn, psycopg.ClientCursor(conn, row_factory=dict_row), sql, params)


# -- the namespace role (see dbbench.access.isolation) ---------------------------------------------------
ROLE_PRIVILEGE = "CREATEROLE"
_ROLE_MARK = "dbbench namespace role"
_SUPERUSER_ONLY = ("SUPERUSER", "REPLICATION", "BYPASSRLS")  # attributes only a superuser may alter


def refuses_data(exc: BaseException) -> bool:
    """Whether the server refused a statement for the data it would write (SQLSTATE class 23,
    an integrity constraint: a foreign key, NOT NULL, a unique key, a check; class 22, a value
    out of its type): the shape fails, not the run. A privilege refused is not one."""
    code = getattr(exc, "sqlstate", None) or ""
    return code[:2] in ("22", "23")


def is_driver_error(exc: BaseException) -> bool:
    import psycopg

    return isinstance(exc, psycopg.Error)


def open_role(conn, ns: str, role: str, password: str) -> None:
    """Create or re-arm ``role``: no attributes, member of nothing, privileges on ``ns`` only,
    able to log in with ``password`` (sent as a SCRAM verifier, so no server log holds it)."""
    from psycopg import sql

    r = sql.Identifier(role)
    with conn.cursor() as cur:
        _claim_role(cur, ns, role)
        cur.execute("SELECT rolsuper FROM pg_roles WHERE rolname = current_user")
        superuser = bool(cur.fetchone()[0])
        held = _superuser_only_held(cur, role, superuser)
        verifier = conn.pgconn.encrypt_password(password.encode(), role.encode(), b"scram-sha-256").decode()
        cur.execute(
            sql.SQL(
                "ALTER ROLE {} LOGIN NOCREATEDB NOCREATEROLE NOINHERIT CONNECTION LIMIT 16 PASSWORD {}"
            ).format(r, sql.Literal(verifier))
        )
        if held:
            cur.execute(sql.SQL("ALTER ROLE {} " + " ".join("NO" + a for a in held)).format(r))
        if not superuser:  # dbbench's own user must reach the tables the role creates
            cur.execute(sql.SQL("GRANT {} TO current_user").format(r))
        cur.execute("SELECT to_regclass(%s)", (f"{quote(ns)}.{META}",))
        if cur.fetchone()[0] is not None:  # a seed grants on the schema it creates (grant_namespace)
            _grant_namespace(cur, ns, role)


def grant_namespace(conn, ns: str, role: str) -> None:
    """Give ``role`` its privileges on the schema ``ns`` just created (in that transaction)."""
    with conn.cursor() as cur:
        _grant_namespace(cur, ns, role)


def _claim_role(cur, ns: str, role: str) -> None:
    """Create ``role`` (no login yet, marked as dbbench's), or take back every membership of the
    one dbbench made before; a role of that name that is not dbbench's is refused."""
    from psycopg import sql

    from dbbench.errors import NotOurs

    r = sql.Identifier(role)
    cur.execute("SELECT oid, shobj_description(oid, 'pg_authid') FROM pg_roles WHERE rolname = %s", (role,))
    row = cur.fetchone()
    if row is None:
        cur.execute(sql.SQL("CREATE ROLE {} NOLOGIN").format(r))
        cur.execute(
            sql.SQL("COMMENT ON ROLE {} IS {}").format(
                r, sql.Literal(f"{_ROLE_MARK} for schema {ns}: runs its catalog SQL")
            )
        )
    elif not str(row[1] or "").startswith(_ROLE_MARK):
        raise NotOurs(
            f"a role named {role!r} exists and is not dbbench's; nothing was changed. Choose "
            "another --namespace or remove the role yourself"
        )
    else:
        cur.execute(
            "SELECT b.rolname FROM pg_auth_members m JOIN pg_roles b ON b.oid = m.roleid WHERE m.member = %s",
            (row[0],),
        )
        for (granted,) in cur.fetchall():
            cur.execute(sql.SQL("REVOKE {} FROM {}").format(sql.Identifier(granted), r))


def _superuser_only_held(cur, role: str, superuser: bool) -> list[str]:
    """The attributes of ``role`` only a superuser may remove; refused unless we are one.

    Only a superuser may name SUPERUSER, REPLICATION or BYPASSRLS in ALTER ROLE, even to turn
    them off ("must be superuser to alter superusers"), so they are named only when the role
    has one: never when a CREATEROLE user made it, only when a superuser gave it one since."""
    from dbbench.errors import DbbenchError

    cur.execute("SELECT rolsuper, rolreplication, rolbypassrls FROM pg_roles WHERE rolname = %s", (role,))
    held = [a for a, on in zip(_SUPERUSER_ONLY, cur.fetchone()) if on]
    if held and not superuser:
        raise DbbenchError(
            f"the namespace role {role!r} has {', '.join(held)}, which only a superuser may "
            f"remove; the role is left as it is. Have a superuser run DROP ROLE {role} (or ALTER ROLE "
            f"{role} {' '.join('NO' + a for a in held)})"
        )
    return held


def _grant_namespace(cur, ns: str, role: str) -> None:
    """``role``'s privileges: create and use in schema ``ns``, its tables and sequences; read-only
    on dbbench's marker table."""
    from psycopg import sql

    r, s = sql.Identifier(role), sql.Identifier(ns)
    cur.execute(sql.SQL("GRANT USAGE, CREATE ON SCHEMA {} TO {}").format(s, r))
    cur.execute(
        sql.SQL(
            "GRANT SELECT, INSERT, UPDATE, DELETE, TRUNCATE, REFERENCES, TRIGGER "
            "ON ALL TABLES IN SCHEMA {} TO {}"
        ).format(s, r)
    )
    cur.execute(sql.SQL("GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA {} TO {}").format(s, r))
    cur.execute(sql.SQL("REVOKE ALL ON {}.{} FROM {}").format(s, sql.Identifier(META), r))
    cur.execute(sql.SQL("GRANT SELECT ON {}.{} TO {}").format(s, sql.Identifier(META), r))


def close_role(conn, role: str) -> None:
    """No more logins for ``role`` (its password is gone too)."""
    from psycopg import sql

    with conn.cursor() as cur:
        cur.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (role,))
        if cur.fetchone():
            cur.execute(sql.SQL("ALTER ROLE {} NOLOGIN PASSWORD NULL").format(sql.Identifier(role)))


_OWNED_OUTSIDE = """
SELECT n.nspname || '.' || c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
 WHERE c.relowner = %(oid)s::oid AND n.nspname <> %(ns)s AND n.nspname NOT LIKE 'pg\\_temp\\_%%'
   AND n.nspname NOT LIKE 'pg\\_toast%%'
UNION ALL
SELECT n.nspname || '.' || p.proname || '()' FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
 WHERE p.proowner = %(oid)s::oid AND n.nspname <> %(ns)s AND n.nspname NOT LIKE 'pg\\_temp\\_%%'
UNION ALL
SELECT n.nspname || '.' || t.typname FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
 WHERE t.typowner = %(oid)s::oid AND n.nspname <> %(ns)s AND n.nspname NOT LIKE 'pg\\_temp\\_%%'
   AND t.typrelid = 0 AND t.typelem = 0
UNION ALL
SELECT 'schema ' || n.nspname FROM pg_namespace n WHERE n.nspowner = %(oid)s::oid AND n.nspname <> %(ns)s
   AND n.nspname NOT LIKE 'pg\\_temp\\_%%' AND n.nspname NOT LIKE 'pg\\_toast\\_temp\\_%%'
UNION ALL
SELECT 'large object ' || l.oid FROM pg_largeobject_metadata l WHERE l.lomowner = %(oid)s::oid
"""


def owned_outside(conn, ns: str, role: str) -> list[str]:
    """Objects ``role`` owns in this database outside ``ns`` (temporary ones excepted)."""
    with conn.cursor() as cur:
        cur.execute("SELECT oid FROM pg_roles WHERE rolname = %s", (role,))
        row = cur.fetchone()
        if row is None:
            return []
        cur.execute(f"SELECT * FROM ({_OWNED_OUTSIDE}) x ORDER BY 1", {"ns": ns, "oid": row[0]})
        return [str(r[0]) for r in cur.fetchall()]


def drop_owned(conn, role: str) -> None:
    from psycopg import sql

    with conn.cursor() as cur:
        cur.execute(sql.SQL("DROP OWNED BY {} CASCADE").format(sql.Identifier(role)))


def drop_role(conn, ns: str, role: str) -> None:
    """Drop the namespace role if it is dbbench's (its comment says so); otherwise leave it."""
    from psycopg import sql

    with conn.cursor() as cur:
        cur.execute("SELECT shobj_description(oid, 'pg_authid') FROM pg_roles WHERE rolname = %s", (role,))
        row = cur.fetchone()
        if row is None or not str(row[0] or "").startswith(_ROLE_MARK):
            return
        cur.execute(sql.SQL("DROP OWNED BY {} CASCADE").format(sql.Identifier(role)))
        cur.execute(sql.SQL("DROP ROLE {}").format(sql.Identifier(role)))


# -- generic plans and captured statements (issue 24) ---------------------------------------------
GENERIC_PLAN = "generic plan (PREPARE / EXECUTE under plan_cache_mode = force_generic_plan)"
GROUPING_HINT = ""  # the same GROUP BY in memory already (a hash aggregate: 0.2 s for those 100k paths)


def run_explain_generic(conn, sql: str, params: dict, timeout_ms: int, settings: dict | None = None):
    """``EXPLAIN ANALYZE EXECUTE`` of ``sql`` prepared with ``$n`` parameters under
    ``plan_cache_mode = force_generic_plan`` and the shape's planner ``settings``: the plan a
    driver's prepared statement gets after its fifth execution, made without looking at the
    values. Rolled back as :func:`run_explain`; the prepared statement is deallocated (it outlives
    a rollback)."""
    text, values = common.positional(sql, params, numbered=True)
    in_tx = _in_transaction(conn)
    prepared = False
    try:
        with _explain_frame(conn, timeout_ms, settings) as (cur, _):
            cur.execute("SET LOCAL plan_cache_mode = force_generic_plan")
            cur.execute(f"PREPARE dbbench_generic AS {text}")
            prepared = True
            args = "(" + ", ".join(["%s"] * len(values)) + ")" if values else ""
            cur.execute(f"{explain_sql('EXECUTE dbbench_generic' + args)}", values or None)
            row = cur.fetchone()
            if row is None:
                raise ValueError("no plan in EXPLAIN ANALYZE output")
            tree, ms = parse_plan(row[0])
        return row[0], tree, ms
    finally:
        if prepared:  # after the undo: a PREPARE outlives a rollback
            with conn.cursor() as cur:
                cur.execute("DEALLOCATE dbbench_generic")
            if not in_tx:
                conn.rollback()


def _stat_statements_problem(cur) -> str | None:
    """Why pg_stat_statements cannot be read here, if it cannot (created when it can be)."""
    cur.execute("SELECT current_setting('shared_preload_libraries')")
    if "pg_stat_statements" not in cur.fetchone()[0]:
        return (
            "pg_stat_statements is not loaded (shared_preload_libraries); `dbbench servers up` "
            "loads it in the local server; on your own server add it to shared_preload_libraries, "
            "restart it and run CREATE EXTENSION pg_stat_statements (or capture with --only mysql)"
        )
    cur.execute("SELECT 1 FROM pg_extension WHERE extname = 'pg_stat_statements'")
    if cur.fetchone() is None:
        try:
            cur.execute("CREATE EXTENSION pg_stat_statements")
        except Exception as exc:  # psycopg.Error: not allowed to
            return f"CREATE EXTENSION pg_stat_statements failed ({str(exc).splitlines()[0]}): have a superuser run it"
    return None


def captured_statements(conn, ns: str) -> list[tuple[str, int]]:
    """(text with ``$n`` parameters, calls) of every statement pg_stat_statements recorded in this
    database. Raises DbbenchError saying how to enable it when it is not loaded."""
    with common.statement_statistics(conn, _stat_statements_problem, keep=False) as cur:
        conn.commit()  # the extension, if it was just created
        cur.execute(
            "/* dbbench */ SELECT query, calls FROM pg_stat_statements "
            "WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) "
            "ORDER BY calls DESC, query"
        )
        return [(str(q), int(c)) for q, c in cur.fetchall()]


def reset_captured(conn) -> None:
    """Forget every statement pg_stat_statements recorded (before the run to capture)."""
    with common.statement_statistics(conn, _stat_statements_problem, keep=True) as cur:
        cur.execute("SELECT pg_stat_statements_reset()")


# -- index trials (dbbench.advise) --
# CREATE INDEX is transactional: an index under trial lives in one transaction that is rolled back
# at the end, and the server rolls it back itself when the client dies (Ctrl-C, kill -9).
TRIAL_IN_TRANSACTION = True
_IDENT = r'(?:"(?:[^"]|"")+"|[A-Za-z_][A-Za-z0-9_$]*)'
_QUALIFIED = rf"(?:(?P<schema>{_IDENT})\s*\.\s*)?(?P<table>{_IDENT})"
# the one statement a trial may run: its index name, table and the parenthesised rest
TRIAL_CREATE: tuple[re.Pattern[str], ...] = (
    re.compile(
        rf"CREATE\s+(?:UNIQUE\s+)?INDEX\s+(?P<name>{_IDENT})\s+ON\s+(?:ONLY\s+)?{_QUALIFIED}\s*"
        r"(?:USING\s+btree\s*)?(?P<rest>\(.*)",
        re.I | re.S,
    ),
)
TRIAL_DROP: tuple[re.Pattern[str], ...] = (
    re.compile(
        rf"DROP\s+INDEX\s+(?:IF\s+EXISTS\s+)?(?:(?P<schema>{_IDENT})\s*\.\s*)?(?P<name>{_IDENT})", re.I
    ),
)
# after the key list: covered columns, storage parameters, a partial index's predicate
TRIAL_TAIL = re.compile(
    r"\s*(?:INCLUDE\s*\([^()]*\)\s*)?(?:WITH\s*\([^()]*\)\s*)?(?:WHERE\s.*)?", re.I | re.S
)
_TRIAL_SAVEPOINT = "dbbench_trial"
_TRIAL_KEYS = "advise.in\\_flight.%"  # LIKE pattern of the meta rows recording trials (MySQL's)


def identifier(text: str) -> str:
    """A name as written in SQL, as the server stores it: ``"Name"`` unquoted, a bare name folded."""
    if text.startswith('"'):
        return text[1:-1].replace('""', '"')
    return text.lower()


@functools.cache
def _trial_class() -> Any:
    import psycopg

    class TrialConnection(psycopg.Connection):
        """A connection whose open transaction holds an index under trial. While ``holding``, a
        caller's ``rollback()`` goes back to the savepoint taken after the index was built (the
        index stays) and ``commit()`` does nothing (the index is never committed): everything
        run on it is undone with the trial."""

        holding = False

        def commit(self) -> None:
            if not self.holding:
                super().commit()

        def rollback(self) -> None:
            if self.holding:
                self.execute(f"ROLLBACK TO SAVEPOINT {_TRIAL_SAVEPOINT}")
            else:
                super().rollback()

    return TrialConnection


def trial_connection(url, connect_args: dict) -> Any:
    """A connection of its own to the server of ``url`` (a SQLAlchemy URL) for one index trial."""
    from sqlalchemy.dialects.postgresql.psycopg import PGDialect_psycopg

    args, params = PGDialect_psycopg().create_connect_args(url)
    return _trial_class().connect(*args, **{**params, **connect_args})


def _index_row(cur, ns: str, name: str):
    cur.execute(
        "SELECT x.indcheckxmin, t.relname FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid "
        "JOIN pg_class t ON t.oid = x.indrelid JOIN pg_namespace n ON n.oid = i.relnamespace "
        "WHERE n.nspname = %s AND i.relname = %s",
        (ns, name),
    )
    return cur.fetchone()


@contextlib.contextmanager
def index_trial(
    conn, ns: str, indexes: Sequence[tuple[str, str, str, str]], wait_s: float
) -> Iterator[list[float]]:
    """Each of ``indexes`` ((table, name, ddl, drop): index ``name`` on ``table`` of ``ns``, made by
    ``ddl``) built in turn on ``conn`` (a :func:`trial_connection` using ``ns``) inside one
    transaction, rolled back at the end whatever happens; yields the seconds each statement took.
    Refused (DbbenchError) when they touched a relation outside ``ns`` or one made no such
    index, and when an index cannot be used inside its own transaction (``indcheckxmin``: the
    table holds row versions older snapshots may see). No ``drop`` is run: the rollback removes
    them. A trial whose transaction was ended inside the block (a raw COMMIT) has its committed
    indexes dropped and is refused."""
    from dbbench.errors import DbbenchError

    before = outside_relations(conn, ns)
    try:
        seconds = []
        with conn.cursor() as cur:
            for _, _, ddl, _ in indexes:
                start = time.perf_counter()
                cur.execute(ddl)
                seconds.append(time.perf_counter() - start)
            touched = outside_changes(conn, ns, before)
            if touched:
                raise DbbenchError(
                    f"the index trial changed relations outside schema {ns!r}: {', '.join(touched[:3])}"
                )
            for table, name, ddl, _ in indexes:
                row = _index_row(cur, ns, name)
                if row is None or row[1] != table:
                    raise DbbenchError(f"{ddl!r} made no index {name!r} on {ns}.{table}")
                if row[0]:
                    raise DbbenchError(
                        f"index {name!r} cannot be used inside the transaction that builds it: {ns}.{table} "
                        "holds row versions older transactions may still see; VACUUM it and try again"
                    )
            cur.execute(f"SAVEPOINT {_TRIAL_SAVEPOINT}")
        conn.holding = True
        yield seconds
    finally:
        conn.holding = False
        ended = conn.info.transaction_status == _idle()
        conn.rollback()
        if ended:  # the block ended the trial's transaction itself: it may have committed the indexes
            with conn.cursor() as cur:
                left = [name for _, name, _, _ in indexes if _index_row(cur, ns, name) is not None]
                for name in left:
                    cur.execute(f"DROP INDEX {quote(ns)}.{quote(name)}")
            conn.commit()
            names = ", ".join(repr(name) for _, name, _, _ in indexes)
            said = (
                "the index trial's transaction was ended inside it (a COMMIT or ROLLBACK run as SQL); "
                f"what was measured after that ran without {'index' if len(indexes) == 1 else 'indexes'} {names}"
            )
            if left:
                one = len(left) == 1
                said += (
                    f", which {'was' if one else 'were'} committed and {'is' if one else 'are'} dropped again"
                )
            raise DbbenchError(said)


def _idle():
    import psycopg

    return psycopg.pq.TransactionStatus.IDLE


def recover_index_trials(conn, ns: str, wait_s: float) -> list[str]:
    """Drop every index named ``dbbench_adv_…`` committed in ``ns`` (a trial never commits one:
    none is expected) and the trial records of its ``dbbench_meta``; committed. Only in a
    namespace that is dbbench's; an index whose table another session holds locked longer than
    ``wait_s`` (at least 1 s) is left for the next time. The names dropped."""
    if namespace_state(conn, ns) not in ("complete", "incomplete"):
        conn.rollback()
        return []
    dropped = []
    with conn.cursor() as cur:
        cur.execute(
            "SELECT indexname FROM pg_indexes WHERE schemaname = %s AND indexname LIKE 'dbbench\\_adv\\_%%' "
            "ORDER BY 1",
            (ns,),
        )
        found = [name for (name,) in cur.fetchall()]
        cur.execute(f"SELECT 1 FROM {quote(ns)}.{META} WHERE key LIKE %s LIMIT 1", (_TRIAL_KEYS,))
        if not found and cur.fetchone() is None:  # nothing to undo: nothing written
            conn.rollback()
            return []
        for name in found:
            cur.execute("SAVEPOINT dbbench_recover")
            cur.execute(f"SET LOCAL lock_timeout = {max(1000, int(wait_s * 1000))}")
            try:
                cur.execute(f"DROP INDEX {quote(ns)}.{quote(name)}")
            except Exception as exc:
                if not is_driver_error(exc):
                    raise
                cur.execute("ROLLBACK TO SAVEPOINT dbbench_recover")
                continue
            cur.execute("RELEASE SAVEPOINT dbbench_recover")
            dropped.append(name)
        cur.execute(f"DELETE FROM {quote(ns)}.{META} WHERE key LIKE %s", (_TRIAL_KEYS,))
    conn.commit()
    return dropped


_BACKED = """
SELECT con.conname, con.contype::text, pg_get_constraintdef(con.oid),
       ARRAY(SELECT format('ALTER TABLE %%I.%%I ADD CONSTRAINT %%I %%s', fn.nspname, fc.relname, f.conname,
                           pg_get_constraintdef(f.oid))
               FROM pg_constraint f JOIN pg_class fc ON fc.oid = f.conrelid
               JOIN pg_namespace fn ON fn.oid = fc.relnamespace
              WHERE f.contype = 'f' AND f.conindid = i.oid)
  FROM pg_class i JOIN pg_namespace n ON n.oid = i.relnamespace
  JOIN pg_index x ON x.indexrelid = i.oid JOIN pg_class t ON t.oid = x.indrelid
  LEFT JOIN pg_constraint con ON con.conindid = i.oid AND con.conrelid = t.oid AND con.contype IN ('p', 'u', 'x')
 WHERE n.nspname = %s AND t.relname = %s AND i.relname = %s"""


@contextlib.contextmanager
def index_hidden(conn, ns: str, indexes: Sequence[tuple[str, str]], wait_s: float) -> Iterator[list[str]]:
    """Each of ``indexes`` ((table, name) of ``ns``) dropped inside the open transaction of
    ``conn`` (a :func:`trial_connection` using ``ns``), rolled back at the end whatever happens:
    the primary key or unique constraint one backs is dropped with it, and the foreign keys that
    need it (CASCADE); yields what went with each ("" when nothing did). Waits at most ``wait_s``
    (at least 1 s) for another session's lock on a table. Nobody else sees the change; the tables
    are locked against every other session until the end. A block that ends the transaction
    itself (a raw COMMIT) has what it committed built again and is refused."""
    from dbbench.errors import DbbenchError

    undo: list[tuple[str, list[str]]] = []  # (index, the statements that build it again) each
    went: list[str] = []
    with conn.cursor() as cur:
        cur.execute(f"SET LOCAL lock_timeout = {max(1000, int(wait_s * 1000))}")
        for table, name in indexes:
            cur.execute("SELECT pg_get_indexdef(to_regclass(%s))", (f"{quote(ns)}.{quote(name)}",))
            (definition,) = cur.fetchone()
            cur.execute(_BACKED, (ns, table, name))
            row = cur.fetchone()
            if row is None or definition is None:
                raise DbbenchError(f"no index {name!r} on {ns}.{table}")
            constraint, kind, constraint_def, foreign = row
            if constraint is None:
                again = [definition]
                cur.execute(f"DROP INDEX {quote(ns)}.{quote(name)} CASCADE")
                said = ""
            else:
                where = f"{quote(ns)}.{quote(table)}"
                again = [f"ALTER TABLE {where} ADD CONSTRAINT {quote(constraint)} {constraint_def}"]
                cur.execute(f"ALTER TABLE {where} DROP CONSTRAINT {quote(constraint)} CASCADE")
                said = f"{_CONSTRAINT_KINDS.get(kind, 'constraint')} {constraint}"
            if foreign:
                said += (
                    f"{' and ' if said else ''}{len(foreign)} foreign key{'s' if len(foreign) > 1 else ''}"
                )
            undo.append((name, again + list(foreign)))
            went.append(said)
        cur.execute(f"SAVEPOINT {_TRIAL_SAVEPOINT}")
    conn.holding = True
    try:
        yield went
    finally:
        conn.holding = False
        ended = conn.info.transaction_status == _idle()
        conn.rollback()
        if ended:  # the block committed the drops: build each again, as it was
            with conn.cursor() as cur:
                for name, statements in undo:
                    if _index_row(cur, ns, name) is None:
                        for statement in statements:
                            cur.execute(statement)
            conn.commit()
            raise DbbenchError(
                "the transaction hiding indexes was ended inside it (a COMMIT or ROLLBACK run as SQL); "
                f"{', '.join(repr(n) for n, _ in undo)} built again, and what was measured after that is not evidence"
            )


_CONSTRAINT_KINDS = {"p": "primary key", "u": "unique constraint", "x": "exclusion constraint"}


_INDEX_KEYS = """
SELECT t.relname, i.relname, CASE WHEN x.indisprimary THEN 'primary' WHEN x.indisunique THEN 'unique'
       ELSE 'index' END,
       ARRAY(SELECT CASE WHEN k.n = 0 THEN pg_get_indexdef(x.indexrelid, k.i::int, true) ELSE a.attname::text END
               FROM unnest(x.indkey::int2[]) WITH ORDINALITY k(n, i)
               LEFT JOIN pg_attribute a ON a.attrelid = x.indrelid AND a.attnum = k.n
              WHERE k.i <= x.indnkeyatts ORDER BY k.i),
       pg_get_indexdef(x.indexrelid), x.indpred IS NOT NULL
  FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid
  JOIN pg_namespace n ON n.oid = t.relnamespace
 WHERE n.nspname = %s ORDER BY 1, 2"""


def index_keys(conn, ns: str) -> list[tuple[str, str, str, tuple[str, ...], str]]:
    """(table, index, primary|unique|index, key parts (a column's name, else the expression), definition)
    of every index of ``ns``'s tables, in that order (a partial index's definition holds its WHERE)."""
    with conn.cursor() as cur:
        cur.execute(_INDEX_KEYS, (ns,))
        return [(str(t), str(i), k, tuple(parts), str(d)) for t, i, k, parts, d, _ in cur.fetchall()]


def index_definitions(conn, ns: str) -> list[tuple[str, str, str]]:
    """(table, index, definition) of every index of ``ns``'s tables, in that order."""
    with conn.cursor() as cur:
        cur.execute(
            "SELECT tablename, indexname, indexdef FROM pg_indexes WHERE schemaname = %s ORDER BY 1, 2", (ns,)
        )
        return [(str(t), str(i), str(d)) for t, i, d in cur.fetchall()]


def index_size_bytes(conn, ns: str, table: str, name: str) -> int:
    """Bytes on disk of index ``name`` (of ``table`` in ``ns``), as this transaction sees it."""
    with conn.cursor() as cur:
        cur.execute(
            "SELECT pg_relation_size(i.oid) FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid "
            "JOIN pg_class t ON t.oid = x.indrelid JOIN pg_namespace n ON n.oid = i.relnamespace "
            "WHERE n.nspname = %s AND t.relname = %s AND i.relname = %s",
            (ns, table, name),
        )
        row = cur.fetchone()
    if row is None:
        raise LookupError(f"no index {name!r} on {ns}.{table}")
    return int(row[0])


def write_frame(conn, timeout_ms: int):
    """The frame a write-cost batch runs in (:func:`~dbbench.dialects.common.explain_frame`): a
    transaction, or a savepoint inside the caller's (an index trial's), always undone; yields
    (cursor, None)."""
    return _explain_frame(conn, timeout_ms, None)


_WRITE_COPY = "dbbench_adv_write"


_COPY_INDEXES = """
SELECT i.relname, pg_get_indexdef(x.indexrelid), format('INDEX %%I ON %%I.%%I USING ', i.relname, n.nspname, t.relname),
       format('INDEX %%I ON %%I USING ', i.relname, t.relname)
  FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid
  JOIN pg_namespace n ON n.oid = t.relnamespace
 WHERE x.indrelid = to_regclass(%s) ORDER BY i.relname"""


def write_copy(conn, ns: str, table: str, columns: list[str], without: str | None = None) -> str:
    """Where a write-cost batch writes: a copy of ``table`` made in the open transaction (its
    columns, defaults and checks, its ``columns``' rows, then every index this transaction sees
    on it built again, an index under trial included: sorted builds, as the seed's; no foreign
    key, no trigger; ``without``: every index but that one), undone with the batch. Writes rolled back in ``table`` itself would leave
    its heap longer (dead rows until a VACUUM, which autovacuum never runs on an owned table),
    and every later plan would count more rows."""
    from dbbench.errors import DbbenchError

    source, copy = f"{quote(ns)}.{quote(table)}", f"{quote(ns)}.{quote(_WRITE_COPY)}"
    cols = ", ".join(quote(c) for c in columns)
    with conn.cursor() as cur:
        cur.execute(f"CREATE TABLE {copy} (LIKE {source} INCLUDING ALL EXCLUDING INDEXES)")
        cur.execute(  # OVERRIDING: an identity column's values are copied too
            f"INSERT INTO {copy} ({cols}) OVERRIDING SYSTEM VALUE SELECT {cols} FROM {source}"
        )
        cur.execute("SET LOCAL maintenance_work_mem = '256MB'")
        cur.execute(_COPY_INDEXES, (source,))
        for name, definition, *forms in cur.fetchall():
            if name == without:
                continue
            form = next((f for f in forms if f in definition), None)
            if form is None:
                raise DbbenchError(f"cannot build again on a copy of {table}: {definition}")
            cur.execute(definition.replace(form, f"INDEX ON {copy} USING ", 1))
    return copy


@contextlib.contextmanager
def write_outside(conn, ns: str, table: str, columns: list[str], without: str | None) -> Iterator[None]:
    """Nothing: the copy a write batch writes is made inside its frame (:func:`write_copy`)."""
    yield None


def write_counters(conn, ns: str, relation: str) -> tuple[int | None, dict[str, int]]:
    """(the server's WAL insert position in bytes, this transaction's row counts for
    ``relation``, as :func:`write_copy` names it: inserted, updated, updated without an index
    entry (HOT)). The position moves with every session's writes: a difference is an upper
    bound of one's own."""
    with conn.cursor() as cur:
        cur.execute("SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '0/0')::bigint")
        position = int(cur.fetchone()[0])
        cur.execute(
            "SELECT n_tup_ins, n_tup_upd, n_tup_hot_upd FROM pg_stat_xact_user_tables "
            "WHERE relid = to_regclass(%s)",
            (relation,),
        )
        row = cur.fetchone() or (0, 0, 0)
    return position, dict(zip(("rows_inserted", "rows_updated", "rows_updated_hot"), map(int, row)))


def trial_session(conn) -> int:
    """The server's id of ``conn``'s session (its backend's process id)."""
    return int(conn.info.backend_pid)


def end_trial_session(conn, session: int) -> None:
    """End session ``session`` (a trial's, whose client is gone or broken) from ``conn``: its
    transaction is rolled back and its locks freed now, not when the server next reads from it."""
    with conn.cursor() as cur:
        cur.execute("SELECT pg_terminate_backend(%s)", (session,))
    conn.rollback()


# -- planner estimates (dbbench.advise) --
def estimate_plan(conn, sql: str, params: dict, timeout_ms: int, settings: dict | None = None):
    """What the planner alone says of ``sql``: plain ``EXPLAIN (FORMAT JSON)``, nothing executed, in
    the frame a sample runs in (a savepoint inside the caller's open transaction, which keeps an
    index under trial) with the shape's planner ``settings``. (tree, the top node's Total Cost)."""
    with _explain_frame(conn, timeout_ms, settings) as (cur, _):
        cur.execute(f"EXPLAIN (FORMAT JSON) {sql}", params)
        row = cur.fetchone()
    if row is None:
        raise ValueError("no plan in EXPLAIN output")
    tree, _ = parse_plan(row[0])
    top = row[0][0] if isinstance(row[0], list) else row[0]
    cost = top["Plan"].get("Total Cost")
    return tree, float(cost) if isinstance(cost, (int, float)) else None


# -- the two-session race check (dbbench.measure.race) -------------------------------------------
# PostgreSQL's tuple lock modes as the row-lock clause that takes them
_ROW_LOCKS = {
    "AccessShareLock": "FOR KEY SHARE",
    "RowShareLock": "FOR SHARE",
    "ExclusiveLock": "FOR NO KEY UPDATE",
    "AccessExclusiveLock": "FOR UPDATE",
}


@contextlib.contextmanager
def race_limits(conn, settings: dict | None, timeout_ms: int, lock_wait_ms: int) -> Iterator[None]:
    """A race session's statement bounds in a fresh transaction (``SET LOCAL``: statement and lock
    timeouts, the shape's planner settings), undone with the transaction."""
    conn.rollback()
    with conn.cursor() as cur:
        _set_local(cur, timeout_ms, settings)
        cur.execute(f"SET LOCAL lock_timeout = {int(lock_wait_ms)}")
    yield


def race_cursor(conn):
    """A cursor binding parameters as the measured samples do (client-side)."""
    import psycopg

    return psycopg.ClientCursor(conn)


_RACE_REASONS = {"55P03": "lock timeout", "57014": "statement timeout", "40P01": "deadlock"}


def race_error(exc: BaseException) -> tuple[str, str | None]:
    """A driver error's first line and, for a timeout or a deadlock, which one."""
    from verdict.files import excerpt

    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return excerpt(text, 200), _RACE_REASONS.get(getattr(exc, "sqlstate", None) or "")


def race_session(conn) -> int:
    """How the watcher knows ``conn``'s session: its backend pid."""
    return int(conn.info.backend_pid)


def race_cancel(admin, conn) -> None:
    """Cancel ``conn``'s running statement."""
    conn.cancel()


# the locks a session waits for, and the row (tuple) lock it holds while it waits for the
# transaction that holds the row
_RACE_WAITS = """/* dbbench race */ SELECT l.locktype, l.mode, l.granted, c.relname, l.page, l.tuple,
 pg_blocking_pids(l.pid) FROM pg_locks l LEFT JOIN pg_class c ON c.oid = l.relation
 WHERE l.pid = %s AND (NOT l.granted OR l.locktype = 'tuple') ORDER BY l.granted"""


def race_wait(admin, session: int, holder: int) -> dict | None:
    """The lock ``session`` waits for (:func:`~dbbench.dialects.common.lock_wait`), read on
    ``admin``. A row lock shows as a wait for the holding *transaction*, with the row's tuple lock
    granted to the waiter (it names the table and the row); a table lock as a wait for the
    relation itself."""
    with admin.cursor() as cur:
        cur.execute(_RACE_WAITS, (session,))
        rows = cur.fetchall()
    waiting = [r for r in rows if not r[2]]
    if not waiting:
        return None
    locktype, mode, _, relname, _, _, blockers = waiting[0]
    holds = holder in (blockers or [])
    if locktype == "relation":
        return common.lock_wait(relname, mode, holds=holds)
    tuples = [r for r in rows if r[0] == "tuple"]
    if tuples:
        _, tmode, _, trel, page, tup, _ = tuples[0]
        return common.lock_wait(trel, _ROW_LOCKS.get(tmode, tmode), row=f"({page},{tup})", holds=holds)
    return common.lock_wait(relname, f"{locktype} {mode}", holds=holds)
