"""User SQL is confined by the server's privileges, not by reading its text (issue 13, items 1, 2).

Every escape input below passes (or is meant to pass) the text checks of dbbench.setup.loader; here
the text checks are switched off, so what refuses them is the server itself: the setup runs
logged in as the namespace's own role. After each attempt the victim objects outside the
namespace are exactly as they were.
"""

from __future__ import annotations

import os
from pathlib import Path

import pymysql
import pytest

from dbbench import servers
from dbbench.access import isolation
from dbbench.access.targets import connect
from dbbench.dialects import mysql
from dbbench.errors import NotOurs
from dbbench.setup import loader
from tests.conftest import run_cli
from tests.db import sql

NS = "dbbench_t_iso"
PG_VICTIM = "public.dbbench_t_victim"
MY_VICTIM = "dbbench_t_victimdb"
PWNED = Path("/tmp/dbbench_t_pwned")
ONE_SAMPLE = ("--runs", "1", "--warmups", "0")  # one timed EXPLAIN ANALYZE, no warm-up
BASE = {
    "postgresql": "CREATE TABLE t (id int PRIMARY KEY);\nINSERT INTO t VALUES (1);\n",
    "mysql": "CREATE TABLE t (id int PRIMARY KEY);\nINSERT INTO t VALUES (1);\n",
}

PG_ESCAPES = {
    "hidden COMMIT in an E'' string": "SELECT E'\\''; COMMIT; DROP TABLE public.dbbench_t_victim; "
    "CREATE ROLE dbbench_t_evil SUPERUSER LOGIN; SELECT 1 --'",
    "standard_conforming_strings off": "SET standard_conforming_strings = off;\nSELECT '\\''; COMMIT; "
    "DROP TABLE public.dbbench_t_victim; SELECT 1 --'",
    "CREATE GROUP SUPERUSER": "CREATE GROUP dbbench_t_evil SUPERUSER",
    "unqualified UPDATE pg_authid": "UPDATE pg_authid SET rolsuper = true WHERE rolname = current_user",
    "COPY FROM a server file": "COPY t FROM E'/etc/passwd'",
    "COPY TO PROGRAM in DO/EXECUTE": "DO $$ BEGIN EXECUTE 'COPY (SELECT 1) TO PROGRAM ''touch /tmp/dbbench_t_pwned'''; "
    "END $$",
    "LOAD a library": "LOAD '/tmp/dbbench_t_missing.so'",
    "ABORT then DROP": "ABORT;\nDROP TABLE public.dbbench_t_victim",
    "quoted pg_read_file": "SELECT \"pg_read_file\"('/etc/passwd')",
    "RESET ROLE then DROP": "RESET ROLE;\nDROP TABLE public.dbbench_t_victim",
    "RESET ROLE in DO": "DO $$ BEGIN EXECUTE 'RESET ROLE'; EXECUTE 'DELETE FROM public.dbbench_t_victim'; END $$",
    "DELETE outside": "DELETE FROM public.dbbench_t_victim",
    "ALTER ROLE SUPERUSER": "ALTER ROLE CURRENT_USER SUPERUSER",
    "GRANT the admin role": "GRANT dbbench TO CURRENT_USER",
}

MY_ESCAPES = {
    "INSERT without INTO": f"INSERT {MY_VICTIM}.t VALUES (99)",
    "REPLACE without INTO": f"REPLACE {MY_VICTIM}.t VALUES (99)",
    "UPDATE … STRAIGHT_JOIN": f"UPDATE t STRAIGHT_JOIN {MY_VICTIM}.t AS v SET v.id = v.id + 100",
    "WITH … multi-table UPDATE": f"WITH c AS (SELECT 1 AS x) UPDATE t, {MY_VICTIM}.t AS v SET v.id = v.id + 100",
    "ANSI_QUOTES names": f'SET SESSION sql_mode = \'ANSI_QUOTES\';\nINSERT INTO "{MY_VICTIM}"."t" VALUES (98)',
    "NO_BACKSLASH_ESCAPES": f"SET SESSION sql_mode = 'NO_BACKSLASH_ESCAPES';\nSELECT 'a\\\\';\n"
    f"DELETE FROM {MY_VICTIM}.t",
    "procedure under DELIMITER, then CALL": "DELIMITER //\nCREATE PROCEDURE p() BEGIN DELETE FROM "
    f"{MY_VICTIM}.t; END //\nDELIMITER ;\nCALL p()",
    "GRANT in a procedure": "DELIMITER //\nCREATE PROCEDURE g() BEGIN GRANT ALL ON *.* TO CURRENT_USER(); END //\n"
    "DELIMITER ;\nCALL g()",
    "SET PASSWORD FOR root": "SET PASSWORD FOR 'root'@'localhost' = 'dbbench_t_owned'",
    "RENAME USER": "RENAME USER 'dbbench'@'localhost' TO 'dbbench_t_evil'@'localhost'",
    "SHUTDOWN": "SHUTDOWN",
    "KILL another session": "KILL {admin_thread}",
    "INSTALL PLUGIN": "INSTALL PLUGIN dbbench_t_evil SONAME 'dbbench_t_evil.so'",
    "CLONE INSTANCE": "CLONE LOCAL DATA DIRECTORY = '/tmp/dbbench_t_clone'",
    "LOAD DATA LOCAL of dbbench's state file": "LOAD DATA LOCAL INFILE '{state}' INTO TABLE t",
    "LOAD DATA server file": "LOAD DATA INFILE '/etc/passwd' INTO TABLE t",
    "CREATE DATABASE": "CREATE DATABASE dbbench_t_evil",
    "GRANT elsewhere": f"GRANT ALL PRIVILEGES ON {MY_VICTIM}.* TO CURRENT_USER()",
    "CREATE USER": "CREATE USER 'dbbench_t_evil'@'%' IDENTIFIED BY 'x'",
}


@pytest.fixture(scope="module")
def admins(local_servers):
    out = {d: connect(servers.local_url(d), dialect=d) for d in ("postgresql", "mysql")}
    yield out
    for t in out.values():
        t.dispose()


@pytest.fixture(scope="module")
def victims(admins):
    sql(
        admins["postgresql"],
        [
            f"DROP TABLE IF EXISTS {PG_VICTIM}",
            f"CREATE TABLE {PG_VICTIM} (id int)",
            f"INSERT INTO {PG_VICTIM} VALUES (1), (2), (3)",
            "DROP ROLE IF EXISTS dbbench_t_evil",
        ],
    )
    sql(
        admins["mysql"],
        [
            f"DROP DATABASE IF EXISTS {MY_VICTIM}",
            f"CREATE DATABASE {MY_VICTIM}",
            f"CREATE TABLE {MY_VICTIM}.t (id int)",
            f"INSERT INTO {MY_VICTIM}.t VALUES (1), (2), (3)",
        ],
    )
    yield
    sql(admins["postgresql"], [f"DROP TABLE IF EXISTS {PG_VICTIM}"])
    sql(admins["mysql"], [f"DROP DATABASE IF EXISTS {MY_VICTIM}"])


def _catalog(tmp_path: Path, dialect: str, escape: str) -> Path:
    cat = tmp_path / "cat"
    cat.mkdir(exist_ok=True)
    (cat / "a.toml").write_text(
        f'name = "a"\ncardinality = "1"\n[{dialect}]\nsql = "SELECT id FROM t WHERE id = 1"\n'
        f'expect = {{ table = "t", index = "{"t_pkey" if dialect == "postgresql" else "PRIMARY"}" }}\n'
    )
    (cat / f"setup.{dialect}.sql").write_text(BASE[dialect] + escape + ";\n")
    return cat


def _pg_untouched(admin) -> None:
    assert sql(admin, [f"SELECT array_agg(id ORDER BY id) FROM {PG_VICTIM}"]) == [([1, 2, 3],)]
    assert sql(admin, ["SELECT count(*) FROM pg_roles WHERE rolname = 'dbbench_t_evil'"]) == [(0,)]
    assert sql(
        admin, [f"SELECT rolsuper, rolcreaterole FROM pg_roles WHERE rolname = {isolation.role_name(NS)!r}"]
    ) == [(False, False)]
    assert not PWNED.exists()


def _my_untouched(admin) -> None:
    assert sql(admin, [f"SELECT GROUP_CONCAT(id ORDER BY id) FROM {MY_VICTIM}.t"]) == [("1,2,3",)]
    assert sql(admin, ["SELECT COUNT(*) FROM mysql.user WHERE user = 'dbbench_t_evil'"]) == [(0,)]
    assert sql(
        admin, ["SELECT COUNT(*) FROM information_schema.schemata WHERE schema_name = 'dbbench_t_evil'"]
    ) == [(0,)]
    grants = sql(admin, [f"SHOW GRANTS FOR '{isolation.role_name(NS)}'@'%'"])
    assert all("*.*" not in g[0] or "USAGE" in g[0] for g in grants), grants
    assert "dbbench_t_victimdb" not in str(grants)


@pytest.mark.parametrize("name", list(PG_ESCAPES))
def test_postgresql_refuses_what_reaches_outside_the_namespace(admins, victims, tmp_path, name):
    cat = _catalog(tmp_path, "postgresql", PG_ESCAPES[name])
    try:
        loader.load([admins["postgresql"]], cat, namespace=NS, text_checks=False)
        refused = None
    except loader.SetupError as exc:
        refused = str(exc)
    _pg_untouched(admins["postgresql"])
    if name != "ABORT then DROP" or refused:  # ABORT ends the role's own transaction only
        assert refused and "the server reported:" in refused, refused
        assert any(
            w in refused
            for w in ("permission denied", "must be owner", "must be superuser", "not allowed", "must have")
        ), refused


def test_postgresql_objects_planted_in_public_fail_the_setup_and_are_dropped(admins, victims, tmp_path):
    """PostgreSQL 12 lets every role create in ``public``: the post-check catches and drops it."""
    cat = _catalog(
        tmp_path,
        "postgresql",
        "CREATE TABLE public.dbbench_t_planted (id int);\n"
        "CREATE FUNCTION public.dbbench_t_fn() RETURNS int LANGUAGE sql AS 'SELECT 1'",
    )
    with pytest.raises(
        loader.SetupError,
        match=r"created objects outside 'dbbench_t_iso': "
        r"public\.dbbench_t_fn\(\), public\.dbbench_t_planted",
    ):
        loader.load([admins["postgresql"]], cat, namespace=NS, text_checks=False)
    assert sql(
        admins["postgresql"],
        ["SELECT to_regclass('public.dbbench_t_planted') IS NULL, to_regproc('public.dbbench_t_fn') IS NULL"],
    ) == [(True, True)]
    _pg_untouched(admins["postgresql"])


@pytest.mark.parametrize("name", list(MY_ESCAPES))
def test_mysql_refuses_what_reaches_outside_the_namespace(admins, victims, tmp_path, name):
    admin = admins["mysql"]
    state = servers.Home().state_file  # the running instance's (a pytest-xdist worker has its own)
    with admin.engine.connect() as conn:
        thread = conn.exec_driver_sql("SELECT CONNECTION_ID()").scalar()
        cat = _catalog(tmp_path, "mysql", MY_ESCAPES[name].format(admin_thread=thread, state=state))
        with pytest.raises(loader.SetupError, match="the server reported:") as exc:
            loader.load([admin], cat, namespace=NS, text_checks=False)
        assert conn.exec_driver_sql("SELECT 1").scalar() == 1  # not killed
    assert any(
        w in str(exc.value)
        for w in ("denied", "privilege", "not owner", "disabled", "refused", "PLUGIN", "plugin")
    ), exc.value
    _my_untouched(admin)
    assert sql(admin, [f"SELECT COUNT(*) FROM {NS}.t"]) == [(1,)]  # nothing of the state file arrived


def test_shapes_run_as_the_namespace_role_too(admins, victims, tmp_path):
    """A shape is catalog SQL as well: reading outside the namespace is refused by the server."""
    for dialect, query, index in (
        ("postgresql", f"SELECT id FROM {PG_VICTIM} WHERE id = 1", "t_pkey"),
        ("mysql", f"SELECT id FROM {MY_VICTIM}.t WHERE id = 1", "PRIMARY"),
    ):
        cat = tmp_path / dialect
        cat.mkdir()
        (cat / f"setup.{dialect}.sql").write_text(BASE[dialect])
        (cat / "a.toml").write_text(
            f'name = "a"\ncardinality = "1"\n[{dialect}]\nsql = "{query}"\n'
            f'expect = {{ table = "t", index = "{index}" }}\n'
        )
        assert run_cli("seed", "--only", dialect, "--catalog", str(cat), "--namespace", NS).code == 0
        explain = ("explain", "--only", dialect, "--catalog", str(cat), "--namespace", NS, *ONE_SAMPLE)
        result = run_cli(*explain)
        assert result.code == 2 and "Traceback" not in result.output, result.output
        assert "denied" in result.stderr, result.output
        result = run_cli(*explain, "--no-isolation")
        assert "denied" not in result.output, result.output  # dbbench's own user may read it


def test_the_role_is_locked_between_runs(admins, victims, tmp_path):
    role = isolation.role_name(NS)
    cat = _catalog(tmp_path, "postgresql", "SELECT 1")
    loader.load([admins["postgresql"]], cat, namespace=NS)
    assert sql(
        admins["postgresql"],
        [f"SELECT rolcanlogin, rolpassword IS NULL FROM pg_authid WHERE rolname = '{role}'"],
    ) == [(False, True)]
    cat = _catalog(tmp_path, "mysql", "SELECT 1")
    loader.load([admins["mysql"]], cat, namespace=NS)
    assert sql(admins["mysql"], [f"SELECT account_locked FROM mysql.user WHERE user = '{role}'"]) == [("Y",)]


def test_a_role_of_that_name_that_is_not_ours_is_refused_and_untouched(admins, tmp_path):
    ns = "dbbench_t_theirs"
    role = isolation.role_name(ns)
    pg, my = admins["postgresql"], admins["mysql"]
    sql(pg, [f"DROP ROLE IF EXISTS {role}", f"CREATE ROLE {role} LOGIN PASSWORD 'theirs'"])
    sql(
        my,
        [
            f"DROP USER IF EXISTS '{role}'@'%'",
            f"CREATE USER '{role}'@'%' IDENTIFIED BY 'theirs'",
            f"GRANT SELECT ON mysql.* TO '{role}'@'%'",
        ],
    )
    try:
        for target in (pg, my):
            cat = _catalog(tmp_path, target.dialect, "SELECT 1")
            with pytest.raises(NotOurs, match="exists and is not dbbench's"):
                loader.load([target], cat, namespace=ns)
        assert sql(pg, [f"SELECT rolcanlogin FROM pg_roles WHERE rolname = '{role}'"]) == [(True,)]
        assert "mysql" in str(sql(my, [f"SHOW GRANTS FOR '{role}'@'%'"]))
    finally:
        sql(pg, [f"DROP ROLE IF EXISTS {role}"])
        sql(my, [f"DROP USER IF EXISTS '{role}'@'%'"])


def test_without_the_privilege_to_create_roles_isolation_needs_an_explicit_flag(admins, tmp_path):
    """dbbench's user may own a namespace but not create roles: one line naming --no-isolation."""
    ns, user, password = "dbbench_t_plainns", "dbbench_t_plain", "plain-pass-9"
    pg, my = admins["postgresql"], admins["mysql"]
    drop_user = (
        f"DO $$ BEGIN IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '{user}') THEN "
        f"DROP OWNED BY {user}; DROP ROLE {user}; END IF; END $$"
    )
    sql(
        pg,
        [
            f"DROP SCHEMA IF EXISTS {ns} CASCADE",
            drop_user,
            f"CREATE ROLE {user} LOGIN PASSWORD '{password}'",
            f"GRANT CREATE ON DATABASE dbbench TO {user}",
        ],
    )
    sql(
        my,
        [
            f"DROP USER IF EXISTS '{user}'@'%'",
            f"CREATE USER '{user}'@'%' IDENTIFIED BY '{password}'",
            f"GRANT ALL ON `{ns}`.* TO '{user}'@'%'",
        ],
    )
    urls = {
        "postgresql": f"postgresql+psycopg://{user}:{password}@127.0.0.1:{pg.url.port}/dbbench",
        "mysql": f"mysql+pymysql://{user}:{password}@127.0.0.1:{my.url.port}/",
    }
    try:
        for dialect, option in (("postgresql", "--pg-url"), ("mysql", "--mysql-url")):
            cat = _catalog(tmp_path, dialect, "SELECT 1")
            args = [
                "seed",
                "--only",
                dialect,
                option,
                urls[dialect],
                "--catalog",
                str(cat),
                "--namespace",
                ns,
            ]
            result = run_cli(*args)
            assert result.code == 2 and "Traceback" not in result.output, result.output
            lines = [ln for ln in result.stderr.splitlines() if "warning:" not in ln]
            line = lines[0]
            assert (
                len(lines) == 1 and "cannot prepare the namespace role" in line and "--no-isolation" in line
            ), line
            assert password not in result.output
            result = run_cli(*args, "--no-isolation")
            assert result.code == 0, result.output
            kept = sql(admins[dialect], [f"SELECT count(*) FROM {ns}.t"])
            assert kept[0][0] > 0
            result = run_cli(*args)  # refused again: the namespace the last seed built is kept whole
            assert result.code == 2 and "cannot prepare the namespace role" in result.stderr, result.output
            assert "incomplete" not in result.stderr, result.stderr
            assert sql(admins[dialect], [f"SELECT count(*) FROM {ns}.t"]) == kept
            state = f"SELECT value FROM {ns}.dbbench_meta WHERE {'`key`' if dialect == 'mysql' else 'key'} = 'state'"
            assert sql(admins[dialect], [state]) == [("complete",)]
    finally:
        sql(pg, [f"DROP SCHEMA IF EXISTS {ns} CASCADE", drop_user])
        sql(my, [f"DROP DATABASE IF EXISTS {ns}", f"DROP USER IF EXISTS '{user}'@'%'"])


def _pg_drop_login(user: str) -> str:
    """Drop a PostgreSQL role with what it owns and its grants, if it exists."""
    return (
        f"DO $$ BEGIN IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '{user}') THEN "
        f"DROP OWNED BY {user} CASCADE; DROP ROLE {user}; END IF; END $$"
    )


@pytest.fixture()
def creator(admins):
    """A PostgreSQL login with CREATEROLE and not superuser, allowed to create its schema (CREATE
    on the database) as docs/isolation.md requires; its namespace and role dropped after."""
    ns, user, password = "dbbench_t_crns", "dbbench_t_creator", "creator-pass-3"
    pg = admins["postgresql"]
    drop = [
        f"DROP SCHEMA IF EXISTS {ns} CASCADE",
        _pg_drop_login(isolation.role_name(ns)),
        _pg_drop_login(user),
    ]
    sql(
        pg,
        [
            *drop,
            f"CREATE ROLE {user} LOGIN CREATEROLE NOSUPERUSER PASSWORD '{password}'",
            f"GRANT CREATE ON DATABASE {pg.url.database} TO {user}",
        ],
    )
    url = f"postgresql+psycopg://{user}:{password}@127.0.0.1:{pg.url.port}/{pg.url.database}"
    yield ns, url, password
    sql(pg, drop)


def test_a_createrole_user_that_is_not_superuser_seeds_with_isolation(admins, creator):
    """Issue 19: on PostgreSQL 12 a CREATEROLE user (the documented requirement) got "must be
    superuser to alter superusers" from ALTER ROLE … NOSUPERUSER … NOBYPASSRLS, leaving the namespace
    ``loading``. The example catalog seeds through the CLI, its setup SQL run as the namespace role,
    twice (the role created, then re-armed), and its shapes run as that role too."""
    ns, url, password = creator
    role = isolation.role_name(ns)
    pg = admins["postgresql"]
    shop = Path(__file__).resolve().parents[3] / "examples" / "shop"
    common = ("--only", "postgresql", "--pg-url", url, "--catalog", str(shop), "--namespace", ns)
    for attempt in ("created", "re-armed"):
        result = run_cli("seed", *common)
        assert result.code == 0 and "Traceback" not in result.output, f"{attempt}: {result.output}"
        assert password not in result.output
        assert sql(
            pg, [f"SELECT key, value FROM {ns}.dbbench_meta WHERE key IN ('isolation', 'state') ORDER BY 1"]
        ) == [
            ("isolation", role),
            ("state", "complete"),
        ]
        assert sql(
            pg,
            [
                "SELECT rolsuper, rolcreaterole, rolcreatedb, rolreplication, rolbypassrls, rolcanlogin "
                f"FROM pg_roles WHERE rolname = '{role}'"
            ],
        ) == [(False,) * 6]  # and locked again
        assert sql(
            pg,
            [
                f"SELECT DISTINCT tableowner FROM pg_tables WHERE schemaname = '{ns}' AND tablename <> 'dbbench_meta'"
            ],
        ) == [(role,)]  # the setup SQL ran as the role
    result = run_cli("explain", *common, *ONE_SAMPLE)
    assert result.code == 0 and password not in result.output, result.output


def test_a_role_only_a_superuser_may_rearm_is_one_clear_line(admins, creator):
    """When the CREATEROLE user cannot re-arm the role (someone gave it SUPERUSER), the seed stops
    with one line naming the role and what to do, before it touches the namespace: the previous
    seed's tables, rows and state are kept."""
    ns, url, password = creator
    role = isolation.role_name(ns)
    pg = admins["postgresql"]
    cat = Path(__file__).resolve().parents[3] / "examples" / "shop"
    args = ("seed", "--only", "postgresql", "--pg-url", url, "--catalog", str(cat), "--namespace", ns)
    assert run_cli(*args).code == 0
    ((rows,),) = sql(pg, [f"SELECT count(*) FROM {ns}.customers"])
    assert rows > 0
    sql(pg, [f"ALTER ROLE {role} SUPERUSER BYPASSRLS"])
    result = run_cli(*args)
    assert result.code == 2 and "Traceback" not in result.output, result.output
    lines = [ln for ln in result.stderr.splitlines() if "warning:" not in ln]
    assert len(lines) == 1, result.stderr
    assert (
        f"the namespace role '{role}' has SUPERUSER, BYPASSRLS, which only a superuser may remove" in lines[0]
    )
    assert f"ALTER ROLE {role} NOSUPERUSER NOBYPASSRLS" in lines[0]
    assert "incomplete" not in lines[0], lines[0]
    assert password not in result.output
    assert sql(pg, [f"SELECT rolsuper, rolbypassrls FROM pg_roles WHERE rolname = '{role}'"]) == [
        (True, True)
    ]
    assert sql(pg, [f"SELECT value FROM {ns}.dbbench_meta WHERE key = 'state'"]) == [("complete",)]
    assert sql(pg, [f"SELECT count(*) FROM {ns}.customers"]) == [(rows,)]  # the data kept


# -- item 2: LOAD DATA LOCAL ---------------------------------------------------------------------
def test_no_dbbench_connection_but_the_loader_may_send_client_files(admins, victims):
    admin = admins["mysql"]
    with pytest.raises(pymysql.err.OperationalError) as exc:
        sql(admin, f"LOAD DATA LOCAL INFILE '/etc/hostname' INTO TABLE {MY_VICTIM}.t")
    assert exc.value.args[0] in (2068, 3948)  # the client offered no local files
    _my_untouched(admin)


def test_the_loader_sends_only_the_file_it_is_loading(admins, victims, tmp_path):
    prepared = tmp_path / "rows.tsv"
    prepared.write_text("7\n8\n")
    conn = mysql.loader_connection(admins["mysql"].url, admins["mysql"].connect_args)
    try:
        with conn.cursor() as cur:
            conn.allowed = str(prepared)
            cur.execute(f"CREATE TEMPORARY TABLE {MY_VICTIM}.tmp_rows (id int)")
            with pytest.raises(
                pymysql.err.OperationalError,
                match="refused the server's request for the client file '/etc/hostname'",
            ):
                cur.execute(f"LOAD DATA LOCAL INFILE '/etc/hostname' INTO TABLE {MY_VICTIM}.tmp_rows")
            cur.execute(f"SELECT COUNT(*) FROM {MY_VICTIM}.tmp_rows")
            assert cur.fetchone()[0] == 0
            cur.execute(
                f"LOAD DATA LOCAL INFILE %s INTO TABLE {MY_VICTIM}.tmp_rows", (str(prepared),)
            )  # still usable
            cur.execute(f"SELECT GROUP_CONCAT(id ORDER BY id) FROM {MY_VICTIM}.tmp_rows")
            assert cur.fetchone()[0] == "7,8"
            conn.allowed = None
            with pytest.raises(pymysql.err.OperationalError, match="refused"):
                cur.execute(f"LOAD DATA LOCAL INFILE %s INTO TABLE {MY_VICTIM}.tmp_rows", (str(prepared),))
    finally:
        conn.close()
    assert os.path.exists(prepared)


def test_a_url_asking_for_local_infile_gets_no_client_files(admins, victims):
    """``?local_infile=1`` in a user's MySQL URL does not turn it back on outside the loader."""
    target = connect(admins["mysql"].url.update_query_dict({"local_infile": "1"}), dialect="mysql")
    try:
        with pytest.raises(pymysql.err.OperationalError) as exc:
            sql(target, f"LOAD DATA LOCAL INFILE '/etc/hostname' INTO TABLE {MY_VICTIM}.t")
    finally:
        target.dispose()
    assert exc.value.args[0] in (2068, 3948)
    _my_untouched(admins["mysql"])


def test_an_unknown_mysql_url_parameter_is_one_line(admins):
    from dbbench.errors import ConnectionFailed

    with pytest.raises(
        ConnectionFailed, match=r"does not accept a query parameter of the URL \(given: foo\)"
    ):
        connect(admins["mysql"].url.update_query_dict({"foo": "bar"}), dialect="mysql")
