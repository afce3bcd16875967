import pytest

from dbbench import urls
from dbbench.errors import DbbenchError, UnsupportedServer
from dbbench.targets import _parse_version


def test_bare_scheme_gets_our_driver():
    assert urls.parse("postgresql://u:p@h:1/db", "postgresql", "x").drivername == "postgresql+psycopg"
    assert urls.parse("mysql://u:p@h:1/", "mysql", "x").drivername == "mysql+pymysql"


@pytest.mark.parametrize(
    "raw, fragment",
    [
        ("not a url", "is not a database URL"),
        ("mysql+pymysql://u:p@h:1/", "is a 'mysql' URL"),
        ("postgresql+asyncpg://u:p@h:1/db", "uses driver 'asyncpg'"),
        ("postgresql://", "has no host"),
        ("postgresql://u:p@h:abc/db", "is not a database URL"),
    ],
)
def test_bad_urls_are_refused_with_the_reason(raw, fragment):
    with pytest.raises(DbbenchError, match=fragment):
        urls.parse(raw, "postgresql", "--pg-url")


def test_redact_hides_password_only():
    text = urls.redact("postgresql+psycopg://alice:s3cr%40t@db.example:5432/app")
    assert "s3cr" not in text
    assert text == "postgresql+psycopg://alice:***@db.example:5432/app"
    assert urls.redact("postgresql+psycopg://alice:s3cret@db.example:port/app") == "<unparseable URL>"


def test_version_policy():
    url = urls.parse("mysql://u@h:1/", "mysql", "x")
    assert _parse_version("8.0.46", "mysql", url)[0] == (8, 0, 46)
    assert _parse_version("9.7.4-2", "mysql", url)[1] == "9.7.4"
    with pytest.raises(UnsupportedServer, match="EXPLAIN ANALYZE needs MySQL 8.0.18"):
        _parse_version("8.0.17", "mysql", url)
    with pytest.raises(UnsupportedServer, match="MariaDB"):
        _parse_version("10.11.6-MariaDB-0+deb12u1", "mysql", url)


def test_a_password_in_the_query_is_redacted_and_scrubbed():
    from sqlalchemy.engine import make_url

    from dbbench.urls import redact, scrub

    url = "postgresql+psycopg://u@h:5432/db?password=S3cr3t-q&sslmode=require"
    shown = redact(url)
    assert "S3cr3t-q" not in shown and "password=***" in shown and "sslmode=require" in shown
    assert (
        scrub("connection failed: password S3cr3t-q rejected", make_url(url))
        == "connection failed: password *** rejected"
    )


def test_recorded_commands_lose_every_credential():
    from httpbench.clients import redact

    assert redact("curl http://user:p@ss@host/x") == "curl http://host/x"
    assert redact("curl -u alice:s3cret http://h/") == "curl -u *** http://h/"
    assert redact("curl --user=bob:pw http://h") == "curl --user=*** http://h"
    assert (
        redact("curl -H 'Authorization: Basic YWxpY2U6czNjcmV0' http://h")
        == "curl -H 'Authorization: ***' http://h"
    )
    assert (
        redact("apk --repository http://h/v3/main add x; echo a@b.c")
        == "apk --repository http://h/v3/main add x; echo a@b.c"
    )


def test_a_client_that_prints_its_credentials_does_not_get_them_recorded():
    from httpbench.clients import ClientCommand, run_sample
    from httpbench.model import Target

    target = Target.parse("t", "http://127.0.0.1:9")[0].with_credentials("alice:s3cr3t-pw")
    cmd = ClientCommand(
        "c", {"t": 'echo "auth $HTTPBENCH_AUTHORIZATION / alice:s3cr3t-pw / s3cr3t-pw" >&2; exit 3'}
    )
    sample = run_sample(cmd, target, 10)
    assert sample["ok"] is False and sample["error"].startswith("auth ***")
    for secret in ("s3cr3t-pw", "YWxpY2U6czNjcjN0LXB3"):
        assert secret not in sample["error"]


@pytest.mark.parametrize(
    "header",
    [
        "authorization\t: Basic YWxpY2U6czNjcmV0",
        "Cookie: session=abc123",
        "Proxy-Authorization: Basic eA==",
        "X-Api-Key: k3y",
        "Authorization : x",
    ],
)
def test_scenario_headers_never_carry_credentials(header):
    from httpbench.errors import HttpbenchError
    from httpbench.scenarios import make

    with pytest.raises(HttpbenchError) as err:
        make({"path": "/f", "header": [header]}, "--scenario")
    assert "YWxpY2U6czNjcmV0" not in str(err.value) and "abc123" not in str(err.value)


@pytest.mark.parametrize(
    "path",
    ["/f?access_token=t0k3n", "/f?a=1&api_key=t0k3n", "/f?X-Amz-Signature=t0k3n", "/f?sig=t0k3n&se=2030"],
)
def test_scenario_paths_never_carry_credentials_in_their_query(path):
    from httpbench.errors import HttpbenchError
    from httpbench.scenarios import make

    with pytest.raises(HttpbenchError, match="the path's query carries credentials") as err:
        make({"path": path}, "--scenario")
    assert "t0k3n" not in str(err.value)
    assert make({"path": "/f?page=2&sort=name"}, "--scenario").path == "/f?page=2&sort=name"


def test_one_dialect_order_everywhere():
    from dbbench import dialects, servers, targets

    tables = {
        "DIALECT_LABEL": urls.DIALECT_LABEL,
        "DRIVERS": urls.DRIVERS,
        "ENV_VARS": urls.ENV_VARS,
        "URL_OPTIONS": urls.URL_OPTIONS,
        "dialects.MODULES": dialects.MODULES,
        "servers.KINDS": servers.KINDS,
        "targets.REFERENCE_LINE": targets.REFERENCE_LINE,
    }
    assert urls.DIALECTS == ("postgresql", "mysql")
    for name, table in tables.items():
        assert tuple(table) == urls.DIALECTS, name
    assert [servers.KINDS[d].key for d in urls.DIALECTS] == list(urls.DIALECTS)
