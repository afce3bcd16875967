"""A newcomer's first catalog is often their schema alone: `validate`, `seed --catalog` and `init`
take a directory holding only setup SQL; measuring it asks for shapes in one line."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.conftest import run_cli
from tests.db import drop_namespaces

ROOT = Path(__file__).resolve().parents[3]
NS = "dbbench_t_schemaonly"


@pytest.fixture()
def schema_only(tmp_path: Path) -> Path:
    cat = tmp_path / "schema"
    cat.mkdir()
    for f in (ROOT / "examples" / "market").glob("setup.*.sql"):
        shutil.copy(f, cat / f.name)
    assert not list(cat.glob("*.toml"))
    return cat


def test_validate_takes_a_catalog_of_setup_sql_alone(schema_only):
    result = run_cli("validate", "--catalog", str(schema_only))
    assert result.code == 0, result.output
    assert "no query shapes yet" in result.stdout and "setup SQL PostgreSQL" in result.stdout
    assert "shape    dialect" not in result.stdout  # no empty table


def test_seed_and_init_take_it_and_explain_asks_for_shapes(local_servers, schema_only):
    try:
        seeded = run_cli("seed", "--catalog", str(schema_only), "--namespace", NS)
        assert seeded.code == 0, seeded.output
        init = run_cli("init", "--catalog", str(schema_only), "--namespace", NS)
        assert init.code == 0 and (schema_only / "data" / "spec.toml").is_file(), init.output
        explain = run_cli("explain", "--catalog", str(schema_only), "--namespace", NS)
        assert explain.code == 2 and "Traceback" not in explain.output, explain.output
        lines = explain.stderr.strip().splitlines()
        assert len(lines) == 1 and "no .toml catalog entries" in lines[0], explain.stderr
        assert "`dbbench seed --catalog` and `init` need only its setup SQL" in lines[0]
    finally:
        drop_namespaces(NS)
