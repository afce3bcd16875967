"""docs/volume.md's five commands, run as written (on a copy of examples/market, in a namespace of
this module's own); and the catalog's data spec where the other commands build a namespace:
``validate`` reads it, ``check`` fills it small, ``grow`` at every size, and ``explain`` warns
once the spec changed since the namespace was filled."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from dbbench import dialects
from tests.conftest import run_cli
from tests.db import sql

pytestmark = pytest.mark.servers
ROOT = Path(__file__).resolve().parents[3]
NS = "dbbench_t_vdocs"


def five_commands() -> list[list[str]]:
    """The console block of the page's section on the five commands: each ``$ dbbench …`` line."""
    text = (ROOT / "docs" / "volume.md").read_text(encoding="utf-8")
    section = text.split("## From your schema to a seeded, checked catalog in five commands", 1)[1]
    block = section.split("```console", 1)[1].split("```", 1)[0]
    return [shlex.split(line[2:]) for line in block.splitlines() if line.startswith("$ dbbench ")]


def _rows(namespace: str, table: str, only: str | None = None) -> dict[str, int]:
    out = {}
    for dialect in [only] if only else ["postgresql", "mysql"]:
        q = dialects.get(dialect).quote
        [[out[dialect]]] = sql(dialect, f"SELECT COUNT(*) FROM {q(namespace)}.{q(table)}")
    return out


def test_the_five_commands_run_as_written(owned, market):
    commands = five_commands()
    assert [c[1] for c in commands] == ["servers", "seed", "init", "seed", "explain"]
    ns = owned(NS)
    for command in commands:
        args = [str(market) if a == "examples/market" else ns if a == "market" else a for a in command[1:]]
        run = run_cli(*args, timeout=900)
        assert run.code == 0 and "Traceback" not in run.output, (command, run.output)
        if args[0] == "seed" and "--scale" in args:  # the schema, then the spec at 100,000
            assert "data spec filled" in run.stdout and not re.search(r"\sdifferent$", run.stdout, re.M)
            assert re.search(r"orders\s+100,000\s+100,000\s+equal", run.stdout), run.stdout
    assert "ok: orders using ix_orders_customer_placed" in run.stdout
    assert "not filled" not in run.stderr and "differs from the spec" not in run.stderr
    spec = market / "data" / "spec.toml"
    spec.write_text(spec.read_text().replace("seed = 1", "seed = 2"))
    stale = run_cli("explain", "--catalog", str(market), "--namespace", ns, "--runs", "1", "--warmups", "0")
    assert f"{spec} differs from the spec the namespace was filled from" in stale.stderr, stale.stderr


def test_validate_check_and_grow_use_the_catalog_spec(owned, market, tmp_path):
    ns = owned("dbbench_t_vdocs_s")
    assert run_cli("seed", "--catalog", str(market), "--namespace", ns, "--only", "postgresql").code == 0
    assert run_cli("init", "--namespace", ns, "--catalog", str(market), "--only", "postgresql").code == 0
    valid = run_cli("validate", "--catalog", str(market))
    assert valid.code == 0 and f"data spec {market / 'data' / 'spec.toml'}: valid" in valid.stdout

    check_ns = owned("dbbench_t_vdocs_check")
    check = run_cli("check", "--catalog", str(market), "--namespace", check_ns, "--only", "postgresql")
    assert check.code == 0, check.output
    assert _rows(check_ns, "orders", "postgresql") == {"postgresql": 1000}  # small: check_scale

    grow_ns = "dbbench_t_vdocs_grow"
    sizes = [owned(f"{grow_ns}_500"), owned(f"{grow_ns}_2k")]
    grow = run_cli(
        "grow", "--catalog", str(market), "--sizes", "500,2k", "--namespace", grow_ns,
        "--only", "postgresql", "--runs", "1", "--warmups", "0",
    )  # fmt: skip
    assert grow.code == 0, grow.output
    assert [_rows(n, "reviews", "postgresql")["postgresql"] for n in sizes] == [500, 2000]

    spec = market / "data" / "spec.toml"
    spec.write_text("nope = 1\n" + spec.read_text())
    bad = run_cli("validate", "--catalog", str(market))
    assert bad.code == 2 and "nope: unknown field" in bad.stderr and "Traceback" not in bad.output
    refused = run_cli("seed", "--catalog", str(market), "--namespace", ns, "--only", "postgresql")
    assert refused.code == 2 and "nope: unknown field" in refused.stderr
