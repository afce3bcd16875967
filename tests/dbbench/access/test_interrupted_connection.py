"""A Ctrl-C that lands between sending a statement and reading its result leaves the PostgreSQL
connection busy: even a rollback is refused ("another command is already in progress"). Work
that must land whole (``Target.all_or_nothing``) then raises the Ctrl-C itself, so the command
says "interrupted" and exits 130 instead of reporting the refused rollback as a server error,
and the busy connection is discarded (the server undoes its transaction)."""

from __future__ import annotations

import pytest

from tests.db import local_target, sql

pytestmark = pytest.mark.servers

TABLE = "dbbench_t_interrupted"


def test_a_ctrl_c_with_a_statement_in_flight_is_raised_as_itself_and_nothing_lands(local_servers):
    sql("postgresql", [f"DROP TABLE IF EXISTS {TABLE}", f"CREATE TABLE {TABLE} (id int)"])
    try:
        with local_target("postgresql") as target:
            with pytest.raises(KeyboardInterrupt), target.all_or_nothing() as conn:
                conn.execute(f"INSERT INTO {TABLE} VALUES (1)")
                conn.pgconn.send_query(b"SELECT pg_sleep(0.5)")  # sent; its result never read
                with pytest.raises(Exception, match="another command is already in progress"):
                    conn.execute("SELECT 1")  # what the rollback would meet
                raise KeyboardInterrupt
            # the next connection from the pool works; the insert did not land
            with target.all_or_nothing() as conn:
                assert conn.execute(f"SELECT COUNT(*) FROM {TABLE}").fetchone() == (0,)
    finally:
        sql("postgresql", f"DROP TABLE IF EXISTS {TABLE}")
