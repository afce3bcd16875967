"""`dbbench check --baseline`: the CI gate compares its run with a baseline of a check run on the
evidence `dbbench diff` decides on (plan shape and work), never on one sample's time."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.conftest import run_cli

pytestmark = pytest.mark.servers

ROOT = Path(__file__).resolve().parents[3]
NS = "dbbench_t_checkwork"
CHECK = ("check", "--only", "postgresql", "--namespace", NS)


def _shop_reading_every_open_order(tmp_path: Path) -> Path:
    """The shop catalog (same name, so the same dataset), its open-orders queue taking every open
    order instead of the 50 oldest, and its expectations relaxed to match (sorting allowed, no row
    count): its own assertion holds; only the baseline can tell that it now does 24x the work."""
    cat = shutil.copytree(ROOT / "examples" / "shop", tmp_path / "changed" / "shop")
    entry = cat / "03-open-orders-queue.toml"
    text = entry.read_text()
    assert "LIMIT 50" in text and "expect_rows = 50\n" in text and 'forbid = ["full_scan", "sort"]' in text
    text = text.replace("LIMIT 50", "LIMIT 5000").replace("expect_rows = 50\n", "")
    entry.write_text(text.replace('forbid = ["full_scan", "sort"]', 'forbid = ["full_scan"]'))
    return cat


def test_check_against_a_baseline_passes_unchanged_and_fails_on_work(local_servers, tmp_path):
    shop = str(ROOT / "examples" / "shop")
    first, base = tmp_path / "check.json", tmp_path / "baseline.json"
    run = run_cli(*CHECK, "--catalog", shop, "--output", str(first))
    assert run.code == 0, run.output
    assert run_cli("baseline", "save", str(base), "--from", str(first)).code == 0
    same = run_cli(*CHECK, "--catalog", shop, "--baseline", str(base))
    assert same.code == 0, same.output
    assert "dbbench diff: pass: no regressions" in same.stdout
    cat = str(_shop_reading_every_open_order(tmp_path))
    assert run_cli(*CHECK, "--catalog", cat).code == 0  # its own assertions hold
    changed = run_cli(*CHECK, "--catalog", cat, "--baseline", str(base))
    assert changed.code == 1, changed.output
    assert "1 regression: open orders queue (PostgreSQL)" in changed.stdout
    assert "- sort added: Sort" in changed.stdout
    assert "in total 100 → 2,400 rows examined (24.0x)" in changed.stdout
    missing = run_cli(*CHECK, "--catalog", shop, "--baseline", str(tmp_path / "nope.json"))
    assert missing.code == 2 and "Traceback" not in missing.output
