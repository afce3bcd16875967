"""dbbench.advise.shape on both real servers: a shape whose index is gone gets its candidates
built, measured and costed for real, and the one that restores its plan is verified; nothing is
left behind. The built-in "relation lookup" in a scratch namespace where ix_relation_lookup was
dropped (the team's DAO change that lost the index)."""

from __future__ import annotations

import pytest

from dbbench.advise.shape import advise, judge
from dbbench.advise.trial import WriteCost
from dbbench.catalog.entries import open_catalog
from dbbench.measure.explain import MeasureOptions, dataset_params
from tests.db import indexes, seeded_without

pytestmark = pytest.mark.servers

NS = "i34_shape"


@pytest.fixture(scope="module")
def lost_index(local_servers):
    with seeded_without(NS, "ix_relation_lookup") as targets:  # the DAO change: the lookup's index dropped
        yield targets


@pytest.mark.parametrize("dialect", ["postgresql", "mysql"])
def test_the_lost_index_is_found_again_verified_and_costed(lost_index, dialect):
    target = lost_index[dialect]
    shape = next(s for s in open_catalog("alpine").shapes if s.name == "relation lookup")
    before = indexes(target, NS)
    said: list[str] = []
    advice = advise(
        target,
        NS,
        shape,
        MeasureOptions(namespace=NS, warmups=0, runs=1),
        dataset_params("alpine-ci"),
        most=2,
        write_rows=200,
        say=said.append,
    )
    assert indexes(target, NS) == before  # nothing left behind
    assert len(advice.trials) == 2 and len(said) == 2
    best = advice.trials[0]
    assert best.candidate.table == "package_relation"
    assert [p.name for p in best.candidate.columns][:3] == ["repository_id", "relation_kind", "token_sha256"]
    assert best.verdict == "verified", (best.reason, best.evidence)
    assert best.evidence.serves and best.evidence.work[1] < best.evidence.work[0]
    assert best.size_bytes > 0 and best.build_seconds > 0
    assert best.write_without is not None and best.write_with is not None
    assert best.write_with.inserted == best.write_without.inserted > 0
    assert best.ddl.startswith("CREATE INDEX" if dialect == "postgresql" else "ALTER TABLE")
    assert advice.verified and advice.verified[0] is best


def test_judge_names_why_a_candidate_is_rejected():
    from dbbench.advise.verify import Evidence

    def ev(used, probes=(), work=(100.0, 10.0)):
        return Evidence(
            "s", "postgresql", "t", "i", used, probes, work, (None, None), (None, None), "full_scan"
        )

    assert judge(ev(True)) == ("verified", "")
    assert judge(ev(False)) == ("rejected", "unused by the planner (it reads t by full_scan)")
    assert judge(ev(True, ("hottest value x = 1 (9 of 10 rows): full_scan",)))[1].startswith(
        "loses on the hottest value: hottest value x = 1"
    )
    assert judge(ev(True, ("generic plan: full_scan",))) == (
        "rejected",
        "not used on generic plan: full_scan",
    )

    def cost(seconds):
        return WriteCost("t", 100, 100, 100, seconds, seconds, None, ())

    assert judge(ev(True), cost(0.01), cost(0.04)) == ("verified", "")
    verdict, reason = judge(ev(True), cost(0.01), cost(0.06))
    assert verdict == "rejected"
    assert reason == "too costly on writes: a 100-row write batch is 6.0x slower with it (limit 5x)"
    assert judge(ev(True), cost(0.01), cost(0.06), max_write_ratio=10)[0] == "verified"
    assert judge(ev(True, work=(10.0, 10.0))) == ("rejected", "no less work: 10 → 10 rows examined")
