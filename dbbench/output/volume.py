"""``dbbench fill``: rows and fingerprints per table and server, the steps, the spec's checks."""

from __future__ import annotations

from typing import Any

from tabulate import tabulate

from dbbench.defaults import DIALECT_LABEL
from dbbench.document.build import fill_document
from dbbench.output.commands import rows_by_table
from dbbench.volume.load import agree, problems

__all__ = [
    "agree",
    "fill_document",
    "problems",
    "render_fill",
    "render_seeded",
    "render_spec",
    "spec_lines",
]


def render_fill(results: list[Any]) -> str:
    out = [
        rows_by_table(results, agree(results)),
        "",
    ]
    steps = []
    for r in results:
        steps.append(
            [
                DIALECT_LABEL[r.dialect],
                r.namespace,
                f"{sum(r.loaded.values()):,}",
                _rate(r),
                f"{r.total_seconds:.2f} s",
                ", ".join(f"{k} {v:.2f}" for k, v in r.seconds.items()),
            ]
        )
    out.append(tabulate(steps, headers=["server", "namespace", "rows made", "load", "time", "steps (s)"]))
    return "\n".join(out + spec_lines(results))


def _rate(r: Any) -> str:
    load_s = r.seconds.get("generate+load", 0.0)
    return f"{sum(r.loaded.values()) / load_s:,.0f} rows/s" if load_s else "—"


def spec_lines(results: list[Any]) -> list[str]:
    """The spec filled (seed, scale, faker) and each of its checks per server."""
    r0 = results[0]
    return [
        f"spec {r0.spec} (seed {r0.seed}, scale {r0.scale:,}, faker {r0.faker})",
        *[
            f"{DIALECT_LABEL[r.dialect]}: {'ok' if c.ok else 'FAIL'} {c.name}: {c.actual:,} (expected {c.expected:,})"
            for r in results
            for c in r.checks
        ],
    ]


def render_spec(spec: Any) -> str:
    """``dbbench validate``: the catalog's data spec, valid: its tables' row counts and checks."""
    tables = ", ".join(f"{t.name} {t.rows.text}" for t in spec.tables.values())
    scale = f"scale {spec.scale:,}" if spec.scale else "no scale of its own"
    return (
        f"data spec {spec.path}: valid, seed {spec.seed}, {scale}, {len(spec.tables)} tables "
        f"(rows: {tables}), {len(spec.verify)} check{'s' if len(spec.verify) != 1 else ''}"
    )


def render_seeded(results: list[Any]) -> str:
    """``dbbench seed --catalog`` after its setup SQL's table: the spec's rows made and their rate
    per server, then :func:`spec_lines`."""
    made = ", ".join(
        f"{DIALECT_LABEL[r.dialect]} {sum(r.loaded.values()):,} rows at {_rate(r)}" for r in results
    )
    return "\n".join([f"data spec filled: {made}", *spec_lines(results)])
