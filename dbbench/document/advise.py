"""``dbbench advise``'s result document (``dbbench.advise/1``): the shapes in need, each candidate
index tried with its evidence and cost and verdict, and the whole-catalog set. Built from what
:func:`dbbench.advise.run.advise_catalog` returns; the terminal, Markdown and HTML views
(:mod:`dbbench.output.advise`) read only this dict.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dbbench.document.build import envelope

if TYPE_CHECKING:
    from dbbench.access.targets import Target
    from dbbench.advise.effects import Effects
    from dbbench.advise.run import CatalogAdvice, IndexSet
    from dbbench.advise.shape import ShapeAdvice, Trial
    from dbbench.advise.trial import WriteCost
    from dbbench.advise.verify import EstimateOnly


def _ms(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds * 1000, 3)


def _round(value: float | None, digits: int = 3) -> float | None:
    return None if value is None else round(value, digits)


def write_cost(cost: WriteCost | None) -> dict[str, Any] | None:
    if cost is None:
        return None
    return {
        "rows": cost.rows,
        "inserted": cost.inserted,
        "updated": cost.updated,
        "insert_ms": _ms(cost.insert_seconds),
        "update_ms": _ms(cost.update_seconds),
        "ms": _ms(cost.seconds),
        "rounds": cost.rounds,
        "span_ms": _ms(cost.span_seconds),
        "log_bytes": cost.log_bytes,
        "counters": dict(cost.counters),
        "notes": list(cost.notes),
    }


def _effects(found: Effects | None) -> dict[str, Any] | None:
    if found is None:
        return None
    return {
        "helps": [str(e) for e in found.helps],
        "regresses": [str(e) for e in found.regresses],
        "measured": len(found.effects),
    }


def _estimate(value: EstimateOnly | None) -> dict[str, Any] | None:
    """What an advisor reading plain EXPLAIN alone would conclude (Dexter's rule)."""
    if value is None:
        return None
    return {
        "verdict": value.verdict,
        "reason": value.reason,
        "cost": {"without": _round(value.cost[0]), "with": _round(value.cost[1])},
        "saving": _round(value.saving),
    }


def _trial(rank: int, t: Trial) -> dict[str, Any]:
    ev, cand = t.evidence, t.candidate
    without, with_index = t.write_without, t.write_with
    ratio = None
    if without is not None and with_index is not None and without.seconds > 0:
        ratio = round(with_index.seconds / without.seconds, 2)
    return {
        "rank": rank,
        "index": cand.name,
        "table": cand.table,
        "kind": cand.kind,
        "candidate": str(cand),
        "why": cand.reason,
        "ddl": t.ddl,
        "migration_name": cand.migration_name,
        "migration_ddl": cand.ddl(t.evidence.dialect, cand.migration_name),
        "verdict": t.verdict,
        "reason": t.reason,
        "used": ev.used,
        "probes_not_using_it": list(ev.probes),
        "plan_with_it": ev.plan,
        "rows_examined": {"before": _round(ev.work[0], 1), "after": _round(ev.work[1], 1)},
        # a write's rows locked (its lock footprint, docs/writes.md); null for a read
        "locked_rows": None if ev.locks == (None, None) else {"before": ev.locks[0], "after": ev.locks[1]},
        "buffers": {"before": ev.buffers[0], "after": ev.buffers[1]},
        "p50_ms": {"before": _round(ev.ms[0], 4), "after": _round(ev.ms[1], 4)},
        "build_ms": _ms(t.build_seconds),
        "size_bytes": t.size_bytes,
        "write": {"without": write_cost(without), "with": write_cost(with_index), "ratio": ratio},
        "side_effects": _effects(t.effects),
        "growth": None
        if t.growth is None
        else {
            "rows_examined": {
                str(t.growth.small[0]): t.growth.small[1],
                str(t.growth.large[0]): t.growth.large[1],
            },
            "k": _round(t.growth.k),
            "verdict": t.growth.verdict,
            "declared": t.growth.declared,
            "said": str(t.growth),
        },
        "estimate": _estimate(t.estimate),
        "estimate_disagrees": t.estimate is not None
        and (t.estimate.verdict == "suggest") != (t.verdict == "verified"),
    }


def _shape(a: ShapeAdvice) -> dict[str, Any]:
    return {
        "shape": a.shape,
        "dialect": a.dialect,
        "spelling": a.spelling,
        "candidates": [_trial(i, t) for i, t in enumerate(a.trials, 1)],
        "verified": [t.candidate.name for t in a.verified],
        "unbounded": list(a.unbounded),
        "existing": [{"candidate": c, "index": name} for c, name in a.existing],
        "untried": a.untried,
    }


def _set(s: IndexSet) -> dict[str, Any]:
    return {
        "dialect": s.dialect,
        "indexes": [
            {
                "index": t.candidate.name,
                "table": t.candidate.table,
                "ddl": t.ddl,
                "migration_name": t.candidate.migration_name,
                "migration_ddl": t.candidate.ddl(s.dialect, t.candidate.migration_name),
                "serves": list(serves),
            }
            for t, serves in zip(s.trials, s.serves_each or [s.serves] * len(s.trials), strict=True)
        ],
        "serves": list(s.serves),
        "unserved": list(s.unserved),
        "size_bytes": s.size_bytes,
        "write_ms": None
        if s.write_seconds is None
        else {"without": _ms(s.write_seconds[0]), "with": _ms(s.write_seconds[1])},
        "side_effects": _effects(s.effects),
        "verified": s.verified,
        "problem": s.problem,
    }


def advise_document(targets: list[Target], advice: CatalogAdvice, config: dict[str, Any]) -> dict[str, Any]:
    """The ``dbbench.advise/1`` document."""
    doc = envelope("advise", targets)
    doc["config"] = config
    doc["seconds"] = round(advice.seconds, 3)
    doc["needs"] = [
        {"shape": n.shape, "dialect": n.dialect, "spelling": n.spelling, "why": n.why} for n in advice.needs
    ]
    doc["shapes"] = [_shape(a) for a in advice.shapes]
    doc["sets"] = [_set(s) for s in advice.sets]
    tried = [t for a in advice.shapes for t in a.trials]
    doc["summary"] = {
        "shapes_advised": len(advice.shapes),
        "candidates_tried": len(tried),
        "verified": sum(t.verdict == "verified" for t in tried),
        "rejected": sum(t.verdict != "verified" for t in tried),
        "estimate_disagrees": sum(
            t.estimate is not None and (t.estimate.verdict == "suggest") != (t.verdict == "verified")
            for t in tried
        ),
    }
    return doc


def chosen(doc: dict[str, Any], dialect: str) -> list[dict[str, Any]]:
    """What a migration builds on ``dialect``: the whole-catalog set when it was verified whole,
    else each shape's best verified index (once each), as ``{index, table, ddl, serves}``."""
    for s in doc.get("sets", []):
        if s["dialect"] == dialect and s["verified"] and s["indexes"]:
            return [{**i, "serves": i.get("serves", s["serves"])} for i in s["indexes"]]
    out: dict[str, dict[str, Any]] = {}
    for a in doc.get("shapes", []):
        if a["dialect"] != dialect:
            continue
        best = next((c for c in a["candidates"] if c["verdict"] == "verified"), None)
        if best is not None:
            entry = out.setdefault(
                best["index"],
                {
                    "index": best["index"],
                    "table": best["table"],
                    "ddl": best["ddl"],
                    "migration_name": best["migration_name"],
                    "migration_ddl": best["migration_ddl"],
                    "serves": [],
                },
            )
            entry["serves"].append(a["shape"])
    return list(out.values())


def migrations(doc: dict[str, Any]) -> dict[str, str]:
    """One migration per dialect with verified advice: the statements, each saying what it serves
    and what it measured, under a header naming the run."""
    out = {}
    dialects = sorted({a["dialect"] for a in doc.get("shapes", [])})
    by_index = {(a["dialect"], c["index"]): c for a in doc.get("shapes", []) for c in a["candidates"]}
    for dialect in dialects:
        picked = chosen(doc, dialect)
        if not picked:
            continue
        lines = [
            f"-- dbbench advise: {len(picked)} verified index(es) for {dialect}",
            f"-- catalog {doc['config'].get('catalog')}, measured in namespace {doc['config'].get('namespace')}"
            f" at {doc.get('generated_at')}",
            "-- each was built for real and measured there (see the advise JSON), review before applying",
            "",
        ]
        for p in picked:
            c = by_index.get((dialect, p["index"]), {})
            rows = c.get("rows_examined", {})
            lines.append(f"-- serves: {', '.join(p['serves'])}")
            if rows:
                lines.append(
                    f"-- rows examined {rows.get('before') or 0:,.0f} -> {rows.get('after') or 0:,.0f}, "
                    f"{c.get('size_bytes', 0):,} bytes on disk, write batch ratio {c.get('write', {}).get('ratio')}"
                )
            lines.append(p["migration_ddl"] + ";")
            lines.append("")
        out[dialect] = "\n".join(lines)
    return out


def load_advice(path: Path) -> dict[str, Any]:
    """A ``dbbench advise --output`` file, read within bounds and checked where ``catalog accept
    --advice`` relies on it; a bad one is one :class:`~dbbench.document.model.ResultFileError`."""
    from dbbench.document.model import ResultFileError
    from dbbench.document.store import RESULT_LIMIT
    from verdict.files import read_text_bounded

    try:
        doc = json.loads(read_text_bounded(path, limit=RESULT_LIMIT, what="dbbench advice"))
    except FileNotFoundError:
        raise ResultFileError(f"{path}: no such file") from None
    except OSError as exc:
        raise ResultFileError(f"{path}: {exc.strerror}") from None
    except (ValueError, RecursionError) as exc:
        raise ResultFileError(f"{path}: not JSON ({str(exc)[:120]})") from None
    if not isinstance(doc, dict) or doc.get("schema") != "dbbench.advise/1":
        raise ResultFileError(
            f"{path}: not a dbbench advice (schema dbbench.advise/1, from dbbench advise --output)"
        )
    shapes = doc.get("shapes")
    if not isinstance(shapes, list) or not all(
        isinstance(a, dict) and isinstance(a.get("candidates"), list) for a in shapes
    ):
        raise ResultFileError(f"{path}: shapes: not a list of advised shapes")
    return doc


def verified_indexes(doc: dict[str, Any]) -> dict[tuple[str, str], tuple[str, str]]:
    """(shape, dialect) -> (table, the name its migration gives it) of its best verified candidate
    (remediated spelling)."""
    out = {}
    for a in doc["shapes"]:
        if a.get("spelling") != "remediated":
            continue
        best = next(
            (c for c in a["candidates"] if isinstance(c, dict) and c.get("verdict") == "verified"), None
        )
        name = best.get("migration_name") if best is not None else None
        if best is not None and isinstance(best.get("table"), str) and isinstance(name, str):
            out[(str(a.get("shape")), str(a.get("dialect")))] = (best["table"], name)
    return out
