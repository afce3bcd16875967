"""The typed explain result document (dbbench.document.model): files round-trip byte for byte. No server."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from dbbench.dialects.plan import PlanNode
from dbbench.document import baseline, build, store
from dbbench.document.model import ABSENT, Document, as_document
from dbbench.measure.expect import PlanCheck
from dbbench.measure.explain import Measurement, ShapeMeasurement
from dbbench.workflow import Run

ROOT = Path(__file__).resolve().parents[3]
# Every explain result document kept in the repository (docs/results/ holds httpbench documents).
FILES = sorted(
    p
    for p in [*ROOT.glob("docs/results/*.json"), *ROOT.glob("examples/*/*.json")]
    if json.loads(p.read_text()).get("schema", "").startswith("dbbench.explain/")
)


def written(doc: dict) -> str:
    return json.dumps(doc, indent=2, allow_nan=False, default=str) + "\n"


def test_there_are_files_to_round_trip():
    assert ROOT / "examples/shop/baseline.json" in FILES


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_result_files_round_trip_byte_for_byte(path):
    doc = store.load_document(path)
    assert written(doc.to_json()) == path.read_text()
    assert written(store.load(path)) == path.read_text()
    assert Document.from_json(doc.to_json(), path) == doc


def live_run() -> dict:
    tree = PlanNode("index_range", "Index Scan on t using ix", table="t", alias="t", index="ix", est_rows=1)
    rem = Measurement("remediated", "SELECT  *\n FROM t", [1.0, 2.0, 3.0], 1, tree.to_dict(), {"Plan": {}})
    nat = Measurement("natural", "SELECT 1", [4.0, 5.0], 2, None, None, "timed out after 1 s")
    shapes = [
        ShapeMeasurement("s", "postgresql", "1 of 3", 1, {"a": 1}, rem, nat, "spelled naturally",
                    PlanCheck(True, "t using ix", "index_range on t using ix", [])),
        ShapeMeasurement("s", "mysql", "1 of 3", 1, {"a": 1}, rem, None, None,
                    PlanCheck(False, "t using ix", "full_scan on t", ["expected index ix on t is not used"])),
    ]  # fmt: skip
    target = SimpleNamespace(dialect="postgresql", version_text="12.22", safe_url="postgresql://x:***@h/db")
    metas = {"postgresql": {"dataset": "setup:x", "seed": None, "fingerprint.t": "3:abc"}}
    return build.explain_document([target], shapes, metas, {"runs": 3})  # type: ignore[list-item]


def test_a_live_run_and_its_baseline_round_trip(tmp_path):
    live = live_run()
    doc = as_document(live)
    assert doc.to_json() == live and list(doc.to_json()) == list(live)
    assert written(doc.to_json()) == written(live)
    pg, my = doc.results
    assert pg.natural is not None and pg.natural.timeout == "timed out after 1 s" and my.natural is None
    assert pg.remediated.plan is not None and pg.remediated.plan.index == "ix"
    assert pg.remediated.samples_ms == (1.0, 2.0, 3.0) and pg.remediated.p50_ms == 2.0
    assert my.verdict is not None and my.verdict.problems == ("expected index ix on t is not used",)
    assert doc.failures == ("s [mysql]",) and doc.datasets is not None
    assert doc.datasets["postgresql"].fingerprints == {"t": "3:abc"}
    assert doc.remediation_rows()[0].speedup == 2.0
    assert doc.config is not None and doc.config.runs == 3 and doc.config.isolation is None
    assert Run.from_config(doc.config, warmups=0) == Run(runs=3, warmups=0, natural=False, command="diff")
    f = tmp_path / "b.json"
    baseline.save(f, live)
    saved = store.load_document(f)
    assert saved.results[0].remediated.raw_plan is ABSENT and saved.baseline is not None
    assert "raw_plan" not in json.loads(f.read_text())["results"][0]["remediated"]
    assert written(saved.to_json()) == f.read_text()


def test_unknown_keys_are_kept():
    live = live_run() | {"future": [1]}
    live["results"][0]["later"] = {"x": 1}
    assert as_document(live).to_json() == live
