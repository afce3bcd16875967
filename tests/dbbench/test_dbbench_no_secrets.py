"""No credential in any dbbench output (issue 13, item 3): the real commands and their error paths
run with a known password (URL userinfo and ``?password=``) and every generated namespace-role
password; every stream and every file they write is searched (tests/leaks.py).
"""

from __future__ import annotations

import json
import secrets
from urllib.parse import quote, quote_plus

import pytest
import sqlalchemy as sa

from tests.conftest import CliResult, run_cli, run_program
from tests.db import sql
from tests.leaks import (
    CHECK_NS,
    EXAMPLE_BASELINE,
    NS,
    PASSWORD,
    PLUGIN_NS,
    RECORD_GENERATED,
    SETUP,
    SHAPE,
    USER,
    Generated,
    Recorder,
    Secret,
    dbbench_secrets,
    drop_account,
    find_leaks,
    free_port,
    host_port,
)


@pytest.fixture()
def generated(tmp_path_factory, monkeypatch) -> Generated:
    """Every password dbbench generates, recorded: in a process the commands start (a pytest run of
    the plugin) by a sitecustomize hook, in this one (the commands the tests run here) by the same
    recorder around ``secrets.token_*``."""
    hook = tmp_path_factory.mktemp("hook")
    (hook / "sitecustomize.py").write_text(RECORD_GENERATED)
    made = Generated(hook, tmp_path_factory.mktemp("generated") / "passwords")
    monkeypatch.setenv("DBBENCH_T_GENERATED_LOG", str(made.log))
    for name in ("token_urlsafe", "token_hex"):  # put back after the test
        monkeypatch.setattr(secrets, name, getattr(secrets, name))
    exec(RECORD_GENERATED, {})  # the hook's own code, in this process
    return made


@pytest.fixture(scope="module")
def account(local_urls):
    """A PostgreSQL role and a MySQL user that log in with PASSWORD (privileged enough for whatever
    dbbench sets up in a namespace of its own); the URLs that reach them, in two forms."""
    drop_account()
    literal = PASSWORD.replace("'", "''")
    sql("postgresql", f"CREATE ROLE {USER} LOGIN SUPERUSER PASSWORD '{literal}'")
    sql(
        "mysql",
        [
            stmt
            for host in ("127.0.0.1", "localhost")
            for stmt in (
                f"CREATE USER '{USER}'@'{host}' IDENTIFIED BY '{literal}'",
                f"GRANT ALL PRIVILEGES ON *.* TO '{USER}'@'{host}' WITH GRANT OPTION",
            )
        ],
    )
    pg_host, pg_port = host_port(local_urls["postgresql"])
    my_host, my_port = host_port(local_urls["mysql"])
    pg_db = sa.engine.make_url(local_urls["postgresql"]).database
    enc = quote(PASSWORD, safe="")
    every = "".join(f"%{b:02X}" for b in PASSWORD.encode())  # each byte percent-encoded
    yield {
        "pg_userinfo": f"postgresql+psycopg://{USER}:{enc}@{pg_host}:{pg_port}/{pg_db}",
        "my_userinfo": f"mysql+pymysql://{USER}:{enc}@{my_host}:{my_port}/",
        "pg_query": f"postgresql+psycopg://{USER}@{pg_host}:{pg_port}/{pg_db}?password={quote_plus(PASSWORD)}",
        "my_query": f"mysql+pymysql://{USER}@{my_host}:{my_port}/?password={quote_plus(PASSWORD)}",
        "pg_percent": f"postgresql+psycopg://{USER}:{every}@{pg_host}:{pg_port}/{pg_db}",
        "my_percent": f"mysql+pymysql://{USER}@{my_host}:{my_port}/?password={every}",
        "pg": (pg_host, pg_port, pg_db),
        "my": (my_host, my_port),
    }
    drop_account()


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
    down = free_port()
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

    # the seed comes before the explain of it
    ordered = [i for i, (name, _) in enumerate(cases) if "failing shape" in name]
    chains = [[case] for i, case in enumerate(cases) if i not in ordered] + [[cases[i] for i in ordered]]
    for done in map(chain, chains):
        for name, result in done:
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


# A team's failing plan test: pytest shows the fixtures' values (Target(url=…), Engine(…)) as the
# test's arguments, -l its locals, the assertion its operands, and the captured output.
PLUGIN_TESTS = """\
def test_fails(dbbench_target, dbbench_engine, dbbench_conn):
    url = dbbench_engine.url
    print(dbbench_target, dbbench_engine, url, dbbench_target.url, dbbench_target.engine)
    assert dbbench_target is None, (dbbench_target, dbbench_engine, str(url), repr(dbbench_target.url))


def test_fails_on_the_url(dbbench_engine):
    assert dbbench_engine.url.database == "elsewhere"
"""


@pytest.mark.parametrize(
    "form, pg, my",
    [
        ("user part", "pg_userinfo", "my_userinfo"),
        ("?password=", "pg_query", "my_query"),
        ("percent-encoded", "pg_percent", "my_percent"),
    ],
)
def test_the_pytest_plugin_never_shows_the_password(account, generated, tmp_path, form, pg, my):
    """Issue 19: a failing test using the plugin's fixtures, targets given with the password in the
    user part, as ``?password=``, or with every byte percent-encoded (the PostgreSQL URL in the user
    part, the MySQL one in the query), showed ``Target(url=…)`` and ``Engine(…)`` in clear."""
    (tmp_path / "pytest.ini").write_text(
        f"[pytest]\naddopts = -p dbbench.pytest_plugin\ndbbench_catalog = cat\ndbbench_namespace = {PLUGIN_NS}\n"
    )
    cat = tmp_path / "cat"
    cat.mkdir()
    (cat / "01-row.toml").write_text(SHAPE)
    (cat / "setup.sql").write_text(SETUP)
    (tmp_path / "test_team.py").write_text(PLUGIN_TESTS)
    result = run_program(
        "pytest",
        str(tmp_path),
        "-p",
        "no:cacheprovider",
        "-l",
        "-rA",
        "-vv",
        "--dbbench-rebuild",
        "--dbbench-pg-url",
        account[pg],
        "--dbbench-mysql-url",
        account[my],
        env=generated.env,
    )
    made = dbbench_secrets(generated, [PLUGIN_NS])
    assert len(made) > 1, "the catalog was not built: no namespace-role password was generated"
    leaks = find_leaks(
        {
            f"pytest, {form} [stdout]": result.stdout.encode(),
            f"pytest, {form} [stderr]": result.stderr.encode(),
        },
        made,
    )
    assert not leaks, "credentials leaked:\n" + "\n".join(leaks)
    out = result.output
    assert result.code == 1 and "4 failed" in result.stdout, out
    for dialect, scheme in (("postgresql", "postgresql+psycopg"), ("mysql", "mysql+pymysql")):
        assert f"Target(dialect='{dialect}', url={scheme}://{USER}" in out, out  # the reprs were shown
    assert "dbbench_engine = Engine(" in out and "***" in out, out


def test_the_pytest_plugin_reports_a_driver_error_in_one_line_without_the_password(account, tmp_path):
    """A URL the driver cannot use (a query value it cannot read) is one line, not a traceback
    whose frames list the driver's keyword arguments, password included."""
    (tmp_path / "pytest.ini").write_text("[pytest]\naddopts = -p dbbench.pytest_plugin\n")
    (tmp_path / "test_team.py").write_text(PLUGIN_TESTS)
    result = run_program(
        "pytest",
        str(tmp_path),
        "-p",
        "no:cacheprovider",
        "-l",
        "--dbbench-only",
        "mysql",
        "--dbbench-mysql-url",
        account["my_query"] + "&read_timeout=soon",
    )
    out = result.output
    assert result.code == 1, out
    assert "dbbench: MySQL at 127.0.0.1:" in out, out
    assert (
        ": the driver does not accept a query parameter of the URL "
        "(given: password, read_timeout): invalid literal for int() with base 10: 'soon'"
    ) in out, out
    assert "Traceback" not in out and "another exception occurred" not in out, out
    leaks = find_leaks({"pytest [stdout]": result.stdout.encode()}, dbbench_secrets())
    assert not leaks, "credentials leaked:\n" + "\n".join(leaks)
