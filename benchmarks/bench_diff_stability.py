#!/usr/bin/env python3
"""Does `dbbench diff` pass unchanged data and fail a real regression, every time, busy or idle?

    .venv/bin/python benchmarks/bench_diff_stability.py [--runs 50] [--burner off,on] [--seed]
        [--regression-runs 5] [--index ix_stage_cleanup] [--namespace dbbench_bench_diff]
        [--gate-timing] [--json FILE] [--views DIR]

On alpine-100k in its own namespace (``--seed`` seeds it first) on both local servers, at default
settings: save a baseline, then for each burner setting (``off``: an idle machine; ``on``: one
CPU kept busy by a Python loop in its own process beside every diff) run ``dbbench diff BASELINE``
``--runs`` times on the unchanged data (A/A) and count the exits (0 pass, 1 fail, 3 inconclusive).
Then the two regressions, ``--regression-runs`` diffs each (every one must exit 1):

* work: a copy of the alpine catalog whose PostgreSQL namespace page compares
  ``(package_name || '', id)`` instead of ``(package_name, id)``: the same plan on the same index,
  but the index no longer bounds the scan (the message must name the index scan node);
* pages: PostgreSQL's ``group_binding`` rewritten in another order (the same rows, statistics
  untouched; the message must name the shared buffers of its index scan), then rewritten in ``id``
  order and reindexed, as seeded;
* OFFSET: a copy of the alpine catalog whose namespace page is paginated by ``LIMIT 2048 OFFSET
  90000`` instead of its keyset on both dialects (the same index, ~45x the rows examined; the
  message must name the index scan's work);
* index dropped: ``--index`` dropped on both dialects (the message must name it), then recreated
  and ANALYZEd, so the dataset is left as it was.

With ``--views DIR`` the first diff of each regression also draws its aligned plans in the three
views into DIR: ``<phase>.ansi.txt`` (the terminal's coloured tree, ``--color always``),
``<phase>.md`` (the pull-request comment, its length printed) and ``<phase>.html`` (two columns).

Prints one line per phase: the counts, the median wall time of one diff and what was named.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
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
from tests.dbbench.diff.regressions import (  # noqa: E402 (after the sys.path line)
    SEEDED_ORDER,
    SHUFFLED_ORDER,
    offset_catalog,
    rewrite_group_binding,
    unbounded_catalog,
)

DBBENCH = [sys.executable, "-m", "dbbench"]
EXITS = {0: "pass", 1: "fail", 3: "inconclusive"}
WORK_NODE = "work up at Index Scan on package using ix_package_namespace"
PAGES_NODE = "shared buffers up at Index Scan on group_binding using ix_binding_page"
OFFSET_NAMED = "2 regressions: namespace late keyset page (MySQL, PostgreSQL)"


def cli(*args: str) -> tuple[int, str, float]:
    start = time.perf_counter()
    p = subprocess.run([*DBBENCH, *args], capture_output=True, text=True, cwd=ROOT, timeout=1800, check=False)
    return p.returncode, p.stdout + p.stderr, time.perf_counter() - start


@contextlib.contextmanager
def busy_cpu(on: bool):
    """While the block runs, one CPU spins in a process of its own (bounded to six hours)."""
    spin = "import time\nstop = time.monotonic() + 21600\nwhile time.monotonic() < stop:\n    pass\n"
    proc = subprocess.Popen([sys.executable, "-c", spin]) if on else None
    try:
        yield
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(10)


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


VIEWS: Path | None = None  # --views: where the first diff of each regression draws its views


def diffs(label: str, n: int, args: list[str], named: str | None = None, views: str | None = None) -> dict:
    """``dbbench diff ARGS`` ``n`` times: the exits, walls, and how often the output names ``named``;
    the first one also drawn in the three views as ``views`` under :data:`VIEWS` when both are set."""
    codes, walls, hits, example = [], [], 0, ""
    comment = None
    for i in range(1, n + 1):
        drawn = VIEWS is not None and views is not None and i == 1
        extra = []
        if drawn:
            assert VIEWS is not None and views is not None
            extra = [
                "--color",
                "always",
                "--markdown",
                str(VIEWS / f"{views}.md"),
                "--html",
                str(VIEWS / f"{views}.html"),
            ]
        code, out, wall = cli("diff", *args, *extra)
        if drawn:
            assert VIEWS is not None and views is not None
            (VIEWS / f"{views}.ansi.txt").write_text(out)
            comment = len((VIEWS / f"{views}.md").read_text())
        codes.append(code)
        walls.append(wall)
        head = next((ln for ln in out.splitlines() if ln.startswith("dbbench diff:")), out.strip()[-200:])
        if named is not None and named in out:
            hits += 1
            example = example or next(ln.strip() for ln in out.splitlines() if named in ln)
        if code and not example:
            example = out
        print(f"[{label} {i}/{n}] exit {code} {wall:.1f} s  {head}", file=sys.stderr, flush=True)
    counts = {name: codes.count(c) for c, name in EXITS.items()}
    return {
        "label": label,
        "diffs": n,
        **counts,
        "other": n - sum(counts.values()),
        "median_wall_s": round(statistics.median(walls), 2),
        "named": hits if named is not None else None,
        "example": example,
        "comment_chars": comment,
    }


def line(r: dict) -> str:
    text = (
        f"{r['label']}: {r['diffs']} diffs: {r['pass']} exit 0, {r['fail']} exit 1, {r['inconclusive']} exit 3, "
        f"{r['other']} other; median wall {r['median_wall_s']:.1f} s"
    )
    text += f"; named in {r['named']} of {r['diffs']}" if r["named"] is not None else ""
    return text + (f"; Markdown comment {r['comment_chars']:,} characters" if r.get("comment_chars") else "")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=50, help="A/A diffs per burner setting")
    ap.add_argument("--burner", default="off,on", help="burner settings to run the A/A with: off, on or both")
    ap.add_argument("--regression-runs", type=int, default=5)
    ap.add_argument("--index", default="ix_stage_cleanup")
    ap.add_argument("--namespace", default="dbbench_bench_diff")
    ap.add_argument("--gate-timing", action="store_true", help="run the A/A diffs with --gate-timing")
    ap.add_argument("--seed", action="store_true", help="seed alpine-100k into the namespace first")
    ap.add_argument("--json", type=Path, help="also write the results here")
    ap.add_argument("--views", type=Path, help="draw each regression's first diff in the three views here")
    args = ap.parse_args()
    ns = args.namespace
    if args.views:
        global VIEWS
        args.views.mkdir(parents=True, exist_ok=True)
        VIEWS = args.views
    if args.seed:
        code, out, _ = cli("seed", "--namespace", ns)
        if code:
            raise SystemExit(out)
    results = []
    with tempfile.TemporaryDirectory(prefix="bench-diff-") as tmp:
        base = str(Path(tmp) / "baseline.json")
        code, out, _ = cli("baseline", "save", base, "--namespace", ns, "--no-natural")
        if code:
            raise SystemExit(out)
        gate = ["--gate-timing"] if args.gate_timing else []
        for setting in args.burner.split(","):
            with busy_cpu(setting == "on"):
                label = f"A/A, burner {setting}{', --gate-timing' if gate else ''}"
                results.append(diffs(label, args.runs, [base, "--namespace", ns, *gate]))

        def changed_catalog(label: str, catalog: Path, named: str, views: str) -> dict:
            where = [base, "--namespace", ns, "--catalog", str(catalog)]
            return diffs(label, args.regression_runs, where, named, views)

        label = "PostgreSQL namespace page no longer bounded by its index"
        results.append(changed_catalog(label, unbounded_catalog(Path(tmp) / "unbounded"), WORK_NODE, "work"))
        results.append(reordered(args, base))
        label = "namespace page paginated by OFFSET on both dialects"
        results.append(changed_catalog(label, offset_catalog(Path(tmp) / "offset"), OFFSET_NAMED, "offset"))
        results.append(dropped(args, base))
    print(f"{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f}")
    for r in results:
        print(line(r))
    for r, what in zip(results[-4:-1], ("work", "pages", "offset")):
        print(f"{what} regression, as reported: {r['example']}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")


def reordered(args: argparse.Namespace, base: str) -> dict:
    """``--regression-runs`` diffs with PostgreSQL's group_binding in another order (then as seeded)."""
    ns = args.namespace
    rewrite_group_binding(ns, SHUFFLED_ORDER)
    try:
        label = "PostgreSQL group_binding in another order (the same rows)"
        return diffs(label, args.regression_runs, [base, "--namespace", ns], PAGES_NODE, "pages")
    finally:
        rewrite_group_binding(ns, SEEDED_ORDER)


def dropped(args: argparse.Namespace, base: str) -> dict:
    """``--regression-runs`` diffs with ``args.index`` dropped on both dialects (then restored)."""
    ns = args.namespace
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
        label = f"{args.index} dropped on both dialects"
        return diffs(
            label,
            args.regression_runs,
            [base, "--namespace", ns],
            f"index lost: {args.index}",
            "index-dropped",
        )
    finally:
        each_target(restore)


if __name__ == "__main__":
    main()
