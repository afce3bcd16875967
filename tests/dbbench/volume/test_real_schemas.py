"""The volume path on every class of real schema (issue 32): `seed --catalog` of the empty schema,
`init`, then `seed --scale` with the UNEDITED starter spec loads every table, on each dialect.

Each folder of ``schemas/`` holds a small schema of one class of features real schemas have (enums,
domains, arrays, tsvector, other types; columns and tables filled by triggers; inheritance and
partitions; geometry; binary keys, BINARY(14) timestamps, blobs, YEAR, prefix indexes; cycles of
foreign keys; composite, multi-column and expression keys; a foreign key and a date as one key;
views and functions; CHECK constraints, and CHECKs the starter cannot read), in each dialect that
has them. After the fill every table holds rows, counted in the
database: a table of the spec holds the spec's row count, a table the spec leaves to a trigger
holds the rows the trigger wrote."""

from __future__ import annotations

import shutil
import tomllib
from pathlib import Path

import pytest

from dbbench import dialects
from dbbench.volume import expr
from tests.conftest import run_cli, shape_toml
from tests.db import sql

pytestmark = pytest.mark.servers
SCHEMAS = Path(__file__).resolve().parent / "schemas"
SCALE = 300
CASES = sorted(
    (folder.name, dialect)
    for folder in SCHEMAS.iterdir()
    if folder.is_dir()
    for dialect in ("postgresql", "mysql")
    if (folder / f"setup.{dialect}.sql").is_file()
)
ENTRY = shape_toml("any", "every row", sql="SELECT 1", postgresql='expect = { table = "t", index = "i" }')


def own_rows(namespace: str, dialect: str) -> dict[str, int]:
    """Rows of every base table of the namespace (its own rows: an inheritance parent's children
    and a partitioned table's partitions are counted apart)."""
    d = dialects.get(dialect)
    if dialect == "postgresql":
        listed = (
            "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            f"WHERE n.nspname = '{namespace}' AND c.relkind = 'r'"
        )
    else:
        listed = (
            "SELECT table_name FROM information_schema.tables "
            f"WHERE table_schema = '{namespace}' AND table_type = 'BASE TABLE'"
        )
    names = sorted(r[0] for r in sql(dialect, listed) if r[0] != d.META)
    only = "ONLY " if dialect == "postgresql" else ""
    counts = sql(
        dialect,
        [f"SELECT COUNT(*) FROM {only}{d.quote(namespace)}.{d.quote(n)}" for n in names],
        fetch="each",
    )
    return {n: int(c[0][0]) for n, c in zip(names, counts)}


@pytest.mark.parametrize(("schema", "dialect"), CASES, ids=[f"{s}-{d}" for s, d in CASES])
def test_the_unedited_starter_spec_loads_every_table(schema, dialect, owned, tmp_path):
    catalog = tmp_path / schema
    shutil.copytree(SCHEMAS / schema, catalog)
    (catalog / "01-any.toml").write_text(ENTRY, encoding="utf-8")
    ns = owned(f"h32vol_{schema}_{dialect[:2]}")
    common = ["--only", dialect, "--namespace", ns]
    for args in (
        ["seed", "--catalog", str(catalog), *common],
        ["init", "--catalog", str(catalog), *common],
        ["seed", "--catalog", str(catalog), *common, "--scale", str(SCALE)],
    ):
        run = run_cli(*args, timeout=600)
        assert run.code == 0 and "Traceback" not in run.output, (args[0], run.output)
    spec = tomllib.loads((catalog / "data" / "spec.toml").read_text(encoding="utf-8"))
    rows = own_rows(ns, dialect)
    assert rows, "no table in the namespace"
    expected = {name: expr.parse(t["rows"]).value(SCALE) for name, t in spec["tables"].items()}
    assert {n: rows.get(n) for n in expected} == expected
    empty = sorted(n for n, count in rows.items() if count == 0)
    assert not empty, f"tables without rows: {empty}"
    # filled again in place: the tables a trigger fills are emptied too (no duplicate key), the same rows
    run = run_cli("fill", "--catalog", str(catalog), *common, "--scale", str(SCALE), timeout=600)
    assert run.code == 0 and "Traceback" not in run.output, ("fill", run.output)
    assert own_rows(ns, dialect) == rows


def test_a_value_mysql_would_change_is_one_line_not_a_traceback(owned, tmp_path):
    """MySQL's LOAD DATA warns (and dbbench refuses the load) where a value breaks a CHECK: one
    line naming the table and the warning, exit 2 (it was a RuntimeError traceback)."""
    catalog = tmp_path / "checks"
    shutil.copytree(SCHEMAS / "checks", catalog)
    (catalog / "01-any.toml").write_text(ENTRY, encoding="utf-8")
    (catalog / "data").mkdir()
    (catalog / "data" / "spec.toml").write_text(
        '[tables.film]\nrows = 10\n[tables.film.columns]\nfilm_id = { gen = "sequence" }\n'
        'rating = { gen = "const", value = "X" }\n',
        encoding="utf-8",
    )
    ns = owned("h32vol_warned_my")
    run = run_cli("seed", "--catalog", str(catalog), "--only", "mysql", "--namespace", ns)
    assert run.code == 2 and "Traceback" not in run.output, run.output
    line = run.stderr.strip().splitlines()[-1]
    assert line.startswith("dbbench: error: MySQL: LOAD DATA into `film` warned:") and "3819" in line, line
