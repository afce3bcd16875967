#!/usr/bin/env python3
"""Does `dbbench diff` pass unchanged data and fail a real regression, every time?

    .venv/bin/python benchmarks/bench_diff_stability.py [--runs 20] [--dropped-runs 5]
                                                        [--index ix_stage_cleanup] [--seed]

On the seeded alpine-100k data (namespace ``dbbench``; ``--seed`` seeds it first) on both local
servers: save a baseline, run ``dbbench diff BASELINE`` ``--runs`` times on the unchanged data and
count the exits (0 pass, 1 fail, 3 inconclusive); then drop ``--index`` on both dialects, run
the diff ``--dropped-runs`` times (each must exit 1 and name the index), and recreate the index
(then ANALYZE, as the seed does), so the dataset is left as it was. Prints the counts and the
median wall time of one diff.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from dbbench import dialects  # noqa: E402 (after the sys.path line)
from dbbench.access.targets import open_targets  # noqa: E402 (after the sys.path line)

DBBENCH = [sys.executable, "-m", "dbbench"]


def cli(*args: str) -> tuple[int, str, float]:
    start = time.perf_counter()
    p = subprocess.run([*DBBENCH, *args], capture_output=True, text=True, cwd=ROOT, timeout=1800, check=False)
    return p.returncode, p.stdout + p.stderr, time.perf_counter() - start


def index_table(conn, dialect: str, ns: str, index: str) -> tuple[str, str]:
    """(table, CREATE INDEX statement) of ``index`` in ``ns``."""
    with conn.cursor() as cur:
        if dialect == "postgresql":
            cur.execute(
                "SELECT tablename, indexdef FROM pg_indexes WHERE schemaname = %s AND indexname = %s",
                (ns, index),
            )
            row = cur.fetchone()
            if row is None:
                raise SystemExit(f"no index {index} in schema {ns}")
            return row[0], row[1]
        cur.execute(
            "SELECT table_name, column_name, sub_part, collation, non_unique FROM information_schema.statistics "
            "WHERE table_schema = %s AND index_name = %s ORDER BY seq_in_index",
            (ns, index),
        )
        rows = cur.fetchall()
        if not rows:
            raise SystemExit(f"no index {index} in database {ns}")
        cols = ", ".join(
            f"`{c}`" + (f"({sub})" if sub else "") + (" DESC" if coll == "D" else "")
            for _, c, sub, coll, _ in rows
        )
        unique = "" if rows[0][4] else "UNIQUE "
        return rows[0][0], f"CREATE {unique}INDEX `{index}` ON `{ns}`.`{rows[0][0]}` ({cols})"


def each_target(fn) -> dict:
    out = {}
    for t in open_targets({}):
        raw = t.engine.raw_connection()
        try:
            out[t.dialect] = fn(raw.driver_connection, t.dialect)
            raw.driver_connection.commit()
        finally:
            raw.close()
            t.dispose()
    return out


def tally(label: str, codes: list[int], walls: list[float]) -> str:
    names = {0: "pass", 1: "fail", 3: "inconclusive"}
    counts = {n: codes.count(c) for c, n in names.items()}
    other = len(codes) - sum(counts.values())
    return (
        f"{label}: {len(codes)} diffs: {counts['pass']} exit 0, {counts['fail']} exit 1, "
        f"{counts['inconclusive']} exit 3, {other} other; median wall {statistics.median(walls):.1f} s"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--dropped-runs", type=int, default=5)
    ap.add_argument("--index", default="ix_stage_cleanup")
    ap.add_argument("--namespace", default="dbbench")
    ap.add_argument("--seed", action="store_true", help="seed alpine-100k into the namespace first")
    args = ap.parse_args()
    ns = args.namespace
    if args.seed:
        code, out, _ = cli("seed", "--namespace", ns)
        if code:
            raise SystemExit(out)
    with tempfile.TemporaryDirectory(prefix="bench-diff-") as tmp:
        base = str(Path(tmp) / "baseline.json")
        code, out, _ = cli("baseline", "save", base, "--namespace", ns, "--no-natural")
        if code:
            raise SystemExit(out)
        codes, walls = [], []
        for i in range(1, args.runs + 1):
            code, out, wall = cli("diff", base, "--namespace", ns)
            codes.append(code)
            walls.append(wall)
            head = next((ln for ln in out.splitlines() if ln.startswith("dbbench diff:")), out.strip()[-200:])
            print(
                f"[unchanged {i}/{args.runs}] exit {code} {wall:.1f} s  {head}", file=sys.stderr, flush=True
            )
        unchanged = tally("unchanged data", codes, walls)

        made = each_target(lambda conn, d: index_table(conn, d, ns, args.index))

        def drop(conn, d):
            table, _ = made[d]
            q = dialects.get(d).quote
            with conn.cursor() as cur:
                cur.execute(
                    f"DROP INDEX {q(ns)}.{q(args.index)}"
                    if d == "postgresql"
                    else f"ALTER TABLE {q(ns)}.{q(table)} DROP INDEX {q(args.index)}"
                )
            dialects.get(d).analyze(conn, [f"{q(ns)}.{q(table)}"])

        def restore(conn, d):
            table, ddl = made[d]
            q = dialects.get(d).quote
            with conn.cursor() as cur:
                cur.execute(ddl)
            dialects.get(d).analyze(conn, [f"{q(ns)}.{q(table)}"])

        each_target(drop)
        try:
            codes, walls, named = [], [], 0
            for i in range(1, args.dropped_runs + 1):
                code, out, wall = cli("diff", base, "--namespace", ns)
                codes.append(code)
                walls.append(wall)
                named += f"index lost: {args.index}" in out
                print(
                    f"[{args.index} dropped {i}/{args.dropped_runs}] exit {code} {wall:.1f} s, names it: "
                    f"{f'index lost: {args.index}' in out}",
                    file=sys.stderr,
                    flush=True,
                )
        finally:
            each_target(restore)
        dropped = (
            tally(f"{args.index} dropped on both dialects", codes, walls)
            + f"; index named in {named} of {len(codes)}"
        )
    print(unchanged)
    print(dropped)


if __name__ == "__main__":
    main()
