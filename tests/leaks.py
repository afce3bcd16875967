"""Credential-leak scanning for the no-secrets tests (tests/test_no_secrets.py,
tests/dbbench/test_dbbench_no_secrets.py, tests/httpbench/test_httpbench_no_secrets.py):
the secrets, every encoded form of one that counts as a leak, a recorder of every stream and
file a command writes, and the accounts and catalog the dbbench commands run with.

:func:`find_leaks` takes any number of secrets, so a generated one (a namespace role's password,
say) is added to :func:`dbbench_secrets` from the start-up hook's log.
"""

from __future__ import annotations

import base64
import html
import json
import os
import re
import socket
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote, quote_plus

import sqlalchemy as sa

from tests.conftest import CliResult, shape_toml
from tests.db import sql

# URL-special characters in every position that matters: ':' and '@' (userinfo), '/' (path),
# '%4F' (a valid escape: a double decode shows), '?', '&', '=' (query); the alphanumeric runs of
# five or more characters are the fragments searched for when a password is cut apart
PASSWORD = "Kq7Zr:Wm@x9/Tj%4F?&=Vb8Ny"
USER = "dbbench_t_secret"
NS = "dbbench_t_secret_ns"
CHECK_NS = "dbbench_t_secret_check"
PLUGIN_NS = "dbbench_t_secret_plugin"
HTTP_USER = "hbuser_t"
HTTP_PASSWORD = "Hq4Xw:Pz@k2/Lm%7E?&=Rd6Tc"
HTTP_TOKEN = "tok_Gf3Yb8Mn2Qs7Jd5Vw"


# ---------------------------------------------------------------------------------------------
# the scanning helper


@dataclass(frozen=True)
class Secret:
    """A secret to search for; ``user`` adds the ``user:secret`` pair (HTTP Basic, URL userinfo)."""

    value: str
    user: str | None = None
    label: str = "secret"


def _b64_variants(raw: bytes) -> list[bytes]:
    std = base64.b64encode(raw)
    return [std, std.rstrip(b"="), base64.urlsafe_b64encode(raw).rstrip(b"=")]


def encodings(secret: Secret) -> dict[str, bytes]:
    """Every form of ``secret`` that counts as a leak, by name."""
    v = secret.value
    forms: dict[str, bytes] = {
        "plain": v.encode(),
        "url-encoded": quote(v, safe="").encode(),
        "url-encoded (safe '/')": quote(v).encode(),
        "plus-encoded": quote_plus(v).encode(),
        "percent-encoded (every byte)": "".join(f"%{b:02X}" for b in v.encode()).encode(),
        "html-escaped": html.escape(v).encode(),
        "html-escaped (no quotes)": html.escape(v, quote=False).encode(),
        "json-escaped": json.dumps(v)[1:-1].encode(),
    }
    for i, b in enumerate(_b64_variants(v.encode())):
        forms[f"base64 of the secret #{i}"] = b
    if secret.user is not None:
        pair = f"{secret.user}:{v}".encode()
        for i, b in enumerate(_b64_variants(pair)):
            forms[f"base64 of user:secret #{i}"] = b
        forms["userinfo"] = f"{quote(secret.user, safe='')}:{quote(v, safe='')}@".encode()
    for run in re.findall(r"[A-Za-z0-9_]{5,}", v):
        if run != v:
            forms[f"fragment {run!r}"] = run.encode()
    return forms


def find_leaks(blobs: Mapping[str, bytes], secrets: Iterable[Secret]) -> list[str]:
    """``WHERE: LABEL as FORM`` for every secret form found in a blob (percent-encodings match
    either hex case); empty when nothing leaked."""
    leaks = []
    reported: set[tuple[str, str]] = set()  # one line per blob and value (a value may have several users)
    for secret in secrets:
        forms = encodings(secret)
        for where, blob in blobs.items():
            if (where, secret.value) in reported:
                continue
            folded = blob.lower()
            found: dict[bytes, str] = {}  # one name per distinct needle
            for form, needle in forms.items():
                hay, pin = (folded, needle.lower()) if "encoded" in form else (blob, needle)
                if pin and pin in hay:
                    found.setdefault(needle, form)
            names = list(found.values())
            whole = [n for n in names if not n.startswith("fragment")]
            if names:
                reported.add((where, secret.value))
                leaks.append(f"{where}: {secret.label} as {', '.join(whole or names)}")
    return leaks


@dataclass
class Recorder:
    """Runs commands and keeps every stream; :meth:`blobs` adds every file under the roots."""

    roots: list[Path]
    streams: dict[str, bytes] = field(default_factory=dict)
    runs: list[tuple[str, CliResult]] = field(default_factory=list)

    def keep(self, name: str, result: CliResult) -> CliResult:
        assert "Traceback" not in result.output, f"{name}:\n{result.output}"
        self.streams[f"{name} [stdout]"] = result.stdout.encode()
        self.streams[f"{name} [stderr]"] = result.stderr.encode()
        self.runs.append((name, result))
        return result

    def blobs(self) -> dict[str, bytes]:
        out = dict(self.streams)
        for root in self.roots:
            for path in sorted(root.rglob("*")):
                if path.is_file() and not path.is_symlink():
                    out[str(path)] = path.read_bytes()
        return out

    def assert_clean(self, secrets: Iterable[Secret]) -> None:
        blobs = self.blobs()
        leaks = find_leaks(blobs, secrets)
        assert not leaks, "credentials leaked:\n" + "\n".join(leaks)


# ---------------------------------------------------------------------------------------------
# dbbench

SHAPE = shape_toml(
    "row by id",
    "1 of 2,000",
    expect_rows=1,
    params="id = 7",
    sql="SELECT id, v FROM t WHERE id = :id",
    postgresql='expect = { table = "t", index = "t_pkey" }',
    mysql='expect = { table = "t", index = "PRIMARY" }',
    sep="\n",
)
SETUP = (
    "CREATE TABLE t (id int PRIMARY KEY, v int NOT NULL);\n"
    "INSERT INTO t (id, v) VALUES " + ", ".join(f"({i}, {i * 3})" for i in range(1, 2001)) + ";\n"
)


EXAMPLE_BASELINE = Path(__file__).resolve().parent.parent / "examples" / "shop" / "baseline.json"


# every password dbbench generates in a command (the namespace role's, fresh per use: dbbench never
# writes it) is also appended to a log outside the scanned files, through this start-up hook
RECORD_GENERATED = """import os, secrets
_log = os.environ.get("DBBENCH_T_GENERATED_LOG")
if _log:
    def _recorded(make):
        def token(nbytes=None):
            value = make(nbytes)
            with open(_log, "a", encoding="utf-8") as f:
                f.write(value + "\\n")
            return value
        return token
    secrets.token_urlsafe = _recorded(secrets.token_urlsafe)
    secrets.token_hex = _recorded(secrets.token_hex)
"""


@dataclass
class Generated:
    """The environment that records generated passwords, and the secrets recorded so far."""

    hook: Path
    log: Path

    @property
    def env(self) -> dict[str, str]:
        path = os.pathsep.join(p for p in (str(self.hook), os.environ.get("PYTHONPATH", "")) if p)
        return {"PYTHONPATH": path, "DBBENCH_T_GENERATED_LOG": str(self.log)}

    def secrets(self, namespaces: Iterable[str]) -> list[Secret]:
        from dbbench.access.isolation import role_name

        values = self.log.read_text().split() if self.log.exists() else []
        return [
            Secret(v, role_name(ns), f"a generated password ({role_name(ns)})")
            for v in values
            for ns in namespaces
        ]


def dbbench_secrets(generated: Generated | None = None, namespaces: Iterable[str] = ()) -> list[Secret]:
    """Every secret dbbench is given or makes in these tests."""
    return [
        Secret(PASSWORD, USER, "the database password"),
        *(generated.secrets(namespaces) if generated else []),
    ]


def host_port(url: str) -> tuple[str, int]:
    parsed = sa.engine.make_url(url)
    return str(parsed.host), int(parsed.port or 0)


def drop_account() -> None:
    """Drop the test's namespaces, their namespace roles (dbbench makes one per namespace) and the
    test's own role / user, whatever state a failed run left them in (a namespace the test's user
    owns, marked dbbench's or not)."""
    from dbbench.access.isolation import role_name

    namespaces = [NS, CHECK_NS, PLUGIN_NS, f"{NS}_bad", f"{NS}_broken"]
    roles = [USER, *(role_name(ns) for ns in namespaces)]
    sql(
        "postgresql",
        [
            *(f"DROP SCHEMA IF EXISTS {ns} CASCADE" for ns in namespaces),
            *(
                f"DO $$ BEGIN IF EXISTS (SELECT FROM pg_roles WHERE rolname = '{r}') THEN "
                f"EXECUTE 'DROP OWNED BY {r} CASCADE'; EXECUTE 'DROP ROLE {r}'; END IF; END $$"
                for r in roles
            ),
        ],
    )
    sql(
        "mysql",
        [
            *(f"DROP DATABASE IF EXISTS {ns}" for ns in namespaces),
            f"DROP USER IF EXISTS '{USER}'@'127.0.0.1', '{USER}'@'localhost'",
            *(f"DROP USER IF EXISTS '{r}'@'%'" for r in roles[1:]),
        ],
    )


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
