"""Database URLs: parsing, dialect detection and redaction.

dbbench speaks SQLAlchemy URLs (``postgresql+psycopg://…``, ``mysql+pymysql://…``). Anything shown
to a user goes through :func:`redact` first, so passwords never reach output, logs or result files.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from urllib.parse import quote, quote_plus

from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError

from dbbench.defaults import Dialect
from dbbench.errors import DbbenchError

# The one driver per dialect that dbbench is written and tested against.
DRIVERS = {"postgresql": "psycopg", "mysql": "pymysql"}
ENV_VARS = {"postgresql": "DBBENCH_PG_URL", "mysql": "DBBENCH_MYSQL_URL"}
URL_OPTIONS = {"postgresql": "--pg-url", "mysql": "--mysql-url"}


def parse(raw: str, dialect: Dialect, source: str) -> URL:
    """Parse ``raw`` as a URL for ``dialect``; ``source`` names where it came from (for errors).

    A bare ``postgresql://`` or ``mysql://`` gets dbbench's driver; another driver is refused,
    because plans, timeouts and error handling are only verified with ours.
    """
    try:
        url = make_url(raw.strip())
    except (ArgumentError, ValueError):  # ValueError: a port that is not a number
        if _USERINFO.match(raw.strip()):  # a user and password were given: their characters broke it
            raise DbbenchError(_encode_hint(source)) from None
        raise DbbenchError(f"{source} is not a database URL (expected {example(dialect)})") from None
    if _misparsed(raw.strip(), url):
        # never echo any part: the "host" parsed here is a piece of the password
        raise DbbenchError(_encode_hint(source))
    backend, _, driver = url.drivername.partition("+")
    if backend == "postgres":
        backend = "postgresql"
    if backend != dialect:
        raise DbbenchError(f"{source} is a {backend!r} URL, expected {example(dialect)}")
    if driver and driver != DRIVERS[dialect]:
        raise DbbenchError(f"{source} uses driver {driver!r}; dbbench supports {dialect}+{DRIVERS[dialect]}")
    if not url.host and not url.query.get("host") and not url.query.get("unix_socket"):
        raise DbbenchError(f"{source} has no host (expected {example(dialect)})")
    return RedactedURL(*url.set(drivername=f"{dialect}+{DRIVERS[dialect]}"))


# a scheme, then a userinfo ending in '@' (the password may hold '/', '?', '#' unencoded)
_USERINFO = re.compile(r"[\w+]+://[^@]*@")


def _encode_hint(source: str) -> str:
    """The refusal of a URL whose user name or password broke its parsing: the encoded forms of
    the characters that do, never a piece of the URL (any piece may be a piece of the password)."""
    return (
        f"{source} is not a database URL as written: percent-encode the special characters of "
        "the user name and password ('@' %40, ':' %3A, '/' %2F, '?' %3F, '#' %23, '&' %26, '=' %3D, "
        "'%' %25)"
    )


# SQLAlchemy's split of a URL: the password ends at the *first* '@', the host at '/', ':' or '?'
_SPLIT = re.compile(
    r"[\w+]+://(?:[^:/]*(?::[^@]*)?@)?(?:\[[^/?]+\]|[^/:?]+)?(?::[^/?]*)?"
    r"(?:/(?P<database>[^?]*))?(?:\?(?P<query>.*))?",
    re.DOTALL,
)


def _misparsed(raw: str, url: URL) -> bool:
    """Whether a password with an unencoded '@', '&' or '=' was split apart: an '@' in or left
    after the host (the real host follows the last '@'), an ``?password=`` swallowed into the userinfo
    password, or a query parameter without a name. The "host" parsed then is a piece of the
    password, and would be shown in every connection error."""
    if "@" in (url.host or ""):  # 'b@host' of a password 'a@b': SQLAlchemy's host takes an '@'
        return True
    match = _SPLIT.match(raw)
    if match and "@" in (match.group("database") or "") + (match.group("query") or ""):
        return True
    swallowed = re.search(
        r"[?&](?:" + "|".join(sorted(SECRET_QUERY_KEYS)) + r")=", url.password or "", re.IGNORECASE
    )
    return bool(swallowed) or "" in url.query


def example(dialect: Dialect) -> str:
    if dialect == "postgresql":
        return "postgresql+psycopg://USER:PASSWORD@HOST:PORT/DATABASE"
    return "mysql+pymysql://USER:PASSWORD@HOST:PORT/"


# query parameters that carry a secret (libpq and the drivers accept a password in the query too)
SECRET_QUERY_KEYS = frozenset(
    {
        "password",
        "passwd",
        "pwd",
        "sslpassword",
        "sslkey_password",
        "secret",
        "token",
        "access_token",
        "auth_token",
        "api_key",
        "apikey",
    }
)


def redact(url: URL | str) -> str:
    """The URL as text with any password -- in the userinfo or as a query parameter such as
    ``?password=`` -- replaced by ``***``."""
    if isinstance(url, str):
        try:
            url = make_url(url)
        except (ArgumentError, ValueError):
            return "<unparseable URL>"
    secret = {k: "***" for k in url.query if k.lower() in SECRET_QUERY_KEYS}
    if secret:
        url = url.update_query_dict(secret)
    # URL's own rendering: RedactedURL.render_as_string is this function
    return URL.render_as_string(url, hide_password=True).replace("%2A%2A%2A", "***")


class RedactedURL(URL):
    """A SQLAlchemy URL whose text never shows a secret: ``str``, ``repr`` and ``render_as_string()``
    are :func:`redact`'s, so the reprs that show it -- an ``Engine(…)``, a
    :class:`dbbench.Target`, a pytest failure listing them -- hide the userinfo password and every
    secret query parameter (``?password=``), however they were encoded. Only
    ``render_as_string(hide_password=False)`` gives the real URL (for the drivers). :func:`parse`
    returns one; the URL methods that derive a new URL (``set``, ``update_query_dict``,
    ``difference_update_query`` …) keep the class."""

    __slots__ = ()

    def render_as_string(self, hide_password: bool = True) -> str:
        if not hide_password:
            return URL.render_as_string(self, hide_password=False)
        return redact(self)

    def __repr__(self) -> str:
        return redact(self)

    def __str__(self) -> str:
        return redact(self)

    def difference_update_query(self, names: Iterable[str]) -> RedactedURL:
        return RedactedURL(*URL.difference_update_query(self, names))


def as_login(url: URL, username: str, password: str) -> URL:
    """``url`` logging in as ``username`` with ``password``: a user or password given in the query
    (``?password=``, which the drivers prefer over the userinfo) is dropped, not kept."""
    given = [k for k in url.query if k.lower() in SECRET_QUERY_KEYS or k.lower() in ("user", "username")]
    return url.difference_update_query(given).set(username=username, password=password)


def from_env(dialect: Dialect) -> str | None:
    value = os.environ.get(ENV_VARS[dialect], "").strip()
    return value or None


# a secret as a driver echoes its connection parameters: any URL's userinfo password (up to the last
# '@' of the URL), a ``key=value`` of a query string, a libpq DSN (quoted or not) or an environment
# (PGPASSWORD, MYSQL_PWD), and a ``'key': 'value'`` of a parameter dict
_KEYS = "|".join(sorted(SECRET_QUERY_KEYS | {"pgpassword", "mysql_pwd"}, key=len, reverse=True))
_URL_USERINFO = re.compile(r"(?P<keep>[A-Za-z][\w+.-]*://[^\s/?#@:'\"]*:)[^\s'\"]*@")
_KEY_VALUE = re.compile(
    rf"(?P<keep>(?<![\w-])(?:{_KEYS})\s*=\s*)(?:'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|[^\s&'\"]+)",
    re.IGNORECASE,
)
_KEY_COLON = re.compile(
    rf"(?P<keep>(?P<q>['\"])(?:{_KEYS})(?P=q)\s*:\s*)(?P<v>['\"])(?:(?!(?P=v))[^\\]|\\.)*(?P=v)",
    re.IGNORECASE,
)


def _distinctive(secret: str) -> bool:
    """Whether ``secret`` can be cut out of any text without garbling it: 8 characters or more,
    mixing at least two of letters (with ``_``), digits and other characters -- not a word of a
    message (``option``), an identifier (``my_table``) or a number a message may hold."""
    kinds = {"digit" if c.isdigit() else "word" if c.isalpha() or c == "_" else "other" for c in secret}
    return len(secret) >= 8 and len(kinds) >= 2


def scrub(text: str, url: URL) -> str:
    """``text`` (a driver's error message) without ``url``'s secrets.

    What is redacted is where a driver echoes a secret: ``url`` itself as text, the password of
    any URL's userinfo, a secret ``key=value`` of a query string or a libpq DSN
    (``password=…``, quoted or not), a ``'password': '…'`` of a parameter dict. The words of the
    message are not searched for the password: a password ``option`` leaves ``invalid connection
    option "bogus_option"`` as it is (replacing it there garbles the message and tells the
    password). Only a distinctive password (:func:`_distinctive`) is also replaced wherever it
    appears, plain or percent-encoded."""
    secrets = [str(url.password)] if url.password else []
    for key, value in url.query.items():
        if key.lower() in SECRET_QUERY_KEYS:
            secrets += [value] if isinstance(value, str) else list(value)
    if not secrets:
        return text
    text = text.replace(URL.render_as_string(url, hide_password=False), redact(url))
    text = _URL_USERINFO.sub(r"\g<keep>***@", text)
    text = _KEY_VALUE.sub(r"\g<keep>***", text)
    text = _KEY_COLON.sub(r"\g<keep>\g<v>***\g<v>", text)
    forms = {
        f
        for s in secrets
        if _distinctive(s)
        for f in (s, quote(s, safe=""), quote_plus(s), quote(s, safe=" +"))
    }
    for form in sorted(forms, key=len, reverse=True):
        text = re.sub(re.escape(form), "***", text, flags=re.IGNORECASE if "%" in form else 0)
    return text
