"""No credential in any output (issue 13, item 3): a known password and token are given to the real
dbbench and httpbench commands -- in URL userinfo, as ``?password=``, through the environment, as
``--auth`` -- and every stream and every file the commands write (results, JUnit, Markdown, HTML,
step summaries, and everything under a temporary ``--home``) is searched for them: plain,
percent-encoded, ``+``-encoded, HTML/XML-escaped, JSON-escaped, base64 of the secret and of
``user:secret``, and the secret's distinctive fragments (a password half-parsed out of a URL).

:func:`find_leaks` takes any number of secrets, so a generated one (a namespace role's password,
say) can be added to :func:`dbbench_secrets` when dbbench starts creating it.
"""

from __future__ import annotations

import base64
import html
import json
import os
import re
import socket
from collections.abc import Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote, quote_plus

import pytest
import sqlalchemy as sa

from tests.conftest import CliResult, run_cli, shape_toml
from tests.httpbench.http_fixtures import FixtureServer, Route, body_of, run_httpbench

# URL-special characters in every position that matters: ':' and '@' (userinfo), '/' (path),
# '%4F' (a valid escape: a double decode shows), '?', '&', '=' (query); the alphanumeric runs of
# five or more characters are the fragments searched for when a password is cut apart
PASSWORD = "Kq7Zr:Wm@x9/Tj%4F?&=Vb8Ny"
USER = "dbbench_t_secret"
NS = "dbbench_t_secret_ns"
CHECK_NS = "dbbench_t_secret_check"
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
        from dbbench.isolation import role_name

        values = self.log.read_text().split() if self.log.exists() else []
        return [
            Secret(v, role_name(ns), f"a generated password ({role_name(ns)})")
            for v in values
            for ns in namespaces
        ]


@pytest.fixture()
def generated(tmp_path_factory) -> Generated:
    hook = tmp_path_factory.mktemp("hook")
    (hook / "sitecustomize.py").write_text(RECORD_GENERATED)
    return Generated(hook, tmp_path_factory.mktemp("generated") / "passwords")


def dbbench_secrets(generated: Generated | None = None, namespaces: Iterable[str] = ()) -> list[Secret]:
    """Every secret dbbench is given or makes in these tests."""
    return [
        Secret(PASSWORD, USER, "the database password"),
        *(generated.secrets(namespaces) if generated else []),
    ]


def _host_port(url: str) -> tuple[str, int]:
    parsed = sa.engine.make_url(url)
    return str(parsed.host), int(parsed.port or 0)


def _admin(url: str, statements: list[str]) -> None:
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            for stmt in statements:
                conn.exec_driver_sql(stmt)
            conn.commit()
    finally:
        engine.dispose()


def _drop_account(local_urls: dict[str, str]) -> None:
    """Drop the test's namespaces, their namespace roles (dbbench makes one per namespace) and the
    test's own role / user."""
    from dbbench.isolation import role_name

    namespaces = [NS, CHECK_NS, f"{NS}_bad", f"{NS}_broken"]
    roles = [USER, *(role_name(ns) for ns in namespaces)]
    _admin(
        local_urls["postgresql"],
        [
            *(f"DROP SCHEMA IF EXISTS {ns} CASCADE" for ns in namespaces),
            *(
                f"DO $$ BEGIN IF EXISTS (SELECT FROM pg_roles WHERE rolname = '{r}') THEN "
                f"EXECUTE 'DROP OWNED BY {r} CASCADE'; EXECUTE 'DROP ROLE {r}'; END IF; END $$"
                for r in roles
            ),
        ],
    )
    _admin(
        local_urls["mysql"],
        [
            *(f"DROP DATABASE IF EXISTS {ns}" for ns in namespaces),
            f"DROP USER IF EXISTS '{USER}'@'127.0.0.1', '{USER}'@'localhost'",
            *(f"DROP USER IF EXISTS '{r}'@'%%'" for r in roles[1:]),
        ],
    )  # the driver formats '%'


@pytest.fixture(scope="module")
def account(local_urls):
    """A PostgreSQL role and a MySQL user that log in with PASSWORD (privileged enough for whatever
    dbbench sets up in a namespace of its own); the URLs that reach them, in two forms."""
    _drop_account(local_urls)
    literal = PASSWORD.replace("'", "''").replace("%", "%%")  # the drivers format '%'
    _admin(local_urls["postgresql"], [f"CREATE ROLE {USER} LOGIN SUPERUSER PASSWORD '{literal}'"])
    _admin(
        local_urls["mysql"],
        [
            stmt
            for host in ("127.0.0.1", "localhost")
            for stmt in (
                f"CREATE USER '{USER}'@'{host}' IDENTIFIED BY '{literal}'",
                f"GRANT ALL PRIVILEGES ON *.* TO '{USER}'@'{host}' WITH GRANT OPTION",
            )
        ],
    )
    pg_host, pg_port = _host_port(local_urls["postgresql"])
    my_host, my_port = _host_port(local_urls["mysql"])
    pg_db = sa.engine.make_url(local_urls["postgresql"]).database
    enc = quote(PASSWORD, safe="")
    yield {
        "pg_userinfo": f"postgresql+psycopg://{USER}:{enc}@{pg_host}:{pg_port}/{pg_db}",
        "my_userinfo": f"mysql+pymysql://{USER}:{enc}@{my_host}:{my_port}/",
        "pg_query": f"postgresql+psycopg://{USER}@{pg_host}:{pg_port}/{pg_db}?password={quote_plus(PASSWORD)}",
        "my_query": f"mysql+pymysql://{USER}@{my_host}:{my_port}/?password={quote_plus(PASSWORD)}",
        "pg": (pg_host, pg_port, pg_db),
        "my": (my_host, my_port),
    }
    _drop_account(local_urls)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_dbbench_commands_never_show_the_password(account, generated, tmp_path):
    cat = tmp_path / "cat"
    cat.mkdir()
    (cat / "01-row.toml").write_text(SHAPE)
    (cat / "setup.sql").write_text(SETUP)
    out, home = tmp_path / "out", tmp_path / "home"
    out.mkdir()
    summary = out / "step-summary.md"
    rec = Recorder([out, home])
    userinfo = ("--pg-url", account["pg_userinfo"], "--mysql-url", account["my_userinfo"])
    query = ("--pg-url", account["pg_query"], "--mysql-url", account["my_query"])
    by_env = {
        "DBBENCH_PG_URL": account["pg_query"],
        "DBBENCH_MYSQL_URL": account["my_userinfo"],
        "GITHUB_STEP_SUMMARY": str(summary),
    }
    common = ("--catalog", str(cat), "--namespace", NS)
    quick = ("--warmups", "0", "--runs", "3")

    def run(name: str, *args: str, env: dict[str, str] | None = None, codes: tuple[int, ...] = (0,)) -> None:
        result = rec.keep(
            name,
            run_cli(
                "--home",
                str(home),
                *args,
                env={**generated.env, "GITHUB_STEP_SUMMARY": str(summary), **(env or {})},
            ),
        )
        assert result.code in codes, f"{name}: exit {result.code}\n{result.output}"

    run("info userinfo", "info", *userinfo)
    run("info query", "info", *query)
    run("info env", "info", env=by_env)
    run("validate", "validate", *common)
    run("seed", "seed", *userinfo, *common, "--output", str(out / "seed.json"))
    run(
        "explain table",
        "explain",
        *query,
        *common,
        *quick,
        "--output",
        str(out / "explain.json"),
        "--junit",
        str(out / "explain.xml"),
        "--github-summary",
        str(out / "explain-summary.md"),
    )
    run("explain markdown env", "explain", *common, *quick, "--format", "markdown", env=by_env)
    run(
        "check",
        "check",
        *userinfo,
        "--catalog",
        str(cat),
        "--namespace",
        CHECK_NS,
        "--output",
        str(out / "check.json"),
        "--junit",
        str(out / "check.xml"),
        "--format",
        "markdown",
    )
    run("baseline save", "baseline", "save", str(out / "baseline.json"), *query, *common, *quick)
    run("baseline from", "baseline", "save", str(out / "baseline2.json"), "--from", str(out / "explain.json"))
    run(
        "diff live",
        "diff",
        str(out / "baseline.json"),
        *userinfo,
        "--namespace",
        NS,
        *quick,
        "--format",
        "markdown",
        "--markdown",
        str(out / "diff.md"),
        "--output",
        str(out / "diff.json"),
        "--junit",
        str(out / "diff.xml"),
        "--save-result",
        str(out / "diff-result.json"),
        "--github-summary",
        str(out / "diff-summary.md"),
        codes=(0, 1, 3),
    )
    run("diff files", "diff", str(out / "baseline.json"), str(out / "explain.json"), codes=(0, 1, 3))
    run(
        "report",
        "report",
        str(out / "explain.json"),
        "--html",
        str(out / "report.html"),
        "--output",
        str(out / "report.md"),
    )
    run("servers status", "servers", "status")
    run("servers status json", "servers", "status", "--json")
    assert json.loads((out / "explain.json").read_text())["servers"], "the result names its servers"
    assert (out / "report.html").stat().st_size > 0 and summary.exists()
    made = dbbench_secrets(generated, [NS, CHECK_NS])
    assert len(made) > 1, (
        "no generated password was recorded: does dbbench still make one with secrets.token_*?"
    )
    rec.assert_clean(made)


def test_dbbench_errors_never_show_the_password(account, generated, tmp_path):
    pg_host, pg_port, pg_db = account["pg"]
    my_host, my_port = account["my"]
    enc, plus = quote(PASSWORD, safe=""), quote_plus(PASSWORD)
    wrong = quote(PASSWORD[::-1], safe="")  # a wrong password is a secret too
    secrets = [
        *dbbench_secrets(),
        Secret(PASSWORD[::-1], USER, "the wrong password"),
        Secret(PASSWORD, "nobody_t", "the password of a wrong user"),
    ]
    down = _free_port()
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "01-row.toml").write_text(SHAPE.replace("SELECT id, v FROM t", "SELECT id, missing FROM t"))
    (broken / "setup.sql").write_text(SETUP)
    bad_setup = tmp_path / "badsetup"
    bad_setup.mkdir()
    (bad_setup / "01-row.toml").write_text(SHAPE)
    (bad_setup / "setup.sql").write_text(SETUP + "INSERT INTO t (id, v) VALUES (1, 1);\nSELEC oops;\n")
    out, home = tmp_path / "out", tmp_path / "home"
    out.mkdir()
    rec = Recorder([out, home])
    pg_ok, my_ok = account["pg_userinfo"], account["my_userinfo"]
    cases: list[tuple[str, list[str]]] = [
        (
            "pg wrong password",
            [
                "info",
                "--only",
                "postgresql",
                "--pg-url",
                f"postgresql+psycopg://{USER}:{wrong}@{pg_host}:{pg_port}/{pg_db}",
            ],
        ),
        (
            "my wrong password",
            [
                "info",
                "--only",
                "mysql",
                "--mysql-url",
                f"mysql+pymysql://{USER}:{wrong}@{my_host}:{my_port}/",
            ],
        ),
        (
            "pg wrong user",
            [
                "info",
                "--only",
                "postgresql",
                "--pg-url",
                f"postgresql+psycopg://nobody_t:{enc}@{pg_host}:{pg_port}/{pg_db}",
            ],
        ),
        (
            "my wrong user",
            [
                "info",
                "--only",
                "mysql",
                "--mysql-url",
                f"mysql+pymysql://nobody_t:{enc}@{my_host}:{my_port}/",
            ],
        ),
        (
            "pg wrong database",
            [
                "info",
                "--only",
                "postgresql",
                "--pg-url",
                f"postgresql+psycopg://{USER}:{enc}@{pg_host}:{pg_port}/no_such_db_t",
            ],
        ),
        (
            "my wrong database",
            [
                "info",
                "--only",
                "mysql",
                "--mysql-url",
                f"mysql+pymysql://{USER}:{enc}@{my_host}:{my_port}/no_such_db_t",
            ],
        ),
        (
            "pg query wrong database",
            [
                "info",
                "--only",
                "postgresql",
                "--pg-url",
                f"postgresql+psycopg://{USER}@{pg_host}:{pg_port}/no_such_db_t?password={plus}",
            ],
        ),
        (
            "pg unreachable",
            [
                "info",
                "--only",
                "postgresql",
                "--pg-url",
                f"postgresql+psycopg://{USER}:{enc}@127.0.0.1:{down}/{pg_db}",
            ],
        ),
        (
            "my unreachable",
            ["info", "--only", "mysql", "--mysql-url", f"mysql+pymysql://{USER}:{enc}@127.0.0.1:{down}/"],
        ),
        (
            "my query unreachable",
            [
                "seed",
                "--only",
                "mysql",
                "--catalog",
                str(bad_setup),
                "--namespace",
                NS,
                "--mysql-url",
                f"mysql+pymysql://{USER}@127.0.0.1:{down}/?password={plus}",
            ],
        ),
        (
            "pg unknown host",
            [
                "info",
                "--only",
                "postgresql",
                "--pg-url",
                f"postgresql+psycopg://{USER}:{enc}@no-such-host.invalid:{pg_port}/{pg_db}",
            ],
        ),
        # a careless user: the password pasted into the URL without percent-encoding it
        (
            "pg not encoded",
            [
                "info",
                "--only",
                "postgresql",
                "--pg-url",
                f"postgresql+psycopg://{USER}:{PASSWORD}@{pg_host}:{pg_port}/{pg_db}",
            ],
        ),
        (
            "my not encoded",
            [
                "info",
                "--only",
                "mysql",
                "--mysql-url",
                f"mysql+pymysql://{USER}:{PASSWORD}@{my_host}:{my_port}/",
            ],
        ),
        (
            "pg not encoded query",
            [
                "info",
                "--only",
                "postgresql",
                "--pg-url",
                f"postgresql+psycopg://{USER}@{pg_host}:{pg_port}/{pg_db}?password={PASSWORD}",
            ],
        ),
        (
            "pg wrong driver",
            [
                "info",
                "--only",
                "postgresql",
                "--pg-url",
                f"postgresql+asyncpg://{USER}:{enc}@{pg_host}:{pg_port}/{pg_db}",
            ],
        ),
        ("pg given a mysql url", ["info", "--only", "postgresql", "--pg-url", my_ok]),
        (
            "failing setup statement",
            [
                "seed",
                "--catalog",
                str(bad_setup),
                "--namespace",
                f"{NS}_bad",
                "--pg-url",
                pg_ok,
                "--mysql-url",
                my_ok,
                "--output",
                str(out / "bad.json"),
            ],
        ),
        (
            "seed for the failing shape explain",
            [
                "seed",
                "--catalog",
                str(broken),
                "--namespace",
                f"{NS}_broken",
                "--pg-url",
                pg_ok,
                "--mysql-url",
                account["my_query"],
            ],
        ),
        (
            "failing shape explain",
            [
                "explain",
                "--catalog",
                str(broken),
                "--namespace",
                f"{NS}_broken",
                "--warmups",
                "0",
                "--runs",
                "1",
                "--pg-url",
                account["pg_query"],
                "--mysql-url",
                my_ok,
                "--output",
                str(out / "broken.json"),
                "--junit",
                str(out / "broken.xml"),
            ],
        ),
        (
            "explain unseeded namespace",
            [
                "explain",
                "--catalog",
                str(bad_setup),
                "--namespace",
                "dbbench_t_never",
                "--pg-url",
                pg_ok,
                "--mysql-url",
                my_ok,
            ],
        ),
        (
            "diff wrong password",
            [
                "diff",
                str(EXAMPLE_BASELINE),
                "--only",
                "postgresql",
                "--pg-url",
                f"postgresql+psycopg://{USER}:{wrong}@{pg_host}:{pg_port}/{pg_db}",
            ],
        ),
    ]

    def chain(steps: list[tuple[str, list[str]]]) -> list[tuple[str, CliResult]]:
        return [
            (
                name,
                run_cli(
                    "--home",
                    str(home),
                    *args,
                    env={**generated.env, "GITHUB_STEP_SUMMARY": str(out / "s.md")},
                ),
            )
            for name, args in steps
        ]

    # two at a time (each is mostly interpreter start-up); the seed comes before the explain of it
    ordered = [i for i, (name, _) in enumerate(cases) if "failing shape" in name]
    chains = [[case] for i, case in enumerate(cases) if i not in ordered] + [[cases[i] for i in ordered]]
    with ThreadPoolExecutor(2) as pool:
        for name, result in (step for done in pool.map(chain, chains) for step in done):
            rec.keep(name, result)
            assert (result.code == 0) == name.startswith("seed for"), (
                f"{name}: exit {result.code}\n{result.output}"
            )
    # the error paths really were taken (not all refused for one reason before connecting)
    said = {name: r.stderr for name, r in rec.runs}
    assert f"rejected user '{USER}'" in said["pg wrong password"] + said["my wrong password"]
    assert "rejected user 'nobody_t'" in said["pg wrong user"] + said["my wrong user"]
    assert "no database 'no_such_db_t'" in said["pg wrong database"] + said["my wrong database"]
    assert (
        "connection refused" in said["pg unreachable"] + said["my unreachable"] + said["my query unreachable"]
    )
    assert all(
        "percent-encode" in said[n] for n in ("pg not encoded", "my not encoded", "pg not encoded query")
    )
    assert (
        "duplicate key" in said["failing setup statement"]
        and "does not exist" in said["failing shape explain"]
    )
    assert f"rejected user '{USER}'" in said["diff wrong password"], said["diff wrong password"]
    rec.assert_clean([*secrets, *generated.secrets([NS, f"{NS}_bad", f"{NS}_broken"])])


# ---------------------------------------------------------------------------------------------
# httpbench

HTTP_SMALL = (
    "--warmups",
    "1",
    "--requests",
    "8",
    "--concurrency",
    "2",
    "--min-round-ms",
    "0",
    "-q",
    "--budget",
    "5",
)
# the client prints what it was given -- the header, the decoded pair, the URL -- on its last line
ECHO_AND_FAIL = (
    'echo "auth=$HTTPBENCH_AUTHORIZATION url={url} env=$HTTPBENCH_URL '
    'pair=$(printf %s "${HTTPBENCH_AUTHORIZATION#* }" | base64 -d 2>/dev/null)" >&2; exit 3'
)


def http_secrets() -> list[Secret]:
    return [
        Secret(HTTP_PASSWORD, HTTP_USER, "the HTTP password"),
        Secret(HTTP_TOKEN, None, "the bearer token"),
    ]


@pytest.mark.servers
def test_httpbench_never_shows_credentials(tmp_path):
    body = body_of(4096)
    out = tmp_path / "out"
    out.mkdir()
    rec = Recorder([out])
    token_file = out / "token"  # the credentials file itself is the one file allowed to hold it
    token_file.write_text(f"Bearer {HTTP_TOKEN}\n")
    enc = f"{quote(HTTP_USER, safe='')}:{quote(HTTP_PASSWORD, safe='')}"
    env = {"HB_T_CRED": f"{HTTP_USER}:{HTTP_PASSWORD}", "GITHUB_STEP_SUMMARY": str(out / "env-summary.md")}
    with (
        FixtureServer({"/f": Route(body)}) as a,
        FixtureServer({"/f": Route(body)}) as b,
        FixtureServer({"/f": Route(body, fault="wrong_bytes")}) as bad,
    ):
        userinfo_url = f"http://{enc}@127.0.0.1:{a.port}"
        runs = [
            (
                "compare",
                [
                    "--target",
                    f"ref={userinfo_url}",
                    "--target",
                    f"cand={b.url}",
                    "--target",
                    f"tok={b.url}",
                    "--auth",
                    "cand=env:HB_T_CRED",
                    "--auth",
                    f"tok=file:{token_file}",
                    "--scenario",
                    "/f",
                    "--client-command",
                    ECHO_AND_FAIL,
                    "--client-rounds",
                    "2",
                    "--output",
                    str(out / "r.json"),
                    "--junit",
                    str(out / "r.xml"),
                    "--github-summary",
                    str(out / "summary.md"),
                    "--samples",
                    *HTTP_SMALL,
                ],
                (0, 1, 3),
            ),
            (
                "compare markdown",
                [
                    "--target",
                    f"ref={b.url}",
                    "--target",
                    f"cand={userinfo_url}",
                    "--auth",
                    "ref=env:HB_T_CRED",
                    "--scenario",
                    "/f",
                    "--markdown",
                    "--client-command",
                    "ref=" + ECHO_AND_FAIL,
                    "--client-command",
                    f"cand=curl -sS -u {HTTP_USER}:$HTTPBENCH_AUTHORIZATION {{url}}/nope; exit 4",
                    "--client-rounds",
                    "1",
                    "--enforce-gates",
                    "--output",
                    str(out / "md.json"),
                    "--method",
                    "seed",
                    "--rounds",
                    "1",
                    *HTTP_SMALL[:-2],
                ],
                (1, 3),
            ),
            (
                "unreachable userinfo",
                [
                    "--target",
                    f"ref={userinfo_url}",
                    "--target",
                    f"cand=http://{enc}@127.0.0.1:{_free_port()}",
                    "--scenario",
                    "/f",
                    "--output",
                    str(out / "down.json"),
                    *HTTP_SMALL,
                ],
                (1, 2),
            ),
            (
                "mismatched bytes",
                [
                    "--target",
                    f"ref={userinfo_url}",
                    "--target",
                    f"cand=http://{enc}@127.0.0.1:{bad.port}",
                    "--auth",
                    "cand=env:HB_T_CRED",
                    "--scenario",
                    "/f",
                    "--verify-digest",
                    "--output",
                    str(out / "bad.json"),
                    "--junit",
                    str(out / "bad.xml"),
                    *HTTP_SMALL,
                ],
                (1, 2),
            ),
            (
                "credential header refused",
                [
                    "--target",
                    f"ref={a.url}",
                    "--target",
                    f"cand={b.url}",
                    "--scenario",
                    f"path=/f,header=X-Api-Key: {HTTP_TOKEN}",
                    *HTTP_SMALL,
                ],
                (2,),
            ),
            (
                "cookie refused",
                [
                    "--target",
                    f"ref={a.url}",
                    "--target",
                    f"cand={b.url}",
                    "--scenario",
                    f"path=/f,header=Cookie: s={HTTP_TOKEN}",
                    *HTTP_SMALL,
                ],
                (2,),
            ),
            (
                "literal auth refused",
                [
                    "--target",
                    f"ref={a.url}",
                    "--target",
                    f"cand={b.url}",
                    "--auth",
                    f"cand={HTTP_USER}:{HTTP_PASSWORD}",
                    "--scenario",
                    "/f",
                ],
                (2,),
            ),
            (
                "password not encoded",
                [
                    "--target",
                    f"ref=http://{HTTP_USER}:{HTTP_PASSWORD}@127.0.0.1:{a.port}",
                    "--target",
                    f"cand={b.url}",
                    "--scenario",
                    "/f",
                    *HTTP_SMALL,
                ],
                (1, 2),
            ),
        ]
        for name, args, codes in runs:
            result = rec.keep(name, run_httpbench("compare", *args, env=env, timeout=120))
            assert result.code in codes, f"{name}: exit {result.code}\n{result.output}"
    doc = json.loads((out / "r.json").read_text())
    assert [t["authenticated"] for t in doc["config"]["targets"]] == [True, True, True]
    errors = json.dumps(doc)
    assert "auth=" in errors and "url=http://127.0.0.1" in errors, "the failing client's line is recorded"
    blobs = rec.blobs()
    blobs.pop(str(token_file))
    leaks = find_leaks(blobs, http_secrets())
    assert not leaks, "credentials leaked:\n" + "\n".join(leaks)


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
    from dbbench import urls
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
    from dbbench import urls

    assert urls.parse(raw, "postgresql", "--pg-url").host == "127.0.0.1"


def test_a_refused_scenario_option_never_echoes_a_header_value():
    from httpbench.errors import HttpbenchError
    from httpbench.scenarios import parse_option

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

    from dbbench import urls

    given = make_url(
        f"postgresql+psycopg://u@127.0.0.1:5432/db?password={quote_plus(PASSWORD)}&user=u&sslmode=require"
    )
    role = urls.as_login(given, "dbbench_ns", "fresh")
    assert (role.username, role.password, dict(role.query)) == ("dbbench_ns", "fresh", {"sslmode": "require"})
