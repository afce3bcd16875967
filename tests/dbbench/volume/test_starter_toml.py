"""``dbbench init``'s starter spec reads back as written (issue 32): every generator the starter can
choose, over every column type and branch of :mod:`dbbench.volume.starter`, comes back from the spec
reader with the same parameters, whatever the schema names hold (quotes, backslashes, newlines,
unicode, DEL); a nullable column the starter has no generator for is NULL (TOML has no null: it was a
``TypeError: cannot write None as TOML`` traceback)."""

from __future__ import annotations

import tomllib
from typing import Any

from dbbench.volume import spec, starter
from dbbench.volume.expr import Expr
from dbbench.volume.generators import GENERATORS
from dbbench.volume.schema import Column, Key, Table

ODD = 'odd "name" \\ back\nslash é 表 \x7f end'
ODD_TYPE = 'geo "type" \\ \n\x7fé'
LABELS = ("it's", 'say "hi"', "back\\slash", "new\nline", "del\x7f")


def col(name: str, type: str, nullable: bool = False, **kw: Any) -> Column:
    return Column(
        name,
        type,
        nullable,
        kw.get("length"),
        kw.get("precision"),
        kw.get("scale"),
        kw.get("generated", False),
        kw.get("auto", False),
        kw.get("enum"),
    )


def schema() -> dict[str, Table]:
    parent = Table(
        "parent",
        {
            c.name: c
            for c in (
                col("id", "integer"),
                col("code", "character varying", length=40),
                col("email", "character varying", length=100),
                col("ref", "character varying", length=5),
                col("amount", "numeric", precision=10, scale=3),
                col("seen_at", "timestamp with time zone"),
                col("addr", "inet"),
            )
        },
        [
            Key("pk", "primary", ("id",)),
            Key("u1", "unique", ("code",)),
            Key("u2", "unique", ("email",)),
            Key("u3", "unique", ("ref",)),
            Key("u4", "unique", ("amount",)),
            Key("u5", "unique", ("seen_at",)),
            Key("u6", "unique", ("addr",)),
        ],
        rows=500,
    )
    tag = Table("tag", {"id": col("id", "bigint", auto=True)}, [Key("pk", "primary", ("id",))])
    line = Table(
        "line",
        {"order_id": col("order_id", "integer"), "tag_id": col("tag_id", "bigint")},
        [
            Key("pk", "primary", ("order_id", "tag_id")),
            Key("f1", "foreign", ("order_id",), "parent", ("id",)),
            Key("f2", "foreign", ("tag_id",), "tag", ("id",)),
        ],
    )
    salary = Table(  # a foreign key and a date as one key: the date is the rank within the parent
        "salary",
        {"parent_id": col("parent_id", "integer"), "since": col("since", "date")},
        [
            Key("pk", "primary", ("parent_id", "since")),
            Key("f1", "foreign", ("parent_id",), "parent", ("id",)),
        ],
    )
    columns = [
        col("id", "bigint", auto=True),
        col("a", "integer"),
        col("b", "character varying", length=40),
        col("owner_id", "integer"),
        col("buyer_id", "integer", nullable=True),
        col("tag_id", "bigint"),
        col("position", "integer"),
        col("status", "enum", enum=LABELS),
        col("kind", "character varying", length=10),
        col("level", "integer"),
        col("qty", "integer", nullable=True),
        col("small", "smallint"),
        col("price", "numeric", precision=10, scale=2),
        col("ratio", "real", nullable=True),
        col("active", "boolean"),
        col("born", "date"),
        col("created_at", "timestamp without time zone"),
        col("uid", "uuid"),
        col("meta", "jsonb"),
        col("blob", "bytea"),
        col("title", "character varying", length=200),
        col("note", "text", nullable=True),
        col("xyz", "text"),
        col("geo", ODD_TYPE, nullable=True),  # no generator, nullable: NULL (the traceback)
        col("geo2", "user-defined"),  # no generator, NOT NULL, no default: empty text
        col(ODD, "text"),
        col("total" + ODD, "numeric", generated=True),
    ]
    item = Table(
        'item "odd" \\ \n é\x7f',
        {c.name: c for c in columns},
        [
            Key("pk", "primary", ("id",)),
            Key("f1", "foreign", ("a", "b"), "parent", ("id", "code")),
            Key("f2", "foreign", ("owner_id",), "parent", ("id",)),
            Key("u1", "unique", ("owner_id",)),
            Key("f3", "foreign", ("buyer_id",), "parent", ("id",)),
            Key("f4", "foreign", ("tag_id",), "tag", ("id",)),
            Key("u2", "unique", ("tag_id", "position")),
            Key(
                "c1", "check", (), definition="((kind)::text = ANY (ARRAY['a'::text, 'o''b \"q\" \\'::text]))"
            ),
            Key("c2", "check", (), definition="(level IN (1, 2, 3))"),
            Key("c3", "check", (), definition="((qty >= 1) AND (qty < 100))"),
        ],
    )
    return {t.name: t for t in (parent, tag, line, salary, item)}


def same(gen: str, param: str, got: Any, written: Any) -> bool:
    """Whether the reader's ``got`` is what the starter wrote (typed as the spec reader types it)."""
    want, problem = spec._typed(written, GENERATORS[gen].params[param]["type"])
    assert problem is None, (gen, param, problem)
    if isinstance(got, Expr):
        return isinstance(want, Expr) and got.text == want.text
    return bool(got == want)


def test_every_generator_the_starter_writes_reads_back_the_same(tmp_path):
    tables = schema()
    text = starter.starter(tables, source='schema "x" \\ \n\x7f é', seed=7)
    path = tmp_path / "spec.toml"
    path.write_text(text, encoding="utf-8")
    doc = tomllib.loads(text)
    sp = spec.read(path)
    assert (sp.seed, sp.locale) == (7, spec.DEFAULT_LOCALE)
    rows = starter.row_counts(tables)
    used: set[str] = set()
    for name, table in tables.items():
        assert sp.tables[name].rows.text == rows[name]
        written = doc["tables"][name]["columns"]
        read = sp.tables[name].columns
        for column in table.columns.values():
            choice = starter._column(column, table, rows)
            if choice is None:  # generated: left to the server
                assert column.name not in written and column.name not in read
                continue
            gen = choice.gen
            assert written[column.name] == gen, column.name  # the TOML holds exactly the choice
            got = read[column.name]
            used.add(got.gen)
            assert got.gen == gen["gen"]
            assert got.null == gen.get("null", 0.0)
            assert got.unique == gen.get("unique", False)
            for param, how in GENERATORS[got.gen].params.items():
                if param in gen:
                    assert same(got.gen, param, got.params[param], gen[param]), (column.name, param)
                else:
                    assert got.params[param] == how["default"], (column.name, param)
    assert used == {
        "sequence", "int", "decimal", "bool", "date", "timestamp", "uuid", "const", "sha256", "faker",
        "choice", "fk", "ip",
    }  # fmt: skip
    assert doc["tables"]["salary"]["columns"]["since"]["every"] == "500"  # the parent's rows
    item = sp.tables[next(n for n in tables if n.startswith("item"))].columns
    assert (item["geo"].gen, item["geo"].params["value"]) == ("const", None)  # NULL in every row
    assert (item["geo2"].gen, item["geo2"].params["value"]) == ("const", "")
    assert item["status"].params["values"] == list(LABELS)
    assert item["kind"].params["values"] == ["a", 'o\'b "q" \\']
    assert item[ODD].gen == "faker"


def test_the_starter_keeps_its_comments_on_one_line_each():
    text = starter.starter(schema(), source='schema "x" \\ \n\x7f é')
    lines = text.splitlines()
    assert lines[0].startswith("# dbbench data spec, written by `dbbench init` from schema")
    assert any(line.startswith("# ") and "generated by the server" in line for line in lines)
    assert any(line.startswith("geo = ") and "# type " in line and "NULL" in line for line in lines)
    assert any(line.startswith("blob = ") and line.endswith("# SHA-256 of the key") for line in lines)
    assert "\x7f" not in text  # escaped in strings, blanked in comments
    assert tomllib.loads(text)["seed"] == 1
