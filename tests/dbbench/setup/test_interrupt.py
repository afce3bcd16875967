"""Ctrl-C during ``dbbench seed --catalog`` stops the setup promptly and never marks the namespace
complete: the next command refuses it as not seeded (issue 31)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import default_sigint, run_cli, shape_toml
from tests.db import drop_namespaces

ROOT = Path(__file__).resolve().parents[3]
# each setup runs well over ten seconds when nothing stops it
SLOW = {
    "postgresql": "CREATE TABLE t (id int PRIMARY KEY);\n"
    "INSERT INTO t SELECT g FROM generate_series(1, 12000000) g;\n",
    "mysql": "CREATE TABLE t (id int PRIMARY KEY);\n"
    "SET SESSION cte_max_recursion_depth = 100000000;\n"
    "INSERT INTO t WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < 8000000) "
    "SELECT n FROM s;\n",
}
SHAPE = shape_toml(
    "a",
    "1",
    sql="SELECT id FROM t WHERE id = 1",
    postgresql='expect = { table = "t", index = "t_pkey" }',
    mysql='expect = { table = "t", index = "PRIMARY" }',
)


def _catalog(tmp_path: Path, dialect: str) -> Path:
    cat = tmp_path / "slow"
    cat.mkdir()
    (cat / "a.toml").write_text(SHAPE)
    (cat / f"setup.{dialect}.sql").write_text(SLOW[dialect])
    return cat


@pytest.mark.parametrize("isolated", [True, False], ids=["namespace-role", "no-isolation"])
@pytest.mark.parametrize("dialect", ["postgresql", "mysql"])
def test_ctrl_c_stops_the_setup_and_leaves_the_namespace_unseeded(local_servers, tmp_path, dialect, isolated):
    namespace = f"h31setup_int_{dialect[:2]}_{os.getpid()}"
    drop_namespaces(namespace)
    cat = _catalog(tmp_path, dialect)
    flags = [] if isolated else ["--no-isolation"]
    args = ["seed", "--only", dialect, "--catalog", str(cat), "--namespace", namespace, *flags]
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "dbbench", *args],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            preexec_fn=default_sigint,
        )
        time.sleep(2.0)  # the slow INSERT is running by now
        assert proc.poll() is None, proc.communicate()
        sent = time.monotonic()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
        stopped = time.monotonic() - sent
        assert proc.returncode == 130, (out, err)
        assert err.strip().endswith("interrupted") and "Traceback" not in err, err
        assert stopped < 5, f"took {stopped:.1f} s to stop after Ctrl-C"
        explain = run_cli("explain", "--only", dialect, "--catalog", str(cat), "--namespace", namespace)
        assert explain.code == 2, explain.output
        assert "seed" in explain.stderr and "Traceback" not in explain.output, explain.output
        assert [line.startswith("dbbench: error: ") for line in explain.stderr.strip().splitlines()].count(
            True
        ) == 1
    finally:
        drop_namespaces(namespace)
