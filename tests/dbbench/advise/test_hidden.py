"""dbbench.advise.trial.hidden on both real servers: an index hidden for the block is not read by
a plan there, is read again after it, and the namespace is exactly as it was (index definitions
and visibility, table fingerprints, the statistics plans are made from, dbbench_meta): after the
block, after an exception in it, and after a kill -9 in the middle (PostgreSQL: the server rolls
the transaction back; MySQL: the next command makes visible what the record names)."""

from __future__ import annotations

import pytest

from dbbench import dialects
from dbbench.advise import trial
from dbbench.errors import DbbenchError
from tests.db import connection, execute, sql
from tests.dbbench.advise.test_trial import NS, child, killed, reads, reads_outside, records, seeded, state

pytestmark = pytest.mark.servers

__all__ = ["seeded"]  # the module's seeded namespace, shared with test_trial

LOOKUP = (
    "SELECT package_id FROM package_relation WHERE repository_id = %(r)s AND relation_kind = %(k)s "
    "AND token_sha256 = %(t)s"
)


def lookup_params(target) -> dict:
    ((r, k, t),) = sql(
        target,
        "SELECT repository_id, relation_kind, token_sha256 FROM package_relation LIMIT 1",
        namespace=NS,
    )
    return {"r": r, "k": k, "t": t}


@pytest.fixture(scope="module")
def hidden_state(seeded):
    return {d: state(t) for d, t in seeded.items()}


@pytest.mark.parametrize("dialect", ["postgresql", "mysql"])
def test_a_hidden_index_is_not_read_in_the_block_and_is_there_after(seeded, hidden_state, dialect):
    target = seeded[dialect]
    params = lookup_params(target)
    assert "ix_relation_lookup" in reads_outside(target, LOOKUP, params)
    with trial.hidden(target, NS, "package_relation", "ix_relation_lookup") as conn:
        assert "ix_relation_lookup" not in reads(conn, dialect, LOOKUP, params)
        conn.rollback()  # measuring code ends its reads so: the index stays hidden
        assert "ix_relation_lookup" not in reads(conn, dialect, LOOKUP, params)
        names = {i for _, i, _ in dialects.get(dialect).index_definitions(conn, NS)}
        if dialect == "postgresql":
            assert "ix_relation_lookup" not in names  # dropped in this transaction only
        else:
            assert "ix_relation_lookup" in names
            assert records(target) == [r for r in records(target) if r.startswith("advise.hidden.")] != []
            assert sql(
                target,
                "SELECT DISTINCT is_visible FROM information_schema.statistics WHERE table_schema = "
                f"'{NS}' AND index_name = 'ix_relation_lookup'",
            ) == [("NO",)]
    assert state(target) == hidden_state[dialect]
    assert "ix_relation_lookup" in reads_outside(target, LOOKUP, params)


def test_a_postgresql_constraint_is_hidden_with_its_index_and_the_foreign_keys_on_it(seeded, hidden_state):
    """uq_package_repository_id backs fk_relation_package: both go for the block, both come back."""
    target = seeded["postgresql"]
    with trial.hidden(target, NS, "package", "uq_package_repository_id") as conn:
        left = execute(
            conn,
            f"SELECT conname FROM pg_constraint WHERE connamespace = '{NS}'::regnamespace "
            "AND conname IN ('uq_package_repository_id', 'fk_relation_package')",
        )
        assert left == []
    assert state(target) == hidden_state["postgresql"]


def test_mysql_refuses_to_hide_a_primary_key(seeded, hidden_state):
    with (
        pytest.raises(DbbenchError, match="cannot make a primary key invisible"),
        trial.hidden(seeded["mysql"], NS, "package", "PRIMARY"),
    ):
        pytest.fail("the block ran")
    assert state(seeded["mysql"]) == hidden_state["mysql"]


@pytest.mark.parametrize("dialect", ["postgresql", "mysql"])
def test_an_exception_while_hidden_leaves_nothing(seeded, hidden_state, dialect):
    target = seeded[dialect]
    with pytest.raises(ZeroDivisionError), trial.hidden(target, NS, "package", "ix_package_full"):
        1 / 0  # noqa: B018
    assert state(target) == hidden_state[dialect]


HIDE_CHILD = """
import sys
from dbbench.access.targets import open_targets
from dbbench.advise import trial
dialect, ns, table, name = sys.argv[1:5]
(target,) = open_targets({}, dialect)
with trial.hidden(target, ns, table, name) as conn:
    print("ready", flush=True)
    sys.stdin.read()  # until the test kills this process
"""


@pytest.mark.parametrize("dialect", ["postgresql", "mysql"])
def test_an_index_hidden_by_a_killed_process_is_visible_again(seeded, hidden_state, dialect):
    target = seeded[dialect]
    with killed(child(dialect, [], "client", script=HIDE_CHILD, argv=["package", "ix_package_namespace"])):
        if dialect == "mysql":
            assert sql(
                target,
                "SELECT DISTINCT is_visible FROM information_schema.statistics WHERE table_schema = "
                f"'{NS}' AND index_name = 'ix_package_namespace'",
            ) == [("NO",)]
    if dialect == "postgresql":
        with connection(target) as conn:  # until the server has rolled the dead session back
            execute(conn, ["SET lock_timeout = '30s'", f"LOCK TABLE {NS}.package IN ACCESS EXCLUSIVE MODE"])
        assert trial.recover(target, NS) == []
    else:
        assert [r for r in records(target) if r.startswith("advise.hidden.")]
        assert trial.recover(target, NS, wait_s=30) == ["ix_package_namespace"]
        assert trial.recover(target, NS) == []
    assert state(target) == hidden_state[dialect]
