"""`dbbench init` and `dbbench fill` on examples/market, as a team runs them: the schema from its
setup SQL, a starter spec written from it that fills it without edits, the same rows on both
servers, the catalog's shapes checked on the volume; and bad input in one line."""

from __future__ import annotations

import json
import tomllib

import pytest

from dbbench import dialects
from tests.conftest import run_cli
from tests.db import connection, execute

pytestmark = pytest.mark.servers
NS = "dbbench_t_volume"


def test_init_writes_a_spec_that_fills_the_schema_and_the_shapes_hold(owned, market, tmp_path):
    ns = owned(NS)
    assert run_cli("seed", "--catalog", str(market), "--namespace", ns).code == 0
    init = run_cli("init", "--namespace", ns, "--catalog", str(market))
    assert init.code == 0, init.output
    doc = tomllib.loads((market / "data" / "spec.toml").read_text())
    customers = doc["tables"]["customers"]["columns"]
    assert customers["email"] == {"gen": "faker", "provider": "email", "unique": True}
    assert customers["status"] == {"gen": "choice", "values": ["active", "dormant", "banned"]}  # the enum
    assert customers["referred_by_order_id"]["gen"] == "fk"  # the cycle's nullable key
    assert doc["tables"]["reviews"]["columns"]["stars"]["values"] == [1, 2, 3, 4, 5]  # the check
    assert doc["tables"]["orders"]["rows"] == ":scale"

    out = tmp_path / "fill.json"
    fill = run_cli(
        "fill", "--catalog", str(market), "--namespace", ns, "--scale", "3000", "--output", str(out)
    )
    assert fill.code == 0, fill.output
    assert "Traceback" not in fill.output
    result = json.loads(out.read_text())
    assert all(result["fingerprints_equal"].values()) and len(result["fingerprints_equal"]) == 7
    pg, my = result["targets"]
    assert pg["rows"] == my["rows"] == dict.fromkeys(sorted(pg["rows"]), 3000)
    assert pg["fingerprints"] == my["fingerprints"]
    assert pg["faker"] == my["faker"] and pg["isolation"] == f"dbbench_{ns}"

    for dialect in ("postgresql", "mysql"):
        d = dialects.get(dialect)
        with connection(dialect) as conn:
            meta = d.read_meta(conn, ns)
            [[referred]] = execute(  # the cycle: some customers were referred by an order
                conn, f"SELECT COUNT(*) FROM {d.quote(ns)}.customers WHERE referred_by_order_id IS NOT NULL"
            )
        assert meta["state"] == "complete" and meta["volume.faker"] == pg["faker"]
        assert meta["fingerprint.orders"] == pg["fingerprints"]["orders"]
        assert 2400 < referred < 3000  # 10 % NULL

    explain = run_cli("explain", "--catalog", str(market), "--namespace", ns, "--runs", "1", "--warmups", "0")
    assert explain.code == 0, explain.output
    assert "ok: orders using ix_orders_customer_placed" in explain.stdout

    again = run_cli(
        "fill", "--catalog", str(market), "--namespace", ns, "--scale", "3000", "--only", "postgresql"
    )
    assert again.code == 0 and pg["fingerprints"]["customers"] in again.stdout + json.dumps(
        pg
    )  # same seed, same rows
    refused = run_cli("init", "--namespace", ns, "--catalog", str(market))
    assert refused.code == 2 and "exists; pass --force" in refused.stderr


def test_bad_input_is_one_line_and_exit_2(owned, market, tmp_path):
    absent = run_cli("fill", "--spec", str(tmp_path / "none.toml"), "--namespace", "dbbench_t_volume_none")
    assert absent.code == 2 and "cannot read the data spec" in absent.stderr
    spec = tmp_path / "spec.toml"
    spec.write_text('[tables.orders]\nrows = 10\n[tables.orders.columns]\nid = { gen = "sequence" }\n')
    missing = run_cli("fill", "--spec", str(spec), "--namespace", "dbbench_t_volume_none")
    assert missing.code == 2 and "does not exist: create its tables first" in missing.stderr
    ns = owned("dbbench_t_volume_bad")
    assert run_cli("seed", "--catalog", str(market), "--namespace", ns).code == 0
    spec.write_text(
        '[tables.orders]\nrows = 10\n[tables.orders.columns]\nid = { gen = "sequence" }\nnope = { gen = "int", min = 1, max = 2 }\n'
    )
    unknown = run_cli("fill", "--spec", str(spec), "--namespace", ns)
    assert (
        unknown.code == 2
        and "tables.orders.columns.nope: no column 'nope' in table 'orders'" in unknown.stderr
    )
    for run in (absent, missing, unknown):
        assert (
            "Traceback" not in run.output and len(run.stderr.strip().splitlines()) <= 2
        )  # (+ a version warning)
