"""MySQL specifics: a dbbench-owned database, LOAD DATA LOCAL loading, canonical row text."""

from __future__ import annotations

from dbbench.dialects.encode import tsv

NAMESPACE_KIND = "database"
META = "dbbench_meta"
# DDL commits implicitly, so after the index step other sessions see the loaded rows.
LOAD_COMMITTED_BEFORE_VERIFY = True


def quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def namespace_state(conn, ns: str) -> str:
    with conn.cursor() as cur:
        cur.execute("SELECT 1 FROM information_schema.schemata WHERE schema_name = %s", (ns,))
        if cur.fetchone() is None:
            return "absent"
        cur.execute("SELECT 1 FROM information_schema.tables WHERE table_schema = %s AND table_name = %s",
                    (ns, META))
        if cur.fetchone() is None:
            return "foreign"
        cur.execute(f"SELECT `key`, value FROM {quote(ns)}.{META}")
        meta = dict(cur.fetchall())
    if meta.get("owner") != "dbbench":
        return "foreign"
    return "complete" if meta.get("state") == "complete" else "incomplete"


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


def use(conn, ns: str) -> None:
    with conn.cursor() as cur:
        cur.execute(f"USE {quote(ns)}")


def write_meta(conn, ns: str, meta: dict[str, str]) -> None:
    with conn.cursor() as cur:
        for key, value in meta.items():
            cur.execute(f"INSERT INTO {quote(ns)}.{META} (`key`, value) VALUES (%s, %s) "
                        "ON DUPLICATE KEY UPDATE value = VALUES(value)", (key, value))


def read_meta(conn, ns: str) -> dict[str, str]:
    with conn.cursor() as cur:
        cur.execute(f"SELECT `key`, value FROM {quote(ns)}.{META}")
        return dict(cur.fetchall())


def execute(conn, statements: list[str]) -> None:
    with conn.cursor() as cur:
        for stmt in statements:
            cur.execute(stmt)


def _bytes(value: bytes) -> str:
    return value.hex()


def encode(rows, kinds: list[str]) -> str:
    return tsv(rows, kinds, _bytes)


def bulk_load(conn, table) -> None:
    """LOAD DATA LOCAL INFILE from the prepared file; hex columns go through UNHEX."""
    binary = table.binary_columns
    targets = [f"@{c}" if c in binary else c for c in table.columns]
    sets = [f"{c} = UNHEX(@{c})" for c in table.columns if c in binary]
    sql = (f"LOAD DATA LOCAL INFILE %s INTO TABLE {table.name} CHARACTER SET utf8mb4 "
           f"({', '.join(targets)})" + (f" SET {', '.join(sets)}" if sets else ""))
    with conn.cursor() as cur:
        cur.execute(sql, (str(table.files["mysql"]),))
        cur.execute("SELECT @@warning_count")
        if cur.fetchone()[0]:
            cur.execute("SHOW WARNINGS LIMIT 3")
            raise RuntimeError(f"LOAD DATA into {table.name} warned: {cur.fetchall()}")


def analyze(conn, tables: list[str]) -> None:
    with conn.cursor() as cur:
        cur.execute("ANALYZE TABLE " + ", ".join(tables))
        cur.fetchall()


def commit(conn) -> None:
    conn.commit()


def canonical(column: str, kind: str) -> str:
    if kind == "bytes":
        return f"COALESCE(LOWER(HEX({column})), '\\\\N')"
    if kind == "datetime":
        return f"COALESCE(DATE_FORMAT({column}, '%Y-%m-%d %H:%i:%s.%f'), '\\\\N')"
    if kind == "bool":
        return f"COALESCE(CAST({column} AS SIGNED), '\\\\N')"
    return f"COALESCE({column}, '\\\\N')"


def fingerprint_sql(table: str, row_text: str) -> str:
    return (f"SELECT COUNT(*), COALESCE(SUM(CAST(CONV(SUBSTR(SHA2({row_text}, 256), 1, 15), 16, 10) AS UNSIGNED)), 0) "
            f"FROM {table}")


def concat(parts: list[str]) -> str:
    return "CONCAT_WS('|', " + ", ".join(parts) + ")"
