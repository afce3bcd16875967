"""``dbbench fill``: rows and fingerprints per table and server, the steps, the spec's checks."""

from __future__ import annotations

from tabulate import tabulate

from dbbench.defaults import DIALECT_LABEL
from dbbench.document.volume import Filled, FilledTarget, SpecSummary
from dbbench.output.commands import rows_by_table

__all__ = ["render_fill", "render_seeded", "render_spec", "spec_lines"]


def render_fill(filled: Filled) -> str:
    out = [
        rows_by_table(filled.targets, filled.agree),
        "",
    ]
    steps = []
    for r in filled.targets:
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
    return "\n".join(out + spec_lines(filled))


def _rate(r: FilledTarget) -> str:
    load_s = r.seconds.get("generate+load", 0.0)
    return f"{sum(r.loaded.values()) / load_s:,.0f} rows/s" if load_s else "—"


def spec_lines(filled: Filled) -> list[str]:
    """The spec filled (seed, scale, faker) and each of its checks per server."""
    r0 = filled.targets[0]
    return [
        f"spec {r0.spec} (seed {r0.seed}, scale {r0.scale:,}, faker {r0.faker})",
        *[
            f"{DIALECT_LABEL[r.dialect]}: {'ok' if c.ok else 'FAIL'} {c.name}: {c.actual:,} (expected {c.expected:,})"
            for r in filled.targets
            for c in r.counts
        ],
    ]


def render_spec(spec: SpecSummary) -> str:
    """``dbbench validate``: the catalog's data spec, valid: its tables' row counts and checks."""
    tables = ", ".join(f"{name} {rows}" for name, rows in spec.tables)
    scale = f"scale {spec.scale:,}" if spec.scale else "no scale of its own"
    return (
        f"data spec {spec.path}: valid, seed {spec.seed}, {scale}, {len(spec.tables)} tables "
        f"(rows: {tables}), {spec.checks} check{'s' if spec.checks != 1 else ''}"
    )


def render_seeded(filled: Filled) -> str:
    """``dbbench seed --catalog`` after its setup SQL's table: the spec's rows made and their rate
    per server, then :func:`spec_lines`."""
    made = ", ".join(
        f"{DIALECT_LABEL[r.dialect]} {sum(r.loaded.values()):,} rows at {_rate(r)}" for r in filled.targets
    )
    return "\n".join([f"data spec filled: {made}", *spec_lines(filled)])
