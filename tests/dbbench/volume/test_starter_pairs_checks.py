"""Two failures of the real-schema corpus (issue 32), without a server.

1. A key of a foreign key and a column of few values (the employees sample's salaries, PRIMARY KEY
   (emp_no, from_date)): the starter made ``from_date`` unique over the whole table, a date range
   of 1,462 days for 10,000 rows, and the spec was refused. Now the foreign key walks its parents
   in turn and the date is the row's rank within its parent (``dist = "sequential"``, ``every`` =
   the parent's rows): the pairs are unique at any scale. A date key alone is capped at its days,
   a short text key (dept_no CHAR(4)) at the numbers its length holds; a unique inet is addresses.
2. A CHECK the starter cannot read (zync's que_jobs: ``jsonb_typeof(args) = 'array'``, a CASE over
   ``args -> 0``): the columns it names get their default, else NULL; a JSON column whose check
   asks for an array gets ``[]``."""

from __future__ import annotations

import ipaddress
import textwrap
import tomllib
from pathlib import Path
from typing import Any

import pytest

from dbbench.volume import recipe, spec, starter
from dbbench.volume.generators import GeneratorError
from dbbench.volume.schema import Column, Key, Table


def col(name: str, type_: str, nullable: bool = False, default: str | None = None, **kw: Any) -> Column:
    return Column(
        name, type_, nullable, kw.get("length"), None, None, False, kw.get("auto", False), default=default
    )


def employees() -> dict[str, Table]:
    emp = Table(
        "employees",
        {"emp_no": col("emp_no", "integer"), "last_name": col("last_name", "varchar", length=16)},
        [Key("pk", "primary", ("emp_no",))],
    )
    salaries = Table(
        "salaries",
        {
            c.name: c
            for c in (
                col("emp_no", "integer"),
                col("salary", "integer"),
                col("from_date", "date"),
                col("to_date", "date"),
            )
        },
        [
            Key("pk", "primary", ("emp_no", "from_date")),
            Key("fk", "foreign", ("emp_no",), "employees", ("emp_no",)),
        ],
    )
    lines = Table(
        "order_line",
        {"emp_no": col("emp_no", "integer"), "line_no": col("line_no", "smallint")},
        [
            Key("pk", "primary", ("emp_no", "line_no")),
            Key("fk", "foreign", ("emp_no",), "employees", ("emp_no",)),
            Key("c", "check", (), definition="CHECK (((line_no >= 1) AND (line_no <= 99)))"),
        ],
    )
    daily = Table(
        "daily",
        {"day": col("day", "date"), "total": col("total", "integer")},
        [Key("pk", "primary", ("day",))],
    )
    departments = Table(
        "departments",
        {"dept_no": col("dept_no", "character", length=4), "name": col("name", "text")},
        [Key("pk", "primary", ("dept_no",))],
    )
    return {t.name: t for t in (emp, salaries, lines, daily, departments)}


def spec_of(tables: dict[str, Table], tmp_path: Path) -> tuple[dict[str, Any], spec.Spec]:
    text = starter.starter(tables, source="test")
    file = tmp_path / "spec.toml"
    file.write_text(text, encoding="utf-8")
    return tomllib.loads(text), spec.read(file)


def test_a_key_of_a_foreign_key_and_a_date_is_unique_as_pairs_at_any_scale(tmp_path):
    doc, read = spec_of(employees(), tmp_path)
    salaries = doc["tables"]["salaries"]["columns"]
    assert salaries["emp_no"] == {"gen": "fk", "ref": "employees.emp_no", "dist": "sequential"}
    assert salaries["from_date"]["dist"] == "sequential" and salaries["from_date"]["every"] == ":scale"
    assert "unique" not in salaries["from_date"]
    lines = doc["tables"]["order_line"]["columns"]
    assert lines["line_no"] == {"gen": "int", "min": 1, "max": 99, "dist": "sequential", "every": ":scale"}
    # the rows: made at a scale above the date range's 1,462 days, every pair once
    p = recipe.build(read, employees(), 20_000, lambda t, c: [])
    for name in ("salaries", "order_line"):
        t = next(t for t in p.tables if t.name == name)
        key = ("emp_no", "from_date" if name == "salaries" else "line_no")
        pairs = [pair for vals in p.chunks(t, 7_000) for pair in zip(*(vals[c] for c in key))]
        assert len(pairs) == 20_000 and len(set(pairs)) == 20_000, name


def test_a_date_key_alone_holds_as_many_rows_as_days_and_a_char_4_key_as_many_as_its_numbers():
    rows = starter.row_counts(employees())
    assert rows["daily"] == "min(:scale, 1462)"
    assert rows["departments"] == "min(:scale, 9999)"  # employees' dept_no CHAR(4): 1 to 9999
    assert rows["salaries"] == ":scale"


def test_a_sequential_range_repeats_each_value_every_rows_and_is_unique_only_so(tmp_path):
    text = """
        [tables.t]
        rows = 10
        [tables.t.columns]
        d = { gen = "date", min = "2024-01-01", max = "2024-01-03", dist = "sequential", every = 4 }
        n = { gen = "int", min = 5, max = 9, dist = "sequential" }
        """
    schema = {"t": Table("t", {"d": col("d", "date"), "n": col("n", "integer")})}
    file = tmp_path / "spec.toml"
    file.write_text(textwrap.dedent(text))
    (t,) = recipe.build(spec.read(file), schema, 1, lambda t, c: []).tables
    (vals,) = recipe.build(spec.read(file), schema, 1, lambda t, c: []).chunks(t, 100)
    assert [d.day for d in vals["d"]] == [1, 1, 1, 1, 2, 2, 2, 2, 3, 3]
    assert vals["n"] == [5, 6, 7, 8, 9, 5, 6, 7, 8, 9]
    for bad, message in (
        ('n = { gen = "int", min = 5, max = 9, dist = "uniform", every = 2 }', "every: only with"),
        ('n = { gen = "int", min = 5, max = 9, dist = "sequential", unique = true }', "repeats values"),
    ):
        file.write_text(
            textwrap.dedent(text).replace('n = { gen = "int", min = 5, max = 9, dist = "sequential" }', bad)
        )
        with pytest.raises((GeneratorError, spec.SpecError), match=message):
            recipe.build(spec.read(file), schema, 1, lambda t, c: [])


QUE = (
    "CHECK ((jsonb_typeof(args) = 'array'::text))",
    "CHECK (((jsonb_typeof(data) = 'object'::text) AND ((NOT (data ? 'tags'::text)) OR "
    "((jsonb_typeof((data -> 'tags'::text)) = 'array'::text) AND public.que_validate_tags((data -> 'tags'::text))))))",
    "CHECK ((char_length(\nCASE job_class\n    WHEN 'Wrapper'::text THEN ((args -> 0) ->> 'job_class'::text)\n"
    "    ELSE job_class\nEND) <= 200))",
    "CHECK ((char_length(queue) <= 100))",
    "CHECK ((jsonb_typeof(kwargs) = 'array'::text))",
    "CHECK (((note)::text ~ '^[A-Z]{3}$'::text))",
    "CHECK (((release_year >= 1901) AND (release_year <= 2155)))",
    "CHECK (((level % 5) = 0))",
    "CHECK (((ended_at IS NULL) OR (ended_at > '2020-01-01'::date)))",
    "CHECK ((`score` between 1 and 5))",
    "CHECK (((lower(code))::text = 'abc'::text))",
)


def que() -> Table:
    cols = [
        col("id", "bigint", auto=True),
        col("job_class", "text"),
        col("queue", "text", default="'default'::text"),
        col("args", "jsonb", default="'[]'::jsonb"),
        col("data", "jsonb", default="'{}'::jsonb"),
        col("kwargs", "jsonb"),
        col("note", "text", nullable=True),
        col("release_year", "integer", nullable=True),
        col("level", "integer", default="5"),
        col("ended_at", "date", nullable=True),
        col("score", "integer"),
        col("code", "text"),
    ]
    keys = [Key("pk", "primary", ("id",))] + [
        Key(f"c{i}", "check", (), definition=d) for i, d in enumerate(QUE)
    ]
    return Table("que_jobs", {c.name: c for c in cols}, keys)


def test_the_columns_a_check_it_cannot_read_names_and_only_those():
    unread = starter._unread(que())
    assert {c: [name for name, _ in checks] for c, checks in unread.items()} == {
        "data": ["c1"],
        "job_class": ["c2"],
        "args": ["c2"],
        "note": ["c5"],
        "level": ["c7"],
        "ended_at": ["c8"],
        "code": ["c10"],
    }
    assert unread["ended_at"] == [("c8", True)] and unread["note"] == [("c5", False)]


def test_they_get_their_default_else_null_else_their_values_and_json_what_its_check_asks(tmp_path):
    doc, _ = spec_of({"que_jobs": que()}, tmp_path)
    columns = doc["tables"]["que_jobs"]["columns"]
    for left in ("args", "data", "level"):  # left to their defaults
        assert left not in columns, left
    assert columns["queue"] == {"gen": "faker", "provider": "word"}  # its check is read: a length
    assert columns["note"] == {"gen": "const"}  # NULL: the check is NULL and passes
    assert columns["kwargs"] == {"gen": "const", "value": "[]"}
    assert columns["job_class"]["gen"] == "faker"  # NOT NULL, no default: its values, with a comment
    assert "null" not in columns["ended_at"]  # the check reads NULL: no NULLs made
    assert columns["release_year"] == {"gen": "int", "min": 1901, "max": 2155, "null": 0.1}
    assert columns["score"] == {"gen": "int", "min": 1, "max": 5}
    text = starter.starter({"que_jobs": que()}, source="test")
    assert "# args: check c2 the starter cannot read: left to its default '[]'::jsonb" in text
    assert "check c5 the starter cannot read: NULL" in text


def test_a_unique_inet_gets_addresses_each_once(tmp_path):
    """danbooru's ip_geolocations.ip_addr (a unique inet): faker's ipv4 pool of 1,000 repeated."""
    table = Table("ips", {"ip_addr": col("ip_addr", "inet")}, [Key("u", "unique", ("ip_addr",))])
    doc, read = spec_of({"ips": table}, tmp_path)
    assert doc["tables"]["ips"]["columns"]["ip_addr"] == {"gen": "ip", "unique": True}
    p = recipe.build(read, {"ips": table}, 20_000, lambda t, c: [])
    (t,) = p.tables
    values = [v for vals in p.chunks(t, 6_000) for v in vals["ip_addr"]]
    assert len(values) == len(set(values)) == 20_000
    assert all(ipaddress.ip_address(v).version == 4 for v in values)
