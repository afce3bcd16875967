"""Why volume and skew matter: the same query, the same indexes, different plans.

PostgreSQL's plans change with both; MySQL 9.7 keeps its ref access through the index in all
four cases (asserted too, so a change of either optimizer shows).

* **Volume**: a customer's orders (``customer_id = 42``) on 100 orders is a sequential scan (one
  page: reading it whole is cheapest); on 200,000 orders the planner walks
  ``ix_orders_customer_placed``. An index check on a test fixture of a few rows proves nothing.
* **Skew**: orders drawn Zipf-hot over customers (``dist = "zipf", s = 2.0``): the hottest
  customer holds about 60 % of the orders and is read by a full scan, a cold one through the index.

The spec is the starter `dbbench init` writes for examples/market, with the orders' volume and
their customer distribution changed (docs/volume.md shows these plans).
"""

from __future__ import annotations

import re

import pytest

from dbbench import dialects
from dbbench.access.targets import open_targets
from dbbench.setup import loader
from dbbench.volume import fill, schema, starter
from tests.dbbench.volume.conftest import MARKET

pytestmark = pytest.mark.servers
ORDERS = "SELECT id, total FROM orders WHERE customer_id = %(c)s"


def _spec(tmp_path, text: str, orders: str, dist: str) -> str:
    text = re.sub(r'(\[tables\.orders\]\nrows = )":scale"', rf"\g<1>{orders}", text)
    text = text.replace(
        'customer_id = { gen = "fk", ref = "customers.id" }',
        f'customer_id = {{ gen = "fk", ref = "customers.id"{dist} }}',
    )
    file = tmp_path / f"spec-{len(list(tmp_path.iterdir()))}.toml"
    file.write_text(text)
    return str(file)


def _access(target, ns: str, customer: int) -> str:
    """How the plan reads orders: full_scan, or the index it uses."""
    d = dialects.get(target.dialect)
    with target.all_or_nothing() as conn:
        d.use(conn, ns)
        _, tree, _ = d.run_explain(conn, ORDERS, {"c": customer}, 30_000)
        conn.rollback()
    nodes = [n for n in tree.walk() if n.table == "orders" or (n.index or "").startswith("ix_orders")]
    return next((n.index for n in nodes if n.index), None) or (
        "full_scan" if any(n.kind == "full_scan" for n in nodes) else tree.label
    )


def test_a_plan_changes_with_volume_and_with_skew(owned, tmp_path):
    ns = owned("dbbench_t_volume_plans")
    targets = open_targets({})
    try:
        loader.load(targets, MARKET, namespace=ns)
        with targets[0].all_or_nothing() as conn:
            text = starter.starter(schema.read(conn, "postgresql", ns), source="test")
            conn.rollback()
        fill(targets, ns, _spec(tmp_path, text, "100", ""), scale=100)
        small = {t.dialect: _access(t, ns, 42) for t in targets}
        fill(targets, ns, _spec(tmp_path, text, '":scale * 10"', ""), scale=20_000)
        large = {t.dialect: _access(t, ns, 42) for t in targets}
        fill(targets, ns, _spec(tmp_path, text, '":scale * 10"', ', dist = "zipf", s = 2.0'), scale=20_000)
        hot = {t.dialect: _access(t, ns, 1) for t in targets}
        cold = {t.dialect: _access(t, ns, 19_999) for t in targets}
    finally:
        for t in targets:
            t.dispose()
    print({"100 orders": small, "200,000 orders": large, "hot customer": hot, "cold customer": cold})
    index = "ix_orders_customer_placed"
    # PostgreSQL's plan changes with both: a full scan of a one-page table and of a hot value
    assert (small["postgresql"], large["postgresql"]) == ("full_scan", index)
    assert (hot["postgresql"], cold["postgresql"]) == ("full_scan", index)
    # MySQL 9.7 without a histogram estimates ref access from index dives and keeps the index for
    # all four (a test that sees it change tells us the optimizer did)
    assert small["mysql"] == large["mysql"] == hot["mysql"] == cold["mysql"] == index
