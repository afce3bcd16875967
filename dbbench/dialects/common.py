"""DB-API helpers that are the same for both drivers."""

from __future__ import annotations


def execute(conn, statements: list[str]) -> None:
    with conn.cursor() as cur:
        for stmt in statements:
            cur.execute(stmt)


def commit(conn) -> None:
    conn.commit()


def undo_sample(conn, in_transaction: bool) -> None:
    """Undo an EXPLAIN ANALYZE sample: back to the ``dbbench_explain`` savepoint when the caller
    already had a transaction open (its own uncommitted work survives), else the whole transaction."""
    if in_transaction:
        with conn.cursor() as cur:
            cur.execute("ROLLBACK TO SAVEPOINT dbbench_explain")
            cur.execute("RELEASE SAVEPOINT dbbench_explain")
    else:
        conn.rollback()
