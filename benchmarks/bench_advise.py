#!/usr/bin/env python3
"""How fast does `dbbench advise` verify candidates, and what does it cost next to `dbbench explain`?

    .venv/bin/python benchmarks/bench_advise.py [--dataset alpine-100k] [--namespace bench_advise]

Seeds DATASET into a fresh scratch namespace, drops the built-in
catalog's own secondary indexes there (the DAO change that lost them: ix_package_namespace,
ix_relation_lookup, ix_stage_cleanup; MySQL's shapes
name ix_suite_pending and ix_snapshot_cleanup in a hint and a foreign key needs ix_binding_page),
then runs, side by side in one run, ``dbbench explain`` and ``dbbench advise`` (every failing
shape, side effects and the whole-catalog set) on that namespace, and ``dbbench advise`` on the
seeded default namespace as it is (the built-in catalog unchanged). Prints candidates built and
verified per minute, the advise / explain wall ratio, and whether each dropped index came back
verified. Target (issue 34): at 100k rows, >= 10 candidates verified per minute.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from dbbench import dialects  # noqa: E402 (after the sys.path line)
from dbbench.access.targets import open_targets  # noqa: E402
from dbbench.dataset import seed  # noqa: E402

DROPPED = {
    "ix_package_namespace": "package",
    "ix_relation_lookup": "package_relation",
    "ix_stage_cleanup": "group_snapshot_stage",
}


def prepare(dataset: str, namespace: str) -> None:
    targets = open_targets({})
    try:
        for t in targets:  # a fresh seed: an earlier run's dropped indexes do not carry over
            with t.all_or_nothing() as conn:
                dialects.get(t.dialect).drop_namespace(conn, namespace)
                conn.commit()
        seed.seed(targets, dataset, namespace=namespace)
        for t in targets:
            d = dialects.get(t.dialect)
            with t.all_or_nothing() as conn:
                d.use(conn, namespace)
                with conn.cursor() as cur:
                    for index, table in DROPPED.items():
                        if t.dialect == "postgresql":
                            cur.execute(f"DROP INDEX IF EXISTS {index}")
                        else:
                            cur.execute(
                                "SELECT 1 FROM information_schema.statistics WHERE table_schema = %s "
                                "AND index_name = %s",
                                (namespace, index),
                            )
                            if cur.fetchone():
                                try:
                                    cur.execute(f"ALTER TABLE {table} DROP INDEX {index}")
                                except Exception as exc:  # a foreign key needs it: MySQL keeps it
                                    print(f"mysql: kept {index}: {exc}")
                conn.commit()
    finally:
        for t in targets:
            t.dispose()


def timed(*args: str) -> tuple[int, float]:
    start = time.perf_counter()
    p = subprocess.run([sys.executable, "-m", "dbbench", *args], cwd=ROOT, capture_output=True, text=True)
    if p.returncode not in (0, 1):
        sys.exit(f"dbbench {' '.join(args)}: exit {p.returncode}: {p.stderr.strip()[-400:]}")
    return p.returncode, time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default="alpine-100k")
    ap.add_argument("--namespace", default="bench_advise")
    ap.add_argument("--default-namespace", default="dbbench", help="the seeded namespace advised as it is")
    a = ap.parse_args()
    start = time.perf_counter()
    prepare(a.dataset, a.namespace)
    print(
        f"seeded {a.dataset} into {a.namespace} and dropped {len(DROPPED)} indexes: {time.perf_counter() - start:.1f} s"
    )
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "advice.json"
        _, explain_s = timed("explain", "--namespace", a.namespace, "--no-natural")
        _, advise_s = timed("advise", "--namespace", a.namespace, "--output", str(out))
        doc = json.loads(out.read_text())
        plain = Path(tmp) / "plain.json"
        _, builtin_s = timed("advise", "--namespace", a.default_namespace, "--output", str(plain))
        builtin = json.loads(plain.read_text())
    s = doc["summary"]
    per_min = s["candidates_tried"] / (advise_s / 60)
    verified_per_min = s["verified"] / (advise_s / 60)
    print(f"dbbench explain (lost indexes):  {explain_s:7.1f} s")
    print(
        f"dbbench advise  (lost indexes):  {advise_s:7.1f} s  = {advise_s / explain_s:.1f}x explain; "
        f"{s['shapes_advised']} shape/dialect pairs, {s['candidates_tried']} candidates built "
        f"({per_min:.1f}/min), {s['verified']} verified ({verified_per_min:.1f}/min)"
    )
    print(
        f"dbbench advise  (built-in catalog as seeded, {a.default_namespace}): {builtin_s:7.1f} s, "
        f"{builtin['summary']['candidates_tried']} candidates, {builtin['summary']['verified']} verified"
    )
    for st in doc["sets"]:
        print(
            f"set {st['dialect']}: {len(st['indexes'])} indexes, {st['size_bytes'] / 2**20:.1f} MiB, "
            f"verified whole: {st['verified']} {st['problem']}; unserved: {', '.join(st['unserved']) or 'none'}"
        )
    for dialect in ("postgresql", "mysql"):
        for a_ in doc["shapes"]:
            if a_["dialect"] != dialect or a_["spelling"] != "remediated":
                continue
            best = next((c for c in a_["candidates"] if c["verdict"] == "verified"), None)
            said = (
                best["candidate"]
                if best
                else "none verified: " + "; ".join(c["reason"] for c in a_["candidates"])[:160]
            )
            print(f"  {dialect:10} {a_['shape']:32} {said}")


if __name__ == "__main__":
    main()
