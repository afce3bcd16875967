import pytest

from dbbench import defaults
from dbbench.access import urls
from dbbench.access.targets import _parse_version
from dbbench.errors import DbbenchError, UnsupportedServer


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

    from dbbench.access.urls import redact, scrub

    url = "postgresql+psycopg://u@h:5432/db?password=S3cr3t-q&sslmode=require"
    shown = redact(url)
    assert "S3cr3t-q" not in shown and "password=***" in shown and "sslmode=require" in shown
    assert (
        scrub("connection failed: password S3cr3t-q rejected", make_url(url))
        == "connection failed: password *** rejected"
    )


def test_scrub_leaves_the_words_of_a_message_alone(local_urls):
    """A password that is a common word (``option``) is not cut out of the driver's message (issue
    19): before, ``invalid connection option "bogus_option"`` became ``invalid connection *** "bogus_***"``.
    The message is the real driver's, for a URL with an option it does not know."""
    from dbbench.access.targets import connect
    from dbbench.errors import ConnectionFailed

    local = urls.parse(local_urls["postgresql"], "postgresql", "x")
    for url in (
        local.set(password="option").update_query_dict({"bogus_option": "1"}),
        local.set(password=None).update_query_dict({"password": "option", "bogus_option": "1"}),
    ):
        with pytest.raises(ConnectionFailed) as err:
            connect(url, dialect="postgresql")
        assert 'invalid connection option "bogus_option"' in str(err.value), err.value
        assert "***" not in str(err.value)


@pytest.mark.parametrize(
    "echoed, shown",
    [
        # a libpq DSN, unquoted and quoted
        (
            "host=h port=5432 user=u password=option dbname=db",
            "host=h port=5432 user=u password=*** dbname=db",
        ),
        ("host=h password='option' dbname=db", "host=h password=*** dbname=db"),
        ("host=h PASSWORD = 'opt\\'ion' sslpassword=option", "host=h PASSWORD = *** sslpassword=***"),
        # a URL: the userinfo password (plain, percent-encoded, unencoded '@') and the query
        (
            "could not connect to postgresql://u:option@h:5432/db",
            "could not connect to postgresql://u:***@h:5432/db",
        ),
        ("bad URI mysql://u:op%74ion@h/?x=1", "bad URI mysql://u:***@h/?x=1"),
        ("bad URI postgresql://u:op@tion@h/db", "bad URI postgresql://u:***@h/db"),
        (
            "postgresql://u@h/db?sslmode=require&password=option&x=1",
            "postgresql://u@h/db?sslmode=require&password=***&x=1",
        ),
        # a driver's keyword arguments
        (
            "kw = {'host': 'h', 'password': 'option', 'port': 1}",
            "kw = {'host': 'h', 'password': '***', 'port': 1}",
        ),
        ('{"passwd": "option"}', '{"passwd": "***"}'),
        # and nothing else: the words of the message stay
        ('invalid connection option "bogus_option"', 'invalid connection option "bogus_option"'),
        (
            'password authentication failed for user "u" (option)',
            'password authentication failed for user "u" (option)',
        ),
    ],
)
def test_scrub_masks_the_password_where_a_driver_echoes_it(echoed, shown):
    from sqlalchemy.engine import make_url

    for url in (
        "postgresql+psycopg://u:option@h:5432/db",
        "postgresql+psycopg://u@h:5432/db?password=option",
    ):
        assert urls.scrub(echoed, make_url(url)) == shown


def test_scrub_masks_the_url_itself_and_a_distinctive_password_anywhere():
    from urllib.parse import quote

    url = urls.parse("postgresql://u:K7q%40zR%3A9w@h:5432/db?sslmode=require", "postgresql", "x")
    raw = url.render_as_string(hide_password=False)
    assert (
        urls.scrub(f"cannot use {raw}: no", url)
        == "cannot use postgresql+psycopg://u:***@h:5432/db?sslmode=require: no"
    )
    assert urls.scrub(f"got K7q@zR:9w and {quote('K7q@zR:9w', safe='').lower()}", url) == "got *** and ***"


@pytest.mark.parametrize(
    "given",
    [
        "postgresql+psycopg://u:S3cr%40t-9@h:5432/db",
        "postgresql+psycopg://u@h:5432/db?password=S3cr%40t-9",
        "postgresql+psycopg://u@h:5432/db?password=%53%33%63%72%40%74%2D%39",
        "postgresql+psycopg://u@h:5432/db?sslmode=require&sslpassword=S3cr%40t-9",
    ],
)
def test_every_text_of_a_parsed_url_and_its_engine_hides_the_password(given):
    """What pytest shows of the plugin's fixtures (issue 19): ``Target(url=…)``, ``Engine(…)``, the
    URL's str/repr -- with the password in the userinfo, the query, percent-encoded or not."""
    import sqlalchemy as sa

    from dbbench.access.targets import Target

    url = urls.parse(given, "postgresql", "x")
    engine = sa.create_engine(url)
    try:
        target = Target("postgresql", url, engine, (12, 22), "12.22")
        texts = [
            repr(url),
            str(url),
            url.render_as_string(),
            f"{url!r}",
            repr(engine),
            str(engine),
            repr(engine.url),
            repr(target),
            str(target),
            repr(url.set(database="x")),
            repr(url.update_query_dict({"a": "1"})),
            repr(url.difference_update_query(["sslmode"])),
        ]
    finally:
        engine.dispose()
    for text in texts:
        assert "S3cr" not in text and "%53%33" not in text and "***" in text, text
    assert "S3cr@t-9" in url.render_as_string(hide_password=False) or "S3cr%40t-9" in url.render_as_string(
        hide_password=False
    )


def test_recorded_commands_lose_every_credential():
    from httpbench.measure.client_rounds import redact

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
    from httpbench.measure.client_rounds import ClientCommand, run_sample
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
    from httpbench.config.scenarios import make
    from httpbench.errors import HttpbenchError

    with pytest.raises(HttpbenchError) as err:
        make({"path": "/f", "header": [header]}, "--scenario")
    assert "YWxpY2U6czNjcmV0" not in str(err.value) and "abc123" not in str(err.value)


@pytest.mark.parametrize(
    "path",
    ["/f?access_token=t0k3n", "/f?a=1&api_key=t0k3n", "/f?X-Amz-Signature=t0k3n", "/f?sig=t0k3n&se=2030"],
)
def test_scenario_paths_never_carry_credentials_in_their_query(path):
    from httpbench.config.scenarios import make
    from httpbench.errors import HttpbenchError

    with pytest.raises(HttpbenchError, match="the path's query carries credentials") as err:
        make({"path": path}, "--scenario")
    assert "t0k3n" not in str(err.value)
    assert make({"path": "/f?page=2&sort=name"}, "--scenario").path == "/f?page=2&sort=name"


def test_one_dialect_order_everywhere():
    from dbbench import dialects, servers
    from dbbench.access import targets

    tables = {
        "DIALECT_LABEL": defaults.DIALECT_LABEL,
        "DRIVERS": urls.DRIVERS,
        "ENV_VARS": urls.ENV_VARS,
        "URL_OPTIONS": urls.URL_OPTIONS,
        "dialects.MODULES": dialects.MODULES,
        "servers.KINDS": servers.KINDS,
        "targets.REFERENCE_LINE": targets.REFERENCE_LINE,
    }
    assert defaults.DIALECTS == ("postgresql", "mysql")
    for name, table in tables.items():
        assert tuple(table) == defaults.DIALECTS, name
    assert [servers.KINDS[d].key for d in defaults.DIALECTS] == list(defaults.DIALECTS)
