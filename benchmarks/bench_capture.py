#!/usr/bin/env python3
"""What does the pytest plugin's capture cost a test run? Statements per second with and without it.

    .venv/bin/python benchmarks/bench_capture.py [--statements 20000] [--rounds 3]

A generated test module runs ``--statements`` point lookups on the ticket example's data
(``examples/tickets/db``, built by the plugin in its own namespace) through each route the
recorder hooks: psycopg, PyMySQL, and SQLAlchemy (Core, on both). The same pytest run is made with
and without ``--dbbench-capture``, alternating, ``--rounds`` times; each test times its own loop
(the capture's check at the end of the session is not in it) and writes its rate. Prints the
median statements/s per route with and without capture, and their ratio, measured side by side.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NS = "dbbench_bench_capture"
TESTS = '''
import json, os, time
import sqlalchemy as sa

N = int(os.environ["BENCH_STATEMENTS"])
OUT = os.environ["BENCH_OUT"]


def _save(route, dialect, seconds):
    with open(OUT, "a") as fh:
        fh.write(json.dumps({"route": route, "dialect": dialect, "rate": N / seconds}) + "\\n")


def test_driver(dbbench_conn, dbbench_dialect):
    route = "psycopg" if dbbench_dialect == "postgresql" else "PyMySQL"
    start = time.perf_counter()
    with dbbench_conn.cursor() as cur:
        for i in range(N):
            cur.execute("SELECT id, name FROM accounts WHERE id = %(id)s", {"id": 1 + i % 2000})
            cur.fetchall()
    _save(route, dbbench_dialect, time.perf_counter() - start)


def test_interleaved(dbbench_conn, dbbench_dialect):
    """The recorder the plugin installs, on and off in alternating chunks on one connection:
    the same statements side by side, so the machine's other load falls on both alike."""
    if os.environ.get("BENCH_INTERLEAVE") != "1" or N < 200:
        return
    from dbbench.capture.recorder import Recorder

    spent = {False: 0.0, True: 0.0}
    with dbbench_conn.cursor() as cur:
        for chunk in range(2 * (N // 200)):
            on = chunk % 2 == 1
            recorder = Recorder()
            if on:
                recorder.install()
            start = time.perf_counter()
            for i in range(200):
                cur.execute("SELECT id, name FROM accounts WHERE id = %(id)s", {"id": 1 + i})
                cur.fetchall()
            spent[on] += time.perf_counter() - start
            recorder.uninstall()
    for on, seconds in spent.items():
        with open(OUT, "a") as fh:
            fh.write(json.dumps({"route": "interleaved", "dialect": dbbench_dialect, "on": on,
                                 "rate": (N // 200) * 200 / seconds}) + "\\n")


def test_sqlalchemy(dbbench_engine, dbbench_dialect):
    accounts = sa.table("accounts", sa.column("id"), sa.column("name"))
    query = sa.select(accounts.c.id, accounts.c.name).where(accounts.c.id == sa.bindparam("id"))
    with dbbench_engine.connect() as conn:
        start = time.perf_counter()
        for i in range(N):
            conn.execute(query, {"id": 1 + i % 2000}).all()
        _save("SQLAlchemy", dbbench_dialect, time.perf_counter() - start)
'''


def one_run(folder: Path, statements: int, capture: bool) -> list[dict]:
    out = folder / "rates.jsonl"
    out.unlink(missing_ok=True)
    ini = folder / "pytest.ini"  # its own: pytest would take the example's ini (and its capture) otherwise
    ini.write_text(
        f"[pytest]\ndbbench_catalog = {ROOT / 'examples' / 'tickets' / 'db'}\ndbbench_namespace = {NS}\n"
    )
    args = [
        sys.executable,
        "-m",
        "pytest",
        str(folder),
        "-q",
        "-c",
        str(ini),
        "-p",
        "no:cacheprovider",
        "-p",
        "dbbench.pytest_plugin",
    ]
    if capture:
        args += ["--dbbench-capture", str(folder / "captured.sql")]
    env = {
        **__import__("os").environ,
        "BENCH_STATEMENTS": str(statements),
        "BENCH_OUT": str(out),
        "BENCH_INTERLEAVE": "0" if capture else "1",
    }
    done = subprocess.run(args, cwd=folder, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"pytest failed:\n{done.stdout}{done.stderr}")
    return [json.loads(line) for line in out.read_text().splitlines()]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--statements", type=int, default=20_000)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    rates: dict[tuple[str, str, bool], list[float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "test_statements.py").write_text(TESTS)
        one_run(folder, 10, False)  # builds the namespace once, outside the timing
        for r in range(args.rounds):
            for capture in (False, True) if r % 2 == 0 else (True, False):
                for row in one_run(folder, args.statements, capture):
                    on = row.get("on", capture)
                    rates.setdefault((row["route"], row["dialect"], on), []).append(row["rate"])
    print(f"{args.statements:,} statements per test, median of {args.rounds} runs each, alternating")
    print(f"{'route':<11} {'dialect':<11} {'without':>12} {'with capture':>13} {'ratio':>7}")
    for (route, dialect, capture), values in sorted(rates.items()):
        if capture:
            continue
        off, on = statistics.median(values), statistics.median(rates[(route, dialect, True)])
        print(f"{route:<11} {dialect:<11} {off:>10,.0f}/s {on:>11,.0f}/s {on / off:>6.2f}x")


if __name__ == "__main__":
    main()
