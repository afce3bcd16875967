"""``dbbench indexes``' result document (``dbbench.indexes/1``): per target, every index of the
tables the catalog reads with its verdict (needed / redundant / unused / not hidden) and the
evidence, its size, write cost and the constraint that binds it; then per shape the indexes it
needs. The terminal, Markdown and HTML views (:mod:`dbbench.output.indexes`) and ``dbbench diff``
read only this dict."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dbbench.document.advise import write_cost
from dbbench.document.build import envelope

if TYPE_CHECKING:
    from dbbench.access.targets import Target
    from dbbench.indexmap.profile import Effect
    from dbbench.indexmap.run import CatalogMap, IndexEntry, ShapeNeeds, TargetMap


def _rows(value: float | None) -> float | None:
    return None if value is None else round(value, 1)


def _effect(e: Effect) -> dict[str, Any]:
    return {
        "shape": e.shape,
        "rows_examined": {"before": _rows(e.work[0]), "after": _rows(e.work[1])},
        "reasons": list(e.reasons),
        "instead": list(e.instead),
        "by": list(e.by),
        "error": e.error or None,
    }


def _index(i: IndexEntry) -> dict[str, Any]:
    ratio = i.write_ratio
    return {
        "table": i.table,
        "index": i.index,
        "kind": i.kind,
        "parts": list(i.parts),
        "definition": i.definition,
        "constraint": i.bound or None,
        "shares": None if i.shares is None else {"foreign_key": i.shares[0], "with": list(i.shares[1])},
        "size_bytes": i.size_bytes,
        "verdict": i.verdict,
        "needed_by": [_effect(e) for e in i.needed_by],
        "taken_over": [_effect(e) for e in i.read_by if not e.needs],
        "taken_over_by": list(i.taken_over_by),
        "shapes_measured": len(i.effects),
        "hidden_with": i.hidden_with or None,
        "not_hidden": i.not_hidden or None,
        "read_by_unhidden": list(i.read_unhidden),
        "write": {
            "with": write_cost(i.write_with),
            "without": write_cost(i.write_without),
            "ratio": None if ratio is None else round(ratio, 2),
            "note": i.write_note or None,
        },
        "seconds": round(i.seconds, 3),
    }


def _shape(s: ShapeNeeds) -> dict[str, Any]:
    return {
        "shape": s.shape,
        "ok": s.ok,
        "rows_examined": _rows(s.work),
        "needs": list(s.needs),
        "either": [{"index": i, "instead": list(instead), "by": list(by)} for i, instead, by in s.either],
        "reads": list(s.reads),
    }


def _target(t: TargetMap) -> dict[str, Any]:
    return {
        "dialect": t.dialect,
        "namespace": t.namespace,
        "seconds": round(t.seconds, 3),
        "tables": t.tables,
        "indexes": [_index(i) for i in t.indexes],
        "shapes": [_shape(s) for s in t.shapes],
        "drop_set": None
        if t.drop is None
        else {
            "indexes": [{"table": tb, "index": i} for tb, i in t.drop.indexes],
            "size_bytes": t.drop.size_bytes,
            "verified": t.drop.verified,
            "problems": list(t.drop.problems),
            "shapes_measured": t.drop.shapes_measured,
            "kept": [{"table": tb, "index": i, "why": why} for tb, i, why in t.drop.kept],
        },
    }


def indexes_document(targets: list[Target], found: CatalogMap, config: dict[str, Any]) -> dict[str, Any]:
    """The ``dbbench.indexes/1`` document."""
    doc = envelope("indexes", targets)
    doc["config"] = config
    doc["seconds"] = round(found.seconds, 3)
    doc["targets"] = [_target(t) for t in found.targets]
    every = [i for t in found.targets for i in t.indexes]
    doc["summary"] = {
        "indexes": len(every),
        "shapes": sum(len(t.shapes) for t in found.targets),
        **{
            v.replace(" ", "_"): sum(i.verdict == v for i in every)
            for v in ("needed", "redundant", "unused", "not hidden")
        },
        "constraint_bound": sum(bool(i.bound) for i in every),
    }
    return doc
