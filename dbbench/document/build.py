"""Every result document dbbench writes is built here, from what the stages return: ``seed`` (the
built-in dataset, a catalog's setup SQL, and the spec filled after it), ``fill``, ``explain`` (also
``check``, ``baseline save`` and ``diff``'s runs, as the typed :class:`~dbbench.document.model.Document`)
and ``grow``. :mod:`dbbench.document.store` writes and reads them."""

from __future__ import annotations

import json
import platform
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dbbench.defaults import VERSION as __version__
from dbbench.document.check import schema_version

if TYPE_CHECKING:
    from dbbench.access.targets import Target
    from dbbench.dataset.definition import Dataset
    from dbbench.dataset.seed import SeedResult
    from dbbench.document.model import IndexDefinition, ShapeResult
    from dbbench.measure.explain import Measurement, ShapeMeasurement
    from dbbench.measure.grow import Ladder
    from dbbench.volume.load import FillResult


def envelope(kind: str, targets: list[Target]) -> dict[str, Any]:
    return {
        "schema": f"dbbench.{kind}/{schema_version(kind)}",
        "generated_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "tool": {"name": "dbbench", "version": __version__},
        "host": {"machine": platform.machine(), "python": platform.python_version()},
        "servers": [{"dialect": t.dialect, "version": t.version_text, "url": t.safe_url} for t in targets],
    }


def seed_document(
    ds: Dataset, targets: list[Target], results: list[SeedResult], generated: float, agree: dict[str, bool]
) -> dict[str, Any]:
    doc = envelope("seed", targets)
    doc["dataset"] = {"name": ds.name, "seed": ds.seed, "definition": ds.path.name}
    doc["generate_seconds"] = round(generated, 4)
    doc["targets"] = [
        {
            "dialect": r.dialect,
            "namespace": r.namespace,
            "seconds": {k: round(v, 4) for k, v in r.seconds.items()},
            "total_seconds": round(r.total_seconds, 4),
            "cardinalities": [asdict(c) | {"ok": c.ok} for c in r.checks],
            "fingerprints": r.fingerprints,
            "ok": r.ok,
        }
        for r in results
    ]
    doc["fingerprints_equal"] = agree
    return doc


def setup_document(catalog, targets: list[Target], results: list, agree: dict[str, bool]) -> dict[str, Any]:
    """``dbbench seed --catalog``: what the catalog's setup SQL built, per target."""
    doc = envelope("seed", targets)
    doc["dataset"] = {
        "name": catalog.dataset_name,
        "catalog": str(catalog.path),
        "setup": {r.dialect: {"file": Path(r.file).name, "sha256": r.sha256} for r in results},
    }
    doc["targets"] = [
        {
            "dialect": r.dialect,
            "namespace": r.namespace,
            "isolation": r.isolation,  # the role the setup SQL ran as, or "none"
            "statements": r.statements,
            "seconds": {k: round(v, 4) for k, v in r.seconds.items()},
            "total_seconds": round(r.total_seconds, 4),
            "cardinalities": [
                {"name": f"rows in {t}", "expected": None, "actual": n, "ok": True} for t, n in r.rows.items()
            ],
            "fingerprints": r.fingerprints,
            "skipped": r.skipped,  # a dump's statements skipped or rewritten: reason -> statements
            "ok": True,
        }
        for r in results
    ]
    doc["fingerprints_equal"] = agree
    return doc


# -- the result document -----------------------------------------------------------------------
def explain_document(
    targets: list[Target], results: list[ShapeMeasurement], metas: dict, config: dict
) -> dict[str, Any]:
    """The result document of a live run (``dbbench explain`` / ``check`` / ``baseline save`` / ``diff``):
    the typed :class:`dbbench.document.model.Document` of the run, as the dict dbbench writes."""
    from dbbench.document.model import DatasetInfo, Document, RemediationRow, RunConfig, Server
    from dbbench.measure.explain import INDEXES_META

    env = envelope("explain", targets)
    entries = tuple(_entry(r) for r in results)
    doc = Document(
        schema=env["schema"],
        generated_at=env["generated_at"],
        tool=env["tool"],
        host=env["host"],
        servers=tuple(Server(**s) for s in env["servers"]),
        config=RunConfig.from_json(config),
        datasets={
            d: DatasetInfo(
                name=m.get("dataset"),
                seed=m.get("seed"),
                setup_sha256=m.get("setup_sha256"),
                fingerprints={k.split(".", 1)[1]: v for k, v in m.items() if k.startswith("fingerprint.")},
                indexes=_indexes(m.get(INDEXES_META)),
            )
            for d, m in metas.items()
        },
        results=entries,
        remediation=tuple(RemediationRow.of(list(entries))),
        failures=tuple(f"{r.shape} [{r.dialect}]" for r in entries if not r.ok),
    )
    return doc.to_json()


def _indexes(recorded: str | None) -> tuple[IndexDefinition, ...] | None:
    """The namespace's indexes a run recorded in its meta (JSON, :data:`dbbench.measure.explain.INDEXES_META`);
    None when it recorded none."""
    from dbbench.document.model import IndexDefinition

    if recorded is None:
        return None
    return tuple(IndexDefinition(**i) for i in json.loads(recorded))


# the fields an entry of the document takes over from the measured result as they are
_KEPT = (
    "shape",
    "dialect",
    "cardinality",
    "access_path",
    "expect_rows",
    "params",
    "ok",
    "cascade",
    "natural_label",
    "unchanged",
    "race",
)


def _entry(r: ShapeMeasurement) -> ShapeResult:
    from dbbench.dialects.plan import PlanNode
    from dbbench.document import model

    def spelling(m: Measurement) -> model.Spelling:
        return model.Spelling(
            sql=" ".join(m.sql.split()),
            samples_ms=tuple(m.samples_ms),
            p50_ms=m.p50,
            p95_ms=m.p95,
            rows=m.rows,
            timeout=m.timeout,
            plan=None if m.plan is None else PlanNode.from_dict(m.plan),
            raw_plan=m.raw_plan,
            timing=m.timing,
            executor_samples_ms=tuple(m.executor_ms) if m.timing is not None else None,
            planning_samples_ms=None if m.planning_ms is None else tuple(m.planning_ms),
            locks=m.locks,
        )

    v = r.verdict
    return model.ShapeResult(
        **{name: getattr(r, name) for name in _KEPT},
        verdict=None
        if v is None
        else model.Verdict(expected=v.expected, actual=v.actual, problems=tuple(v.problems)),
        remediated=spelling(r.remediated),
        natural=None if r.natural is None else spelling(r.natural),
    )


def grow_document(ladder: Ladder, targets: list[Target]) -> dict[str, Any]:
    """The ``dbbench.grow/1`` result document."""
    from dbbench.measure.grow import BOUNDED_MAX_K, LOGARITHMIC_MAX_K

    doc = envelope("grow", targets)
    doc["catalog"] = str(ladder.catalog.path)
    doc["sizes"] = ladder.sizes
    doc["thresholds"] = {"bounded_max_k": BOUNDED_MAX_K, "logarithmic_max_k": LOGARITHMIC_MAX_K}
    doc["seconds"] = {k: round(v, 3) for k, v in ladder.seconds.items()}
    doc["growth"] = [g.to_json() for g in ladder.growth]
    doc["problems"] = ladder.problems
    return doc


def fill_document(results: list[FillResult]) -> dict[str, Any]:
    """``dbbench fill``'s document: each target's fill and whether the fingerprints agree."""
    from dbbench.volume.load import agree

    return {"command": "fill", "targets": [asdict(r) for r in results], "fingerprints_equal": agree(results)}


def seeded_document(doc: dict[str, Any], results: list[FillResult]) -> dict[str, Any]:
    """``dbbench seed --catalog``'s document (:func:`setup_document`) with
    the spec filled after the setup SQL: per target its tables' rows against the spec's and the
    spec's checks as cardinalities, and the fill as ``volume``."""
    r0 = results[0]
    doc["dataset"]["spec"] = {"file": r0.spec, "sha256": r0.sha256}
    by_dialect = {r.dialect: r for r in results}
    for entry in doc["targets"]:
        r = by_dialect[entry["dialect"]]
        rows = [
            {"name": f"rows in {t}", "expected": r.loaded.get(t), "actual": n, "ok": r.loaded.get(t, n) == n}
            for t, n in r.rows.items()
        ]
        checks = [{"name": c.name, "expected": c.expected, "actual": c.actual, "ok": c.ok} for c in r.checks]
        entry["cardinalities"] = rows + checks
        entry["ok"] = all(c["ok"] for c in entry["cardinalities"])
    doc["volume"] = fill_document(results) | {"command": "seed"}
    return doc
