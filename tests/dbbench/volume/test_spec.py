"""Data specs without a server: reading (every problem named), expressions, the generators'
guarantees (unique, exact slices, Zipf skew), and determinism whatever the chunk size."""

from __future__ import annotations

import random
import textwrap
from collections import Counter
from pathlib import Path

import pytest

from dbbench.volume import expr, recipe, spec
from dbbench.volume.sampling import Permutation, Zipf
from dbbench.volume.schema import Column, Key, Table


def _spec(tmp_path: Path, text: str) -> spec.Spec:
    file = tmp_path / "spec.toml"
    file.write_text(textwrap.dedent(text))
    return spec.read(file)


def _col(name: str, type_: str = "integer", nullable: bool = False, length: int | None = None) -> Column:
    return Column(name, type_, nullable, length, None, None, False, False)


SCHEMA = {
    "customers": Table(
        "customers",
        {
            c.name: c
            for c in (
                _col("id"),
                _col("email", "varchar", length=40),
                _col("tier", "varchar", length=8),
                _col("referrer", nullable=True),
            )
        },
        [Key("pk", "primary", ("id",))],
    ),
    "orders": Table(
        "orders",
        {
            c.name: c
            for c in (_col("id"), _col("customer_id"), _col("state", "varchar", length=10), _col("amount"))
        },
        [Key("pk", "primary", ("id",))],
    ),
}
GOOD = """
seed = 7
[tables.customers]
rows = ":scale"
[tables.customers.columns]
id = { gen = "sequence" }
email = { gen = "faker", provider = "email", unique = true }
tier = { gen = "choice", values = ["gold", "basic"], weights = [1, 9] }
referrer = { gen = "fk", ref = "orders.id", null = 0.3 }
[tables.orders]
rows = ":scale * 3"
[tables.orders.columns]
id = { gen = "sequence", start = 100 }
customer_id = { gen = "fk", ref = "customers.id", dist = "zipf", s = 1.3 }
state = { gen = "choice", values = ["done", "shipped"] }
amount = { gen = "int", min = 1, max = 500, dist = "normal" }
[[tables.orders.slices]]
rows = 25
columns = { state = { gen = "const", value = "pending" } }
"""


def _uuid_keys(text: str) -> str:
    """The spec with both tables' keys random (a cycle no key made ahead breaks)."""
    uuid = 'id = { gen = "uuid", unique = true }'
    return text.replace('id = { gen = "sequence", start = 100 }', uuid).replace(
        'id = { gen = "sequence" }', uuid
    )


def _rows(p: recipe.Recipe, size: int) -> dict[str, list[tuple]]:
    out = {}
    for t in p.tables:
        rows: list[tuple] = []
        for vals in p.chunks(t, size):
            rows += list(zip(*(vals[c] for c in t.load)))
        out[t.name] = rows
    for d in p.deferred:
        for vals in p.deferred_chunks(d, size):
            out[f"{d.table.name}.{d.column}"] = out.get(f"{d.table.name}.{d.column}", []) + list(
                zip(*vals.values())
            )
    return out


def test_every_problem_of_a_spec_is_named_with_its_file_and_field(tmp_path):
    with pytest.raises(spec.SpecError) as info:
        _spec(
            tmp_path,
            """
            sead = 1
            [tables.orders]
            rows = ":scael * 2"
            [tables.orders.columns]
            id = { gen = "sequense" }
            state = { gen = "choice", values = ["a"], wieghts = [1] }
            amount = { gen = "int", min = 1 }
            note = { gen = "faker", provider = "text", null = 2 }
            [[verify]]
            name = "x"
            """,
        )
    text = str(info.value)
    file = str(tmp_path / "spec.toml")
    assert all(line.startswith(file) for line in info.value.problems)
    for expected in (
        "sead: unknown field",
        "tables.orders.columns.id: gen: 'sequense' is not one of",
        "tables.orders.columns.state: wieghts: unknown field",
        "tables.orders.columns.amount: max: required",
        "tables.orders.columns.note: null: 2 is not a fraction",
        "verify[1]: sql",
        "verify[1]: expect: required",
    ):
        assert expected in text, text
    with pytest.raises(spec.SpecError, match="not TOML"):
        _spec(tmp_path, "rows = [")


def test_row_counts_are_expressions_of_scale_and_nothing_else():
    assert expr.parse(":scale * 10 + 1").value(1000) == 10001
    assert expr.parse("max(:scale // 100, 5)").value(100) == 5
    assert expr.parse(":n * 2").value(1, {"n": 4}) == 8
    for bad in ("__import__('os')", ":scale ** 2", "scale.x", True):
        with pytest.raises(expr.ExprError):
            expr.parse(bad)
    with pytest.raises(expr.ExprError, match=":other"):
        expr.parse(":other").value(1)


def test_the_same_rows_whatever_the_chunk_size_and_a_cycle_made_ahead_or_filled_afterwards(tmp_path):
    sp = _spec(tmp_path, GOOD)
    make = lambda: recipe.build(sp, SCHEMA, 1000, lambda t, c: [])
    a, b = _rows(make(), 7), _rows(make(), 20_000)
    assert a == b
    p = make()
    # orders.id is a sequence: customers.referrer is made ahead of the orders and loaded with its rows
    assert [t.name for t in p.tables] == ["customers", "orders"] and p.tables[0].deferred == []
    assert p.tables[0].load == ["id", "email", "tier", "referrer"] and not p.deferred
    ahead = [c[3] for c in a["customers"] if c[3] is not None]
    # keys made by a generator of no position (uuid): the referrer is loaded NULL, filled afterwards
    random_keys = _spec(tmp_path, _uuid_keys(GOOD))
    a = _rows(recipe.build(random_keys, SCHEMA, 1000, lambda t, c: []), 7)
    assert recipe.build(random_keys, SCHEMA, 1000, lambda t, c: []).tables[0].deferred == ["referrer"]
    assert 600 < len(a["customers.referrer"]) < 800 and {r[1] for r in a["customers.referrer"]} <= {
        o[0] for o in a["orders"]
    }
    a = _rows(make(), 7)
    customers, orders = a["customers"], a["orders"]
    assert len(customers) == 1000 and len(orders) == 3000
    assert len({c[1] for c in customers}) == 1000 and all(len(c[1]) <= 40 for c in customers)  # unique emails
    assert Counter(o[2] for o in orders)["pending"] == 25  # the slice, exactly
    hot = Counter(o[1] for o in orders).most_common(1)[0]
    assert hot[0] == 1 and hot[1] > 3000 / 20  # zipf: customer 1 is the hot parent
    assert 600 < len(ahead) < 800 and all(100 <= r < 3100 for r in ahead)  # 30 % NULL, keys of orders
    assert all(1 <= o[3] <= 500 for o in orders)


def test_a_cycle_without_a_nullable_column_and_a_missing_column_are_refused(tmp_path):
    schema = {
        **SCHEMA,
        "customers": Table(
            "customers",
            {**SCHEMA["customers"].columns, "referrer": _col("referrer")},
            SCHEMA["customers"].keys,
        ),
    }
    assert recipe.build(_spec(tmp_path, GOOD), schema, 10, lambda t, c: []).tables[0].load[-1] == "referrer"
    uuids = _uuid_keys(GOOD)
    with pytest.raises(
        spec.SpecError, match="cycle among customers, orders and none of its columns is nullable"
    ):
        recipe.build(_spec(tmp_path, uuids), schema, 10, lambda t, c: [])
    with pytest.raises(spec.SpecError, match="no column 'tier' in table 'customers'"):
        recipe.build(
            _spec(tmp_path, GOOD),
            {**SCHEMA, "customers": Table("customers", {"id": _col("id")})},
            10,
            lambda t, c: [],
        )


def test_a_seed_change_changes_the_rows_and_unique_ranges_are_permutations(tmp_path):
    first = _rows(recipe.build(_spec(tmp_path, GOOD), SCHEMA, 100, lambda t, c: []), 50)
    other = _rows(
        recipe.build(_spec(tmp_path, GOOD.replace("seed = 7", "seed = 8")), SCHEMA, 100, lambda t, c: []), 50
    )
    assert first["orders"] != other["orders"]
    perm = Permutation(random.Random(1), 1000)
    assert sorted(perm.at(range(1000))) == list(range(1000))


def test_zipf_ranks_follow_the_law():
    z, rnd = Zipf(1000, 1.0), random.Random(3).random
    counts = Counter(z.draw(rnd) for _ in range(50_000))
    assert set(counts) <= set(range(1, 1001))
    assert 1.6 < counts[1] / counts[2] < 2.4 and 2.4 < counts[1] / counts[3] < 3.6  # P(k) ∝ 1/k
