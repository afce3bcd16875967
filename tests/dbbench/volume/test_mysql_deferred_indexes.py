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


def test_rows_that_reference_nothing_fail_the_restore_counted_and_named(owned):
    """The restore checks each key set aside over all its rows in one anti-join: a composite key
    counts the rows whose columns are all set and match no parent row; rows with a NULL column
    reference nothing by definition and pass (as InnoDB's own check lets them)."""
    ns = owned(NS + "_dangling")
    my = dialects.get("mysql")
    with connection("mysql") as conn:
        my.begin_reload(conn, ns, {})  # an owned database, as a seed starts one
        with conn.cursor() as cur:
            cur.execute("CREATE TABLE parent (a INT NOT NULL, b INT NOT NULL, PRIMARY KEY (a, b))")
            cur.execute(
                "CREATE TABLE child (id INT PRIMARY KEY, a INT NULL, b INT NULL, "
                "CONSTRAINT fk_pair FOREIGN KEY (a, b) REFERENCES parent (a, b))"
            )
            cur.execute("INSERT INTO parent VALUES (1, 1), (1, 2)")
        conn.commit()
        restore = my.defer_constraints(conn, ["child"], [])
        with conn.cursor() as cur:
            cur.execute(
                "INSERT INTO child VALUES (1, 1, 1), (2, 1, 3), (3, 2, 1), (4, NULL, 5), (5, 1, NULL)"
            )
        with pytest.raises(Exception) as failed:
            restore(conn)
        assert failed.value.args == (
            1452,
            "2 rows of child reference no row of parent (foreign key fk_pair: a, b)",
        )
        with conn.cursor() as cur:
            cur.execute("DELETE FROM child WHERE id IN (2, 3)")
        restore(conn)  # the key is back (recorded until it is), and the rows left all pass
        with conn.cursor() as cur:
            cur.execute("SHOW CREATE TABLE child")
            assert (
                "CONSTRAINT `fk_pair` FOREIGN KEY (`a`, `b`) REFERENCES `parent` (`a`, `b`)"
                in cur.fetchone()[1]
            )
        assert my.DEFERRED not in my.read_meta(conn, ns)
