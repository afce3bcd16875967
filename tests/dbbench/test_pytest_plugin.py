"""dbbench's pytest plugin, used the way a team's own test suite uses it: a separate pytest run on
the example's DAO tests (examples/shop/pytest.ini enables the plugin), on both real servers."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

from tests.conftest import run_program

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "shop"
NS = "dbbench_t_plugin"


def run_example(*args: str):
    """pytest on the example's DAO tests, in this module's namespace."""
    return run_program(
        "pytest", str(EXAMPLE), "-q", "-p", "no:cacheprovider", "--dbbench-namespace", NS, *args
    )


def test_the_example_dao_tests_pass_on_both_dialects(local_servers):
    result = run_example("--dbbench-rebuild", "-rA")
    assert result.code == 0, result.output
    assert "8 passed" in result.stdout
    for dialect in ("postgresql", "mysql"):
        assert f"test_recent_orders_walk_the_customer_index[{dialect}]" in result.stdout
        assert f"test_a_new_order_is_found_through_the_index[{dialect}]" in result.stdout


def test_a_failing_plan_assertion_shows_the_plan_at_the_tests_line(local_servers, tmp_path):
    (tmp_path / "pytest.ini").write_text(
        textwrap.dedent(f"""\
        [pytest]
        addopts = -p dbbench.pytest_plugin
        dbbench_catalog = {EXAMPLE}
        dbbench_namespace = {NS}
        """)
    )
    (tmp_path / "test_dao.py").write_text(
        textwrap.dedent("""\
        import pytest

        RECENT = "SELECT id FROM orders WHERE customer_id = :c ORDER BY placed_at DESC LIMIT 10"

        def test_wrong_index(dbbench_conn, assert_plan):
            assert_plan(dbbench_conn, RECENT, {"c": 42}, uses_index="ix_orders_status_placed",
                        forbid=["seq_scan", "filesort"])

        @pytest.mark.dbbench_dialects("mysql")
        def test_mysql_only(dbbench_dialect, dbbench_target):
            assert dbbench_dialect == "mysql" and dbbench_target.dialect == "mysql"
        """)
    )
    result = run_program("pytest", str(tmp_path), "-q", "-p", "no:cacheprovider")
    assert result.code == 1, result.output
    assert "2 failed, 1 passed" in result.stdout
    out = result.stdout
    assert (
        "PostgreSQL: expected orders using ix_orders_status_placed; actual: index_range on orders using "
        "ix_orders_customer_placed"
    ) in out
    assert (
        "MySQL: expected orders using ix_orders_status_placed; actual: index_lookup on orders using "
        "ix_orders_customer_placed" in out
    )
    assert "expected index ix_orders_status_placed on orders is not used" in out
    assert "params: {'c': 42}" in out and "plan:" in out
    assert re.search(
        r"-> Index Scan Backward on orders using ix_orders_customer_placed \(rows=10 loops=1\)", out
    )
    assert "test_dao.py:6: PlanAssertionError" in out  # reported at the test's own line
    assert "dbbench/measure/assertions.py" not in out


def test_only_one_dialect(local_servers, tmp_path):
    result = run_example("--dbbench-only", "postgresql", "-k", "sign_in")
    assert result.code == 0, result.output
    assert "1 passed" in result.stdout
