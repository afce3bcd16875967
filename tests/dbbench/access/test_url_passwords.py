"""A URL whose raw password holds URL delimiters is refused with the percent-encoding to use, and
never with any piece of the password (issue 31)."""

from __future__ import annotations

import pytest

from dbbench.access.urls import parse
from dbbench.errors import DbbenchError
from tests.conftest import run_cli

# raw passwords a user pastes as they are; each piece of them must stay out of the message
PASSWORDS = ["Zq@:/%?#x9", "Zq#Wk@Vb7", "Zq@Wk:Vb7/", "Zq%?Wk@Vb7", "ZqW@k"]
HINT = "percent-encode the special characters of the user name and password"


def _url(dialect: str, password: str) -> str:
    if dialect == "postgresql":
        return f"postgresql://alice:{password}@127.0.0.1:5432/postgres"
    return f"mysql://alice:{password}@127.0.0.1:3306/"


def _pieces(password: str) -> list[str]:
    """Every run of two or more characters of the password that a message might show."""
    return [password[i:j] for i in range(len(password)) for j in range(i + 2, len(password) + 1)]


def _assert_hint_without_password(message: str, password: str) -> None:
    assert HINT in message, message
    for c, encoded in (("@", "%40"), (":", "%3A"), ("/", "%2F"), ("?", "%3F"), ("#", "%23"), ("%", "%25")):
        assert f"'{c}' {encoded}" in message, (c, message)
    shown = message.replace(HINT, "")
    leaked = [p for p in _pieces(password) if p in shown and not p.startswith("'")]
    assert not leaked, (leaked, message)
    for word in ("Zq", "Wk", "Vb7", "x9"):
        assert word not in message, (word, message)


@pytest.mark.parametrize("password", PASSWORDS)
@pytest.mark.parametrize("dialect", ["postgresql", "mysql"])
def test_parse_names_the_encoding_and_not_the_password(dialect, password):
    with pytest.raises(DbbenchError) as info:
        parse(_url(dialect, password), dialect, "--x-url")  # type: ignore[arg-type]
    _assert_hint_without_password(str(info.value), password)


@pytest.mark.parametrize("password", ["Zq@:/%?#x9", "Zq#Wk@Vb7"])
@pytest.mark.parametrize(
    "dialect, option, env",
    [("postgresql", "--pg-url", "DBBENCH_PG_URL"), ("mysql", "--mysql-url", "DBBENCH_MYSQL_URL")],
)
def test_the_cli_says_to_percent_encode_from_an_option_and_from_the_environment(
    dialect, option, env, password
):
    url = _url(dialect, password)
    by_option = run_cli("explain", "--only", dialect, option, url)
    by_env = run_cli("explain", "--only", dialect, env={env: url})
    for run, source in ((by_option, option), (by_env, env)):
        assert run.code == 2, run.output
        assert run.stderr.count("\n") == 1 and "Traceback" not in run.output, run.output
        assert run.stderr.startswith(f"dbbench: error: {source} is not a database URL"), run.stderr
        _assert_hint_without_password(run.stderr, password)
        assert password not in run.stdout


def test_an_encoded_password_with_the_same_characters_parses():
    url = parse(_url("postgresql", "Zq%40%3A%2F%25%3F%23x9"), "postgresql", "--pg-url")
    assert url.password == "Zq@:/%?#x9" and url.host == "127.0.0.1" and url.port == 5432
