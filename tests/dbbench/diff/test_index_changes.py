"""`dbbench diff` and `dbbench check --baseline` name the indexes the schema gained or lost since the
baseline: an index dropped that a shape needed fails, naming the index and the shape; one dropped
that another index took over from with no more work does not; an index added that no shape
reads is a note, never a failure. The documents record each namespace's indexes when the run
measured it; an older document without them diffs as before."""

from __future__ import annotations

import copy
import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from dbbench import diff
from dbbench.dialects.plan import PlanNode
from dbbench.document.model import Document, ResultFileError
from tests.conftest import run_cli
from tests.db import drop_index, drop_namespaces, seeded_without, sql

ROOT = Path(__file__).resolve().parents[3]
NS = "i35a_t_diff"  # alpine-ci, for `dbbench diff` measuring now
CHECK_NS = "i35a_t_check"  # the shop catalog's scratch namespace, for `dbbench check --baseline`

RELATION_LOOKUP = "CREATE INDEX ix_relation_lookup ON package_relation (repository_id, relation_kind, token_sha256, package_id)"
NEEDED = (
    "index dropped that this shape needed: package_relation.ix_relation_lookup (the baseline read it; now "
)
UNUSED = {
    "postgresql": "PostgreSQL: index added that no shape of this catalog uses: package.ix_package_version "
    "(CREATE INDEX ix_package_version ON package USING btree (version))",
    "mysql": "MySQL: index added that no shape of this catalog uses: package.ix_package_version (BTREE (`version`))",
}


def _section(stdout: str, shape: str, dialect: str) -> str:
    """The findings the terminal output lists under one shape and dialect."""
    head = f"  {shape} [{dialect}]\n"
    assert head in stdout, stdout
    lines = stdout.split(head, 1)[1].splitlines()
    return "\n".join(
        x for x in lines[: next((k for k, x in enumerate(lines) if not x.startswith("    - ")), None)]
    )


def _findings(diff_json: Path, kind: str) -> list[tuple[str, str, bool, str]]:
    """(shape, dialect, regression, message) of every finding of ``kind`` in a ``dbbench.diff/1`` file."""
    doc = json.loads(diff_json.read_text())
    return [
        (s["shape"], s["dialect"], f["regression"], f["message"])
        for s in doc["shapes"]
        for f in s["findings"]
        if f["kind"] == kind
    ]


@pytest.fixture(scope="module")
def baseline(local_servers, tmp_path_factory) -> Iterator[Path]:
    """alpine-ci seeded into :data:`NS` on both servers, and the built-in catalog's baseline of it
    (its row-count assertions do not hold on CI-size data: saved with --allow-failures)."""
    path = tmp_path_factory.mktemp("indexchanges") / "baseline.json"
    with seeded_without(NS):
        run = run_cli(
            "baseline", "save", str(path), "--namespace", NS, "--no-natural", "--runs", "3", "--warmups", "1",
            "--allow-failures",
        )  # fmt: skip
        assert run.code == 0, run.output
        yield path


def _diff(baseline: Path, out: Path, *more: str):
    return run_cli("diff", str(baseline), "--namespace", NS, "--output", str(out), *more)


def test_the_baseline_records_each_namespace_s_indexes_unqualified(baseline, tmp_path):
    datasets = json.loads(baseline.read_text())["datasets"]
    for dialect, definition in (
        ("postgresql", "CREATE INDEX ix_relation_lookup ON package_relation USING btree "
         "(repository_id, relation_kind, token_sha256, package_id)"),
        ("mysql", "BTREE (`repository_id`, `relation_kind`, `token_sha256`, `package_id`)"),
    ):  # fmt: skip
        found = {(i["table"], i["index"]): i["definition"] for i in datasets[dialect]["indexes"]}
        assert found[("package_relation", "ix_relation_lookup")] == definition
        assert "dbbench_meta" not in {
            t for t, _ in found
        }  # dbbench's own marker table is no index of the catalog's
        assert not any(NS in d for d in found.values()), found
    run = _diff(baseline, tmp_path / "same.json")  # nothing changed: nothing said about indexes
    assert run.code == 0, run.output
    assert not any("index" in n for n in json.loads((tmp_path / "same.json").read_text())["notes"])
    assert _findings(tmp_path / "same.json", "index_dropped") == []


def test_dropping_an_index_a_shape_needs_fails_naming_index_and_shape(baseline, tmp_path):
    out = tmp_path / "diff.json"
    try:
        for dialect in ("postgresql", "mysql"):
            sql(dialect, drop_index(dialect, "ix_relation_lookup"), namespace=NS)
        run = _diff(baseline, out)
    finally:
        for dialect in ("postgresql", "mysql"):
            sql(dialect, RELATION_LOOKUP, namespace=NS)
    assert run.code == 1, run.output
    # the relation lookup, and the UPDATE that finds its rows through the same index
    assert (
        "4 regressions: relation lookup (MySQL, PostgreSQL); relation token rewrite (MySQL, PostgreSQL)"
        in run.stdout
    )
    pg, my = (
        _section(run.stdout, "relation lookup", "PostgreSQL"),
        _section(run.stdout, "relation lookup", "MySQL"),
    )
    assert pg.startswith(f"    - {NEEDED}full_scan on package_relation)"), pg
    assert my.startswith(f"    - {NEEDED}index_range on package_relation using fk_relation_package)"), my
    # the evidence that it was needed stays beside it: the work that rose without it
    assert "work up at Seq Scan on package_relation: 100 → 2,048 rows examined" in pg
    assert "work up at Index range scan on r using fk_relation_package" in my
    # the two plans aligned node by node under the findings: the node that changed, named
    said = run.stdout
    assert said.count("plan, baseline → result (= same, ~ changed, + new, - gone):") == 4
    assert "~ Seq Scan on package_relation  [Bitmap Heap Scan → Seq Scan;" in said
    assert "- Bitmap Index Scan on package_relation using ix_relation_lookup" in said
    assert "[index ix_relation_lookup → fk_relation_package; rows examined 100 → " in said
    assert sorted((s, d, r) for s, d, r, _ in _findings(out, "index_dropped")) == [
        ("relation lookup", "mysql", True),
        ("relation lookup", "postgresql", True),
        ("relation token rewrite", "mysql", True),
        ("relation token rewrite", "postgresql", True),
    ]
    # restored as it was: the same definition, so no index change at all (and the plans are back)
    again = _diff(baseline, tmp_path / "restored.json")
    assert again.code == 0, again.output
    assert _findings(tmp_path / "restored.json", "index_dropped") == []
    assert not any("index" in n for n in json.loads((tmp_path / "restored.json").read_text())["notes"])


def test_an_added_index_no_shape_uses_is_a_note_and_passes(baseline, tmp_path):
    out = tmp_path / "diff.json"
    try:
        for dialect in ("postgresql", "mysql"):
            sql(dialect, "CREATE INDEX ix_package_version ON package (version)", namespace=NS)
        run = _diff(baseline, out)
    finally:
        for dialect in ("postgresql", "mysql"):
            sql(dialect, drop_index(dialect, "ix_package_version", "package"), namespace=NS)
    assert run.code == 0, run.output
    assert "dbbench diff: pass: no regressions" in run.stdout
    notes = run.stdout.split("\nNotes:\n", 1)[1]
    for line in UNUSED.values():
        assert f"  - {line}\n" in notes + "\n", notes
    assert json.loads(out.read_text())["notes"][-2:] == [UNUSED["mysql"], UNUSED["postgresql"]]
    assert _findings(out, "index_dropped") == []


def test_an_index_another_one_takes_over_from_is_dropped_without_failing(baseline, tmp_path):
    """PostgreSQL's relation lookup reads package by its primary key; without it the unique index
    on (repository_id, id) serves the same 600 rows: the index map's *redundant*, measured for
    real. The access findings that dropping it always causes are equivalent, not regressions."""
    before = Document.from_json(json.loads(baseline.read_text()))
    plan = before.by_key()[("relation lookup", "postgresql")].remediated.plan
    assert plan is not None and "index_range on package using package_pkey" in [
        f"{n.kind} on {n.table} using {n.index}" for n in plan.walk() if n.index
    ], plan.render()
    out = tmp_path / "diff.json"
    try:
        sql("postgresql", "ALTER TABLE package DROP CONSTRAINT package_pkey", namespace=NS)
        run = _diff(baseline, out, "--only", "postgresql")
    finally:
        sql("postgresql", "ALTER TABLE package ADD CONSTRAINT package_pkey PRIMARY KEY (id)", namespace=NS)
    assert run.code == 0, run.output
    lines = _section(run.stdout, "relation lookup", "PostgreSQL").splitlines()
    assert lines[0] == (
        "    - index dropped: package.package_pkey, which the baseline read; uq_package_repository_id took "
        "over with no more work (rows examined 600 → 600)"
    ), lines
    assert lines[1] == (
        "    - index lost: package_pkey on package; now index_range on package using uq_package_repository_id "
        "(equivalent: package.package_pkey dropped; no more work)"
    ), lines
    assert [(s, d, r) for s, d, r, _ in _findings(out, "index_dropped")] == [
        ("relation lookup", "postgresql", False)
    ]


# -- dbbench check --baseline: the CI gate, on a catalog whose setup SQL a change edits ----------
def _edit_setup(catalog: Path, old: str, new: str) -> None:
    for dialect in ("postgresql", "mysql"):
        file = catalog / f"setup.{dialect}.sql"
        text = file.read_text()
        assert old in text, file
        file.write_text(text.replace(old, new))


def test_check_baseline_names_the_index_a_setup_change_dropped_and_notes_one_it_added(
    local_servers, tmp_path
):
    """The commands of docs/diff.md's "Index changes", as a pull request runs them."""
    shop = shutil.copytree(ROOT / "examples" / "shop", tmp_path / "shop")
    check = ("check", "--catalog", "shop", "--namespace", CHECK_NS)
    try:
        first = run_cli(*check, "--output", "check.json", cwd=tmp_path)
        assert first.code == 0, first.output
        saved = run_cli("baseline", "save", "base.json", "--from", "check.json", cwd=tmp_path)
        assert saved.code == 0, saved.output
        same = run_cli(*check, "--baseline", "base.json", cwd=tmp_path)
        assert same.code == 0 and "dbbench diff: pass: no regressions" in same.stdout, same.output
        assert "index added" not in same.stdout and "index dropped" not in same.stdout

        placed = "CREATE INDEX ix_orders_customer_placed ON orders (customer_id, placed_at);\n"
        _edit_setup(shop, placed, "")
        lost = run_cli(*check, "--baseline", "base.json", "--output", "after.json", cwd=tmp_path)
        assert lost.code == 1, lost.output
        assert "2 regressions: recent orders of a customer (MySQL, PostgreSQL)" in lost.stdout
        for dialect in ("PostgreSQL", "MySQL"):
            found = _section(lost.stdout, "recent orders of a customer", dialect)
            assert found.startswith(
                "    - index dropped that this shape needed: orders.ix_orders_customer_placed "
                "(the baseline read it; now full_scan on orders)\n"
            ), found

        sku = "CREATE INDEX ix_products_sku ON products (sku);\n"
        status = "CREATE INDEX ix_orders_status_placed"
        _edit_setup(shop, status, placed + sku + status)  # restored (a line earlier), and one more
        added = run_cli(*check, "--baseline", "base.json", cwd=tmp_path)
        assert added.code == 0, added.output
        assert "dbbench diff: pass: no regressions; 10 of 10 unchanged" in added.stdout
        notes = added.stdout.split("\nNotes:\n", 1)[1]
        assert (
            "  - PostgreSQL: index added that no shape of this catalog uses: products.ix_products_sku "
            "(CREATE INDEX ix_products_sku ON products USING btree (sku))"
        ) in notes, notes
        assert (
            "  - MySQL: index added that no shape of this catalog uses: products.ix_products_sku (BTREE (`sku`))"
        ) in notes, notes
        assert "ix_orders_customer_placed" not in notes  # moved in the file, the same index

        # an older baseline, written before documents recorded indexes: diffs as before, no index finding
        old = json.loads((tmp_path / "base.json").read_text())
        for meta in old["datasets"].values():
            del meta["indexes"]
        (tmp_path / "old.json").write_text(json.dumps(old))
        before = run_cli("diff", "old.json", "after.json", "--output", "old-diff.json", cwd=tmp_path)
        assert before.code == 1, before.output
        assert "2 regressions: recent orders of a customer (MySQL, PostgreSQL)" in before.stdout
        assert "- index lost: ix_orders_customer_placed on orders; now full_scan on orders" in before.stdout
        assert "index dropped" not in before.stdout and "index added" not in before.stdout
        assert _findings(tmp_path / "old-diff.json", "index_dropped") == []
    finally:
        drop_namespaces(CHECK_NS)


# -- on hand-made documents: no server ------------------------------------------------------------
def _node(kind, label, *children, table=None, index=None, rows=10.0):
    return PlanNode(
        kind=kind, label=label, table=table, alias=table, index=index, est_rows=rows, actual_rows=rows, loops=1.0,
        children=list(children),
    )  # fmt: skip


def _doc(tree: PlanNode, indexes: list[dict] | None) -> dict:
    entry = {
        "shape": "recent orders",
        "dialect": "postgresql",
        "ok": True,
        "remediated": {"sql": "SELECT …", "samples_ms": [1.0], "p50_ms": 1.0, "plan": tree.to_dict()},
    }
    meta: dict = {"name": "shop", "seed": None, "setup_sha256": None, "fingerprints": {}}
    if indexes is not None:
        meta["indexes"] = indexes
    return {"schema": "dbbench.explain/2", "datasets": {"postgresql": meta}, "results": [entry]}


def _ix(name: str, cols: str) -> dict:
    return {
        "table": "orders",
        "index": name,
        "definition": f"CREATE INDEX {name} ON orders USING btree ({cols})",
    }


A = _node("index_range", "Index Scan on orders using ix_a", table="orders", index="ix_a")
B = _node("index_range", "Index Scan on orders using ix_b", table="orders", index="ix_b")


def test_an_older_document_without_indexes_round_trips_and_says_nothing_of_them():
    new = _doc(B, [_ix("ix_b", "customer_id")])
    older = Document.from_json(_doc(A, None)).to_json()
    assert "indexes" not in older["datasets"]["postgresql"]  # none made up for an older file
    assert Document.from_json(copy.deepcopy(new)).to_json()["datasets"] == new["datasets"]
    old = diff.compare(_doc(A, None), new)
    assert [(f.kind, f.regression) for f in old.shapes[0].findings] == [("index_lost", True)]
    assert not any("index" in n for n in old.notes)
    # the same plans with both lists: ix_a was dropped, and ix_b (added) took over with no more work
    known = diff.compare(_doc(A, [_ix("ix_a", "customer_id")]), new)
    assert [(f.kind, f.regression) for f in known.shapes[0].findings] == [
        ("index_dropped", False),
        ("index_lost", False),
    ]
    assert known.shapes[0].findings[0].message == (
        "index dropped: orders.ix_a, which the baseline read; ix_b took over with no more work "
        "(rows examined 10 → 10)"
    )
    assert known.ok and known.notes == [
        "PostgreSQL: index added: orders.ix_b (CREATE INDEX ix_b ON orders USING btree (customer_id)), "
        "read by recent orders"
    ]


def test_a_redefined_index_counts_as_dropped_and_added():
    base = _doc(A, [_ix("ix_a", "customer_id")])
    wider = _doc(A, [_ix("ix_a", "customer_id, placed_at")])
    report = diff.compare(base, wider)
    assert report.ok
    (f,) = report.shapes[0].findings
    assert (f.kind, f.regression) == ("index_dropped", False)
    assert f.message.startswith(
        "index redefined (now CREATE INDEX ix_a ON orders USING btree (customer_id, placed_at)): orders.ix_a, "
        "which the baseline read; the shape still reads ix_a as redefined with no more work"
    ), f.message
    assert report.notes == [
        "PostgreSQL: index redefined: orders.ix_a (was CREATE INDEX ix_a ON orders USING btree (customer_id); "
        "now CREATE INDEX ix_a ON orders USING btree (customer_id, placed_at)), read by recent orders"
    ]


def test_bad_index_definitions_are_one_line_errors_naming_the_field():
    bad = _doc(A, [{"table": "orders", "index": 3, "definition": "x"}])
    with pytest.raises(
        ResultFileError, match=r"^f.json: datasets\.postgresql\.indexes\[0\]\.index: must be text$"
    ):
        Document.from_json(bad, "f.json")
    with pytest.raises(
        ResultFileError, match=r"datasets\.postgresql\.indexes: must be a list of indexes or null"
    ):
        Document.from_json(_doc(A, {"ix_a": "x"}), "f.json")  # type: ignore[arg-type]


def test_a_needed_dropped_index_is_inconclusive_when_the_self_control_leaves_no_other_regression():
    """The shape needed the index because it regressed otherwise; an A/A of two runs now whose
    plans and work both differ makes those regressions inconclusive, and the index_dropped one
    follows them (it cannot stay the only failure of a shape nothing else fails)."""
    scan = _node("full_scan", "Seq Scan on orders", table="orders", rows=5000.0)
    report = diff.compare(_doc(A, [_ix("ix_a", "customer_id")]), _doc(scan, []))
    findings = report.shapes[0].findings
    assert [(f.kind, f.regression) for f in findings] == [
        ("index_dropped", True),
        ("index_lost", True),
        ("scan_kind", True),
        ("work", True),
    ]
    assert findings[0].message == (
        "index dropped that this shape needed: orders.ix_a (the baseline read it; now full_scan on orders)"
    )
    aa = diff.compare(
        _doc(B, None), _doc(_node("full_scan", "Seq Scan on orders", table="orders", rows=9000.0), None)
    )
    diff.apply_self_control(report, aa)
    assert [(f.kind, f.regression, f.inconclusive) for f in findings] == [
        ("index_dropped", False, True),
        ("index_lost", False, True),
        ("scan_kind", False, True),
        ("work", False, True),
    ]
    assert report.shapes[0].verdict == "inconclusive"
