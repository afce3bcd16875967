"""A data spec from a pull request, as hostile as it gets (issue 31): files outside the catalog,
format strings and faker names that walk Python's objects, row counts and scales that never end,
and everything the fill would refuse, refused by ``validate`` first, in the user's units, one line
each, never quoting a file's content."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pytest

from dbbench import dialects
from dbbench.measure.grow import GrowError, parse_sizes
from dbbench.volume import catalog_spec, generators, limits, load, recipe, spec
from dbbench.volume.schema import Column, Key, Table
from dbbench.volume.spec import SpecError
from tests.conftest import run_cli, shape_toml
from tests.db import connection

SECRET = ("root:$6$h31-secret-hash-line:19000:0:99999:7:::", "daemon:*:h31-second-secret-line:0:99999")
SHAPE = shape_toml(
    "row by id",
    "1 of all rows",
    sql="SELECT v FROM t WHERE id = 3",
    postgresql='expect = { table = "t", index = "t_pkey" }',
    mysql='expect = { table = "t", index = "PRIMARY" }',
)
SETUP = "CREATE TABLE t (id int PRIMARY KEY, v varchar(200));\n"


def _catalog(tmp_path: Path, columns: str, rows: str = "10", extra: str = "", name: str = "cat") -> Path:
    """A catalog directory: one shape, setup SQL for table t (id, v), and data/spec.toml filling t."""
    cat = tmp_path / name
    (cat / "data").mkdir(parents=True)
    (cat / "01-row.toml").write_text(SHAPE)
    (cat / "setup.sql").write_text(SETUP)
    (cat / "data" / "spec.toml").write_text(
        textwrap.dedent(extra)
        + f"\n[tables.t]\nrows = {rows!r}\n[tables.t.columns]\n"
        + textwrap.dedent(columns)
    )
    return cat


def _secret(tmp_path: Path) -> Path:
    file = tmp_path / "secret.txt"
    file.write_text("\n".join(SECRET) + "\n")
    return file


def _problems(cat: Path) -> list[str]:
    """The spec's problems as ``validate`` reads them (none: an empty list)."""
    try:
        catalog_spec.of_catalog(cat)
    except SpecError as exc:
        return exc.problems
    return []


def _one_line_error(result, *, secret: bool = True) -> str:
    """The one error line of a refused command (a server version warning may precede it)."""
    assert result.code == 2, result.output
    assert "Traceback" not in result.output
    errors = [line for line in result.stderr.splitlines() if line.startswith("dbbench: error:")]
    assert len(errors) == 1 and len(result.stderr.strip().splitlines()) <= 2, result.stderr
    if secret:
        assert not any(s in result.output or s.split(":")[2] in result.output for s in SECRET)
    return errors[0]


def _absent(namespace: str) -> None:
    """Neither server holds ``namespace``: the spec was refused before anything was touched."""
    for dialect in ("postgresql", "mysql"):
        with connection(dialect) as conn:
            assert dialects.get(dialect).namespace_state(conn, namespace) == "absent", dialect


# -- 1. files outside the catalog --------------------------------------------------------------------
def _escapes(tmp_path: Path) -> dict[str, str]:
    """The ways a spec names the secret file outside its catalog: ../, an absolute path, a symlink."""
    secret = _secret(tmp_path)
    return {"dotdot": "../../secret.txt", "absolute": str(secret), "symlink": "words.txt"}


@pytest.mark.parametrize("how", ["dotdot", "absolute", "symlink"])
def test_a_file_outside_the_catalog_is_refused_without_reading_it(tmp_path, how):
    file = _escapes(tmp_path)[how]
    cat = _catalog(tmp_path, f'id = {{ gen = "sequence" }}\nv = {{ gen = "choice", file = {file!r} }}\n')
    if how == "symlink":  # a file inside the catalog that is a link to the secret
        os.symlink(tmp_path / "secret.txt", cat / "data" / "words.txt")
    problems = _problems(cat)
    assert (len(problems) == 1 and "resolves outside the catalog directory" in problems[0]) or (
        how == "absolute" and "write a path relative to the spec" in problems[0]
    ), problems
    assert not any(s in problems[0] for s in SECRET)


def test_a_file_inside_the_catalog_is_read_and_a_fifo_refused_without_blocking(tmp_path):
    cat = _catalog(tmp_path, 'id = { gen = "sequence" }\nv = { gen = "choice", file = "words.txt" }\n')
    (cat / "data" / "words.txt").write_text("alpha\n\nbeta\n")
    sp = catalog_spec.of_catalog(cat)
    assert sp is not None and sp.folder == cat
    os.unlink(cat / "data" / "words.txt")
    os.mkfifo(cat / "data" / "words.txt")  # no writer: an open that blocked would hang here
    problems = _problems(cat)
    assert len(problems) == 1 and "not a regular file (a FIFO)" in problems[0], problems


def test_validate_refuses_a_file_outside_the_catalog_in_one_line(tmp_path):
    for how, file in _escapes(tmp_path).items():
        cat = _catalog(
            tmp_path, f'id = {{ gen = "sequence" }}\nv = {{ gen = "choice", file = {file!r} }}\n', name=how
        )
        if how == "symlink":
            os.symlink(tmp_path / "secret.txt", cat / "data" / "words.txt")
        line = _one_line_error(run_cli("validate", "--catalog", str(cat)))
        assert "tables.t.columns.v: file" in line, line


def test_seed_refuses_a_file_outside_the_catalog_before_touching_a_server(owned, tmp_path):
    ns = owned("h31vol_file")
    for how, file in _escapes(tmp_path).items():
        cat = _catalog(
            tmp_path, f'id = {{ gen = "sequence" }}\nv = {{ gen = "choice", file = {file!r} }}\n', name=how
        )
        if how == "symlink":
            os.symlink(tmp_path / "secret.txt", cat / "data" / "words.txt")
        line = _one_line_error(run_cli("seed", "--catalog", str(cat), "--namespace", ns))
        assert "tables.t.columns.v: file" in line, line
        _absent(ns)  # no table was made, so no secret line is in one


def _enum_catalog(tmp_path: Path) -> Path:
    cat = tmp_path / "enum"
    (cat / "data").mkdir(parents=True)
    (cat / "01-row.toml").write_text(SHAPE)
    (cat / "setup.postgresql.sql").write_text(
        "CREATE TYPE mood AS ENUM ('calm', 'busy');\nCREATE TABLE t (id int PRIMARY KEY, v mood NOT NULL);\n"
    )
    (cat / "setup.mysql.sql").write_text(
        "CREATE TABLE t (id int PRIMARY KEY, v ENUM('calm', 'busy') NOT NULL);\n"
    )
    (cat / "data" / "moods.txt").write_text("calm\nbusy\n" + SECRET[0] + "\n")
    (cat / "data" / "spec.toml").write_text(
        '[tables.t]\nrows = 50\n[tables.t.columns]\nid = { gen = "sequence" }\n'
        'v = { gen = "choice", file = "moods.txt" }\n'
    )
    return cat


def test_a_line_of_a_file_that_is_no_enum_label_is_named_not_quoted(owned, tmp_path):
    ns = owned("h31vol_enum")
    line = _one_line_error(run_cli("seed", "--catalog", str(_enum_catalog(tmp_path)), "--namespace", ns))
    assert (
        "tables.t.columns.v: line 3 of 'moods.txt' is not one of the enum column's labels (calm, busy)"
        in line
    )


# -- 2. format strings and faker names ---------------------------------------------------------------
HOSTILE_COLUMNS = {
    "attribute walk": 'v = { gen = "sequence", format = "{0.__class__.__mro__[1].__subclasses__}" }',
    "index": 'v = { gen = "sequence", format = "{0[0]}" }',
    "named field": 'v = { gen = "sequence", format = "{x}" }',
    "conversion": 'v = { gen = "sequence", format = "{!r}" }',
    "nested spec": 'v = { gen = "sequence", format = "{:{}}" }',
    "second field": 'v = { gen = "sequence", format = "{0}{1}" }',
    "huge width": 'v = { gen = "sequence", format = "{:1000000000d}" }',
    "faker class": 'v = { gen = "faker", provider = "__class__" }',
    "faker private": 'v = { gen = "faker", provider = "_Faker__config" }',
    "faker proxy method": 'v = { gen = "faker", provider = "seed_instance" }',
    "faker parse": 'v = { gen = "faker", provider = "parse", args = { text = "x" } }',
    "faker template": 'v = { gen = "faker", provider = "pystr_format", args = { string_format = "x" } }',
    "faker template arg": 'v = { gen = "faker", provider = "bothify", args = { text = "{{__class__}}" } }',
    "faker dunder arg": 'v = { gen = "faker", provider = "pydict", args = { value_types = ["__class__"] } }',
    "faker huge arg": 'v = { gen = "faker", provider = "text", args = { max_nb_chars = 1000000000 } }',
    "faker private kwarg": 'v = { gen = "faker", provider = "name", args = { _x = 1 } }',
    "faker locale": 'v = { gen = "faker", provider = "name", locale = "../../etc" }',
}


@pytest.mark.parametrize("name", sorted(HOSTILE_COLUMNS))
def test_formats_and_faker_names_never_reach_an_attribute(tmp_path, name):
    cat = _catalog(tmp_path, 'id = { gen = "sequence" }\n' + HOSTILE_COLUMNS[name] + "\n")
    problems = _problems(cat)
    assert len(problems) == 1 and "tables.t.columns.v: " in problems[0], problems
    assert "<" not in problems[0] and "object at" not in problems[0]


def test_validate_and_seed_refuse_a_format_or_a_provider_in_one_line(owned, tmp_path):
    ns = owned("h31vol_format")
    for k, name in enumerate(("attribute walk", "faker class")):
        cat = _catalog(tmp_path, 'id = { gen = "sequence" }\n' + HOSTILE_COLUMNS[name] + "\n", name=f"c{k}")
        for args in (("validate", "--catalog", str(cat)), ("seed", "--catalog", str(cat), "--namespace", ns)):
            line = _one_line_error(run_cli(*args))
            assert (
                "tables.t.columns.v: " in line
                and "built-in method" not in line
                and "Faker object" not in line
            )
        _absent(ns)


def test_a_format_spec_and_real_providers_still_work(tmp_path):
    cat = _catalog(
        tmp_path,
        """\
        id = { gen = "sequence", format = "SKU-{:06d}" }
        v = { gen = "faker", provider = "random_int", args = { min = 1, max = 9 } }
        """,
    )
    sp = catalog_spec.of_catalog(cat)
    assert sp is not None
    schema = {
        "t": Table("t", {c: Column(c, "text", False, None, None, None, False, False) for c in ("id", "v")})
    }
    p = recipe.build(sp, schema, 10, lambda t, c: [])
    rows = p.tables[0].chunk(0, 3)
    assert rows["id"] == ["SKU-000001", "SKU-000002", "SKU-000003"]
    assert all(1 <= v <= 9 for v in rows["v"])
    assert "__class__" not in generators.faker_providers("en_US") and "name" in generators.faker_providers(
        "en_US"
    )


# -- 7. caps: rows, scale, sizes ----------------------------------------------------------------------
def test_rows_above_the_limit_are_refused_with_the_limit(tmp_path):
    cat = _catalog(tmp_path, 'id = { gen = "sequence" }\n', rows=":scale * 1e12")
    problems = _problems(cat)
    assert problems == [
        f"{cat / 'data' / 'spec.toml'}: tables.t: rows: ':scale * 1e12' is 10,000,000,000,000,000 at "
        f":scale 10,000: above the limit of {limits.MAX_ROWS:,} rows per table"
    ]
    sp = spec.read(_catalog(tmp_path, 'id = { gen = "sequence" }\n', rows=":scale", name="ok"))
    catalog_spec.checked(sp)
    recipe.check(sp, limits.MAX_SCALE)  # rows = :scale: at the limit, not above
    with pytest.raises(SpecError, match="is not between 1 and 100,000,000"):
        recipe.check(sp, limits.MAX_SCALE + 1)
    for rows in ("1e400", "1" + "+1" * 300, "-5", ":scale - 20000"):
        problems = _problems(
            _catalog(tmp_path, 'id = { gen = "sequence" }\n', rows=rows, name=f"r{len(rows)}")
        )
        assert len(problems) == 1 and "tables.t" in problems[0], (rows, problems)


def test_the_cli_refuses_what_never_ends_in_one_line(owned, tmp_path):
    ns = owned("h31vol_cap")
    huge = _catalog(tmp_path, 'id = { gen = "sequence" }\n', rows=":scale * 1e12", name="huge")
    line = _one_line_error(run_cli("validate", "--catalog", str(huge)))
    assert f"above the limit of {limits.MAX_ROWS:,} rows per table" in line
    line = _one_line_error(run_cli("seed", "--catalog", str(huge), "--namespace", ns, timeout=120))
    assert f"above the limit of {limits.MAX_ROWS:,} rows per table" in line
    plain = _catalog(tmp_path, 'id = { gen = "sequence" }\n', rows=":scale", name="plain")
    line = _one_line_error(
        run_cli("seed", "--catalog", str(plain), "--namespace", ns, "--scale", "1000000000", timeout=120)
    )
    assert "Invalid value for '--scale': 1000000000 is not in the range 1<=x<=100000000" in line
    _absent(ns)
    fill = run_cli("fill", "--catalog", str(plain), "--namespace", ns, "--scale", "1000000000")
    assert fill.code == 2 and "1<=x<=100000000" in fill.stderr and "Traceback" not in fill.output
    line = _one_line_error(
        run_cli("grow", "--catalog", str(plain), "--sizes", "1k," + "9" * 400, timeout=120)
    )
    assert "above the largest size, 100,000,000" in line


def test_grow_sizes_are_capped_and_never_overflow():
    with pytest.raises(GrowError, match="above the largest size"):
        parse_sizes("1k," + "9" * 400)
    with pytest.raises(GrowError, match="above the largest size"):
        parse_sizes("1k,1000000m")
    with pytest.raises(GrowError, match="is not a size"):
        parse_sizes("1k,1e3")
    with pytest.raises(GrowError, match="at most 12"):
        parse_sizes(",".join(str(n) for n in range(1, 40)))
    assert parse_sizes("1k,100m") == [1_000, 100_000_000]


def test_a_long_fill_says_its_estimate_first_and_its_progress(capsys):
    from dbbench.cli.volume import _lines

    update = _lines()
    update(load.TOTAL, 0, 3_000_000)
    update("orders", 0, 3_000_000)
    update("orders", 3_000_000, 3_000_000)
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("dbbench: fill: 3,000,000 rows to make and load into each server; at about")
    assert err[-1] == "dbbench: fill: orders 3,000,000 of 3,000,000 rows (3,000,000 of 3,000,000 in all)"
    quiet = _lines()
    quiet(load.TOTAL, 0, 1_000)
    quiet("orders", 1_000, 1_000)
    assert capsys.readouterr().err == ""


# -- 8. one validator: validate refuses what the fill refuses -----------------------------------------
FILL_REFUSES = {
    "negative rows": ('id = { gen = "sequence" }', "-5", "rows: -5 is below 0"),
    "division by zero": ('id = { gen = "sequence" }', ":scale / 0", "division by zero"),
    "weights too short": ('id = { gen = "choice", values = ["a", "b"], weights = [1] }', "10", "weights"),
    "weights all zero": ('id = { gen = "choice", values = ["a", "b"], weights = [0, 0] }', "10", "weights"),
    "unknown provider": ('id = { gen = "faker", provider = "no_such_thing" }', "10", "no such provider"),
    "min above max": ('id = { gen = "int", min = 9, max = 1 }', "10", "min 9 is above max 1"),
    "distinct 0": ('id = { gen = "faker", provider = "name", distinct = 0 }', "10", "distinct: 0"),
    "distinct 0 int": ('id = { gen = "int", min = 1, max = 9, distinct = 0 }', "10", "distinct: 0"),
    "zipf s 0": ('id = { gen = "int", min = 1, max = 9, dist = "zipf", s = 0 }', "10", "s 0 is not"),
    "decimal digits": ('id = { gen = "decimal", min = 1, max = 9, digits = 1000000000 }', "10", "digits"),
    "nan": ('id = { gen = "decimal", min = nan, max = 9 }', "10", "finite"),
    "probability": ('id = { gen = "bool", p = 2 }', "10", "probability"),
    "unique range too small": ('id = { gen = "int", min = 1, max = 3, unique = true }', "10", "unique"),
    "read missing column": ('id = { gen = "sha256", column = "nope" }', "10", "'nope'"),
    "distinct too large": ('id = { gen = "int", min = 1, max = 9, distinct = 100000000 }', "10", "distinct"),
    "nested value": ('id = { gen = "choice", values = [[1, 2]] }', "10", "value 1 is not text"),
}


@pytest.mark.parametrize("name", sorted(FILL_REFUSES))
def test_validate_refuses_what_the_fill_would(tmp_path, name):
    column, rows, said = FILL_REFUSES[name]
    problems = _problems(_catalog(tmp_path, column + "\n", rows=rows))
    assert len(problems) == 1 and said in problems[0], problems
    assert not problems[0].rstrip().endswith(":"), problems


def test_validate_on_the_command_line_refuses_what_the_fill_would(tmp_path):
    cat = _catalog(tmp_path, FILL_REFUSES["weights all zero"][0] + "\n")
    assert "weights" in _one_line_error(run_cli("validate", "--catalog", str(cat)))


# -- 9. the user's units, no empty message -------------------------------------------------------------
def test_errors_speak_the_users_units(tmp_path):
    cat = _catalog(tmp_path, 'id = { gen = "timestamp", min = "2026-01-01", max = "1966-01-01" }\n')
    (problem,) = _problems(cat)
    assert (
        "min 2026-01-01 00:00:00 is above max 1966-01-01 00:00:00" in problem and "126230400" not in problem
    )
    (problem,) = _problems(
        _catalog(tmp_path, 'id = { gen = "date", min = 2026-01-01, max = 2025-01-01 }\n', name="d")
    )
    assert "min 2026-01-01 is above max 2025-01-01" in problem
    (problem,) = _problems(_catalog(tmp_path, 'id = { gen = "decimal", min = 9.5, max = 1.25 }\n', name="m"))
    assert "min 9.5 is above max 1.25" in problem


def test_a_referenced_table_that_fails_is_one_problem_not_an_empty_one(tmp_path):
    cat = _catalog(
        tmp_path,
        'id = { gen = "sequence" }\nv = { gen = "fk", ref = "customers.id" }\n',
        extra='[tables.customers]\nrows = ":scale / 0"\n[tables.customers.columns]\nid = { gen = "sequence" }\n',
    )
    assert _problems(cat) == [
        f"{cat / 'data' / 'spec.toml'}: tables.customers: rows: ':scale / 0': division by zero (at :scale 10,000)"
    ]


def _cycle(nullable: bool) -> tuple[spec.Spec, dict[str, Table]]:
    def col(name: str) -> Column:
        return Column(name, "integer", nullable and name != "id", None, None, None, False, False)

    schema = {
        t: Table(t, {c: col(c) for c in ("id", ref)}, [Key("pk", "primary", ("id",))])
        for t, ref in (("a", "b_id"), ("b", "a_id"))
    }
    text = "".join(
        f'[tables.{t}]\nrows = 10\n[tables.{t}.columns]\nid = {{ gen = "int", min = 1, max = 100, unique = true, '
        f'dist = "normal" }}\n{ref} = {{ gen = "fk", ref = "{other}.id" }}\n'
        for t, ref, other in (("a", "b_id", "b"), ("b", "a_id", "a"))
    )
    return spec.parse(__import__("tomllib").loads(text), Path("spec.toml")), schema


@pytest.mark.parametrize("nullable", [True, False])
def test_a_cycle_through_keys_that_fail_names_their_problem_not_a_key_error(nullable):
    sp, schema = _cycle(nullable)
    with pytest.raises(SpecError) as exc:
        recipe.build(sp, schema, 10, lambda t, c: [])
    problems = exc.value.problems
    assert "spec.toml: tables.a.columns.id: unique values need dist = 'uniform'" in problems
    assert "spec.toml: tables.b.columns.id: unique values need dist = 'uniform'" in problems
    assert all(not p.endswith(": ") for p in problems)
    with pytest.raises(SpecError):
        recipe.check(sp, 10)


# -- issue 32: a cycle among columns -------------------------------------------------------------------
@pytest.mark.parametrize(
    "columns, said",
    [
        ('v = { gen = "sha256", column = "v" }', "columns read each other: v -> v"),
        (
            'v = { gen = "sha256", column = "w" }\nw = { gen = "copy", column = "v" }',
            "columns read each other: v -> w -> v",
        ),
    ],
)
def test_columns_that_read_each_other_are_a_spec_error(owned, tmp_path, columns, said):
    cat = _catalog(tmp_path, 'id = { gen = "sequence" }\n' + columns + "\n")
    assert _problems(cat) == [f"{cat / 'data' / 'spec.toml'}: tables.t.columns.v: {said}"]
    assert said in _one_line_error(run_cli("validate", "--catalog", str(cat)))


def test_seed_refuses_columns_that_read_each_other(owned, tmp_path):
    ns = owned("h31vol_cols")
    cat = _catalog(tmp_path, 'id = { gen = "sequence" }\nv = { gen = "sha256", column = "v" }\n')
    line = _one_line_error(run_cli("seed", "--catalog", str(cat), "--namespace", ns))
    assert "columns read each other: v -> v" in line
    _absent(ns)


# -- the spec file itself ------------------------------------------------------------------------------
def test_the_spec_file_is_read_bounded_and_nesting_refused(tmp_path):
    cat = _catalog(tmp_path, 'id = { gen = "sequence" }\n')
    file = cat / "data" / "spec.toml"
    file.write_text(file.read_text() + "# " + "x" * limits.SPEC_READ_LIMIT + "\n")
    (problem,) = _problems(cat)
    assert "cannot read the data spec (data spec holds" in problem and "at most 4 MiB is read" in problem
    file.write_text("a = " + "[" * 100_000 + "]" * 100_000 + "\n")
    (problem,) = _problems(cat)
    assert problem.endswith("not TOML: arrays or tables nested too deeply")
    os.unlink(file)
    os.mkfifo(file)
    (problem,) = _problems(cat)
    assert "not a regular file (a FIFO)" in problem


def test_a_self_reference_listed_before_its_key_is_made_and_one_to_itself_refused(tmp_path):
    text = '[tables.t]\nrows = 6\n[tables.t.columns]\nparent = { gen = "fk", ref = "t.id", dist = "sequential" }\nid = { gen = "sequence" }\n'
    sp = spec.parse(__import__("tomllib").loads(text), tmp_path / "spec.toml")
    cols = {c: Column(c, "integer", False, None, None, None, False, False) for c in ("id", "parent")}
    p = recipe.build(sp, {"t": Table("t", cols, [Key("pk", "primary", ("id",))])}, 6, lambda t, c: [])
    assert p.tables[0].chunk(0, 6) == {"id": [1, 2, 3, 4, 5, 6], "parent": [1, 2, 3, 4, 5, 6]}
    cat = _catalog(tmp_path, 'id = { gen = "sequence" }\nv = { gen = "fk", ref = "t.v", follows = "v" }\n')
    assert _problems(cat) == [
        f"{cat / 'data' / 'spec.toml'}: tables.t.columns.v: ref 't.v': a foreign key cannot reference its own column"
    ]


def test_init_writes_a_spec_that_reads_back_whatever_the_schema_names(tmp_path):
    from dbbench.volume import starter

    odd = "{0.__class__}\x7fname\nx = 1"
    table = Table(
        "t\x7f",
        {
            "id": Column("id", "integer", False, None, None, None, False, False),
            odd: Column(odd, "character varying", False, 40, None, None, False, False),
        },
        [Key("pk", "primary", ("id",)), Key("u", "unique", (odd,))],
    )
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "spec.toml").write_text(starter.starter({"t\x7f": table}, source="test"))
    sp = catalog_spec.checked(spec.read(tmp_path))
    assert sp.tables["t\x7f"].columns[odd].params["format"] == "0CL-{:08d}"


def test_a_checks_expectation_the_fill_could_not_evaluate_is_refused_before_it(tmp_path):
    extra = '[[verify]]\nname = "all"\nexpect = ":scale / (:scale - 10000)"\nsql = "SELECT COUNT(*) FROM t"\n'
    cat = _catalog(tmp_path, 'id = { gen = "sequence" }\n', extra=extra)
    assert _problems(cat) == [
        f"{cat / 'data' / 'spec.toml'}: verify[1].expect: ':scale / (:scale - 10000)': division by zero "
        "(at :scale 10,000)"
    ]
