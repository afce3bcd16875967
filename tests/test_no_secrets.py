"""No credential in any output (issue 13, item 3): a known password and token are given to the real
dbbench and httpbench commands -- in URL userinfo, as ``?password=``, through the environment, as
``--auth`` -- and every stream and every file the commands write (results, JUnit, Markdown, HTML,
step summaries, and everything under a temporary ``--home``) is searched for them: plain,
percent-encoded, ``+``-encoded, HTML/XML-escaped, JSON-escaped, base64 of the secret and of
``user:secret``, and the secret's distinctive fragments (a password half-parsed out of a URL).

The commands' runs are in tests/dbbench/test_dbbench_no_secrets.py and
tests/httpbench/test_httpbench_no_secrets.py; the scanner is tests/leaks.py. Here: the scanner
itself, and the URL and option parsers that must refuse a credential without echoing it.
"""

from __future__ import annotations

import base64
import html
from urllib.parse import quote, quote_plus

import pytest

from tests.leaks import HTTP_TOKEN, PASSWORD, USER, Secret, find_leaks


def test_the_scanner_finds_every_form_and_names_where():
    secret = Secret(PASSWORD, USER, "pw")
    pair = f"{USER}:{PASSWORD}".encode()
    samples = {
        "plain": PASSWORD.encode(),
        "quoted": b"url=postgresql://u:" + quote(PASSWORD, safe="").lower().encode() + b"@h/db",
        "plus": b"?password=" + quote_plus(PASSWORD).encode(),
        "html": b"<td>" + html.escape(PASSWORD).encode() + b"</td>",
        "basic": b"Authorization: Basic " + base64.b64encode(pair),
        "b64": base64.b64encode(PASSWORD.encode()).rstrip(b"="),
        "cut": b"postgresql://u:***@x9/Tj%4F?=Vb8Ny%40127.0.0.1",
    }
    for name, blob in samples.items():
        assert find_leaks({name: b"..." + blob + b"..."}, [secret]), name
    assert find_leaks({"a": b"nothing here", "b": PASSWORD.encode()}, [Secret("zzz-other"), secret]) == [
        "b: pw as plain"
    ]
    assert (
        find_leaks(
            {"redacted": b"postgresql+psycopg://dbbench_t_secret:***@127.0.0.1:1/db?password=***"}, [secret]
        )
        == []
    )


@pytest.mark.parametrize(
    "raw",
    [
        f"postgresql://{USER}:{PASSWORD}@127.0.0.1:5432/db",  # '@' left after the "host" x9
        f"postgresql://{USER}@127.0.0.1:5432/db?password={PASSWORD}",  # ?password= swallowed as userinfo
        "postgresql://127.0.0.1:5432/db?password=ab@Vb8Ny",  # no user: the "host" is Vb8Ny
        "postgresql://u@127.0.0.1:5432/db?password=ab&=Vb8Ny",  # a parameter without a name
    ],
)
def test_a_url_whose_password_was_cut_apart_is_refused_without_echoing_it(raw):
    from dbbench.access import urls
    from dbbench.errors import DbbenchError

    with pytest.raises(DbbenchError) as caught:
        urls.parse(raw, "postgresql", "--pg-url")
    assert "percent-encode" in str(caught.value)
    assert not find_leaks(
        {"message": str(caught.value).encode()}, [Secret(PASSWORD, USER), Secret("ab@Vb8Ny")]
    )


@pytest.mark.parametrize(
    "raw",
    [
        "postgresql://u@corp:pw@127.0.0.1:5432/db",  # an unencoded '@' in the user name parses right
        "postgresql://u:ab/cd?e@127.0.0.1:5432/db",  # so do '/' and '?' in the password
        f"postgresql://u@127.0.0.1:5432/db?password={quote_plus(PASSWORD)}&sslmode=require",
    ],
)
def test_urls_that_parse_right_are_still_accepted(raw):
    from dbbench.access import urls

    assert urls.parse(raw, "postgresql", "--pg-url").host == "127.0.0.1"


def test_a_refused_scenario_option_never_echoes_a_header_value():
    from httpbench.config.scenarios import parse_option
    from httpbench.errors import HttpbenchError

    for text in (
        f"path=/f,header=X-Api-Key: {HTTP_TOKEN}",
        f"path=/f,header=Cookie: a={HTTP_TOKEN}",
        f"path=/f,header=Bearer {HTTP_TOKEN}",
        f"path=/f,header=X-Token: {HTTP_TOKEN[:8]},{HTTP_TOKEN[8:]}",
        f"path=/f,header=Accept: {HTTP_TOKEN},status=x",
    ):
        with pytest.raises(HttpbenchError) as caught:
            parse_option(text)
        assert HTTP_TOKEN[8:] not in str(caught.value) and HTTP_TOKEN[:8] not in str(caught.value), (
            caught.value
        )
    assert parse_option("path=/f,header=Accept: text/plain").headers == (("Accept", "text/plain"),)


def test_the_namespace_role_logs_in_with_its_own_password_only():
    from sqlalchemy.engine import make_url

    from dbbench.access import urls

    given = make_url(
        f"postgresql+psycopg://u@127.0.0.1:5432/db?password={quote_plus(PASSWORD)}&user=u&sslmode=require"
    )
    role = urls.as_login(given, "dbbench_ns", "fresh")
    assert (role.username, role.password, dict(role.query)) == ("dbbench_ns", "fresh", {"sslmode": "require"})
