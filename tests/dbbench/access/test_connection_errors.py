"""Bad targets give one clear line and exit code 2, never a traceback or a password."""

from __future__ import annotations

import socket

import pytest
from sqlalchemy.engine import make_url

from tests.conftest import run_cli

SECRET = "Sup3r-Secret-Pw"


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed again when the block ends


def _one_line_error(result, *fragments):
    assert result.code == 2, result.output
    assert "Traceback" not in result.output
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("dbbench: error: ")
    for f in fragments:
        assert f in lines[0]
    assert SECRET not in result.output


def _with_password(url: str, password: str) -> str:
    return make_url(url).set(password=password).render_as_string(hide_password=False)


@pytest.mark.parametrize("dialect, option", [("postgresql", "--pg-url"), ("mysql", "--mysql-url")])
def test_wrong_password(local_urls, dialect, option):
    url = _with_password(local_urls[dialect], SECRET)
    _one_line_error(
        run_cli("info", "--only", dialect, option, url), "rejected user 'dbbench'", "wrong password"
    )


@pytest.mark.parametrize(
    "dialect, option, scheme",
    [("postgresql", "--pg-url", "postgresql+psycopg"), ("mysql", "--mysql-url", "mysql+pymysql")],
)
@pytest.mark.servers
def test_closed_port(dialect, option, scheme):
    port = _closed_port()
    url = f"{scheme}://dbbench:{SECRET}@127.0.0.1:{port}/x"
    _one_line_error(
        run_cli("info", "--only", dialect, option, url),
        "cannot connect to",
        f"127.0.0.1:{port}",
        "connection refused",
    )


@pytest.mark.parametrize(
    "url, fragment",
    [
        ("definitely not a url", "--pg-url is not a database URL"),
        (f"mysql+pymysql://root:{SECRET}@127.0.0.1:3306/", "--pg-url is a 'mysql' URL"),
        (f"postgresql+asyncpg://u:{SECRET}@127.0.0.1/db", "uses driver 'asyncpg'"),
        (
            f"postgresql+psycopg://u:{SECRET}@127.0.0.1:abc/db",
            "--pg-url is not a database URL",
        ),  # port not a number
    ],
)
@pytest.mark.servers
def test_bad_url(url, fragment):
    _one_line_error(run_cli("info", "--only", "postgresql", "--pg-url", url), fragment)


def test_env_var_is_used_and_named(local_urls):
    url = _with_password(local_urls["mysql"], SECRET)
    result = run_cli("info", "--only", "mysql", env={"DBBENCH_MYSQL_URL": url})
    _one_line_error(result, "rejected user")


def test_missing_database_is_named(local_urls):
    url = make_url(local_urls["postgresql"]).set(database="no_such_db").render_as_string(hide_password=False)
    _one_line_error(run_cli("info", "--only", "postgresql", "--pg-url", url), "has no database 'no_such_db'")
