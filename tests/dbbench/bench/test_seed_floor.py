"""``dbbench bench seed`` (dbbench.bench.seed_floor): the floor and the seed measured in one run on
both real servers, and nothing left behind; a scratch namespace that is not dbbench's is refused."""

from __future__ import annotations

import pytest

from dbbench import dialects
from dbbench.access.targets import open_targets
from dbbench.bench import seed_floor
from dbbench.dataset import definition, loadfiles
from dbbench.errors import NotOurs
from tests.db import sql

pytestmark = pytest.mark.servers


def _state(target, namespace: str) -> str:
    with target.all_or_nothing() as conn:
        return dialects.get(target.dialect).namespace_state(conn, namespace)


def test_floor_and_seed_of_the_same_rows_on_both_servers_leave_nothing(local_servers, tmp_path):
    ds = definition.load("alpine-ci")
    tables, _, _ = loadfiles.prepare(ds, ["postgresql", "mysql"], tmp_path)
    targets = open_targets({})
    try:
        rows, floor_wall, seed_wall = seed_floor.run(targets, "alpine-ci", tmp_path, repeat=1)
        assert sorted(r.dialect for r in rows) == ["mysql", "postgresql"]
        for r in rows:
            assert r.rows == sum(t.rows for t in tables) > 0  # every row of the dataset, both times
            assert 0 < r.floor_seconds <= floor_wall and r.seed_seconds > 0
            assert r.ratio == r.seed_seconds / r.floor_seconds
        assert seed_wall > 0
        for t in targets:
            for ns in (seed_floor.FLOOR_NAMESPACE, seed_floor.BENCH_NAMESPACE):
                assert _state(t, ns) == "absent", (t.dialect, ns)
    finally:
        for t in targets:
            t.dispose()


def test_a_floor_namespace_that_is_not_dbbenchs_is_refused_and_kept(local_servers, tmp_path):
    ns = seed_floor.FLOOR_NAMESPACE
    sql(
        "postgresql",
        [f"CREATE SCHEMA {ns}", f"CREATE TABLE {ns}.mine (id int)", f"INSERT INTO {ns}.mine VALUES (7)"],
    )
    targets = open_targets({}, "postgresql")
    try:
        with pytest.raises(NotOurs, match=f"{ns}.*is not dbbench's"):
            seed_floor.run(targets, "alpine-ci", tmp_path, repeat=1)
        assert sql("postgresql", f"SELECT id FROM {ns}.mine") == [(7,)]  # untouched, dropped by no one
    finally:
        sql("postgresql", f"DROP SCHEMA IF EXISTS {ns} CASCADE")
        for t in targets:
            t.dispose()
