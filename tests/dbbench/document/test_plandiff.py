"""Two plans aligned node by node (issue 37's model): what changed, named as a reviewer says it."""

from __future__ import annotations

from dbbench.dialects.mysql_plan import parse_plan as mysql_plan
from dbbench.dialects.plan import PlanNode
from dbbench.document.plandiff import CHANGED, GONE, NEW, SAME, align, biggest_first, join_changes, render


def scan(
    kind: str, label: str, table: str, index: str | None = None, rows: float = 1.0, removed: float = 0.0
):
    return PlanNode(kind, label, table=table, index=index, actual_rows=rows, loops=1.0, removed_rows=removed)


def join(label: str, *children: PlanNode, rows: float = 1.0) -> PlanNode:
    return PlanNode("join", label, actual_rows=rows, loops=1.0, children=list(children))


def test_an_index_lost_is_the_scan_kind_the_index_and_the_work_on_that_table():
    before = join(
        "Nested Loop",
        scan("index_range", "Index Scan on package_relation using ix_relation_lookup", "package_relation",
             "ix_relation_lookup", rows=100),
        scan("index_range", "Index Scan on package using package_pkey", "package", "package_pkey", rows=1),
        rows=100,
    )  # fmt: skip
    after = join(
        "Nested Loop",
        scan("full_scan", "Seq Scan on package_relation", "package_relation", rows=100, removed=99_900),
        scan("index_range", "Index Scan on package using package_pkey", "package", "package_pkey", rows=1),
        rows=100,
    )
    d = align(before, after)
    assert d.status == SAME
    relation, package = d.children
    assert relation.status == CHANGED and package.status == SAME
    assert relation.changes == [
        "Index Scan → Seq Scan",
        "index ix_relation_lookup → none",
        "rows examined 100 → 100,000 (1,000.0x more)",
    ]
    assert [n.before.label if n.before else None for n in biggest_first([d])] == [
        "Index Scan on package_relation using ix_relation_lookup"
    ]


def test_a_join_of_another_type_is_named_on_mysql():
    before, _ = mysql_plan(
        "-> Nested loop inner join  (actual time=0.1..0.2 rows=10 loops=1)\n"
        "    -> Index lookup on o using ix_orders_customer (customer_id=42)  (actual time=0.1..0.1 rows=10 loops=1)\n"
        "    -> Single-row index lookup on c using PRIMARY (id=o.customer_id)  (actual time=0.1..0.1 rows=1 loops=10)\n",
        {"o": "orders", "c": "customers"},
    )
    after, _ = mysql_plan(
        "-> Inner hash join (c.id = o.customer_id)  (actual time=0.1..9.2 rows=10 loops=1)\n"
        "    -> Index lookup on o using ix_orders_customer (customer_id=42)  (actual time=0.1..0.1 rows=10 loops=1)\n"
        "    -> Hash\n"
        "        -> Table scan on c  (actual time=0.1..5.1 rows=10000 loops=1)\n",
        {"o": "orders", "c": "customers"},
    )
    d = align(before, after)
    assert d.status == CHANGED
    assert d.changes == ["join type Nested loop inner join → Inner hash join"]
    # the customers lookup and the scan under the new Hash are one table read another way
    assert render(d) == [
        "~ Inner hash join (c.id = o.customer_id)  [join type Nested loop inner join → Inner hash join]",
        "  = Index lookup on o using ix_orders_customer (customer_id=42)",
        "  + Hash",
        "    ~ Table scan on c  [Single-row index lookup → Table scan; index PRIMARY → none; "
        "rows examined 10 → 10,000 (1,000.0x more)]",
    ]
    (hashed,) = [n for n in d.children if n.status == NEW]
    assert hashed.children[0].before is not None and hashed.children[0].before.table == "customers"


def test_a_join_order_change_is_one_line_on_the_join_and_its_inputs_stay_paired():
    a = scan(
        "index_range", "Index Scan on orders using ix_orders_customer", "orders", "ix_orders_customer", 10
    )
    b = scan("index_range", "Index Scan on customers using customers_pkey", "customers", "customers_pkey", 1)
    a2 = scan(
        "index_range", "Index Scan on orders using ix_orders_customer", "orders", "ix_orders_customer", 10
    )
    b2 = scan("index_range", "Index Scan on customers using customers_pkey", "customers", "customers_pkey", 1)
    d = align(join("Nested Loop", a, b), join("Nested Loop", b2, a2))
    assert d.status == CHANGED
    assert d.changes == ["join order orders ⋈ customers → customers ⋈ orders"]
    assert [c.status for c in d.children] == [SAME, SAME]  # the same two scans, in the other order
    assert [c.node.table for c in d.children] == ["customers", "orders"]


def test_a_sort_added_over_the_same_scan_is_new_and_the_scan_stays_paired():
    page = scan(
        "index_range", "Index Scan on package using ix_package_namespace", "package", "ix_package_namespace"
    )
    before = PlanNode("limit", "Limit", actual_rows=1.0, loops=1.0, children=[page])
    page2 = scan(
        "index_range", "Index Scan on package using ix_package_namespace", "package", "ix_package_namespace"
    )
    sort = PlanNode("sort", "Sort", actual_rows=1.0, loops=1.0, children=[page2])
    after = PlanNode("limit", "Limit", actual_rows=1.0, loops=1.0, children=[sort])
    d = align(before, after)
    # the Sort is new over the same scan: the scan stays paired with the baseline's
    assert [(c.status, c.node.label) for c in d.children] == [(NEW, "Sort")]
    assert d.children[0].changes == ["Sort added"] and d.children[0].children[0].status == SAME
    assert render(d) == [
        "= Limit",
        "  + Sort",
        "    = Index Scan on package using ix_package_namespace",
    ]
    same = align(before, before)
    assert render(same) == ["= Limit", "  = Index Scan on package using ix_package_namespace"]
    assert not same.changed and d.changed


def test_plans_thousands_of_levels_deep_align_without_recursion():
    def chain(n: int) -> PlanNode:
        root = node = PlanNode("operator", "Filter", actual_rows=1.0, loops=1.0)
        for _ in range(n):
            child = PlanNode("operator", "Filter", actual_rows=1.0, loops=1.0)
            node.children.append(child)
            node = child
        node.children.append(scan("full_scan", "Seq Scan on t", "t"))
        return root

    d = align(chain(3000), chain(3000))
    assert sum(1 for _ in d.walk()) == 3002 and not d.changed
    assert len(render(d, fold=False)) == 3002


def test_a_table_no_longer_read_is_gone_with_its_subtree_folded_by_the_renderer():
    keep = scan(
        "index_range", "Index Scan on orders using ix_orders_customer", "orders", "ix_orders_customer"
    )
    extra = PlanNode(
        "operator",
        "Materialize",
        actual_rows=1.0,
        loops=1.0,
        children=[scan("full_scan", "Seq Scan on audit", "audit", rows=5)],
    )
    keep2 = scan(
        "index_range", "Index Scan on orders using ix_orders_customer", "orders", "ix_orders_customer"
    )
    d = align(join("Nested Loop", keep, extra), join("Nested Loop", keep2))
    assert [c.status for c in d.children] == [SAME, GONE]
    assert d.children[1].changes == ["Materialize gone"]
    assert render(d) == [
        "= Nested Loop",
        "  = Index Scan on orders using ix_orders_customer",
        "  - Materialize",
        "    - Seq Scan on audit",
    ]


def test_a_join_order_change_through_a_new_filter_marks_where_each_input_stood():
    """MySQL drives the join from rental now; inventory, its second input, is read by its primary
    key under a new Filter (sakila's inventory ⋈ rental, tests/dbbench/diff/test_plan_views_live.py)."""
    tables = {"i": "inventory", "r": "rental"}
    before, _ = mysql_plan(
        "-> Nested loop inner join  (actual time=0.03..0.04 rows=6 loops=1)\n"
        "    -> Covering index lookup on i using idx_store_id_film_id (store_id = 1, film_id = 5)  (actual time=0.02..0.02 rows=2 loops=1)\n"
        "    -> Covering index lookup on r using idx_fk_inventory_id (inventory_id = i.inventory_id)  (actual time=0.01..0.01 rows=3 loops=2)\n",
        tables,
    )
    after, _ = mysql_plan(
        "-> Nested loop inner join  (actual time=0.03..0.04 rows=1 loops=1)\n"
        "    -> Covering index lookup on r using rental_date (rental_date = TIMESTAMP'2005-06-01 05:00:00')  (actual time=0.02..0.02 rows=1 loops=1)\n"
        "    -> Filter: (i.store_id = 1)  (actual time=0.01..0.01 rows=1 loops=1)\n"
        "        -> Single-row index lookup on i using PRIMARY (inventory_id = r.inventory_id)  (actual time=0.01..0.01 rows=1 loops=1)\n",
        tables,
    )
    d = align(before, after)
    assert d.changes[0] == "join order inventory ⋈ rental → rental ⋈ inventory"
    assert [c.was_input for c in d.children] == [2, 1]
    assert join_changes(d) == [("join_order", "join order inventory ⋈ rental → rental ⋈ inventory")]
    lines = render(d)
    assert (
        lines[1].startswith("  ~ Covering index lookup on r using rental_date")
        and "(input 2 in the baseline)" in lines[1]
    )
    assert lines[2] == "  + Filter: (i.store_id = 1) (input 1 in the baseline)"
    assert "index idx_store_id_film_id → PRIMARY" in lines[3]


def test_a_bitmap_heap_scan_reads_the_index_of_its_bitmap_and_own_buffers_are_named():
    def bitmap(index: str, buffers: float) -> PlanNode:
        inner = PlanNode("index_range", f"Bitmap Index Scan on t using {index}", table="t", index=index,
                         actual_rows=6.0, loops=1.0, buffers=2.0)  # fmt: skip
        return PlanNode("bitmap_heap_scan", "Bitmap Heap Scan on t", table="t", actual_rows=6.0, loops=1.0,
                        buffers=buffers, children=[inner])  # fmt: skip

    d = align(bitmap("ix_a", 8.0), bitmap("ix_b", 8.0))
    assert d.changes == ["index ix_a → ix_b"]  # not "index none → none": the heap scan's own index
    e = align(bitmap("ix_a", 8.0), bitmap("ix_a", 2_000.0))
    # 6 → 1,998 pages of its own (its bitmap's 2 taken off); the bitmap itself the same
    assert e.changes == ["shared buffers 6 → 1,998 (333.0x more)"] and e.children[0].status == SAME
    assert align(bitmap("ix_a", 8.0), bitmap("ix_a", 12.0)).changes == []  # 4 pages: not named
