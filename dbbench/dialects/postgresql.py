"""PostgreSQL specifics: a dbbench-owned schema, COPY loading, canonical row text."""

from __future__ import annotations

from dbbench.dialects.encode import tsv

NAMESPACE_KIND = "schema"
META = "dbbench_meta"
# The whole seed is one transaction: no other session sees the rows before the commit.
LOAD_COMMITTED_BEFORE_VERIFY = False


def quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def namespace_state(conn, ns: str) -> str:
    """absent | foreign | incomplete | complete: who owns ``ns`` and whether its data is whole."""
    with conn.cursor() as cur:
        cur.execute("SELECT 1 FROM pg_namespace WHERE nspname = %s", (ns,))
        if cur.fetchone() is None:
            return "absent"
        cur.execute("SELECT to_regclass(%s)", (f"{quote(ns)}.{META}",))
        if cur.fetchone()[0] is None:
            return "foreign"
        cur.execute(f"SELECT key, value FROM {quote(ns)}.{META}")
        meta = dict(cur.fetchall())
    if meta.get("owner") != "dbbench":
        return "foreign"
    return "complete" if meta.get("state") == "complete" else "incomplete"


def begin_reload(conn, ns: str, meta: dict[str, str]) -> None:
    """Replace the owned schema. PostgreSQL DDL is transactional: the whole seed is one transaction,
    so an interrupted seed leaves the previous dataset untouched."""
    with conn.cursor() as cur:
        cur.execute(f"DROP SCHEMA IF EXISTS {quote(ns)} CASCADE")
        cur.execute(f"CREATE SCHEMA {quote(ns)}")
        cur.execute(f"COMMENT ON SCHEMA {quote(ns)} IS 'owned by dbbench: re-created by dbbench seed'")
        cur.execute(f"SET LOCAL search_path TO {quote(ns)}")
        cur.execute(f"CREATE TABLE {META} (key varchar(64) PRIMARY KEY, value text NOT NULL)")
        write_meta(conn, ns, {**meta, "owner": "dbbench", "state": "loading"})


def use(conn, ns: str) -> None:
    with conn.cursor() as cur:
        cur.execute(f"SET search_path TO {quote(ns)}")


def write_meta(conn, ns: str, meta: dict[str, str]) -> None:
    with conn.cursor() as cur:
        for key, value in meta.items():
            cur.execute(
                f"INSERT INTO {quote(ns)}.{META} (key, value) VALUES (%s, %s) "
                "ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value", (key, value))


def read_meta(conn, ns: str) -> dict[str, str]:
    with conn.cursor() as cur:
        cur.execute(f"SELECT key, value FROM {quote(ns)}.{META}")
        return dict(cur.fetchall())


def execute(conn, statements: list[str]) -> None:
    with conn.cursor() as cur:
        for stmt in statements:
            cur.execute(stmt)


def _bytes(value: bytes) -> str:
    return "\\\\x" + value.hex()


def encode(rows, kinds: list[str]) -> str:
    return tsv(rows, kinds, _bytes)


def bulk_load(conn, table) -> None:
    """COPY FROM STDIN, streaming the prepared file (works against any server, local or not)."""
    with conn.cursor() as cur, open(table.files["postgresql"], "rb") as fh:
        with cur.copy(f"COPY {table.name} ({', '.join(table.columns)}) FROM STDIN") as copy:
            while chunk := fh.read(1 << 20):
                copy.write(chunk)


def analyze(conn, tables: list[str]) -> None:
    with conn.cursor() as cur:
        for t in tables:
            cur.execute(f"ANALYZE {t}")


def commit(conn) -> None:
    conn.commit()


def canonical(column: str, kind: str) -> str:
    """SQL text of one column, identical on both dialects for identical values."""
    if kind == "bytes":
        return f"COALESCE(encode({column}, 'hex'), '\\N')"
    if kind == "datetime":
        return f"COALESCE(to_char({column}, 'YYYY-MM-DD HH24:MI:SS.US'), '\\N')"
    if kind == "bool":
        return f"COALESCE(({column})::int::text, '\\N')"
    return f"COALESCE(({column})::text, '\\N')"


def fingerprint_sql(table: str, row_text: str) -> str:
    """Order-independent: row count and the sum of 60-bit prefixes of each row's SHA-256."""
    return (f"SELECT COUNT(*), COALESCE(SUM(('x' || substr(encode(sha256(convert_to({row_text}, 'UTF8')), 'hex'), 1, 15))::bit(60)::bigint), 0) "
            f"FROM {table}")


def concat(parts: list[str]) -> str:
    return "concat_ws('|', " + ", ".join(parts) + ")"
