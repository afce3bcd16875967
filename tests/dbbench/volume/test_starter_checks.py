"""How ``dbbench init`` reads CHECK constraints as each server spells them (issue 32): MySQL's
check_clause escapes its quotes and backslashes once more than its literals do and writes ``-(50)``;
PostgreSQL casts (``('-50'::integer)::numeric``, ``(code)::text``) and writes ``IN`` as ``= ANY``.
The texts below are the servers' own (read from information_schema / pg_get_constraintdef)."""

from __future__ import annotations

from dbbench.volume import starter
from dbbench.volume.schema import Column, Key, Table


def table(*checks: str) -> Table:
    cols = ("x", "code", "temperature", "start_date", "end_date", "region", "discount")
    return Table(
        "t",
        {c: Column(c, "text", False, None, None, None, False, False) for c in cols},
        [Key(f"c{i}", "check", (), definition=text) for i, text in enumerate(checks)],
    )


def test_mysql_literals_are_unescaped_once_and_read_as_mysql_reads_them():
    t = table("CHECK (`x` in (_utf8mb4\\'o\\\\\\'b \"q\" \\\\\\\\\\',_utf8mb4\\'a\\'))")
    assert starter._values_of_check("x", t) == ['o\'b "q" \\', "a"]


def test_postgresql_literals_keep_their_backslashes():
    t = table(
        "CHECK (((x)::text = ANY ((ARRAY['o''b \"q\" \\'::character varying, 'a'::character varying])::text[])))"
    )
    assert starter._values_of_check("x", t) == ['o\'b "q" \\', "a"]


def test_bounds_in_both_spellings_and_strict_bounds_by_the_types_step():
    mysql = table(
        "CHECK ((`temperature` >= -(50)) and (`temperature` <= 60))",
        "CHECK ((`discount` >= 0) and (`discount` < 1))",
    )
    pg = table(
        "CHECK (((temperature >= ('-50'::integer)::numeric) AND (temperature <= (60)::numeric)))",
        "CHECK (((discount >= (0)::numeric) AND (discount < (1)::numeric)))",
    )
    for t in (mysql, pg):
        assert starter._bounds_of_check("temperature", t) == (-50, 60)
        assert starter._bounds_of_check("discount", t, 0.01) == (0, 0.99)


def test_a_value_one_column_must_equal_and_not_a_function_of_it():
    t = table(
        "CHECK (((region IS NOT NULL) AND (region = 'south'::text)))",  # a list partition of one value
        "CHECK ((char_length((code)::text) = 3))",
        "CHECK (char_length(`x`) = 3)",
    )
    assert starter._values_of_check("region", t) == ["south"]
    assert starter._values_of_check("code", t) is None and starter._values_of_check("x", t) is None
    assert starter._length_of_check("code", t) == (3, True)
    assert starter._length_of_check("x", t) == (3, True)


def test_two_columns_compared_and_dates_bounded():
    t = table("CHECK ((end_date >= start_date))", "CHECK (`start_date` >= _utf8mb4\\'2020-01-01\\')")
    assert starter._compared_with("end_date", t) == "start_date"
    assert starter._compared_with("start_date", t) is None
    lo, hi, _ = starter._moments_of_check("start_date", t)
    assert (lo.isoformat(), hi) == ("2020-01-01T00:00:00", None)
