"""One JSON result schema for every command, written strictly (no NaN/Infinity, no secrets)."""

from __future__ import annotations

import json
import math
import platform
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dbbench.defaults import VERSION as __version__
from dbbench.dialects.plan import MAX_DEPTH
from dbbench.document.check import schema_version
from dbbench.document.model import ResultFileError
from verdict.files import read_text_bounded, text_depth_exceeds

if TYPE_CHECKING:
    from dbbench.access.targets import Target
    from dbbench.dataset.definition import Dataset
    from dbbench.dataset.seed import SeedResult
    from dbbench.document.model import Document, ShapeResult
    from dbbench.measure.explain import Measurement, ShapeMeasurement


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
            )
            for d, m in metas.items()
        },
        results=entries,
        remediation=tuple(RemediationRow.of(list(entries))),
        failures=tuple(f"{r.shape} [{r.dialect}]" for r in entries if not r.ok),
    )
    return doc.to_json()


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
)


def _entry(r: ShapeMeasurement) -> ShapeResult:
    from dbbench.dialects.plan import PlanNode
    from dbbench.document import model as document

    def spelling(m: Measurement) -> document.Spelling:
        return document.Spelling(
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
        )

    v = r.verdict
    return document.ShapeResult(
        **{name: getattr(r, name) for name in _KEPT},
        verdict=None
        if v is None
        else document.Verdict(expected=v.expected, actual=v.actual, problems=tuple(v.problems)),
        remediated=spelling(r.remediated),
        natural=None if r.natural is None else spelling(r.natural),
    )


def dumps(doc: dict[str, Any]) -> str:
    """``doc`` as the strict JSON text dbbench writes (no NaN/Infinity; a final newline)."""
    return json.dumps(doc, indent=2, allow_nan=False, default=str) + "\n"


def write(path: Path | str, doc: dict[str, Any]) -> str:
    """Write ``doc`` as strict JSON (:func:`dumps`; :func:`verdict.files.write_output`: an ordinary
    file atomically, a device or link written through); returns the text written."""
    from verdict.files import write_output

    text = dumps(doc)
    write_output(path, text)
    return text


RESULT_LIMIT = 64 * 1024 * 1024  # a result of 1,000 shapes with their plans is a few MiB
_MAX_NUMBER_CHARS = 100  # a float needs 17 significant digits; dbbench rounds to 4 places
_MAX_JSON_DEPTH = 2 * MAX_DEPTH + 16  # a plan level is an object inside a "children" list


def load(path: Path | str, kind: str = "explain") -> dict[str, Any]:
    """:func:`load_document` as the dict dbbench writes (:meth:`Document.to_json`)."""
    return load_document(path, kind).to_json()


def load_document(path: Path | str, kind: str = "explain") -> Document:
    """Read a result document written by ``dbbench explain --output`` / ``check --output`` /
    ``baseline save`` and check the fields the renderers and ``diff`` rely on, naming the first bad
    one (``results[3].remediated.samples_ms``)."""
    from dbbench.document.model import Document

    path = Path(path)
    try:
        text = read_text_bounded(path, limit=RESULT_LIMIT, what="dbbench result")
    except FileNotFoundError:
        raise ResultFileError(f"{path}: no such file") from None
    except OSError as exc:
        raise ResultFileError(f"{path}: {exc.strerror}") from None

    def no_constant(name: str):
        raise ResultFileError(f"{path}: {name} is not a number (dbbench writes JSON without NaN/Infinity)")

    def bounded(literal: str) -> str:
        if len(literal) > _MAX_NUMBER_CHARS:
            raise ResultFileError(
                f"{path}: a number has too many digits ({len(literal)}; "
                f"dbbench writes at most {_MAX_NUMBER_CHARS})"
            )
        return literal

    def finite_float(literal: str) -> float:
        value = float(bounded(literal))
        if not math.isfinite(value):
            raise ResultFileError(
                f"{path}: {literal[:40]} is not a finite number (dbbench writes JSON without NaN/Infinity)"
            )
        return value

    # Nesting is bounded before decoding: the decoder recurses, and a plan is the deepest thing a
    # result holds (two JSON levels per plan level).
    if text_depth_exceeds(text, _MAX_JSON_DEPTH):
        raise ResultFileError(
            f"{path}: JSON nested more than {_MAX_JSON_DEPTH} levels deep "
            f"(a dbbench result holds plans of at most {MAX_DEPTH} levels)"
        )
    try:
        doc = json.loads(
            text, parse_constant=no_constant, parse_int=lambda s: int(bounded(s)), parse_float=finite_float
        )
    except json.JSONDecodeError as exc:
        raise ResultFileError(
            f"{path}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})"
        ) from None
    return Document.from_json(doc, path, kind)
