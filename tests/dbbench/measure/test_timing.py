"""What a query really cost (issue 32): MySQL's const lookups are timed by the statement's own
time (performance_schema), PostgreSQL's by planning + execution, and an executor time that is not
the query's time is marked wherever it is shown or compared -- on the real servers."""

from __future__ import annotations

import json

import pytest

from dbbench import dialects
from dbbench.access import isolation
from dbbench.dialects import timing
from dbbench.document.model import Document
from dbbench.measure import explain
from dbbench.output.explain import intro, shape_table
from tests.conftest import run_cli, seeded_targets
from tests.db import connection, drop_namespaces

NS = "dbbench_t_timing"
LOOKUP = "SELECT id, package_name FROM package WHERE id = %(id)s"  # a primary-key lookup: MySQL's const


@pytest.fixture(scope="module")
def seeded(local_servers):
    with seeded_targets("alpine-ci", NS) as targets:
        yield {t.dialect: t for t in targets}
    drop_namespaces(NS)


def test_mysql_const_lookup_reports_the_statements_own_time(seeded):
    """The executor's time of `Rows fetched before execution` is a few e-6 ms; the statement's own
    time (TIMER_WAIT of that EXPLAIN ANALYZE, read by dbbench's own user) is what the server spent."""
    with connection(seeded["mysql"], namespace=NS) as conn:
        samples = [dialects.get("mysql").run_sample(conn, LOOKUP, {"id": 5}, 30_000) for _ in range(5)]
    for s in samples:
        assert s.tree.kind == "const" and s.tree.label == "Rows fetched before execution"
        assert s.executor_ms < 0.005  # 61e-6..111e-6 ms: the row was read while planning
        assert s.statement_ms is not None and s.statement_ms > 0.01
        assert s.statement_ms > 10 * s.executor_ms
        assert s.planning_ms is None


def test_mysql_without_a_readable_performance_schema_marks_the_executor_time(seeded):
    """The namespace's own role may not read performance_schema (as on a server where it is off):
    the samples fall back to the executor's time, marked as resolved while planning."""
    target = seeded["mysql"]
    d = dialects.get("mysql")
    with isolation.sandbox(target, NS) as inner, connection(inner, namespace=NS) as conn:
        sample = d.run_sample(conn, LOOKUP, {"id": 5}, 30_000)  # the role itself observes
        assert sample.statement_ms is None and sample.tree.kind == "const"
        options = explain.MeasureOptions(namespace=NS, warmups=0, runs=3)
        m = explain.measure(conn, d, "remediated", LOOKUP.replace("%(id)s", ":id"), {"id": 5}, options)
    assert m.timing == timing.RESOLVED
    assert m.samples_ms == m.executor_ms and len(m.samples_ms) == 3
    assert all(v < 0.005 for v in m.samples_ms)


def test_postgresql_reports_planning_plus_execution(seeded):
    with connection(seeded["postgresql"], namespace=NS) as conn:
        s = dialects.get("postgresql").run_sample(conn, LOOKUP, {"id": 5}, 30_000)
    assert s.planning_ms is not None and s.planning_ms > 0
    assert s.statement_ms == pytest.approx(s.planning_ms + s.executor_ms)
    assert s.raw[0]["Planning Time"] == s.planning_ms


def _explain(tmp_path, *shapes: str) -> dict:
    out = tmp_path / "run.json"
    args = [a for shape in shapes for a in ("--shape", shape)]
    result = run_cli("explain", "--namespace", NS, "--no-natural", *args, "--output", str(out))
    assert result.code == 0, result.output
    return json.loads(out.read_text())


def test_the_result_carries_what_its_times_are(seeded, tmp_path):
    doc = _explain(tmp_path, "exact asset path", "published group token")
    by = {(r["shape"], r["dialect"]): r["remediated"] for r in doc["results"]}
    mysql = by[("exact asset path", "mysql")]
    assert mysql["plan"]["kind"] == "const"
    assert mysql["timing"] == "statement"
    assert len(mysql["executor_samples_ms"]) == len(mysql["samples_ms"]) == 7
    assert max(mysql["executor_samples_ms"]) < 0.005 < 0.01 < mysql["p50_ms"]
    assert mysql["planning_samples_ms"] is None
    for shape in ("exact asset path", "published group token"):
        pg = by[(shape, "postgresql")]
        assert pg["timing"] == "statement"
        assert len(pg["planning_samples_ms"]) == 7
        for total, planned, executed in zip(
            pg["samples_ms"], pg["planning_samples_ms"], pg["executor_samples_ms"], strict=True
        ):
            assert total == pytest.approx(planned + executed)
    # the file reads back, and renders without a mark (every time is the statement's)
    typed = Document.from_json(doc, "run.json")
    assert typed.to_json() == doc
    table = shape_table(typed)
    assert "†" not in table and "‡" not in table
    assert "the time the server spent on the statement" in "\n".join(intro(typed))


def _as_older_file(doc: dict) -> dict:
    """``doc`` as dbbench wrote it before statement times: executor samples, no timing fields."""
    from verdict.stats import nearest_rank

    old = json.loads(json.dumps(doc))
    for r in old["results"]:
        for key in ("remediated", "natural"):
            m = r.get(key)
            if not m:
                continue
            m["samples_ms"] = m.pop("executor_samples_ms")
            m["p50_ms"] = nearest_rank(m["samples_ms"], 0.5)
            m["p95_ms"] = nearest_rank(m["samples_ms"], 0.95)
            del m["timing"], m["planning_samples_ms"]
    return old


def test_an_older_file_reads_and_its_const_time_is_marked(seeded, tmp_path):
    doc = _as_older_file(_explain(tmp_path, "exact asset path"))
    path = tmp_path / "old.json"
    path.write_text(json.dumps(doc))
    typed = Document.from_json(doc, "old.json")
    assert typed.to_json() == doc  # an older file round-trips as it was
    by = typed.by_key()
    assert by[("exact asset path", "mysql")].remediated.time_kind == timing.RESOLVED
    assert by[("exact asset path", "postgresql")].remediated.time_kind == timing.EXECUTOR
    table = shape_table(typed)
    line = next(ln for ln in table.splitlines() if ln.startswith("exact asset path"))
    assert "ms†" in line and "ms‡" in line
    assert "† executor time only, and MySQL read the row while planning" in table
    result = run_cli("report", str(path))
    assert result.code == 0, result.output
    assert "ms†" in result.output and "database executor time" in result.output


def test_diff_does_not_divide_a_time_resolved_while_planning_by_a_statement_time(seeded, tmp_path):
    """A baseline of the older kind against a run now: MySQL's const time is not compared (said
    so, advisory), PostgreSQL's executor times are compared with the run's executor times."""
    new = _explain(tmp_path, "exact asset path")
    base = tmp_path / "base.json"
    base.write_text(json.dumps(_as_older_file(new)))
    result_file = tmp_path / "new.json"
    result_file.write_text(json.dumps(new))
    out = tmp_path / "diff.json"
    result = run_cli("diff", str(base), str(result_file), "--output", str(out))
    assert result.code == 0, result.output
    shapes = {(s["shape"], s["dialect"]): s for s in json.loads(out.read_text())["shapes"]}
    mysql = shapes[("exact asset path", "mysql")]
    assert mysql["status"] == "unchanged"
    assert [f["kind"] for f in mysql["findings"]] == ["timing_unlike"]
    assert mysql["findings"][0]["advisory"] and "not compared" in mysql["findings"][0]["message"]
    assert (
        "timing not compared: one time is MySQL's executor time of a row read while planning" in result.output
    )
    assert "0.000" in result.output and "ms†" in result.output  # the baseline's p50 is marked
    assert shapes[("exact asset path", "postgresql")]["findings"] == []
