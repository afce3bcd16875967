"""The tables of the commands that print no result document: ``seed`` (dataset or catalog setup
SQL), ``validate``, ``info``, ``servers`` and ``bench seed``."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from tabulate import tabulate

from dbbench.defaults import DIALECT_LABEL
from dbbench.document.volume import FilledTarget, Seeded, Server, SetUp, SetupTarget, Validation


def rows_by_table(res: Sequence[SetupTarget | FilledTarget], agree: dict[str, bool]) -> str:
    """Rows per table and dialect, and whether the fingerprints are equal across dialects (a
    namespace built by setup SQL or filled from a spec)."""
    labels = [DIALECT_LABEL[r.dialect] for r in res]
    rows = [
        [
            t,
            *[f"{r.rows[t]:,}" if t in r.rows else "—" for r in res],
            ("equal" if ok else "different") if len(res) > 1 else "",
        ]
        for t, ok in agree.items()
    ]
    return tabulate(
        rows,
        headers=["table", *[f"{lb} rows" for lb in labels], "fingerprints across dialects"],
        colalign=("left", *["right"] * len(labels), "left"),
    )


def render_setup(setup: SetUp) -> str:
    """``dbbench seed --catalog``: rows per table and dialect, fingerprints, and the setup steps."""
    res = setup.targets
    out = [rows_by_table(res, setup.agree)]
    out.append("")
    out.append(
        tabulate(
            [
                [
                    DIALECT_LABEL[r.dialect],
                    r.namespace,
                    r.file,
                    r.statements,
                    f"{r.total_seconds:.2f} s",
                    ", ".join(f"{k} {v:.2f}" for k, v in r.seconds.items()),
                ]
                for r in res
            ],
            headers=["server", "namespace", "setup file", "statements", "time", "steps (s)"],
        )
    )
    out += [  # one line per reason a dump's statements were skipped or rewritten
        f"{DIALECT_LABEL[r.dialect]} {r.file}: {n:,} statement{'s' if n != 1 else ''}: {why}"
        for r in res
        for why, n in r.skipped.items()
    ]
    return "\n".join(out)


def render_seed(seeded: Seeded) -> str:
    """``dbbench seed``: cardinalities against the definition, fingerprints, and the seed time."""
    res, agree = seeded.targets, seeded.agree
    labels = [DIALECT_LABEL[r.dialect] for r in res]
    names = [c.name for c in res[0].counts] if res else []
    rows = []
    for i, name in enumerate(names):
        cells = [r.counts[i].actual for r in res]
        ok = all(r.counts[i].ok for r in res)
        rows.append(
            [name, f"{res[0].counts[i].expected:,}", *[f"{c:,}" for c in cells], "ok" if ok else "MISMATCH"]
        )
    out = [
        tabulate(rows, headers=["cardinality", "expected", *labels, "verdict"], colalign=("left", "right"))
    ]
    fp = [[t, *[r.fingerprints[t] for r in res], "equal" if agree[t] else "DIFFERENT"] for t in agree]
    out.append("")
    out.append(tabulate(fp, headers=["table", *[f"{lb} fingerprint" for lb in labels], "across dialects"]))
    timing = [
        [
            lb,
            f"{r.total_seconds:.2f} s",
            f"{r.rows / r.total_seconds:,.0f}",
            ", ".join(f"{k} {v:.2f}" for k, v in r.seconds.items()),
        ]
        for lb, r in zip(labels, res)
    ]
    out.append("")
    out.append(tabulate(timing, headers=["server", "seed time", "rows/s", "steps (s)"]))
    out.append(f"(load files prepared in {seeded.generated:.2f} s; servers loaded concurrently)")
    return "\n".join(out)


def render_validate(valid: Validation) -> str:
    """``dbbench validate``: every shape's expectations, then the setup SQL's statement counts and
    what a dump adapter would skip or rewrite."""
    rows = [
        [
            e.shape,
            DIALECT_LABEL[e.dialect],
            f"{e.expect_table} using {e.expect_index}",
            ", ".join(e.forbid) or "—",
            "yes" if e.natural else "",
        ]
        for e in valid.expectations
    ]
    where = "; ".join(
        f"{DIALECT_LABEL[s.dialect]}: {s.label} ({s.statements:,} statements)" for s in valid.setup
    )
    table = tabulate(rows, headers=["shape", "dialect", "expected", "forbidden", "natural"]) + "\n\n"
    counted = f"{valid.shapes} shapes valid" if rows else "no query shapes yet (a schema to seed and fill)"
    return (
        (table if rows else "")
        + f"{valid.catalog}: {counted}; "
        + (f"setup SQL {where}" if valid.setup else "no setup SQL (runs against a seeded dataset)")
        + "".join(
            f"\n{DIALECT_LABEL[s.dialect]} {s.label}: {n:,} statement{'s' if n != 1 else ''}: {why}"
            for s in valid.setup
            for why, n in s.skipped.items()
        )
    )


def render_info(servers: Sequence[Server]) -> str:
    """``dbbench info``: each target's server version and URL."""
    return tabulate(
        [[DIALECT_LABEL[s.dialect], s.version, s.url] for s in servers], headers=["dialect", "version", "url"]
    )


def render_status(rows: list[Any], as_json: bool) -> str:
    """``dbbench servers up`` / ``status``: one row per local server, or the rows as JSON."""
    if as_json:
        return json.dumps([asdict(r) for r in rows], indent=2)
    table = [
        [r.server, r.state, r.version or "", r.port or "", r.pid or "", r.data_dir or "", r.url or ""]
        for r in rows
    ]
    return tabulate(table, headers=["server", "state", "version", "port", "pid", "data dir", "url"])


def render_bench_seed(rows: list[Any], floor_wall: float, seed_wall: float) -> str:
    """``dbbench bench seed``: seed time next to the servers' raw bulk-load floor."""
    table = [
        [
            DIALECT_LABEL[r.dialect],
            f"{r.rows:,}",
            f"{r.floor_seconds:.2f} s",
            f"{r.seed_seconds:.2f} s",
            f"{r.ratio:.2f}x",
            f"{r.rows / r.seed_seconds:,.0f}",
        ]
        for r in rows
    ]
    table.append(
        ["both (wall)", "", f"{floor_wall:.2f} s", f"{seed_wall:.2f} s", f"{seed_wall / floor_wall:.2f}x", ""]
    )
    return tabulate(table, headers=["server", "rows", "floor", "seed", "seed/floor", "seed rows/s"])
