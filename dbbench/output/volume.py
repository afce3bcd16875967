"""``dbbench fill``: rows and fingerprints per table and server, the steps, the spec's checks."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from tabulate import tabulate

from dbbench.defaults import DIALECT_LABEL


def agree(results: list[Any]) -> dict[str, bool]:
    """Per table of any result (sorted): whether every result holds the same fingerprint."""
    tables = sorted({t for r in results for t in r.fingerprints})
    return {t: len({r.fingerprints.get(t) for r in results}) == 1 for t in tables}


def render_fill(results: list[Any]) -> str:
    labels = [DIALECT_LABEL[r.dialect] for r in results]
    same = agree(results)
    rows = [
        [
            t,
            *[f"{r.rows.get(t, 0):,}" for r in results],
            ("equal" if ok else "DIFFERENT") if len(results) > 1 else "",
        ]
        for t, ok in same.items()
    ]
    out = [
        tabulate(
            rows,
            headers=["table", *[f"{lb} rows" for lb in labels], "fingerprints across dialects"],
            colalign=("left", *["right"] * len(labels), "left"),
        ),
        "",
    ]
    steps = []
    for r in results:
        loaded = sum(r.loaded.values())
        load_s = r.seconds.get("generate+load", 0.0)
        rate = f"{loaded / load_s:,.0f} rows/s" if load_s else "—"
        steps.append(
            [
                DIALECT_LABEL[r.dialect],
                r.namespace,
                f"{loaded:,}",
                rate,
                f"{r.total_seconds:.2f} s",
                ", ".join(f"{k} {v:.2f}" for k, v in r.seconds.items()),
            ]
        )
    out.append(tabulate(steps, headers=["server", "namespace", "rows made", "load", "time", "steps (s)"]))
    r0 = results[0]
    out.append(f"spec {r0.spec} (seed {r0.seed}, scale {r0.scale:,}, faker {r0.faker})")
    out += [
        f"{DIALECT_LABEL[r.dialect]}: {'ok' if c.ok else 'FAIL'} {c.name}: {c.actual:,} (expected {c.expected:,})"
        for r in results
        for c in r.checks
    ]
    return "\n".join(out)


def problems(results: list[Any]) -> list[str]:
    """What does not verify: a check of the spec, a fingerprint differing between dialects."""
    bad = [
        f"{r.dialect}: {c.name} = {c.actual}, expected {c.expected}"
        for r in results
        for c in r.checks
        if not c.ok
    ]
    return bad + [
        f"fingerprint of {t} differs between dialects" for t, ok in agree(results).items() if not ok
    ]


def fill_document(results: list[Any]) -> dict[str, Any]:
    return {"command": "fill", "targets": [asdict(r) for r in results], "fingerprints_equal": agree(results)}
