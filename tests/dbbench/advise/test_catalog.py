"""``dbbench advise`` on the whole built-in catalog, both real servers, where the DAO change lost
every secondary index the catalog was designed for: each shape whose check now fails gets its
index back among the verified candidates (the key of the index it lost, or one the planner
prefers that serves it as well), the smallest set is built whole and verified by running the
catalog again, and the namespace is exactly as it was afterwards."""

from __future__ import annotations

import json

import pytest

from tests.conftest import run_cli
from tests.db import seeded_without
from tests.dbbench.advise.test_command import snapshot

pytestmark = pytest.mark.servers

NS = "i34_cat"
# the index the DAO change lost -> its table and leading key columns
LOST = {
    "ix_relation_lookup": ("package_relation", ["repository_id", "relation_kind", "token_sha256"]),
    "ix_stage_cleanup": ("group_snapshot_stage", ["created_at"]),
}


@pytest.fixture(scope="module")
def lost_indexes(local_servers):
    with seeded_without(NS, *LOST) as targets:
        yield targets


def test_the_whole_catalog_gets_its_lost_indexes_back_as_one_verified_set(lost_indexes, tmp_path):
    before = {d: snapshot(t, NS) for d, t in lost_indexes.items()}
    out = tmp_path / "advice.json"
    r = run_cli(
        "advise", "--namespace", NS, "--most", "2", "--write-rows", "100", "--runs", "1", "--output", str(out)
    )
    assert r.code == 0, r.stderr
    assert {d: snapshot(t, NS) for d, t in lost_indexes.items()} == before
    doc = json.loads(out.read_text())
    failing = {(n["shape"], n["dialect"]) for n in doc["needs"] if n["spelling"] == "remediated"}
    assert ("relation lookup", "postgresql") in failing and ("relation lookup", "mysql") in failing
    for a in doc["shapes"]:
        if a["spelling"] != "remediated" or a["shape"] != "relation lookup":
            continue
        verified = [c for c in a["candidates"] if c["verdict"] == "verified"]
        table, lead = LOST["ix_relation_lookup"]
        assert any(
            c["table"] == table and c["candidate"].startswith(f"{table} ({', '.join(lead)}") for c in verified
        )
    for s in doc["sets"]:
        assert s["indexes"], s
        assert s["verified"], s["problem"]
        assert "relation lookup" in s["serves"]
        for i in s["indexes"]:  # each member names what it serves, a part of what the set serves
            assert i["serves"] and set(i["serves"]) <= set(s["serves"]), i
            assert not i["migration_name"].startswith("dbbench_adv_")
        assert s["size_bytes"] > 0 and s["write_ms"]["with"] > 0
    assert "The whole catalog: the smallest verified set" in r.stdout
