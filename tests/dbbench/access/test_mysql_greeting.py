"""A MySQL URL that reaches a server that is not MySQL fails within the connect timeout, in one
line that says so; reads after the greeting keep the full read timeout (issue 31's sweep)."""

from __future__ import annotations

import time
from urllib.parse import urlsplit

import pytest

from dbbench.servers import local_url
from tests.conftest import run_cli


@pytest.mark.servers
def test_a_mysql_url_at_postgresqls_port_is_one_line_within_the_connect_timeout(local_servers):
    """PostgreSQL waits for the client to speak first, PyMySQL for the server's greeting: both
    waited 60 s (the read timeout), then said 'Lost connection to MySQL server during query'."""
    port = urlsplit(local_url("postgresql") or "").port
    started = time.monotonic()
    res = run_cli("info", "--only", "mysql", "--mysql-url", f"mysql+pymysql://u:pw@127.0.0.1:{port}/")
    took = time.monotonic() - started
    assert res.code == 2 and "no MySQL greeting came back" in res.stderr, res.stderr
    assert took < 40, f"{took:.0f} s"


@pytest.mark.servers
def test_mysql_reads_after_the_greeting_wait_the_full_read_timeout(local_servers):
    from dbbench.access.targets import MYSQL_READ_TIMEOUT_S, open_targets

    (target,) = open_targets({}, "mysql")
    try:
        with target.engine.connect() as conn:
            assert conn.connection.dbapi_connection._read_timeout == MYSQL_READ_TIMEOUT_S
            assert conn.exec_driver_sql("SELECT SLEEP(11)").scalar_one() == 0  # past the 10 s greeting wait
        assert target.connect_args["read_timeout"] == MYSQL_READ_TIMEOUT_S  # the loader's connections
    finally:
        target.dispose()
