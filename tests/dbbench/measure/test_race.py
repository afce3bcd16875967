"""The seed's cleanup/publication race as a two-session check (issue 36), on the real servers.

The publication (``group publication stage lock``) holds the orphan's stage row ``FOR UPDATE`` in
one session; the cleanup scan (``orphan group stage scan``, ``FOR UPDATE SKIP LOCKED``) runs in
another. It must return at once and without that stage; without ``SKIP LOCKED`` it queues behind
the publication, and the check fails naming the wait. Both run against the seeded ``dbbench``
namespace read-only: every transaction of the check is rolled back.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest

from dbbench import defaults, dialects
from dbbench.access.targets import open_targets
from dbbench.catalog import entries
from dbbench.measure import explain, race
from tests.conftest import run_cli
from tests.db import connection

ROOT = Path(__file__).resolve().parents[3]
ALPINE = ROOT / "sql" / "catalog" / "alpine"
SCAN = "orphan group stage scan"
HOLDER = "group publication stage lock"
SCAN_FILE = "09-orphan-group-stage-scan.toml"
NS = defaults.NAMESPACE  # the seeded 100k namespace, read only
KEY = ("group_repository_id", "distribution_name", "snapshot_revision")


@pytest.fixture(scope="module")
def default_seeded(local_servers):
    """The default namespace holds the 100k dataset on both servers (as the README's first command
    leaves it), seeded here when it does not: this module must not depend on another having run."""
    missing = []
    for dialect in ("postgresql", "mysql"):
        with connection(dialect) as conn:
            d = dialects.get(dialect)
            ready = d.namespace_state(conn, NS) == "complete"
            if not ready or d.read_meta(conn, NS).get("dataset") != defaults.DATASET:
                missing.append(dialect)
    for dialect in missing:
        seeded = run_cli("seed", "--only", dialect)
        assert seeded.code == 0, seeded.output


def _without_skip_locked(tmp_path: Path) -> Path:
    """A copy of the built-in catalog whose scan lost ``SKIP LOCKED`` (the DAO change)."""
    copy = tmp_path / "alpine"
    shutil.copytree(ALPINE, copy)
    scan = copy / SCAN_FILE
    text = scan.read_text(encoding="utf-8")
    assert text.count(' SKIP LOCKED"""') == 2
    scan.write_text(text.replace(' SKIP LOCKED"""', '"""'), encoding="utf-8")
    return copy


def _check(dialect: str, catalog: Path) -> tuple[dict, dict, dict]:
    """:func:`race.check` of the scan as ``dbbench explain`` runs it, on connections held open
    afterwards: (the race record, the scan's parameters, what the sessions look like after)."""
    (target,) = open_targets({}, dialect)
    try:
        d = dialects.get(dialect)
        meta = explain.require_seeded(target, NS)
        cat = entries.open_catalog(str(catalog), [SCAN])
        shape = next(s for s in cat.shapes if s.name == SCAN)
        options = explain.MeasureOptions(namespace=NS, warmups=0, runs=1)
        with explain._connections(target, NS, True) as (admin, conn):
            params = explain.resolve_params(conn, d, shape, explain.dataset_params(meta.get("dataset")))
            before = _lock_wait(conn, dialect)
            record = race.check(target, admin, conn, shape, params, options)
            after = {
                "in_transaction": [_in_transaction(c, dialect) for c in (conn, admin)],
                "lock_wait": (before, _lock_wait(conn, dialect)),
                "scan_alone": _plain_rows(conn, shape.variants[dialect].sql, params),
            }
        return record, params, after
    finally:
        target.dispose()


def _in_transaction(conn, dialect: str) -> bool:
    if dialect == "postgresql":
        import psycopg

        return conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE
    return bool((conn.server_status or 0) & 1)  # SERVER_STATUS_IN_TRANS


def _lock_wait(conn, dialect: str):
    """The session's lock wait setting (MySQL's is a session variable the check sets and restores)."""
    with conn.cursor() as cur:
        cur.execute(
            "SHOW lock_timeout" if dialect == "postgresql" else "SELECT @@SESSION.innodb_lock_wait_timeout"
        )
        value = cur.fetchone()[0]
    conn.rollback()
    return value


def _plain_rows(conn, sql: str, params: dict) -> list[tuple]:
    """The scan run alone (no holder), rolled back: the keys of what it returns."""
    from dbbench.catalog.params import to_pyformat

    try:
        with conn.cursor() as cur:
            cur.execute(to_pyformat(sql), params)
            names = [c[0].lower() for c in cur.description]
            return [tuple(row[names.index(k)] for k in KEY) for row in cur.fetchall()]
    finally:
        conn.rollback()


def _lockable_at_once(dialect: str, token: bytes) -> bool:
    """The orphan's stage row can be locked NOWAIT from a fresh session: nothing of the check holds
    it. Tried a few times: another run on this namespace may hold it for a moment."""
    for _ in range(20):
        with connection(dialect, namespace=NS) as conn:
            try:
                with conn.cursor() as cur:
                    cur.execute(
                        "SELECT snapshot_revision FROM group_snapshot_stage WHERE binding_token = %s FOR UPDATE NOWAIT",
                        (token,),
                    )
                    if cur.fetchall():
                        return True
            except Exception as exc:
                if not dialects.get(dialect).is_driver_error(exc):
                    raise
            finally:
                conn.rollback()
        time.sleep(0.25)
    return False


def _assert_nothing_left(dialect: str, after: dict, params: dict) -> None:
    assert after["in_transaction"] == [False, False]
    before, now = after["lock_wait"]
    assert now == before
    assert _lockable_at_once(dialect, params["orphan_token"])


@pytest.mark.parametrize("dialect", ["postgresql", "mysql"])
def test_the_cleanup_scan_skips_the_stage_the_publication_holds(default_seeded, dialect):
    record, params, after = _check(dialect, ALPINE)
    assert record["problem"] is None, record
    assert record["ok"] is True and record["checked"] is True and record["holder"] == HOLDER
    assert record["wait"] is None
    assert record["waited_ms"] < 1000  # at once: within the shape's wait_ms
    orphan = (params["orphan_group"], params["orphan_distribution"], params["orphan_revision"])
    # the holder locked the orphan (race.params override its own setup's revision 7) ...
    assert [tuple(r[k] for k in KEY) for r in record["held_rows"]] == [orphan]
    assert orphan[2] != 7
    # ... which the scan returns when nobody holds it, and skipped while the publication did
    assert after["scan_alone"] == [orphan]
    assert orphan not in [tuple(r[k] for k in KEY) for r in record["rows"]]
    _assert_nothing_left(dialect, after, params)


@pytest.mark.parametrize("dialect", ["postgresql", "mysql"])
def test_without_skip_locked_the_check_fails_naming_the_wait(default_seeded, dialect, tmp_path):
    record, params, after = _check(dialect, _without_skip_locked(tmp_path))
    assert record["ok"] is False and record["checked"] is True
    wait = record["wait"]
    assert wait is not None, record
    assert wait["table"] == "group_snapshot_stage" and wait["holder_holds"] is True
    if dialect == "mysql":  # the holder's primary-key record lock
        assert (wait["index"], wait["mode"]) == ("PRIMARY", "X,REC_NOT_GAP")
        named, ended = "group_snapshot_stage (PRIMARY, X,REC_NOT_GAP", "(lock wait timeout)"
    else:  # PostgreSQL queues for the row (tuple) behind the holder's transaction
        assert wait["mode"] == "FOR UPDATE" and wait["row"]
        named, ended = f"group_snapshot_stage (FOR UPDATE of row {wait['row']}", "(lock timeout)"
    assert 900 <= record["waited_ms"] < 5000
    problem = record["problem"]
    assert problem.startswith(f"race with {HOLDER!r}: waited ")
    assert named in problem and "that the holder holds" in problem and problem.endswith(ended)
    assert "\n" not in problem
    _assert_nothing_left(dialect, after, params)


def test_the_command_passes_and_fails_naming_the_wait_without_skip_locked(default_seeded, tmp_path):
    """The command docs/catalog.md shows, as written, then on the catalog without SKIP LOCKED."""
    doc = (ROOT / "docs" / "catalog.md").read_text(encoding="utf-8")
    assert f'dbbench explain --shape "{SCAN}"' in doc
    run = run_cli("explain", "--shape", SCAN)
    assert run.code == 0, run.output
    run = run_cli("explain", "--catalog", str(_without_skip_locked(tmp_path)), "--shape", SCAN)
    assert run.code == 1, run.output
    assert "Traceback" not in run.output
    for label, named in (
        ("PostgreSQL", "group_snapshot_stage (FOR UPDATE of row ("),
        ("MySQL", "group_snapshot_stage (PRIMARY, X,REC_NOT_GAP)"),
    ):
        (line,) = [x for x in run.stderr.splitlines() if x.startswith(f"FAIL {SCAN} [{label}]")]
        assert f"race with {HOLDER!r}: waited " in line and named in line, line
        assert "that the holder holds" in line, line
        # the plan is as expected: no index advice, no "expected … actual …" for a race
        assert line.startswith(f"FAIL {SCAN} [{label}]: race with "), line
    assert "advice: dbbench advise" not in run.stderr


@pytest.mark.parametrize(
    ("race_toml", "problem"),
    [
        (
            '[race]\nholder = "no such shape"\n',
            "race.holder: no shape named 'no such shape' in this catalog",
        ),
        (f'[race]\nholder = "{SCAN}"\n', "race.holder: names the shape itself"),
        (
            f'[race]\nholder = "{HOLDER}"\nparams = {{ token = ":nope" }}\n',
            "race.params.token: :nope is not in [params] or a setup query",
        ),
        (f'[race]\nholder = "{HOLDER}"\nwait_ms = 0\n', "race.wait_ms: must be at least 1"),
        (
            f'[race]\nholder = "{HOLDER}"\nwait = 5\n',
            "race.wait: unknown field (expected one of holder, params, wait_ms)",
        ),
    ],
    ids=["unknown holder", "itself", "unknown parameter", "no wait", "unknown field"],
)
def test_a_bad_race_is_one_catalog_error_line(tmp_path, race_toml, problem):
    copy = tmp_path / "alpine"
    shutil.copytree(ALPINE, copy)
    scan = copy / SCAN_FILE
    text = scan.read_text(encoding="utf-8")
    start = text.index("[race]")
    end = text.index("\n[", start + 1) + 1
    scan.write_text(text[:start] + race_toml + text[end:], encoding="utf-8")
    with pytest.raises(entries.CatalogError) as caught:
        entries.open_catalog(str(copy))
    assert caught.value.problems == [f"{scan}: entry {SCAN!r}: {problem}"]
    run = run_cli("validate", "--catalog", str(copy))
    assert run.code == 2 and "Traceback" not in run.output
    assert run.stderr.strip().splitlines() == [f"dbbench: error: {caught.value.problems[0]}"]
