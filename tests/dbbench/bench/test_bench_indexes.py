"""``benchmarks/bench_indexes.py --quick``: the index-necessity map's benchmark, run as a reader
runs it (its own process) on the CI-size dataset with 1 and 2 shapes, on both real servers. What
it prints is checked for its counts, never its seconds (a shared machine's timings prove nothing)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from dbbench import dialects
from tests.db import drop_namespaces, local_target

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = ROOT / "benchmarks" / "bench_indexes.py"
NS = "i35c_t_bench_indexes"
# dialect, shapes, indexes, hidden, re-runs, profiles, then the seconds columns
ROW = re.compile(
    r"^(postgresql|mysql)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+\d+\.\d\s+\d+\.\d\d\s+\d+\.\d\s+(.*)$"
)


def bench(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args], cwd=ROOT, capture_output=True, text=True, timeout=600
    )


@pytest.mark.servers
def test_quick_prints_the_table_per_dialect_and_drops_its_namespace(local_servers):
    try:
        done = bench("--quick", "--namespace", NS, "--drop")
        assert done.returncode == 0, done.stderr[-2000:]
        out = done.stdout
        assert out.startswith("seeded alpine-ci into " + NS), out
        assert "dbbench indexes on the alpine catalog, alpine-ci" in out
        rows = {(m[1], int(m[2])): m for m in map(ROW.match, out.splitlines()) if m}
        assert sorted(rows) == [("mysql", 1), ("mysql", 2), ("postgresql", 1), ("postgresql", 2)], out
        for (_, shapes), m in rows.items():
            indexes, hidden, reruns, profiles = (int(m[i]) for i in range(3, 7))
            assert 0 < hidden <= indexes, m[0]
            # every hidden index is on a table one of the shapes reads: at least one re-run each
            assert reruns >= hidden and profiles == shapes + reruns, m[0]
            # the write batches: their share of the map, seconds each, how many indexes were timed
            said = re.fullmatch(r"-?\d+%, +-?\d+\.\d\d s \((\d+)\)|not timed", m[7].strip())
            assert said and (said[1] is None or 0 < int(said[1]) <= indexes), m[0]
        for dialect in ("postgresql", "mysql"):  # a second shape re-runs more, never fewer
            assert int(rows[(dialect, 2)][5]) > int(rows[(dialect, 1)][5]), out
            assert (
                len(re.findall(rf"^  {dialect}\s+write_rows\s+\d+: fixed .* × profiles \(R²", out, re.M)) == 2
            )
            assert re.search(rf"^  {dialect}\s+slowest indexes \(2 shapes", out, re.M), out
        assert re.search(r"^whole map, 2 shapes, write batch 1000: postgresql .* mysql .* = ", out, re.M), out
        for dialect in ("postgresql", "mysql"):  # --drop: nothing left behind
            with local_target(dialect) as target, target.all_or_nothing() as conn:
                assert dialects.get(dialect).namespace_state(conn, NS) == "absent", dialect
    finally:
        drop_namespaces(NS)


def test_bad_arguments_are_one_line_errors():
    for args, said in (
        (("--repeat", "9"), "bench_indexes: --repeat 9: from 1 to 5"),
        (("--shapes", "0,3"), "bench_indexes: --shapes '0,3': 1 to 9 sizes, each from 1 to 12"),
        (("--namespace", "Bad-Name"), "bench_indexes: --namespace 'Bad-Name': "),
    ):
        done = bench(*args)  # refused before any server is reached
        assert done.returncode == 1 and done.stdout == "", (args, done.stdout)
        assert done.stderr.startswith(said) and "Traceback" not in done.stderr, (args, done.stderr)
