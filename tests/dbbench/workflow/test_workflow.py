"""The users' workflow on the real servers, with the worked example in examples/shop: seed from the
catalog's own setup SQL, explain, save a baseline, drop an index, diff; JUnit, step summary,
report (Markdown and HTML), check, and the ownership guarantees of setup SQL."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from dbbench import dialects
from dbbench.access.targets import open_targets
from tests.conftest import run_cli
from tests.db import connection, sql

EXAMPLE = str(Path(__file__).resolve().parents[3] / "examples" / "shop")
NS = "dbbench_t_example"
SHAPES = [
    "customer by email",
    "recent orders of a customer",
    "open orders queue",
    "order lines with products",
    "orders containing a product",
]


def _sql(ns: str | None, statements: dict[str, list[str]]) -> None:
    """Each dialect's statements, in ``ns`` (only ever dbbench's own, complete namespace)."""
    for dialect, stmts in statements.items():
        if ns:
            with connection(dialect) as conn:
                assert dialects.get(dialect).namespace_state(conn, ns) == "complete"
        if stmts:
            sql(dialect, stmts, namespace=ns)


@pytest.fixture(scope="module")
def shop(local_servers, tmp_path_factory):
    """The example seeded from its setup SQL, explained, and saved as a baseline."""
    out = tmp_path_factory.mktemp("shop")
    seeded = run_cli("seed", "--catalog", EXAMPLE, "--namespace", NS, "--output", str(out / "seed.json"))
    assert seeded.code == 0, seeded.output
    run = run_cli(
        "explain",
        "--catalog",
        EXAMPLE,
        "--namespace",
        NS,
        "--runs",
        "5",
        "--warmups",
        "1",
        "--output",
        str(out / "before.json"),
        "--junit",
        str(out / "before.xml"),
    )
    saved = run_cli("baseline", "save", str(out / "baseline.json"), "--from", str(out / "before.json"))
    return {"dir": out, "seed": seeded, "explain": run, "baseline": saved}


def test_seed_from_setup_sql_builds_identical_data_on_both_servers(shop):
    doc = json.loads((shop["dir"] / "seed.json").read_text())
    assert doc["schema"] == "dbbench.seed/1" and doc["dataset"]["name"] == "setup:shop"
    rows = {t["dialect"]: {c["name"]: c["actual"] for c in t["cardinalities"]} for t in doc["targets"]}
    assert (
        rows["postgresql"]
        == rows["mysql"]
        == {
            "rows in customers": 2000,
            "rows in order_items": 60000,
            "rows in orders": 30000,
            "rows in products": 5000,
        }
    )
    assert all(doc["fingerprints_equal"].values())
    assert re.search(r"orders\s+30,000\s+30,000\s+equal", shop["seed"].stdout)


def test_explain_passes_and_junit_has_one_case_per_shape_and_dialect(shop):
    assert shop["explain"].code == 0, shop["explain"].output
    suite = ET.parse(shop["dir"] / "before.xml").getroot().find("testsuite")
    assert (suite.get("name"), suite.get("tests"), suite.get("failures")) == ("dbbench.explain", "10", "0")
    cases = {(c.get("classname"), c.get("name")) for c in suite.iter("testcase")}
    assert cases == {(f"dbbench.explain.{d}", s) for s in SHAPES for d in ("postgresql", "mysql")}
    assert all(c.find("failure") is None for c in suite.iter("testcase"))
    # a case's time is the sum of its timed samples (seconds, 6 places), taken from the result
    doc = json.loads((shop["dir"] / "before.json").read_text())
    seconds = {
        (f"dbbench.explain.{r['dialect']}", r["shape"]): f"{sum(r['remediated']['samples_ms']) / 1000:.6f}"
        for r in doc["results"]
    }
    assert {(c.get("classname"), c.get("name")): c.get("time") for c in suite.iter("testcase")} == seconds
    # MySQL 9.7 times a const-table lookup in tens of nanoseconds: five such samples can sum to under
    # half a microsecond, which is 0.000000 s at JUnit's six places; the times as a whole are not zero
    assert sum(float(t) for t in seconds.values()) > 0
    assert "ok: orders using ix_orders_customer_placed" in shop["explain"].stdout


def test_baseline_keeps_normalized_plans_and_timings_without_raw_output(shop):
    assert shop["baseline"].code == 0, shop["baseline"].output
    doc = json.loads((shop["dir"] / "baseline.json").read_text())
    assert doc["schema"] == "dbbench.explain/2" and doc["baseline"]["from"].endswith("before.json")
    assert len(doc["results"]) == 10
    for r in doc["results"]:
        assert "raw_plan" not in r["remediated"] and r["remediated"]["plan"]["kind"]
        assert len(r["remediated"]["samples_ms"]) == 5
    again = run_cli("diff", str(shop["dir"] / "baseline.json"), str(shop["dir"] / "before.json"))
    assert again.code == 0, again.output
    assert "no regressions; 10 of 10 unchanged" in again.stdout


def test_report_markdown_and_html_from_a_real_result(shop, tmp_path):
    page = tmp_path / "report.html"
    result = run_cli("report", str(shop["dir"] / "before.json"), "--html", str(page))
    assert result.code == 0, result.output
    md = result.stdout
    assert (
        "| Query shape | Cardinality | MySQL p50 / p95 | PostgreSQL p50 / p95 | Bounded access path |" in md
    )
    assert "| --- | --- | ---: | ---: | --- |" in md
    assert re.search(
        r"\| recent orders of a customer \| 10 of a customer's 15, of 30,000 \| [\d.]+ / [\d.]+ ms \| "
        r"[\d.]+ / [\d.]+ ms \| customer/placed-at index walked backwards, no sort \|",
        md,
    )
    assert "| Remediated plan | Before | Final p50 | Change |\n| --- | ---: | ---: | ---: |" in md
    assert re.search(
        r"\| PostgreSQL open orders queue: lower\(status\) filter to a plain status range \| "
        r"[\d.]+ ms \| [\d.]+ ms \| [\d,.]+x faster \|",
        md,
    )
    assert "from 5 consecutive warmed `EXPLAIN ANALYZE` runs after 1 untimed warm-ups" in md
    assert re.search(r"Its SHA-256 is `[0-9a-f]{64}`", md)
    html = page.read_text()
    assert (
        html.startswith("<!doctype html>")
        and "<script" not in html
        and "http" not in html.split("<svg", 1)[0]
    )
    svg = html[html.index("<svg") : html.index("</svg>")]
    # every timed sample is a dot: 10 remediated + 2 natural series of 5
    assert svg.count("<circle") == 12 * 5
    assert "recent orders of a customer · PostgreSQL" in svg and "p50 " in svg


def test_dropping_the_index_makes_diff_fail_naming_shape_dialect_index_and_new_path(shop, tmp_path):
    _sql(
        NS,
        {
            "postgresql": ["DROP INDEX ix_orders_customer_placed"],
            "mysql": ["DROP INDEX ix_orders_customer_placed ON orders"],
        },
    )
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n")
    md, junit, out, after = (tmp_path / n for n in ("diff.md", "diff.xml", "diff.json", "after.json"))
    result = run_cli(
        "diff",
        str(shop["dir"] / "baseline.json"),
        "--namespace",
        NS,
        "--runs",
        "3",
        "--markdown",
        str(md),
        "--junit",
        str(junit),
        "--output",
        str(out),
        "--save-result",
        str(after),
        env={"GITHUB_STEP_SUMMARY": str(summary)},
    )
    assert result.code == 1, result.output
    text = md.read_text()
    for dialect in ("PostgreSQL", "MySQL"):
        assert f"- **recent orders of a customer** [{dialect}]" in text
        assert f"| recent orders of a customer | {dialect} |" in text
    assert text.count("index lost: ix_orders_customer_placed on orders; now full_scan on orders") == 2
    assert "2 regressions: recent orders of a customer (MySQL, PostgreSQL)" in text
    assert "Table scan on orders" in text and "Seq Scan on orders" in text  # the plans, in <details>
    assert "index lost: ix_orders_customer_placed on orders" in result.stdout  # the terminal form too
    assert summary.read_text() == "earlier step\n" + text  # appended, GitHub-style
    doc = json.loads(out.read_text())
    assert doc["schema"] == "dbbench.diff/1" and doc["ok"] is False
    regressed = {(s["shape"], s["dialect"]) for s in doc["shapes"] if s["regressed"]}
    assert regressed == {
        ("recent orders of a customer", "postgresql"),
        ("recent orders of a customer", "mysql"),
    }
    suite = ET.parse(junit).getroot().find("testsuite")
    assert (suite.get("tests"), suite.get("failures")) == ("10", "2")
    failed = [c for c in suite.iter("testcase") if c.find("failure") is not None]
    assert {c.get("name") for c in failed} == {"recent orders of a customer"}
    assert "index lost: ix_orders_customer_placed" in failed[0].find("failure").get("message")
    # the saved run is an ordinary result: report and diff read it
    assert run_cli("diff", str(shop["dir"] / "baseline.json"), str(after)).code == 1
    report = run_cli("report", str(after))
    assert report.code == 0, report.output
    assert re.search(
        r"\| recent orders of a customer \| .* \| customer/placed-at index walked backwards, no sort"
        r" — FAIL MySQL: full_scan on orders; PostgreSQL: full_scan on orders \|",
        report.stdout,
    )
    assert (
        "Failed assertions:" in report.stdout and "FAIL recent orders of a customer [MySQL]" in report.stdout
    )


@pytest.mark.servers
def test_diff_and_report_refuse_bad_input_with_exit_2(tmp_path):
    missing = run_cli("diff", str(tmp_path / "nope.json"), str(tmp_path / "nope.json"))
    assert missing.code == 2 and "nope.json: no such file" in missing.stderr
    (tmp_path / "x.json").write_text('{"schema": "dbbench.seed/1"}')
    wrong = run_cli("report", str(tmp_path / "x.json"))
    assert wrong.code == 2 and "is not a dbbench.explain result" in wrong.stderr
    assert "Traceback" not in missing.output + wrong.output
    (tmp_path / "r.json").write_text('{"schema": "dbbench.explain/1", "results": []}')
    unwritable = run_cli(
        "report", str(tmp_path / "r.json"), "--html", str(tmp_path / "no" / "such" / "r.html")
    )
    assert unwritable.code == 2 and "Traceback" not in unwritable.output, unwritable.output
    assert unwritable.stderr.strip().splitlines() == [
        f"dbbench: error: --html {tmp_path / 'no' / 'such' / 'r.html'}: "
        f"cannot be written (directory {tmp_path / 'no' / 'such'} "
        "does not exist)"
    ]


def test_check_runs_the_catalogs_own_setup_and_writes_junit(local_servers, tmp_path):
    junit = tmp_path / "check.xml"
    result = run_cli(
        "check", "--catalog", EXAMPLE, "--namespace", "dbbench_t_example_check", "--junit", str(junit)
    )
    assert result.code == 0, result.output
    suite = ET.parse(junit).getroot().find("testsuite")
    assert (suite.get("name"), suite.get("tests"), suite.get("failures")) == ("dbbench.check", "10", "0")


def test_explain_refuses_a_namespace_holding_other_data(shop, tmp_path):
    # a namespace built by another catalog's setup is not this catalog's data
    other = tmp_path / "other"
    other.mkdir()
    (other / "a.toml").write_text(
        'name = "a"\ncardinality = "1"\n[postgresql]\nsql = "SELECT id FROM t"\n'
        'expect = { table = "t", index = "t_pkey" }\n'
    )
    (other / "setup.sql").write_text("CREATE TABLE t (id int PRIMARY KEY);")
    result = run_cli("explain", "--only", "postgresql", "--catalog", str(other), "--namespace", NS)
    assert result.code == 2
    assert "holds 'setup:shop', not the data of catalog 'other': run `dbbench seed --catalog" in result.stderr


def test_setup_sql_never_touches_a_namespace_that_is_not_dbbenchs(local_servers):
    foreign = "dbbench_t_foreign"
    _sql(
        None,
        {
            "postgresql": [
                f"DROP SCHEMA IF EXISTS {foreign} CASCADE",
                f"CREATE SCHEMA {foreign}",
                f"CREATE TABLE {foreign}.precious (id int)",
            ],
            "mysql": [
                f"DROP DATABASE IF EXISTS {foreign}",
                f"CREATE DATABASE {foreign}",
                f"CREATE TABLE {foreign}.precious (id int)",
            ],
        },
    )
    result = run_cli("seed", "--catalog", EXAMPLE, "--namespace", foreign)
    assert result.code == 2
    assert (
        f"'{foreign}' exists and is not dbbench's (no dbbench_meta marker); nothing was changed"
        in result.stderr
    )
    _sql(
        None,
        {"postgresql": [f"SELECT * FROM {foreign}.precious"], "mysql": [f"SELECT * FROM {foreign}.precious"]},
    )
    explained = run_cli("explain", "--catalog", EXAMPLE, "--namespace", foreign)
    assert explained.code == 2
    assert f"'{foreign}' exists and is not dbbench's" in explained.stderr
    assert "dbbench seed" not in explained.stderr  # seeding there would be refused: no such advice


def _outside_schema(outside: str, *statements: str) -> None:
    """A fresh PostgreSQL schema ``outside`` (not dbbench's), then ``statements``."""
    create = [f"DROP SCHEMA IF EXISTS {outside} CASCADE", f"CREATE SCHEMA {outside}", *statements]
    _sql(None, {"postgresql": create, "mysql": []})


def _sneaky_catalog(tmp_path, setup: str):
    """A PostgreSQL catalog of one shape on its table t, whose setup SQL creates t, then runs ``setup``."""
    cat = tmp_path / "sneaky"
    cat.mkdir()
    (cat / "a.toml").write_text(
        'name = "a"\ncardinality = "1"\n[postgresql]\nsql = "SELECT id FROM t"\n'
        'expect = { table = "t", index = "t_pkey" }\n'
    )
    (cat / "setup.postgresql.sql").write_text("CREATE TABLE t (id int PRIMARY KEY);\n" + setup)
    return cat


def _seed_sneaky(cat, isolated: bool):
    """``dbbench seed --catalog cat`` into dbbench_t_sneaky on PostgreSQL (as the namespace role
    unless not isolated), past the text checks: since issue 31 they refuse every spelling here
    (tests/dbbench/setup/test_foreign_references.py); these show the server and the transaction
    check refuse them too. The result as the CLI reports it."""
    from dbbench.setup import loader
    from tests.conftest import CliResult

    targets = open_targets({}, "postgresql")
    try:
        loader.load(targets, str(cat), namespace="dbbench_t_sneaky", isolate=isolated, text_checks=False)
    except loader.SetupError as exc:
        return CliResult(2, "", f"dbbench: error: {exc}\n")
    finally:
        for t in targets:
            t.dispose()
    return CliResult(0, "", "")


@pytest.mark.parametrize("isolated", [True, False], ids=["namespace-role", "no-isolation"])
def test_postgresql_setup_that_reaches_outside_is_rolled_back(local_servers, tmp_path, isolated):
    outside = "dbbench_t_outside"
    _outside_schema(outside, "DROP SCHEMA IF EXISTS dbbench_t_sneaky CASCADE")
    # dynamic SQL hides the target from the statement check; the transaction check still sees it
    cat = _sneaky_catalog(
        tmp_path, f"DO $$ BEGIN EXECUTE 'CREATE TABLE {outside}.planted (id int)'; END $$;\n"
    )
    result = _seed_sneaky(cat, isolated)
    assert result.code == 2
    if isolated:  # the namespace role has no privilege on the other schema: the server refuses
        assert f"the server reported: permission denied for schema {outside}" in result.stderr, result.output
    else:  # dbbench's own user could: the transaction check sees it and rolls back
        assert (
            f"created, altered, dropped or wrote to relations outside 'dbbench_t_sneaky': {outside}.planted; "
            "rolled back"
        ) in result.stderr
    [[planted]], [[namespace_left]] = sql(
        "postgresql",
        [f"SELECT to_regclass('{outside}.planted')", "SELECT to_regnamespace('dbbench_t_sneaky')"],
        fetch="each",
    )
    assert planted is None
    if isolated:  # re-created and marked loading before the setup ran: left incomplete
        assert namespace_left is not None
        result = run_cli(
            "explain", "--only", "postgresql", "--catalog", str(cat), "--namespace", "dbbench_t_sneaky"
        )
        assert result.code == 2 and "holds an incomplete seed" in result.stderr, result.output
    else:  # one transaction: nothing is left
        assert namespace_left is None


@pytest.mark.parametrize(
    "sneaky",
    [
        "DO $$ BEGIN DELETE FROM {o}.precious WHERE id < 3; END $$",
        "DO $$ BEGIN EXECUTE 'DROP TABLE {o}.precious'; END $$",
        "DO $$ BEGIN BEGIN EXECUTE 'CREATE INDEX ix_planted ON {o}.precious (id)'; "
        "EXCEPTION WHEN others THEN NULL; END; END $$",  # in a subtransaction
        "CREATE FUNCTION f() RETURNS void LANGUAGE sql AS $f$ UPDATE {o}.precious SET id = id + 100 $f$;\nSELECT f()",
    ],
)
@pytest.mark.parametrize("isolated", [True, False], ids=["namespace-role", "no-isolation"])
def test_postgresql_setup_that_writes_or_drops_outside_is_rolled_back(
    local_servers, tmp_path, sneaky, isolated
):
    outside = "dbbench_t_outside_rows"
    _outside_schema(
        outside,
        f"CREATE TABLE {outside}.precious (id int PRIMARY KEY)",
        f"INSERT INTO {outside}.precious SELECT generate_series(1, 10)",
    )
    result = _seed_sneaky(_sneaky_catalog(tmp_path, sneaky.format(o=outside) + ";\n"), isolated)
    if isolated and "EXCEPTION WHEN others" in sneaky:  # the refusal was swallowed by the handler
        assert result.code == 0, result.output
    elif isolated:
        assert result.code == 2, result.output
        assert re.search(
            r"the server reported: (permission denied for (schema|table)|must be owner)", result.stderr
        ), result.output
    else:
        assert result.code == 2, result.output
        assert re.search(rf"outside 'dbbench_t_sneaky': .*{outside}\.precious\b", result.stderr)
        assert "rolled back, nothing was changed" in result.stderr
    assert "Traceback" not in result.output
    [[rows]], [[indexes]], _ = sql(
        "postgresql",
        [
            f"SELECT array_agg(id ORDER BY id) FROM {outside}.precious",
            f"SELECT count(*) FROM pg_indexes WHERE schemaname = '{outside}'",
            f"DROP SCHEMA {outside} CASCADE",
        ],
        fetch="each",
    )
    assert rows == list(range(1, 11)) and indexes == 1


def test_a_changed_setup_warns_with_the_namespace_to_rebuild(shop, tmp_path):
    import shutil

    copy = tmp_path / "shop"  # same catalog name, setup SQL edited since the namespace was built
    shutil.copytree(EXAMPLE, copy)
    (copy / "setup.postgresql.sql").write_text((copy / "setup.postgresql.sql").read_text() + "\n-- edited\n")
    result = run_cli(
        "explain",
        "--only",
        "postgresql",
        "--catalog",
        str(copy),
        "--namespace",
        NS,
        "--shape",
        "customer by email",
        "--runs",
        "1",
        "--warmups",
        "0",
        "--no-natural",
    )
    assert f"run `dbbench seed --catalog {copy} --namespace {NS}` to rebuild it" in result.stderr, (
        result.output
    )
