"""`dbbench explain` and `dbbench check` on the real servers."""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET

import pytest

from dbbench.access.targets import open_targets
from dbbench.catalog import entries
from dbbench.dataset import seed
from dbbench.dialects.plan import PlanNode
from tests.conftest import run_cli
from tests.db import SHARED_100K, connection, sql

NS = SHARED_100K


@pytest.fixture(scope="module")
def seeded(alpine_100k_pool):
    """The 100k dataset, as seeded (the namespace this module shares: tests.db.Shared100k)."""
    with alpine_100k_pool.lent() as targets:
        yield list(targets.values())


def _fingerprints(targets, ns):
    from dbbench.dataset import definition, loadfiles

    tables, _, _ = loadfiles.prepare(
        definition.load("alpine-100k"), ["postgresql", "mysql"], seed.default_cache()
    )
    out = {}
    for t in targets:
        with connection(t, namespace=ns) as conn:
            out[t.dialect] = {tb.name: seed.fingerprint_table(conn, t.dialect, tb) for tb in tables}
    return out


def test_every_shape_holds_on_both_dialects_and_data_is_unchanged(seeded, tmp_path):
    before = _fingerprints(seeded, NS)
    out = tmp_path / "explain.json"
    result = run_cli("explain", "--namespace", NS, "--output", str(out))
    assert result.code == 0, result.output
    doc = json.loads(out.read_text())
    assert {(r["shape"], r["dialect"]) for r in doc["results"] if r["ok"]} == {
        (s.name, d) for s in entries.load() for d in ("postgresql", "mysql")
    }
    assert len({r["shape"] for r in doc["results"]}) == 12  # the nine reads and three writes
    for r in doc["results"]:
        assert len(r["remediated"]["samples_ms"]) == 7
        assert r["remediated"]["p50_ms"] == sorted(r["remediated"]["samples_ms"])[3]
        assert r["remediated"]["p95_ms"] == max(r["remediated"]["samples_ms"])
        tree = PlanNode.from_dict(r["remediated"]["plan"])  # the normalized plan reads back as a tree
        assert r["verdict"]["expected"].split(" using ")[-1] in {n.index for n in tree.walk()}
    assert len(doc["remediation"]) == 8  # the cleanup DELETE's too (PostgreSQL)
    for r in doc["results"]:
        if r["shape"] == "orphan group stage scan":  # the delete cascades, and is rolled back
            assert r["cascade"] == {
                "before": 2000,
                "deleted_parents": 1,
                "after_delete": 0,
                "after_rollback": 2000,
            }
    assert "wrote" in result.stdout and "SHA-256" in result.stdout
    assert "Remediated plan" in result.stdout and "exact asset path" in result.stdout
    # locking shapes ran in rolled-back transactions: nothing changed
    assert _fingerprints(seeded, NS) == before


def test_markdown_output(seeded):
    result = run_cli(
        "explain",
        "--namespace",
        NS,
        "--format",
        "markdown",
        "--no-natural",
        "--runs",
        "1",
        "--warmups",
        "0",
        "--shape",
        "relation lookup",
    )
    assert result.code == 0, result.output
    assert "| Query shape" in result.stdout and "|---" in result.stdout.replace(" ", "").replace(":", "")


def test_dropping_an_expected_index_fails_naming_the_shape(local_servers):
    ns = "dbbench_t_drop"
    targets = open_targets({})
    try:
        seed.seed(targets, "alpine-ci", namespace=ns)
        for t in targets:
            on = " ON package_relation" if t.dialect == "mysql" else ""
            sql(t, f"DROP INDEX ix_relation_lookup{on}", namespace=ns)
    finally:
        for t in targets:
            t.dispose()
    result = run_cli("explain", "--namespace", ns, "--runs", "1", "--warmups", "0", "--no-natural")
    assert result.code == 1, result.output
    assert "FAIL relation lookup [PostgreSQL]" in result.stderr
    assert "FAIL relation lookup [MySQL]" in result.stderr
    assert "expected index ix_relation_lookup on package_relation is not used" in result.stderr
    assert "FAIL exact asset path" not in result.stderr


def test_check_passes_and_fails_on_a_lost_index(local_servers, tmp_path):
    ok = run_cli("check")
    assert ok.code == 0, ok.output
    cat = tmp_path / "catalog"
    shutil.copytree(entries.CATALOG_DIR / "alpine", cat)
    entry = cat / "05-relation-lookup.toml"
    entry.write_text(
        entry.read_text().replace('index = "ix_relation_lookup"', 'index = "ix_relation_lookup_v2"')
    )
    junit = tmp_path / "check.xml"
    bad = run_cli("check", "--catalog", str(cat), "--junit", str(junit))
    assert bad.code == 1
    assert (
        "FAIL relation lookup [PostgreSQL]: expected package_relation using ix_relation_lookup_v2"
        in bad.stderr
    )
    suite = ET.parse(junit).getroot().find("testsuite")
    assert (suite.get("tests"), suite.get("failures")) == ("24", "2")
    failed = {
        (c.get("classname"), c.get("name")) for c in suite.iter("testcase") if c.find("failure") is not None
    }
    assert failed == {
        ("dbbench.check.postgresql", "relation lookup"),
        ("dbbench.check.mysql", "relation lookup"),
    }
    failure = next(c.find("failure") for c in suite.iter("testcase") if c.find("failure") is not None)
    assert "ix_relation_lookup_v2" in failure.get("message") and "->" in failure.text


def test_not_seeded_is_a_clear_error(local_servers):
    result = run_cli("explain", "--namespace", "dbbench_never_seeded")
    assert result.code == 2
    assert "does not exist: run `dbbench seed` first" in result.stderr
    assert "Traceback" not in result.output


def test_malformed_catalog_names_file_and_field(local_servers, tmp_path):
    (tmp_path / "bad.toml").write_text(
        'name = "x"\ncardinality = "1"\n[postgresql]\nsql = "SELECT 1"\nexpect = { table = "t" }\n'
    )
    result = run_cli("explain", "--catalog", str(tmp_path))
    assert result.code == 2
    assert "bad.toml: entry 'x': [postgresql] expect: needs" in result.stderr
    (tmp_path / "bad.toml").write_text(
        'name = "x"\ncardinality = "1"\n[mysql]\nsql = "SELECT :nope"\n'
        'expect = { table = "t", index = "i" }\nforbid = ["hash_join"]\n'
    )
    result = run_cli("explain", "--catalog", str(tmp_path))
    assert result.code == 2 and "'hash_join' is not one of" in result.stderr
    assert "[mysql] sql: parameter :nope is not in [params]" in result.stderr  # every problem, not the first


def test_timeout_is_reported_not_hung(seeded, tmp_path):
    (tmp_path / "slow.toml").write_text(
        'name = "slow"\ncardinality = "n/a"\n[postgresql]\nsql = "SELECT pg_sleep(2)"\n'
        'expect = { table = "package", index = "package_pkey" }\n'
    )
    result = run_cli(
        "explain",
        "--only",
        "postgresql",
        "--catalog",
        str(tmp_path),
        "--namespace",
        NS,
        "--timeout",
        "0.3",
        "--runs",
        "1",
        "--warmups",
        "0",
    )
    assert result.code == 1
    assert "timeout" in result.output and "statement_timeout of 300 ms reached" in result.stderr
