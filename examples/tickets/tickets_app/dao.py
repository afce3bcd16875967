"""The ticket desk's data access: the named queries of ``db/queries.sql`` (loaded by name, as
aiosql and PugSQL load them) run on a psycopg / PyMySQL connection, and one query built with
SQLAlchemy Core, as an ORM would."""

from __future__ import annotations

import re
from pathlib import Path

import sqlalchemy as sa

QUERIES = Path(__file__).resolve().parent.parent / "db" / "queries.sql"


def load_queries(path: Path) -> dict[str, str]:
    """name -> SQL of each ``-- name:`` block, ``:name`` parameters as the drivers' ``%(name)s``."""
    out: dict[str, list[str]] = {}
    name = None
    for line in path.read_text().splitlines():
        if m := re.match(r"--\s*name:\s*(\w+)", line):
            name = m.group(1)
            out[name] = []
        elif name and not line.startswith("--"):
            out[name].append(line)
    return {
        n: re.sub(r"(?<![:\w]):(\w+)", r"%(\1)s", "\n".join(lines).strip().rstrip(";"))
        for n, lines in out.items()
    }


Q = load_queries(QUERIES)


def _rows(conn, name: str, **params) -> list[tuple]:
    with conn.cursor() as cur:
        cur.execute(Q[name], params)
        return list(cur.fetchall())


def account_by_email(conn, email: str) -> tuple | None:
    rows = _rows(conn, "account_by_email", email=email)
    return rows[0] if rows else None


def recent_tickets(conn, account_id: int) -> list[tuple]:
    return _rows(conn, "recent_tickets", account_id=account_id)


def ticket_queue(conn, status: str = "open") -> list[tuple]:
    return _rows(conn, "ticket_queue", status=status)


def ticket_comments(conn, ticket_id: int) -> list[tuple]:
    return _rows(conn, "ticket_comments", ticket_id=ticket_id)


tickets = sa.Table(
    "tickets",
    sa.MetaData(),
    sa.Column("id", sa.BigInteger, primary_key=True),
    sa.Column("account_id", sa.Integer),
    sa.Column("status", sa.String(16)),
    sa.Column("subject", sa.String(200)),
    sa.Column("opened_at", sa.DateTime),
)


def pending_tickets(engine: sa.Engine, account_id: int) -> list[tuple]:
    """An account's 20 most recent pending tickets (SQLAlchemy Core: the SQL exists at run time only)."""
    query = (
        sa.select(tickets.c.id, tickets.c.subject)
        .where(tickets.c.account_id == account_id, tickets.c.status == "pending")
        .order_by(tickets.c.opened_at.desc())
        .limit(20)
    )
    with engine.connect() as conn:
        return [tuple(r) for r in conn.execute(query)]
