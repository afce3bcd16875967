"""The shop's data-access layer: the statements the catalog measures and the tests assert.

Plain DB-API code (``%(name)s`` placeholders) so it runs on psycopg and PyMySQL alike; the
``:name`` spellings below are what dbbench's catalog and ``assert_plan`` take.
"""

CUSTOMER_BY_EMAIL = "SELECT id, name FROM customers WHERE email = :email"

RECENT_ORDERS = """SELECT id, status, placed_at, total_cents FROM orders
 WHERE customer_id = :customer_id
 ORDER BY placed_at DESC LIMIT 10"""

OPEN_ORDERS = """SELECT id, customer_id, placed_at FROM orders
 WHERE status = :status
 ORDER BY placed_at LIMIT 50"""


def _pyformat(sql: str) -> str:
    import re

    return re.sub(r"(?<![:\w]):([A-Za-z_]\w*)", r"%(\1)s", sql)


def recent_orders(conn, customer_id: int) -> list[tuple]:
    with conn.cursor() as cur:
        cur.execute(_pyformat(RECENT_ORDERS), {"customer_id": customer_id})
        return list(cur.fetchall())


def place_order(conn, order_id: int, customer_id: int, total_cents: int) -> None:
    with conn.cursor() as cur:
        cur.execute(
            "INSERT INTO orders (id, customer_id, status, placed_at, total_cents) "
            "VALUES (%(id)s, %(c)s, 'open', TIMESTAMP '2027-01-01 00:00:00', %(t)s)",
            {"id": order_id, "c": customer_id, "t": total_cents},
        )
