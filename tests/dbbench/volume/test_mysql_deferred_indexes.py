"""MySQL fill loads with the spec tables' foreign keys and plain indexes set aside and builds each
table's indexes once, sorted, afterwards (issue 38): the tables read exactly as before
(SHOW CREATE TABLE byte for byte), nothing stays recorded, and a load killed after setting them
aside is put right by the next fill."""

from __future__ import annotations

import pytest

from dbbench import dialects
from tests.conftest import run_cli
from tests.db import connection

pytestmark = pytest.mark.servers
NS = "dbbench_t_volume_deferred"
TABLES = ("customers", "order_items", "orders", "products", "regions", "reviews", "sellers")


def _ddl(ns: str) -> dict[str, str]:
    with connection("mysql", namespace=ns) as conn, conn.cursor() as cur:
        out = {}
        for t in TABLES:
            cur.execute(f"SHOW CREATE TABLE `{t}`")
            out[t] = cur.fetchone()[1]
        return out


def _meta(ns: str) -> dict[str, str]:
    with connection("mysql") as conn:
        return dialects.get("mysql").read_meta(conn, ns)


def _fill(market, ns: str):
    return run_cli("fill", "--catalog", str(market), "--namespace", ns, "--scale", "2000", "--only", "mysql")


def test_the_tables_read_as_before_after_a_fill(owned, market):
    ns = owned(NS)
    assert run_cli("seed", "--catalog", str(market), "--namespace", ns, "--only", "mysql").code == 0
    assert run_cli("init", "--namespace", ns, "--catalog", str(market), "--only", "mysql").code == 0
    before = _ddl(ns)
    assert "KEY `ix_orders_customer_placed`" in before["orders"] and "CONSTRAINT" in before["reviews"]
    fill = _fill(market, ns)
    assert fill.code == 0, fill.output
    assert _ddl(ns) == before
    meta = _meta(ns)
    assert meta["state"] == "complete" and dialects.get("mysql").DEFERRED not in meta


def test_a_load_killed_with_its_indexes_set_aside_is_put_right_by_the_next_fill(owned, market):
    ns = owned(NS + "_killed")
    assert run_cli("seed", "--catalog", str(market), "--namespace", ns, "--only", "mysql").code == 0
    assert run_cli("init", "--namespace", ns, "--catalog", str(market), "--only", "mysql").code == 0
    before = _ddl(ns)
    my = dialects.get("mysql")
    with connection("mysql", namespace=ns) as conn:
        my.write_meta(conn, ns, {"state": "loading"})
        conn.commit()
        my.defer_constraints(conn, list(TABLES), [])  # set aside; the process "dies" before restore
    gone = _ddl(ns)
    assert "KEY `ix_orders_customer_placed`" not in gone["orders"] and "FOREIGN KEY" not in gone["reviews"]
    assert my.DEFERRED in _meta(ns)  # recorded before anything was dropped
    fill = _fill(market, ns)
    assert fill.code == 0, fill.output
    assert _ddl(ns) == before
    assert my.DEFERRED not in _meta(ns)
