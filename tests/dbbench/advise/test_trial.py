"""dbbench.advise.trial on both real servers: an index under trial is present for the block, serves
a query there, and leaves the namespace exactly as it was (index definitions, table fingerprints,
the statistics plans are made from, dbbench_meta): after the block, after an exception in it, and
after a kill -9 in the middle (PostgreSQL: the server rolls back; MySQL: :func:`recover` drops
what the record names). Write costs are measured with and without the index and change nothing.
What a trial may run is checked before anything is touched."""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from dbbench import dialects
from dbbench.access.targets import open_targets
from dbbench.advise import trial
from dbbench.dataset import definition, loadfiles, seed
from dbbench.errors import DbbenchError, NotOurs
from tests.conftest import default_sigint, run_cli
from tests.db import connection, drop_namespaces, execute, sql, statistics

pytestmark = pytest.mark.servers

NS = "i34_trial"
FOREIGN = "i34_trial_foreign"
ROOT = Path(__file__).resolve().parents[3]
NAME = "dbbench_adv_trial"
# (statement, drop, a query the index serves, its parameters) per dialect and kind of index
TRIALS = {
    ("postgresql", "column"): (
        f"CREATE INDEX {NAME} ON package (version)",
        f"DROP INDEX {NAME}",
        "SELECT id FROM package WHERE version = %(v)s",
        {"v": "1.0"},
    ),
    ("postgresql", "expression"): (
        f"CREATE INDEX {NAME} ON package (lower(package_name))",
        f"DROP INDEX IF EXISTS {NS}.{NAME}",
        "SELECT id FROM package WHERE lower(package_name) = %(n)s",
        {"n": "musl"},
    ),
    ("mysql", "column"): (
        f"ALTER TABLE package ADD INDEX {NAME} (version)",
        f"ALTER TABLE package DROP INDEX {NAME}",
        "SELECT id FROM package WHERE version = %(v)s",
        {"v": "1.0"},
    ),
    # a functional key part: the ALTER rebuilds the table, which throws its statistics away
    ("mysql", "expression"): (
        f"ALTER TABLE {NS}.package ADD INDEX {NAME} ((lower(package_name)))",
        f"ALTER TABLE {NS}.package DROP INDEX {NAME}",
        "SELECT id FROM package WHERE lower(package_name) = %(n)s",
        {"n": "musl"},
    ),
}
CASES = sorted(TRIALS)


@pytest.fixture(scope="module")
def seeded(local_servers):
    targets = open_targets({})
    try:
        _, results, _ = seed.seed(targets, "alpine-ci", namespace=NS)
        assert all(r.ok for r in results)
        yield {t.dialect: t for t in targets}
    finally:
        for t in targets:
            t.dispose()
        drop_namespaces(NS)


def state(target) -> dict:
    """What a trial must leave as it was: the index definitions, each table's fingerprint, the
    statistics plans are made from (PostgreSQL: pages, tuples and the size on disk of every
    relation; MySQL: InnoDB's persisted statistics), and dbbench_meta."""
    tables, _, _ = loadfiles.prepare(definition.load("alpine-ci"), [target.dialect], seed.default_cache())
    with connection(target, namespace=NS) as conn:
        if target.dialect == "postgresql":
            indexes = execute(
                conn,
                f"SELECT tablename, indexname, indexdef FROM pg_indexes WHERE schemaname = '{NS}' ORDER BY 1, 2",
            )
            meta = execute(conn, "SELECT key, value FROM dbbench_meta ORDER BY 1")
        else:
            indexes = execute(
                conn,
                "SELECT table_name, index_name, seq_in_index, column_name, expression, sub_part, collation, "
                f"non_unique, is_visible FROM information_schema.statistics WHERE table_schema = '{NS}' "
                "ORDER BY 1, 2, 3",
            )
            meta = execute(conn, "SELECT `key`, value FROM dbbench_meta ORDER BY 1")
        fingerprints = {t.name: seed.fingerprint_table(conn, target.dialect, t) for t in tables}
        conn.rollback()
    return {
        "indexes": indexes,
        "statistics": statistics(target, NS),
        "meta": meta,
        "fingerprints": fingerprints,
    }


def has_index(target, name: str = NAME) -> bool:
    """Whether another session sees index ``name`` in the namespace."""
    if target.dialect == "postgresql":
        query = f"SELECT 1 FROM pg_indexes WHERE schemaname = '{NS}' AND indexname = '{name}'"
    else:
        query = f"SELECT 1 FROM information_schema.statistics WHERE table_schema = '{NS}' AND index_name = '{name}'"
    return bool(sql(target, query))


def records(target) -> list[str]:
    key = "key" if target.dialect == "postgresql" else "`key`"
    return [
        r[0] for r in sql(target, f"SELECT {key} FROM dbbench_meta WHERE {key} LIKE 'advise.%'", namespace=NS)
    ]


def reads(conn, dialect: str, query: str, params: dict) -> set:
    """The indexes an EXPLAIN ANALYZE sample of ``query`` on ``conn`` reads."""
    sample = dialects.get(dialect).run_sample(conn, query, params, 10_000)
    return {n.index for n in sample.tree.walk() if n.index}


@pytest.fixture(scope="module")
def seeded_state(seeded):
    """Each dialect's state right after the seed; the fingerprints are the seed's own."""
    found = {d: state(t) for d, t in seeded.items()}
    for d, s in found.items():
        recorded = {k.removeprefix("fingerprint."): v for k, v in s["meta"] if k.startswith("fingerprint.")}
        assert recorded == s["fingerprints"], d
    return found


@pytest.mark.parametrize("case", CASES, ids=["-".join(c) for c in CASES])
def test_the_index_serves_a_query_inside_the_block_and_nothing_is_left_after(seeded, seeded_state, case):
    dialect = case[0]
    target, d = seeded[dialect], dialects.get(dialect)
    ddl, drop, query, params = TRIALS[case]
    assert NAME not in reads_outside(target, query, params)
    with trial.present(target, NS, ddl, drop, NAME) as conn:
        assert NAME in reads(conn, dialect, query, params)
        # measuring code ends its reads with rollback(): the index stays (PostgreSQL: a savepoint)
        assert d.query_row(conn, "SELECT COUNT(*) AS n FROM package", {}) == {"n": 4096}
        conn.rollback()
        assert NAME in reads(conn, dialect, query, params)
        assert trial.build_seconds(conn) > 0
        size = trial.size_bytes(conn, NS, "package", NAME)
        if dialect == "postgresql":
            assert size == execute(conn, f"SELECT pg_relation_size('{NS}.{NAME}'::regclass)")[0][0]
            assert not has_index(target)  # nobody else sees it: it is never committed
            assert records(target) == []
        else:
            ((measured,),) = sql(
                target,
                "SELECT stat_value * @@innodb_page_size FROM mysql.innodb_index_stats WHERE database_name = "
                f"'{NS}' AND table_name = 'package' AND index_name = '{NAME}' AND stat_name = 'size'",
            )
            assert size == measured > 0
            assert has_index(target)  # real, and recorded in flight before it was added
            assert records(target) == [f"advise.in_flight.{NAME}"]
            # the other indexes' statistics are as before while it is present (even after a rebuild)
            before = [r for r in seeded_state[dialect]["statistics"][0]]
            during = [r for r in state(target)["statistics"][0] if r[2] != NAME]
            assert during == before
            assert trial.recover(target, NS) == []  # a live trial is left alone
            assert has_index(target)
    assert state(target) == seeded_state[dialect]
    assert NAME not in reads_outside(target, query, params)


def reads_outside(target, query: str, params: dict) -> set:
    with connection(target, namespace=NS) as conn:
        return reads(conn, target.dialect, query, params)


@pytest.mark.parametrize("dialect", ["postgresql", "mysql"])
def test_an_exception_in_the_block_leaves_nothing(seeded, seeded_state, dialect):
    target = seeded[dialect]
    ddl, drop, _, _ = TRIALS[(dialect, "expression")]
    with pytest.raises(ZeroDivisionError), trial.present(target, NS, ddl, drop, NAME):
        1 / 0  # noqa: B018
    assert state(target) == seeded_state[dialect]


def test_a_commit_run_as_sql_inside_a_postgresql_trial_is_refused_and_undone(seeded, seeded_state):
    target = seeded["postgresql"]
    ddl, drop, _, _ = TRIALS[("postgresql", "column")]
    with (
        pytest.raises(DbbenchError, match="committed and is dropped again"),
        trial.present(target, NS, ddl, drop, NAME) as conn,
    ):
        execute(conn, "COMMIT")
    assert state(target) == seeded_state["postgresql"]


CHILD = """
import json, sys
from dbbench.access.targets import open_targets
from dbbench.advise import trial
dialect, ns, indexes, wait = sys.argv[1:5]
(target,) = open_targets({}, dialect)
with trial.present_all(target, ns, json.loads(indexes)) as conn:
    print("ready", flush=True)
    if wait == "sent":  # Ctrl-C lands after the statement went out, before its result is read
        import pymysql.connections

        reads = pymysql.connections.Connection._read_query_result

        def interrupted(self, *args, **kwargs):  # once: the recovery's own statements read theirs
            pymysql.connections.Connection._read_query_result = reads
            raise KeyboardInterrupt

        pymysql.connections.Connection._read_query_result = interrupted
    if wait in ("server", "sent"):  # a statement the server runs for a minute, as a long sample would
        with conn.cursor() as cur:
            cur.execute(
                "SELECT pg_sleep(60)" if dialect == "postgresql"
                # not SLEEP(), which ends when the client goes: work runs on, as a slow plan would
                else "SELECT /*+ MAX_EXECUTION_TIME(60000) */ BENCHMARK(500000000, SHA2(version, 256)) FROM package LIMIT 1"
            )
    sys.stdin.read()  # until the test kills this process
"""


def child(
    dialect: str,
    indexes: list[tuple[str, str, str]],
    wait: str,
    *,
    script: str = CHILD,
    argv: list[str] | None = None,
    **popen,
) -> subprocess.Popen:
    """A process holding ``indexes`` ((ddl, drop, name) each) present in NS; ``wait``: "client"
    (reading its stdin) or "server" (a statement the server runs for a minute). ``script`` and
    ``argv``: another child's, run with the dialect and NS first."""
    args = [json.dumps(indexes), wait] if argv is None else argv
    return subprocess.Popen(
        [sys.executable, "-c", script, dialect, NS, *args],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        **popen,
    )


@contextlib.contextmanager
def killed(proc: subprocess.Popen) -> Iterator[None]:
    """The block runs once ``proc`` is ready; then ``proc`` is killed (SIGKILL)."""
    try:
        ready(proc)
        yield
        os.kill(proc.pid, signal.SIGKILL)
        assert proc.wait(timeout=30) == -signal.SIGKILL
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate(timeout=30)


def ready(proc: subprocess.Popen, timeout: float = 60) -> None:
    """Wait (at most ``timeout`` seconds) for the child's ``ready`` line on its stdout pipe."""
    assert proc.stdout is not None
    with selectors.DefaultSelector() as selector:
        selector.register(proc.stdout, selectors.EVENT_READ)
        if not selector.select(timeout):
            proc.kill()
            pytest.fail(f"the trial process was not ready within {timeout} s")
    line = proc.stdout.readline()
    if line != b"ready\n":
        proc.kill()
        _, err = proc.communicate(timeout=30)
        pytest.fail(f"the trial process failed: {err.decode()[-2000:]}")


@pytest.mark.parametrize("dialect", ["postgresql", "mysql"])
def test_a_trial_killed_in_the_middle_is_undone(seeded, seeded_state, dialect):
    target = seeded[dialect]
    ddl, drop, _, _ = TRIALS[(dialect, "expression")]
    with killed(child(dialect, [(ddl, drop, NAME)], "client")):
        assert has_index(target) == (dialect == "mysql")
    if dialect == "postgresql":
        # waits until the server has ended the dead session's transaction (its lock on the table)
        with connection(target) as conn:
            execute(conn, ["SET lock_timeout = '30s'", f"LOCK TABLE {NS}.package IN ACCESS EXCLUSIVE MODE"])
        assert not has_index(target)  # rolled back by the server
        assert trial.recover(target, NS) == []
    else:
        assert has_index(target)  # committed: the record names it
        assert records(target) == [f"advise.in_flight.{NAME}"]
        # waits until the server has ended the dead session (which frees the trial's lock)
        assert trial.recover(target, NS, wait_s=30) == [NAME]
        assert trial.recover(target, NS) == []
    assert state(target) == seeded_state[dialect]


@pytest.mark.parametrize("dialect", ["postgresql", "mysql"])
def test_ctrl_c_during_a_statement_of_the_trial_leaves_nothing(seeded, seeded_state, dialect):
    """SIGINT while the server runs a statement on the trial's connection: the process undoes
    the trial itself before it exits (MySQL: it ends its broken session, which the server would
    otherwise run for a minute holding the trial's lock, then recovers)."""
    target = seeded[dialect]
    ddl, drop, _, _ = TRIALS[(dialect, "expression")]
    proc = child(dialect, [(ddl, drop, NAME)], "server", preexec_fn=default_sigint)
    try:
        ready(proc)
        running(target)  # the signal lands while the server runs the statement, not before
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=40)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate(timeout=30)
    assert b"KeyboardInterrupt" in err, err.decode()[-2000:]
    assert state(target) == seeded_state[dialect]
    assert trial.recover(target, NS) == []


def test_ctrl_c_after_a_statement_went_out_does_not_wait_for_it_on_mysql(seeded, seeded_state):
    """Ctrl-C between sending a statement and reading its result (the child raises it there): the
    undo does not queue behind the minute-long statement on the same session; the process ends
    the session, recovers, and exits at once with nothing left."""
    target = seeded["mysql"]
    ddl, drop, _, _ = TRIALS[("mysql", "expression")]
    proc = child("mysql", [(ddl, drop, NAME)], "sent")
    try:
        ready(proc)
        _, err = proc.communicate(timeout=20)  # the statement alone runs for a minute
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate(timeout=30)
    assert b"KeyboardInterrupt" in err, err.decode()[-2000:]
    assert state(target) == seeded_state["mysql"]
    assert trial.recover(target, NS) == []


def running(target, timeout: float = 30) -> None:
    """Wait until the child's minute-long statement runs on the server."""
    query = (
        "SELECT COUNT(*) FROM pg_stat_activity WHERE state = 'active' AND query LIKE 'SELECT pg_sleep(60)%'"
        if target.dialect == "postgresql"
        else "SELECT COUNT(*) FROM information_schema.processlist WHERE command = 'Query' "
        "AND info LIKE '%BENCHMARK(500000000%' AND info NOT LIKE '%processlist%'"
    )
    deadline = time.monotonic() + timeout
    while sql(target, query)[0][0] == 0:
        assert time.monotonic() < deadline, "the trial's statement never started"
        time.sleep(0.05)


@pytest.mark.parametrize("dialect", ["postgresql", "mysql"])
def test_write_cost_with_and_without_an_index_changes_nothing(seeded, seeded_state, dialect):
    """The columns of ix_package_namespace in an index of its own: the writes cost more with it."""
    target = seeded[dialect]
    columns = ["repository_id", "distribution_name", "package_name", "id"]
    cols = ", ".join(columns)
    name = "dbbench_adv_package_namespace"
    if dialect == "postgresql":
        ddl, drop = f"CREATE INDEX {name} ON package ({cols})", f"DROP INDEX {name}"
    else:
        ddl, drop = f"ALTER TABLE package ADD INDEX {name} ({cols})", f"ALTER TABLE package DROP INDEX {name}"
    without = trial.write_cost(target, NS, "package", columns, rows=1000, repeat=5)
    with trial.present(target, NS, ddl, drop, name) as conn:
        with_index = trial.write_cost(target, NS, "package", columns, rows=1000, repeat=5, conn=conn)
        assert name in {i for _, i, _ in dialects.get(dialect).index_definitions(conn, NS)}
    for cost in (without, with_index):
        assert (cost.rows, cost.inserted, cost.updated, cost.notes) == (1000, 1000, 1000, ())
        assert cost.insert_seconds and cost.insert_seconds > 0
        assert cost.update_seconds and cost.update_seconds > 0
        assert cost.log_bytes and cost.log_bytes > 0
        counters = dict(cost.counters)
        if dialect == "postgresql":
            assert counters["rows_inserted"] == counters["rows_updated"] == 1000
        else:
            assert counters["handler_update"] == 1000 and counters["handler_write"] >= 1000
    if dialect == "postgresql":
        assert with_index.log_bytes > without.log_bytes  # type: ignore[operator]
    assert state(target) == seeded_state[dialect]


@pytest.mark.parametrize("dialect", ["postgresql", "mysql"])
def test_advise_spreads_a_short_batchs_rounds_over_a_quarter_second(seeded, seeded_state, dialect):
    """A 10-row batch takes about a millisecond: five rounds of it one after the other could all
    fall inside one burst of another process's work, so advise pauses between them, their starts
    spread over ADVISE_SPREAD_SECONDS; a plain write_cost runs its rounds back to back."""
    target = seeded[dialect]
    asked = trial.write_cost(target, NS, "package", ["version"], rows=10, repeat=3, warmup=1)
    spread = trial.advise_write_cost(target, NS, "package", ["version"], 10)
    assert (asked.rounds, spread.rounds) == (3, trial.ADVISE_REPEAT)
    assert spread.span_seconds >= trial.ADVISE_SPREAD_SECONDS > asked.span_seconds
    assert (spread.inserted, spread.updated) == (asked.inserted, asked.updated) == (10, 10)
    assert state(target) == seeded_state[dialect]


def test_write_cost_names_what_it_cannot_measure(seeded, seeded_state):
    """suite_state's key (repository_id, distribution_name) has an integer column to move; its
    indexed ``pending`` is generated, so the UPDATE has nothing to set."""
    target = seeded["postgresql"]
    cost = trial.write_cost(target, NS, "suite_state", ["pending"], rows=10, repeat=1)
    assert cost.inserted == 10 and cost.updated == 0 and cost.update_seconds is None
    assert cost.notes == ("UPDATE skipped: none of pending is a column of suite_state it may set",)
    assert state(target) == seeded_state["postgresql"]


@pytest.fixture
def foreign(seeded):
    """A namespace with a table ``package`` and no dbbench_meta: not dbbench's."""
    sql("postgresql", [f"CREATE SCHEMA {FOREIGN}", f"CREATE TABLE {FOREIGN}.package (id int, version text)"])
    sql("mysql", [f"CREATE DATABASE {FOREIGN}", f"CREATE TABLE {FOREIGN}.package (id int, version text)"])
    try:
        yield
    finally:
        sql("postgresql", f"DROP SCHEMA {FOREIGN} CASCADE")
        sql("mysql", f"DROP DATABASE {FOREIGN}")


@pytest.mark.parametrize("dialect", ["postgresql", "mysql"])
def test_a_namespace_not_dbbenchs_is_refused_and_left_alone(seeded, foreign, dialect):
    target = seeded[dialect]
    ddl, drop, _, _ = TRIALS[(dialect, "column")]
    with pytest.raises(NotOurs) as refused, trial.present(target, FOREIGN, ddl, drop, NAME):
        pytest.fail("the block ran")
    assert "\n" not in str(refused.value) and "not dbbench's" in str(refused.value)
    if dialect == "postgresql":
        left = sql(target, f"SELECT indexname FROM pg_indexes WHERE schemaname = '{FOREIGN}'")
    else:
        left = sql(
            target, f"SELECT index_name FROM information_schema.statistics WHERE table_schema = '{FOREIGN}'"
        )
    assert left == []
    assert trial.recover(target, FOREIGN) == []  # never touched
    with pytest.raises(NotOurs):
        trial.write_cost(target, FOREIGN, "package", ["version"])


@pytest.mark.parametrize("dialect", ["postgresql", "mysql"])
def test_an_absent_namespace_or_table_is_refused(seeded, dialect):
    target = seeded[dialect]
    ddl, drop, _, _ = TRIALS[(dialect, "column")]
    with (
        pytest.raises(trial.TrialRefused, match="does not exist"),
        trial.present(target, "i34_trial_absent", ddl, drop, NAME),
    ):
        pytest.fail("the block ran")
    ddl, drop = ddl.replace("package", "dbbench_meta"), drop.replace("package", "dbbench_meta")
    with (
        pytest.raises(trial.TrialRefused, match="has no table 'dbbench_meta'"),
        trial.present(target, NS, ddl, drop, NAME),
    ):
        pytest.fail("the block ran")


@pytest.mark.parametrize("dialect", ["postgresql", "mysql"])
def test_a_server_error_is_one_line_and_leaves_nothing(seeded, seeded_state, dialect):
    """A unique index over duplicate values: the server refuses it."""
    target = seeded[dialect]
    if dialect == "postgresql":
        ddl, drop = f"CREATE UNIQUE INDEX {NAME} ON package (version)", f"DROP INDEX {NAME}"
    else:
        ddl, drop = (
            f"ALTER TABLE package ADD UNIQUE INDEX {NAME} (version)",
            f"ALTER TABLE package DROP INDEX {NAME}",
        )
    with pytest.raises(trial.TrialFailed) as failed, trial.present(target, NS, ddl, drop, NAME):
        pytest.fail("the block ran")
    assert "\n" not in str(failed.value) and NAME in str(failed.value)
    assert state(target) == seeded_state[dialect]


# -- what a trial may run: checked before anything is opened -------------------------------------
ACCEPTED = {
    "postgresql": [
        (f"CREATE INDEX {NAME} ON package (version);", f"DROP INDEX {NAME}"),
        (
            f'CREATE INDEX "{NAME}" ON {NS}.package USING btree (repository_id, version DESC) INCLUDE (id)',
            f"DROP INDEX IF EXISTS {NS}.{NAME}",
        ),
        (
            f"CREATE INDEX {NAME} ON package (lower(package_name)) WHERE version <> 'a;b'",
            f"DROP INDEX {NAME}",
        ),
    ],
    "mysql": [
        (
            f"ALTER TABLE package ADD INDEX {NAME} (version), ALGORITHM=INPLACE, LOCK=NONE",
            f"ALTER TABLE package DROP INDEX {NAME}",
        ),
        (
            f"CREATE INDEX `{NAME}` ON `{NS}`.package ((lower(package_name)), id DESC) COMMENT 'x; y'",
            f"DROP INDEX {NAME} ON package",
        ),
        # one literal to MySQL, which reads \\' as a quote inside it
        (
            f"ALTER TABLE package ADD INDEX {NAME} (version) COMMENT 'a\\'; DROP TABLE package; -- '",
            f"ALTER TABLE package DROP INDEX {NAME}",
        ),
    ],
}
REFUSED = {
    "postgresql": [
        (
            "CREATE INDEX ix_version ON package (version)",
            "DROP INDEX ix_version",
            "ix_version",
            "is named dbbench_adv_",
        ),
        (
            f"CREATE INDEX {NAME} ON public.package (version)",
            f"DROP INDEX {NAME}",
            NAME,
            "names schema 'public'",
        ),
        (
            f"CREATE INDEX {NAME} ON package (public.lower(version))",
            f"DROP INDEX {NAME}",
            NAME,
            "names schema 'public'",
        ),
        (
            f"CREATE INDEX {NAME} ON package (version); DROP TABLE package",
            f"DROP INDEX {NAME}",
            NAME,
            "not one statement",
        ),
        (
            f"CREATE INDEX {NAME} ON package (version) WHERE version = 'a\\'; DROP TABLE package; --'",
            f"DROP INDEX {NAME}",
            NAME,
            "not one statement",
        ),
        (
            f"CREATE INDEX {NAME} ON package (version) TABLESPACE pg_default",
            f"DROP INDEX {NAME}",
            NAME,
            "only index options",
        ),
        (
            f"CREATE INDEX CONCURRENTLY {NAME} ON package (version)",
            f"DROP INDEX {NAME}",
            NAME,
            "is not one CREATE INDEX",
        ),
        (
            f"CREATE INDEX {NAME} ON package (version)",
            "DROP INDEX ix_package_namespace",
            NAME,
            "names another index",
        ),
        (f"CREATE INDEX {NAME} ON package (version)", "DROP TABLE package", NAME, "is not one DROP INDEX"),
        (
            "CREATE INDEX dbbench_adv_other ON package (version)",
            f"DROP INDEX {NAME}",
            NAME,
            "names another index",
        ),
    ],
    "mysql": [
        (
            f"ALTER TABLE package ADD INDEX {NAME} (version), DROP COLUMN version",
            f"ALTER TABLE package DROP INDEX {NAME}",
            NAME,
            "only index options",
        ),
        (
            f"ALTER TABLE mysql.user ADD INDEX {NAME} (User)",
            f"ALTER TABLE mysql.user DROP INDEX {NAME}",
            NAME,
            "names database 'mysql'",
        ),
        (
            f"ALTER TABLE package ADD INDEX {NAME} (version) COMMENT 'a'; DROP TABLE package; -- '",
            f"ALTER TABLE package DROP INDEX {NAME}",
            NAME,
            "not one statement",
        ),
        (
            f"ALTER TABLE package ADD INDEX {NAME} (version)",
            f"ALTER TABLE package_relation DROP INDEX {NAME}",
            NAME,
            "another table",
        ),
        (
            f"ALTER TABLE package ADD INDEX {NAME} (version)",
            f"ALTER TABLE package DROP INDEX {NAME}, DROP COLUMN id",
            NAME,
            "is not one DROP INDEX",
        ),
        (f"CREATE INDEX {NAME} ON package (version)", f"DROP INDEX {NAME}", NAME, "is not one DROP INDEX"),
    ],
}


@pytest.mark.parametrize("dialect", ["postgresql", "mysql"])
def test_the_statements_a_trial_may_run(dialect):
    d = dialects.get(dialect)
    for ddl, drop in ACCEPTED[dialect]:
        statement, undo, table = trial.checked(d, NS, ddl, drop, NAME)
        assert table == "package" and not statement.endswith(";") and undo == drop
    for ddl, drop, name, why in REFUSED[dialect]:
        with pytest.raises(trial.TrialRefused) as refused:
            trial.checked(d, NS, ddl, drop, name)
        assert why in str(refused.value), (ddl, drop)
        assert "\n" not in str(refused.value)


def test_the_next_dbbench_command_undoes_a_killed_mysql_trial(seeded, seeded_state):
    """What a user sees: `dbbench advise` killed with its index added, then any command that opens
    the namespace (here `dbbench explain`, through dbbench.access.isolation.sandbox) undoes it."""
    target = seeded["mysql"]
    ddl, drop, _, _ = TRIALS[("mysql", "expression")]
    with killed(child("mysql", [(ddl, drop, NAME)], "client")):
        assert has_index(target)
    assert has_index(target) and records(target) == [f"advise.in_flight.{NAME}"]
    # the server ends the dead session (and frees the trial's lock) on its own time: wait for that
    [[got]] = sql(target, f"SELECT GET_LOCK('dbbench_adv.{NS}', 30) + RELEASE_LOCK('dbbench_adv.{NS}')")
    assert got == 2
    result = run_cli(
        "explain",
        "--only",
        "mysql",
        "--namespace",
        NS,
        "--runs",
        "1",
        "--warmups",
        "0",
        "--shape",
        "relation lookup",
    )
    assert result.code == 0, result.output
    assert not has_index(target) and records(target) == []
    assert state(target) == seeded_state["mysql"]


# -- several indexes at once (present_all) ----------------------------------------------------------
SET = ("dbbench_adv_set_version", "dbbench_adv_set_name", "dbbench_adv_set_token")


def index_set(dialect: str) -> list[tuple[str, str, str]]:
    """Two indexes on package (a column; an expression, which rebuilds the table on MySQL) and one
    on package_relation, as (ddl, drop, name)."""
    made = [
        ("package", SET[0], "version"),
        ("package", SET[1], "(lower(package_name))"),
        ("package_relation", SET[2], "token"),
    ]
    if dialect == "postgresql":
        return [(f"CREATE INDEX {n} ON {t} ({c})", f"DROP INDEX {n}", n) for t, n, c in made]
    return [
        (f"ALTER TABLE {t} ADD INDEX {n} ({c})", f"ALTER TABLE {t} DROP INDEX {n}", n) for t, n, c in made
    ]


def set_queries(target) -> list[tuple[str, dict]]:
    """A query each index of :func:`index_set` serves, in its order (the token: one of the rarest)."""
    [[token]] = sql(
        target,
        "SELECT token FROM package_relation GROUP BY token ORDER BY COUNT(*), token LIMIT 1",
        namespace=NS,
    )
    return [
        ("SELECT id FROM package WHERE version = %(v)s", {"v": "1.0"}),
        ("SELECT id FROM package WHERE lower(package_name) = %(n)s", {"n": "musl"}),
        ("SELECT id FROM package_relation WHERE token = %(t)s", {"t": token}),
    ]


@pytest.mark.parametrize("dialect", ["postgresql", "mysql"])
def test_a_set_of_indexes_is_present_at_once_and_gone_after(seeded, seeded_state, dialect):
    target = seeded[dialect]
    queries = set_queries(target)
    for name, (query, params) in zip(SET, queries):
        assert name not in reads_outside(target, query, params)
    with trial.present_all(target, NS, index_set(dialect)) as conn:
        for name, (query, params) in zip(SET, queries):
            assert name in reads(conn, dialect, query, params), name
        conn.rollback()  # measuring code's rollback keeps them all
        assert all(name in reads(conn, dialect, q, p) for name, (q, p) in zip(SET, queries))
        each = [trial.build_seconds(conn, name) for name in SET]
        assert all(s > 0 for s in each) and trial.build_seconds(conn) == pytest.approx(sum(each))
        sizes = [
            trial.size_bytes(conn, NS, t, n) for t, n in zip(("package", "package", "package_relation"), SET)
        ]
        assert all(size > 0 for size in sizes), sizes
        if dialect == "postgresql":
            assert not any(has_index(target, name) for name in SET) and records(target) == []
        else:
            assert all(has_index(target, name) for name in SET)
            assert sorted(records(target)) == sorted(f"advise.in_flight.{name}" for name in SET)
            # the other indexes' statistics as before, though the expression rebuilt package
            before = seeded_state[dialect]["statistics"][0]
            assert [r for r in state(target)["statistics"][0] if r[2] not in SET] == before
            assert trial.recover(target, NS) == []  # a live trial is left alone
    with pytest.raises(LookupError):
        trial.build_seconds(conn)
    assert state(target) == seeded_state[dialect]
    for name, (query, params) in zip(SET, queries):
        assert name not in reads_outside(target, query, params)


@pytest.mark.parametrize("dialect", ["postgresql", "mysql"])
def test_a_set_with_a_statement_not_ours_changes_nothing(seeded, seeded_state, dialect):
    target = seeded[dialect]
    good = index_set(dialect)
    bad = REFUSED[dialect][0][:3]
    for indexes, why in (
        ([*good[:2], bad], REFUSED[dialect][0][3]),
        ([good[0], (good[1][0], good[1][1], good[0][2])], "names another index"),
        ([good[0], good[0]], "names each once"),
        ([], "none given"),
    ):
        with pytest.raises(trial.TrialRefused, match=why), trial.present_all(target, NS, indexes):
            pytest.fail("the block ran")
        assert state(target) == seeded_state[dialect]


@pytest.mark.parametrize("dialect", ["postgresql", "mysql"])
def test_a_set_whose_last_index_the_server_refuses_leaves_nothing(seeded, seeded_state, dialect):
    """The first two are built, the third (unique over duplicate values) fails: all are undone."""
    target = seeded[dialect]
    indexes = index_set(dialect)
    ddl, drop, name = indexes[0]
    unique = ddl.replace("CREATE INDEX", "CREATE UNIQUE INDEX").replace("ADD INDEX", "ADD UNIQUE INDEX")
    broken = [
        *indexes[1:],
        (
            unique.replace(name, "dbbench_adv_set_unique"),
            drop.replace(name, "dbbench_adv_set_unique"),
            "dbbench_adv_set_unique",
        ),
    ]
    with pytest.raises(trial.TrialFailed) as failed, trial.present_all(target, NS, broken):
        pytest.fail("the block ran")
    assert "\n" not in str(failed.value) and "indexes 'dbbench_adv_set_name'" in str(failed.value)
    assert state(target) == seeded_state[dialect]


def test_a_killed_mysql_set_is_undone_whole(seeded, seeded_state):
    """Each index of the set is recorded before the first is built: recover drops them all."""
    target = seeded["mysql"]
    with killed(child("mysql", index_set("mysql"), "client")):
        assert all(has_index(target, name) for name in SET)
    assert sorted(records(target)) == sorted(f"advise.in_flight.{name}" for name in SET)
    assert trial.recover(target, NS, wait_s=30) == sorted(SET)
    assert state(target) == seeded_state["mysql"]
