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
    assert "- work up at Sort (new): 600 rows examined" in changed.stdout
    # check takes diff's work thresholds (issue 32): 24x rows and 250 new pages are within these; the sort is not
    given = ("--work-factor", "30", "--work-min", "1000", "--buffers-min", "1000")
    tolerant = run_cli(*CHECK, "--catalog", cat, "--baseline", str(base), *given)
    assert tolerant.code == 1, tolerant.output
    findings = tolerant.stdout.split("Regressions:")[1].split("Work by plan node")[0]
    assert "- sort added: Sort" in findings and "rows examined (24.0x)" not in findings
    assert "work up at" not in findings and "shared buffers up" not in findings
    assert "work: rows examined up > 30x and by >= 1,000 rows" in tolerant.stdout
    alone = run_cli(*CHECK, "--catalog", cat, "--work-factor", "30")
    assert alone.code == 2 and "give --baseline too" in alone.stderr, alone.output
    missing = run_cli(*CHECK, "--catalog", shop, "--baseline", str(tmp_path / "nope.json"))
    assert missing.code == 2 and "Traceback" not in missing.output
