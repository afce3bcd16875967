"""DB-API helpers that are the same for both drivers."""

from __future__ import annotations

import re


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


def meta_state(meta: dict[str, str]) -> str:
    """foreign | incomplete | complete: what a namespace's ``dbbench_meta`` rows say."""
    if meta.get("owner") != "dbbench":
        return "foreign"
    return "complete" if meta.get("state") == "complete" else "incomplete"


def drop_if_ours(conn, state: str, statement: str) -> None:
    """Run ``statement`` (the namespace's DROP) when ``state`` says the namespace is dbbench's."""
    if state in ("complete", "incomplete"):
        execute(conn, [statement])
        conn.commit()


def canonical(column: str, kind: str, forms: dict[str, str], null: str) -> str:
    """One column as text, ``null`` for NULL: ``forms[kind]`` (else ``forms["text"]``) with the
    column at ``{c}``. The dialects' forms give identical text for identical values."""
    return f"COALESCE({forms.get(kind, forms['text']).format(c=column)}, {null})"


def namespace_state(
    conn, exists: tuple[str, tuple[str, ...]], marker: tuple[str, tuple[str, ...]], meta_sql: str
) -> str:
    """absent | foreign | incomplete | complete: the query ``exists`` finds the namespace, ``marker``
    its ``dbbench_meta`` table (a row whose first value is not NULL), ``meta_sql`` reads that."""
    with conn.cursor() as cur:
        for (sql, params), missing in ((exists, "absent"), (marker, "foreign")):
            cur.execute(sql, params)
            row = cur.fetchone()
            if row is None or row[0] is None:
                return missing
        cur.execute(meta_sql)
        return meta_state(dict(cur.fetchall()))


_NAMED = re.compile(r"%\((\w+)\)s")


def positional(sql: str, params: dict, numbered: bool) -> tuple[str, list]:
    """``%(name)s`` parameters as ``$1, $2, …`` (``numbered``: one number per name) or ``?`` (one
    per occurrence), ``%%`` as ``%``; and the values in that order."""
    order: list[str] = []

    def one(m: re.Match) -> str:
        name = m.group(1)
        if not numbered:
            order.append(name)
            return "?"
        if name not in order:
            order.append(name)
        return f"${order.index(name) + 1}"

    text = _NAMED.sub(one, sql).replace("%%", "%")
    return text, [params[n] for n in order]
