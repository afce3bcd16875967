"""One JSON result schema for every command, written strictly (no NaN/Infinity, no secrets)."""

from __future__ import annotations

import json
import math
import platform
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dbbench import __version__
from dbbench.dataset import Dataset
from dbbench.errors import DbbenchError
from dbbench.plan import MAX_DEPTH, text_depth_exceeds
from dbbench.seed import SeedResult
from dbbench.targets import Target

if TYPE_CHECKING:
    from dbbench.explain import ShapeResult

SCHEMA_VERSION = 1


def envelope(kind: str, targets: list[Target]) -> dict[str, Any]:
    return {
        "schema": f"dbbench.{kind}/{SCHEMA_VERSION}",
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
            "ok": True,
        }
        for r in results
    ]
    doc["fingerprints_equal"] = agree
    return doc


# -- the result document -----------------------------------------------------------------------
def explain_document(
    targets: list[Target], results: list[ShapeResult], metas: dict, config: dict
) -> dict[str, Any]:
    """The result document of a live run (``dbbench explain`` / ``check`` / ``baseline save`` / ``diff``)."""
    doc = envelope("explain", targets)
    doc["config"] = config
    doc["datasets"] = {
        d: {
            "name": m.get("dataset"),
            "seed": m.get("seed"),
            "setup_sha256": m.get("setup_sha256"),
            "fingerprints": {k.split(".", 1)[1]: v for k, v in m.items() if k.startswith("fingerprint.")},
        }
        for d, m in metas.items()
    }
    doc["results"] = []
    for r in results:
        entry = {
            "shape": r.shape,
            "dialect": r.dialect,
            "cardinality": r.cardinality,
            "access_path": r.access_path,
            "expect_rows": r.expect_rows,
            "params": r.params,
            "ok": r.ok,
            "cascade": r.cascade,
            "natural_label": r.natural_label,
            "verdict": None
            if r.verdict is None
            else {"expected": r.verdict.expected, "actual": r.verdict.actual, "problems": r.verdict.problems},
        }
        for m in (r.remediated, r.natural):
            if m is None:
                continue
            entry[m.spelling] = {
                "sql": " ".join(m.sql.split()),
                "samples_ms": m.samples_ms,
                "p50_ms": m.p50,
                "p95_ms": m.p95,
                "rows": m.rows,
                "timeout": m.timeout,
                "plan": m.plan,
                "raw_plan": m.raw_plan,
            }
        doc["results"].append(entry)
    doc["remediation"] = remediation_rows(doc["results"])
    doc["failures"] = [f"{r['shape']} [{r['dialect']}]" for r in doc["results"] if not r["ok"]]
    return doc


def remediation_rows(entries: list[dict]) -> list[dict]:
    out = []
    for r in entries:
        nat, rem = r.get("natural"), r["remediated"]
        if not nat:
            continue
        before, after = nat["p50_ms"], rem["p50_ms"]
        speedup = (before / after) if (before and after) else None
        out.append(
            {
                "dialect": r["dialect"],
                "shape": r["shape"],
                "change": r.get("natural_label") or "natural to remediated",
                "before_p50_ms": before,
                "final_p50_ms": after,
                "natural_timeout": nat["timeout"],
                "speedup": speedup,
            }
        )
    return out


def write(path: Path | str, doc: dict[str, Any]) -> None:
    """Write ``doc`` as strict JSON (atomically: the file is the old one or the new one, never half)."""
    from verdict.files import write_atomic

    write_atomic(path, json.dumps(doc, indent=2, allow_nan=False, default=str) + "\n")


class ResultFileError(DbbenchError):
    """A result or baseline file that cannot be read (exit code 2)."""


_MAX_NUMBER_CHARS = 100  # a float needs 17 significant digits; dbbench rounds to 4 places
_MAX_JSON_DEPTH = 2 * MAX_DEPTH + 16  # a plan level is an object inside a "children" list


def load(path: Path | str, kind: str = "explain") -> dict[str, Any]:
    """Read a result document written by ``dbbench explain --output`` / ``check --output`` /
    ``baseline save`` and check the fields the renderers and ``diff`` rely on, naming the first bad
    one (``results[3].remediated.samples_ms``)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ResultFileError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ResultFileError(f"{path}: cannot read: {exc}") from None

    def no_constant(name: str):
        raise ResultFileError(f"{path}: {name} is not a number (dbbench writes JSON without NaN/Infinity)")

    def bounded_int(literal: str) -> int:
        if len(literal) > _MAX_NUMBER_CHARS:
            raise ResultFileError(
                f"{path}: a number has too many digits ({len(literal)}; "
                f"dbbench writes at most {_MAX_NUMBER_CHARS})"
            )
        return int(literal)

    def finite_float(literal: str) -> float:
        if len(literal) > _MAX_NUMBER_CHARS:
            raise ResultFileError(
                f"{path}: a number has too many digits ({len(literal)}; "
                f"dbbench writes at most {_MAX_NUMBER_CHARS})"
            )
        value = float(literal)
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
        doc = json.loads(text, parse_constant=no_constant, parse_int=bounded_int, parse_float=finite_float)
    except json.JSONDecodeError as exc:
        raise ResultFileError(
            f"{path}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})"
        ) from None
    if not isinstance(doc, dict) or not isinstance(doc.get("schema"), str):
        raise ResultFileError(f'{path}: not a dbbench result (no "schema" field)')
    name, _, version = doc["schema"].partition("/")
    if name != f"dbbench.{kind}":
        raise ResultFileError(
            f"{path}: schema {doc['schema']!r} is not a dbbench.{kind} result "
            "(write one with `dbbench explain --output` or `dbbench baseline save`)"
        )
    if not version.isdigit() or int(version) > SCHEMA_VERSION:
        raise ResultFileError(
            f"{path}: schema version {version!r} is newer than this dbbench understands ({SCHEMA_VERSION})"
        )
    entries = doc.get("results")
    if not isinstance(entries, list):
        raise ResultFileError(f"{path}: results: must be a list")

    def bad(where: str, what: str) -> ResultFileError:
        return ResultFileError(f"{path}: {where}: {what}")

    def number_or_null(value) -> bool:
        return value is None or (isinstance(value, (int, float)) and not isinstance(value, bool))

    def check_plan(root, top: str) -> None:
        stack = [(root, top, 1)]  # iterative: the depth is bounded here, not by the interpreter
        while stack:
            node, at, depth = stack.pop()
            if depth > MAX_DEPTH:
                raise bad(top, f"plan nested more than {MAX_DEPTH} levels deep")
            if not isinstance(node, dict):
                raise bad(at, "must be a plan node object")
            for key in ("kind", "label"):
                if not isinstance(node.get(key), str):
                    raise bad(f"{at}.{key}", "must be text")
            for key in ("table", "alias", "index"):
                if node.get(key) is not None and not isinstance(node[key], str):
                    raise bad(f"{at}.{key}", "must be text or null")
            for key in ("est_rows", "actual_rows", "loops", "actual_ms"):
                if not number_or_null(node.get(key)):
                    raise bad(f"{at}.{key}", "must be a number or null")
            if not isinstance(node.get("in_subquery", False), bool):
                raise bad(f"{at}.in_subquery", "must be true or false")
            children = node.get("children", [])
            if not isinstance(children, list):
                raise bad(f"{at}.children", "must be a list")
            stack.extend(
                (child, f"{at}.children[{k}]", depth + 1) for k, child in reversed(list(enumerate(children)))
            )

    for key in ("config", "datasets", "tool", "host", "baseline"):
        if doc.get(key) is not None and not isinstance(doc[key], dict):
            raise bad(key, "must be an object")
    for dialect, meta in (doc.get("datasets") or {}).items():
        if not isinstance(meta, dict):
            raise bad(f"datasets.{dialect}", "must be an object")
    servers = doc.get("servers", [])
    if not isinstance(servers, list) or not all(
        isinstance(x, dict) and isinstance(x.get("dialect"), str) for x in servers
    ):
        raise bad("servers", "must be a list of objects with a dialect")
    for x in servers:
        x.setdefault("version", None)
    if not isinstance(doc.get("generated_at", ""), str):
        raise bad("generated_at", "must be text")
    if doc.get("failures") is not None and not isinstance(doc["failures"], list):
        raise bad("failures", "must be a list")
    remediation = doc.get("remediation", [])
    if remediation is not None and not isinstance(remediation, list):
        raise bad("remediation", "must be a list")
    for k, item in enumerate(remediation or []):
        at = f"remediation[{k}]"
        if not isinstance(item, dict):
            raise bad(at, "must be an object")
        if item.get("dialect") not in ("postgresql", "mysql"):
            raise bad(f"{at}.dialect", "must be postgresql or mysql")
        for key in ("shape", "change"):
            if not isinstance(item.get(key), str):
                raise bad(f"{at}.{key}", "must be text")
        for key in ("before_p50_ms", "final_p50_ms", "speedup"):
            if not number_or_null(item.get(key)):
                raise bad(f"{at}.{key}", "must be a number or null")
        item.setdefault("natural_timeout", None)

    for i, r in enumerate(entries):
        at = f"results[{i}]"
        if not isinstance(r, dict):
            raise bad(at, "must be an object")
        for key in ("shape", "dialect"):
            if not isinstance(r.get(key), str):
                raise bad(f"{at}.{key}", "must be text")
        if r["dialect"] not in ("postgresql", "mysql"):
            raise bad(f"{at}.dialect", f"{r['dialect']!r} is not postgresql or mysql")
        if not isinstance(r.get("ok"), bool):
            raise bad(f"{at}.ok", "must be true or false")
        for spelling in ("remediated", "natural"):
            m = r.get(spelling)
            if m is None and spelling == "natural":
                continue
            if not isinstance(m, dict):
                raise bad(f"{at}.{spelling}", "must be an object")
            samples = m.get("samples_ms")
            if not isinstance(samples, list) or not all(number_or_null(v) and v is not None for v in samples):
                raise bad(f"{at}.{spelling}.samples_ms", "must be a list of numbers")
            for key in ("p50_ms", "p95_ms"):
                if not number_or_null(m.get(key)):
                    raise bad(f"{at}.{spelling}.{key}", "must be a number or null")
            if m.get("plan") is not None:
                check_plan(m["plan"], f"{at}.{spelling}.plan")
            m.setdefault("timeout", None)
        verdict = r.setdefault("verdict", None)
        if verdict is not None:
            if not isinstance(verdict, dict):
                raise bad(f"{at}.verdict", "must be an object or null")
            for key in ("expected", "actual"):
                if not isinstance(verdict.get(key), str):
                    raise bad(f"{at}.verdict.{key}", "must be text")
            if not isinstance(verdict.setdefault("problems", []), list):
                raise bad(f"{at}.verdict.problems", "must be a list")
        r.setdefault("cardinality", "")
        for key in ("cardinality", "access_path", "natural_label"):
            if r.get(key) is not None and not isinstance(r[key], str):
                raise bad(f"{at}.{key}", "must be text")
    doc.setdefault("servers", [])
    return doc
