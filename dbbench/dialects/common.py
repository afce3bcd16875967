"""DB-API helpers that are the same for both drivers."""

from __future__ import annotations


def execute(conn, statements: list[str]) -> None:
    with conn.cursor() as cur:
        for stmt in statements:
            cur.execute(stmt)


def commit(conn) -> None:
    conn.commit()
