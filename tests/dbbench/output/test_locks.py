"""A write's or locking read's lock footprint in every output of a result, on documents (no
server): the terminal and Markdown tables, the write-up, the HTML report and JUnit say in a few
words what it locked and the cascades it caused; a document of reads renders as it always did."""

from __future__ import annotations

import re
from typing import Any
from xml.etree import ElementTree

import pytest

from dbbench.dialects.plan import PlanNode
from dbbench.document import locks
from dbbench.document.model import Document, Spelling, as_document
from dbbench.output import explain, html, table

DELETE = "DELETE FROM group_snapshot_stage WHERE group_repository_id = %(g)s AND binding_token = %(t)s"
PG_LOCKS = {
    "rows": 2001,
    "gaps": 0,
    "changed": 2001,
    "affected": 1,
    "tables": [
        {
            "table": "group_binding",
            "rows": 2000,
            "gaps": 0,
            "changed": {"deleted": 2000},
            "modes": [],
            "indexes": [],
        },
        {
            "table": "group_snapshot_stage",
            "rows": 1,
            "gaps": 0,
            "changed": {"deleted": 1},
            "modes": [],
            "indexes": [],
        },
    ],
    "cascades": [
        {
            "constraint": "fk_binding_stage",
            "parent": "group_snapshot_stage",
            "child": "group_binding",
            "columns": ["group_repository_id"],
            "index": "ix_binding_page",
            "calls": 1,
            "ms": 3.04,
            "child_full_scans": 0,
        }
    ],
}
MY_LOCKS = {
    "rows": 2002,
    "gaps": 2011,
    "changed": 1,
    "affected": 1,
    "tables": [
        {
            "table": "group_binding",
            "rows": 2000,
            "gaps": 2009,
            "changed": {},
            "modes": ["IX"],
            "indexes": ["PRIMARY"],
        },
        {"table": "group_snapshot_stage", "rows": 2, "gaps": 2, "changed": {"deleted": 1}, "modes": ["IX"]},
    ],
    "cascades": [
        {
            "constraint": "fk_binding_stage",
            "parent": "group_snapshot_stage",
            "child": "group_binding",
            "columns": ["group_repository_id"],
            "rule": "CASCADE",
            "index": "ix_binding_page",
            "rows": 2000,
            "ms": None,
            "calls": None,
        }
    ],
}


def _entry(shape: str, dialect: str, sql: str, plan: PlanNode, locks: dict | None, ok: bool = True) -> dict:
    remediated: dict[str, Any] = {
        "sql": sql,
        "p50_ms": 1.0,
        "p95_ms": 2.0,
        "samples_ms": [1.0, 2.0],
        "plan": plan.to_dict(),
    }
    remediated |= {"timing": "statement", "executor_samples_ms": [0.9, 1.9], "planning_samples_ms": None}
    if locks is not None:
        remediated["locks"] = locks
    verdict = {
        "expected": "group_snapshot_stage using PRIMARY",
        "actual": "x",
        "problems": [] if ok else ["bad"],
    }
    return {
        "shape": shape,
        "dialect": dialect,
        "ok": ok,
        "cardinality": "1 stage",
        "verdict": verdict,
        "remediated": remediated,
    }


READ = _entry(
    "stage by key",
    "mysql",
    "SELECT 1 FROM group_snapshot_stage WHERE group_repository_id = %(g)s",
    PlanNode("unique_lookup", "Single-row index lookup", table="group_snapshot_stage", index="PRIMARY"),
    None,
)


def _doc(*entries: dict) -> Document:
    return as_document({"schema": "dbbench.explain/2", "results": list(entries)})


def writes_doc(ok: bool = True) -> Document:
    pg_plan = PlanNode("modify", "Delete on group_snapshot_stage", table="group_snapshot_stage")
    my_plan = PlanNode("modify", "Delete group_snapshot_stage", table="group_snapshot_stage")
    return _doc(
        READ,
        _entry("orphan group stage deletion", "postgresql", DELETE, pg_plan, PG_LOCKS),
        _entry("orphan group stage deletion", "mysql", DELETE, my_plan, MY_LOCKS, ok=ok),
    )


def test_the_footprint_in_a_few_words():
    assert locks.summary(MY_LOCKS) == "2,002 rows (group_binding 2,000, group_snapshot_stage 2), 2,011 gaps"
    assert locks.summary(PG_LOCKS) == "2,001 rows (group_binding 2,000, group_snapshot_stage 1)"
    assert locks.summary({"rows": 1, "gaps": 0, "tables": [{"table": "t", "rows": 1}]}) == "1 row (t 1)"
    assert locks.summary(None) == ""
    assert locks.cascades_words(PG_LOCKS) == (
        "group_binding (fk_binding_stage) through ix_binding_page: 3.04 ms in 1 call"
    )
    assert locks.cascades_words(MY_LOCKS) == (
        "group_binding (fk_binding_stage cascade) through ix_binding_page: 2,000 rows"
    )
    unindexed = PG_LOCKS["cascades"][0] | {"index": None, "child_full_scans": 1, "ms": 41.5}
    assert locks.cascade(unindexed) == (
        "group_binding (fk_binding_stage) WITHOUT AN INDEX: 41.5 ms in 1 call, 1 full scan"
    )
    assert locks.cascades_words({"rows": 0, "cascades": []}) == "—"


@pytest.mark.parametrize(
    "sql, plan, footprint, words",
    [
        (
            DELETE,
            PlanNode("modify", "Delete on group_snapshot_stage", table="group_snapshot_stage"),
            PG_LOCKS,
            "DELETE group_snapshot_stage",
        ),
        (
            "WITH c AS (SELECT 1) UPDATE package_relation SET token = 'x'",
            PlanNode("modify", "Update on package_relation", table="package_relation"),
            {"rows": 3},
            "UPDATE package_relation",
        ),
        (
            "INSERT INTO archive SELECT * FROM snapshot",
            PlanNode("other", "Insert into archive"),
            {"rows": 4, "tables": [{"table": "archive", "rows": 4, "changed": {"inserted": 4}}]},
            "INSERT archive",
        ),
        (
            "SELECT g.id FROM group_snapshot_stage g ORDER BY g.id LIMIT 256 FOR UPDATE OF g SKIP LOCKED",
            PlanNode("limit", "Limit"),
            {"rows": 2, "tables": [{"table": "group_snapshot_stage", "rows": 2, "changed": {}}]},
            "SELECT … FOR UPDATE SKIP LOCKED on group_snapshot_stage",
        ),
        (
            "SELECT id FROM stage WHERE id = 1 LOCK IN SHARE MODE",
            None,
            {"rows": 1, "tables": [{"table": "stage", "rows": 1}]},
            "SELECT … LOCK IN SHARE MODE on stage",
        ),
    ],
)
def test_the_statement_in_its_verb_and_tables(sql, plan, footprint, words):
    assert locks.statement(Spelling(sql=sql, plan=plan, locks=footprint)) == words


def test_the_shape_table_is_followed_by_the_footprint_of_each_write():
    text = explain.shape_table(writes_doc())
    head, _, rest = text.partition("\n\n")
    assert head == table(*explain.shape_rows(writes_doc()), "simple")  # the shape table as it was
    lines = rest.splitlines()
    headers = ["Write or locking read", "Dialect", "Statement", "Rows changed", "Locked", "Cascades"]
    assert re.split(r"\s{2,}", lines[0].strip()) == headers
    assert len(lines) == 4  # headers, rule and one row per write and dialect: the read has none
    mysql, pg = lines[2], lines[3]
    assert mysql.startswith("orphan group stage deletion  MySQL       DELETE group_snapshot_stage")
    assert "2,002 rows (group_binding 2,000, group_snapshot_stage 2), 2,011 gaps" in mysql
    assert "group_binding (fk_binding_stage cascade) through ix_binding_page: 2,000 rows" in mysql
    assert "group_binding (fk_binding_stage) through ix_binding_page: 3.04 ms in 1 call" in pg
    markdown = explain.shape_table(writes_doc(), "markdown")
    assert (
        "| orphan group stage deletion | PostgreSQL | DELETE group_snapshot_stage | 1 | "
        "2,001 rows (group_binding 2,000, group_snapshot_stage 1) | "
        "group_binding (fk_binding_stage) through ix_binding_page: 3.04 ms in 1 call |"
    ) in markdown
    assert "| orphan group stage deletion | PostgreSQL |" in explain.github_summary(writes_doc(), "t")


def test_the_write_up_and_the_html_report_show_the_footprint():
    md = explain.markdown(writes_doc())
    assert "| Write or locking read | Dialect | Statement | Rows changed | Locked | Cascades |" in md
    assert md.index("| Query shape |") < md.index("| Write or locking read |")
    page = html.html(writes_doc())
    assert "<h2>Lock footprint</h2>" in page
    assert "<td>2,002 rows (group_binding 2,000, group_snapshot_stage 2), 2,011 gaps</td>" in page
    assert "<td>group_binding (fk_binding_stage cascade) through ix_binding_page: 2,000 rows</td>" in page
    assert (
        page.index("<h2>Query shapes</h2>") < page.index("<h2>Lock footprint</h2>") < page.index("Per-sample")
    )


def test_junit_says_what_each_write_locked():
    xml = explain.junit_xml(writes_doc(ok=False))
    assert (
        "locks: DELETE group_snapshot_stage locked 2,001 rows (group_binding 2,000, group_snapshot_stage 1); "
        "cascades: group_binding (fk_binding_stage) through ix_binding_page: 3.04 ms in 1 call</system-out>"
    ) in xml
    cases = ElementTree.fromstring(xml).iter("testcase")
    (failed,) = [
        c for c in cases if c.get("classname", "").endswith(".mysql") and c.get("name") != "stage by key"
    ]
    failure = failed.find("failure")
    assert failure is not None and "actual: x\nlocks: DELETE group_snapshot_stage locked 2,002 rows" in (
        failure.text or ""
    )


def test_a_document_of_reads_renders_as_it_always_did():
    reads = _doc(READ)
    assert not explain.has_locks(reads) and explain.lock_table(reads) == ""
    assert explain.shape_table(reads) == table(*explain.shape_rows(reads), "simple")
    assert "Write or locking read" not in explain.markdown(reads)
    assert "Lock footprint" not in html.html(reads)
    assert "locks:" not in explain.junit_xml(reads)
