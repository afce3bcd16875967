#!/usr/bin/env python3
"""Does every command take hostile but honest input as one line, without touching anyone's data?

    .venv/bin/python benchmarks/sweep_hostile_inputs.py [--only CLASS ...] [--timeout 60] [--json FILE] [-v]

Runs a few hundred bad inputs, one command at a time, against the local servers (started by
``dbbench servers up``): catalog files, data specs, setup SQL, result files, output paths, database
URLs, httpbench inputs and capture. Before the sweep a *victim* is made outside every dbbench
namespace (PostgreSQL schema ``sweep_victim``, MySQL database ``sweep_victim``, one table of three
rows each), and a *secret* file outside every catalog. After each command the victim is
fingerprinted again. Each command is classified:

* **one-line error**: exit 2 (or 1 where a check fails), one ``error:`` line of the tool's own on
  stderr (a catalog's further problems follow it, one line each), no line longer than 1,100
  characters;
* **traceback**: ``Traceback`` on stderr (a bug, whatever the exit code);
* **hang**: still running after ``--timeout`` seconds (killed);
* **accepted**: exit 0 (listed, to be read: some inputs are fine);
* **data touched**: the victim's fingerprint changed (restored before the next command);
* **server stopped**: a server no longer answers (started again before the next command);
* **secret shown**: the secret file's text or a server password on stdout or stderr.

Prints one line per class and the cases that were not one-line errors; exits 1 when any command
printed a traceback, hung, touched the victim or showed a secret.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SECRET = "sweep-secret-7f3a9c-do-not-print"
VICTIM = "sweep_victim"
NS = "sweep_ns"
SHOP = ROOT / "examples" / "shop"
BASELINE = SHOP / "baseline.json"
COMPARE_RESULT = ROOT / "docs" / "results" / "alpine-nginx-caddy.json"
DOWN = ("--target", "a=http://127.0.0.1:9", "--target", "b=http://127.0.0.1:9")  # nobody on port 9


@dataclass
class Case:
    klass: str
    label: str
    argv: list[str]  # program first; "{d}" is the case's own directory
    prepare: Callable[[Path], None] | None = None
    env: dict[str, str] = field(default_factory=dict)
    accept: bool = False  # exit 0 is the right answer (a control)


def write(rel: str, text: str | bytes) -> Callable[[Path], None]:
    def make(d: Path) -> None:
        path = d / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text)

    return make


def both(*steps: Callable[[Path], None]) -> Callable[[Path], None]:
    def make(d: Path) -> None:
        for step in steps:
            step(d)

    return make


def fifo(rel: str) -> Callable[[Path], None]:
    def make(d: Path) -> None:
        (d / rel).parent.mkdir(parents=True, exist_ok=True)
        os.mkfifo(d / rel)

    return make


def sparse(rel: str, size: int) -> Callable[[Path], None]:
    def make(d: Path) -> None:
        (d / rel).parent.mkdir(parents=True, exist_ok=True)
        with open(d / rel, "wb") as fh:
            fh.truncate(size)

    return make


def link(rel: str, target: str) -> Callable[[Path], None]:
    def make(d: Path) -> None:
        (d / rel).parent.mkdir(parents=True, exist_ok=True)
        os.symlink(target.format(d=d), d / rel)

    return make


def copy(src: Path, rel: str) -> Callable[[Path], None]:
    def make(d: Path) -> None:
        if src.is_dir():
            shutil.copytree(src, d / rel)
        else:
            shutil.copy(src, d / rel)

    return make


SCHEMA = (
    "CREATE TABLE items (id integer PRIMARY KEY, name varchar(40) NOT NULL, status varchar(10) NOT NULL);\n"
)
QUERY = "-- name: item_by_id\nSELECT name FROM items WHERE id = :id;\n"


def spec(columns: str, rows: str = '":scale"') -> Callable[[Path], None]:
    """A catalog with the items table, one shape and a data spec whose items columns are ``columns``."""
    return both(
        write("C/setup.sql", SCHEMA),
        write("C/queries.sql", QUERY),
        write(
            "C/data/spec.toml",
            f"scale = 100\n\n[tables.items]\nrows = {rows}\n\n[tables.items.columns]\n{columns}\n",
        ),
    )


def sql_catalog(body: str | bytes) -> Callable[[Path], None]:
    return both(write("C/setup.sql", SCHEMA), write("C/queries.sql", body))


def setup_sql(text: str) -> Callable[[Path], None]:
    return both(write("C/setup.sql", text), write("C/queries.sql", "-- name: one\nSELECT 1 AS one;\n"))


def cases() -> list[Case]:
    out: list[Case] = []
    add = out.append
    db = ["dbbench"]
    hb = ["httpbench"]

    # -- catalog files ---------------------------------------------------------------------------
    k = "catalog files"
    for cmd in ("validate", "explain"):
        extra = [] if cmd == "validate" else ["--namespace", NS]
        add(Case(k, f"{cmd} --catalog /dev/zero", [*db, cmd, "--catalog", "/dev/zero", *extra]))
        add(Case(k, f"{cmd} --catalog FIFO", [*db, cmd, "--catalog", "{d}/f.toml", *extra], fifo("f.toml")))
        add(
            Case(
                k, f"{cmd}: a .sql that is a FIFO", [*db, cmd, "--catalog", "{d}/C", *extra], fifo("C/q.sql")
            )
        )
        add(
            Case(
                k,
                f"{cmd}: a .toml linked to /dev/zero",
                [*db, cmd, "--catalog", "{d}/C", *extra],
                link("C/a.toml", "/dev/zero"),
            )
        )
        add(
            Case(
                k,
                f"{cmd}: a .sql linked outside the catalog",
                [*db, cmd, "--catalog", "{d}/C", *extra],
                both(
                    write("secret.sql", f"-- name: s\nSELECT '{SECRET}';\n"),
                    link("C/q.sql", "{d}/secret.sql"),
                ),
            )
        )
        add(
            Case(
                k,
                f"{cmd}: a 65 MiB sparse .sql",
                [*db, cmd, "--catalog", "{d}/C", *extra],
                sparse("C/q.sql", 65 << 20),
            )
        )
        add(
            Case(
                k,
                f"{cmd}: invalid UTF-8 .sql",
                [*db, cmd, "--catalog", "{d}/C", *extra],
                sql_catalog(b"-- name: a\nSELECT '\xff' ;\n"),
            )
        )
    for label, body in [
        ("a NUL byte in a block", "-- name: a\nSELECT name FROM items WHERE id = :id\x00 OR 1=1;\n"),
        ("an unterminated quote", "-- name: a\nSELECT name FROM items WHERE name = 'x;\n"),
        ("an unterminated dollar quote", "-- name: a\nSELECT $q$ x FROM items;\n"),
        ("a block that is a DROP", "-- name: a\nDROP TABLE items;\n"),
        ("a block that is an UPDATE without a name", "UPDATE items SET name = 'x';\n"),
        (
            "a file cut mid-statement",
            "-- name: a\nSELECT name FROM items WHERE id = :id;\n\n-- name: b\nSELECT name FROM items WHERE (id = ",
        ),
        ("unbalanced parentheses", "-- name: a\nSELECT name FROM items WHERE (id = :id;\n"),
        ("two names for one block", "-- name: a\n-- name: b\nSELECT 1;\n"),
        ("a name of 10,000 characters", f"-- name: {'n' * 10_000}\nSELECT 1;\n"),
        ("no blocks at all", "SELECT 1;\n"),
    ]:
        add(Case(k, f"validate: {label}", [*db, "validate", "--catalog", "{d}/C"], sql_catalog(body)))
    for label, toml in [
        ("TOML 100k arrays deep", "x = " + "[" * 100_000 + "]" * 100_000 + "\n"),
        ("TOML with a NUL in sql", 'name = "a"\n[postgresql]\nsql = "SELECT 1\\u0000; DROP TABLE items"\n'),
        ("TOML not TOML", "name = \n"),
        ("TOML unknown field", 'name = "a"\nqueryy = "SELECT 1"\n'),
        ("TOML sql a DELETE", 'name = "a"\nquery = "DELETE FROM items"\n'),
    ]:
        add(
            Case(
                k,
                f"validate: {label}",
                [*db, "validate", "--catalog", "{d}/C"],
                both(write("C/setup.sql", SCHEMA), write("C/a.toml", toml)),
            )
        )
    add(
        Case(
            k, "validate: the shop catalog (control)", [*db, "validate", "--catalog", str(SHOP)], accept=True
        )
    )

    # -- data specs ------------------------------------------------------------------------------
    k = "data specs"
    secret_file = write("secret.txt", f"{SECRET}\n{SECRET}-2\n")
    for label, cols in [
        ("choice file: an absolute path outside", 'status = { gen = "choice", file = "{d}/secret.txt" }'),
        ("choice file: ../ out of the catalog", 'status = { gen = "choice", file = "../../secret.txt" }'),
        ("choice file: /dev/zero", 'status = { gen = "choice", file = "/dev/zero" }'),
        (
            "format walking attributes",
            'name = { gen = "sequence", format = "{0.__class__.__mro__[1].__subclasses__}" }',
        ),
        ("format with an index", 'name = { gen = "sequence", format = "{0[0]}" }'),
        ("faker provider __class__", 'name = { gen = "faker", provider = "__class__" }'),
        ("faker provider _Faker__config", 'name = { gen = "faker", provider = "_Faker__config" }'),
        ("faker provider that does not exist", 'name = { gen = "faker", provider = "no_such_provider" }'),
        ("weights of the wrong length", 'status = { gen = "choice", values = ["a", "b"], weights = [1] }'),
        ("weights all zero", 'status = { gen = "choice", values = ["a", "b"], weights = [0, 0] }'),
        ("min above max", 'id = { gen = "int", min = 10, max = 1 }'),
        ("distinct = 0", 'status = { gen = "choice", values = ["a", "b"], distinct = 0 }'),
        ("a column hashed from itself", 'name = { gen = "sha256", column = "name" }'),
        (
            "two columns from each other",
            'name = { gen = "sha256", column = "status" }\nstatus = { gen = "sha256", column = "name" }',
        ),
    ]:
        add(
            Case(
                k,
                f"validate: {label}",
                [*db, "validate", "--catalog", "{d}/C"],
                both(secret_file, spec(cols.replace("{d}", "{d}"))),
            )
        )
    for label, rows in [
        ("rows = -5", '"-5"'),
        ("rows = :scale / 0", '":scale / 0"'),
        ("rows = :scale * 1e12", '":scale * 1e12"'),
        ("rows = 10 ** 400", '"10 ** 400"'),
        ("rows = __import__('os')", "\"__import__('os')\""),
    ]:
        add(
            Case(
                k,
                f"validate: {label}",
                [*db, "validate", "--catalog", "{d}/C"],
                spec('name = { gen = "const", value = "x" }', rows),
            )
        )
    add(
        Case(
            k,
            "seed --scale 1000000000",
            [*db, "seed", "--catalog", "{d}/C", "--namespace", NS, "--scale", "1000000000"],
            spec('name = { gen = "const", value = "x" }'),
        )
    )
    add(
        Case(
            k,
            "grow --sizes 1k,<400 nines>",
            [*db, "grow", "--catalog", "{d}/C", "--namespace", NS, "--sizes", "1k," + "9" * 400],
            spec('name = { gen = "const", value = "x" }'),
        )
    )
    add(Case(k, "fill --spec /dev/zero", [*db, "fill", "--spec", "/dev/zero", "--namespace", NS]))
    add(Case(k, "fill --spec FIFO", [*db, "fill", "--spec", "{d}/s.toml", "--namespace", NS], fifo("s.toml")))

    # -- setup SQL -------------------------------------------------------------------------------
    k = "setup SQL"
    pg_only, my_only = ["--only", "postgresql"], ["--only", "mysql"]
    for label, text, only in [
        ("DROP another schema's table", f"DROP TABLE {VICTIM}.t;\n", pg_only),
        (
            "DELETE through a view of another schema",
            f"CREATE VIEW vv AS SELECT * FROM {VICTIM}.t;\nDELETE FROM vv;\n",
            pg_only,
        ),
        (
            "a function body writing another schema",
            f"CREATE FUNCTION f() RETURNS void LANGUAGE sql AS $$ DELETE FROM {VICTIM}.t $$;\nSELECT f();\n",
            pg_only,
        ),
        ("SET search_path to another schema", f"SET search_path = {VICTIM};\nDELETE FROM t;\n", pg_only),
        ("quoted identifiers", f'DELETE FROM "{VICTIM}"."t";\n', pg_only),
        ("COPY TO PROGRAM", "COPY (SELECT 1) TO PROGRAM 'touch /tmp/sweep-pwned';\n", pg_only),
        ("DROP another database's table", f"DROP TABLE {VICTIM}.t;\n", my_only),
        ("DELETE through a view", f"CREATE VIEW vv AS SELECT * FROM {VICTIM}.t;\nDELETE FROM vv;\n", my_only),
        ("backquoted names", f"DELETE FROM `{VICTIM}`.`t`;\n", my_only),
        ("a comment hiding the dot", f"DELETE FROM {VICTIM}/* x */.t;\n", my_only),
        ("a procedure body", f"CREATE PROCEDURE p() DELETE FROM {VICTIM}.t;\nCALL p();\n", my_only),
        ("USE another database", f"USE {VICTIM};\nDELETE FROM t;\n", my_only),
        ("SHUTDOWN", "SHUTDOWN;\n", my_only),
    ]:
        for iso in ([], ["--no-isolation"]):
            add(
                Case(
                    k,
                    f"seed{' --no-isolation' if iso else ''}: {label}",
                    [*db, "seed", "--catalog", "{d}/C", "--namespace", NS, *only, *iso],
                    setup_sql(text),
                )
            )

    # -- result files ----------------------------------------------------------------------------
    k = "result files"
    nested = write("nested.json", "[" * 100_000 + "]" * 100_000)
    doc = json.loads(BASELINE.read_text())
    for label, make in [
        ("/dev/zero", None),
        ("a FIFO with no writer", fifo("r.json")),
        ("a 65 MiB sparse file", sparse("r.json", 65 << 20)),
        ("100k nested brackets", nested),
        ("NaN", write("r.json", json.dumps(doc).replace('"p50_ms": ', '"p50_ms": NaN, "x": ', 1))),
        ("1e400", write("r.json", json.dumps(doc).replace('"p50_ms": ', '"p50_ms": 1e400, "x": ', 1))),
        ("not UTF-8", write("r.json", b'{"schema": "\xff"}')),
        ("another schema", write("r.json", '{"schema": "dbbench.explain/9"}')),
        ("a list", write("r.json", "[]")),
        ("a 50-million-character string", write("r.json", json.dumps({**doc, "host": "h" * 50_000_000}))),
    ]:
        path = "/dev/zero" if make is None else ("{d}/nested.json" if make is nested else "{d}/r.json")
        add(Case(k, f"dbbench report: {label}", [*db, "report", path], make))
        add(Case(k, f"dbbench diff: {label}", [*db, "diff", path, str(BASELINE)], make))
        add(Case(k, f"httpbench report: {label}", [*hb, "report", path], make))
    add(
        Case(
            k, "check --baseline /dev/zero", [*db, "check", "--catalog", str(SHOP), "--baseline", "/dev/zero"]
        )
    )
    add(
        Case(
            k,
            "baseline save --from FIFO",
            [*db, "baseline", "save", "{d}/b.json", "--from", "{d}/r.json"],
            fifo("r.json"),
        )
    )

    # -- output paths ----------------------------------------------------------------------------
    k = "output paths"
    files = both(
        copy(BASELINE, "b.json"), copy(BASELINE, "r.json"), copy(SHOP, "C"), copy(COMPARE_RESULT, "h.json")
    )
    for label, argv in [
        ("diff --output BASELINE", [*db, "diff", "{d}/b.json", "{d}/r.json", "--output", "{d}/b.json"]),
        ("report --output RESULT", [*db, "report", "{d}/r.json", "--output", "{d}/r.json"]),
        (
            "report --html through a link to RESULT",
            [*db, "report", "{d}/r.json", "--html", "{d}/C/../r.json"],
        ),
        (
            "seed --output the catalog's setup SQL",
            [*db, "seed", "--catalog", "{d}/C", "--output", "{d}/C/setup.postgresql.sql"],
        ),
        (
            "explain --junit a catalog entry",
            [*db, "explain", "--catalog", "{d}/C", "--junit", "{d}/C/01-customer-by-email.toml"],
        ),
        (
            "--markdown X --junit X --output X",
            [
                *db,
                "diff",
                "{d}/b.json",
                "{d}/r.json",
                "--markdown",
                "{d}/x",
                "--junit",
                "{d}/x",
                "--output",
                "{d}/x",
            ],
        ),
        ("httpbench report --html RESULT", [*hb, "report", "{d}/h.json", "--html", "{d}/h.json"]),
        (
            "httpbench --output = --scenarios",
            [*hb, "compare", *DOWN, "--scenarios", "{d}/h.json", "--output", "{d}/h.json"],
        ),
        ("--output /dev/full", [*db, "report", "{d}/r.json", "--output", "/dev/full"]),
        ("--output a directory", [*db, "report", "{d}/r.json", "--output", "{d}/C"]),
        ("--output in a missing directory", [*db, "report", "{d}/r.json", "--output", "{d}/nope/x.md"]),
        ("httpbench report --html /dev/full", [*hb, "report", "{d}/h.json", "--html", "/dev/full"]),
    ]:
        add(Case(k, label, argv, files))
    add(
        Case(
            k,
            "report --output beside the catalog (control)",
            [*db, "report", "{d}/r.json", "--output", "{d}/C/r.md"],
            files,
            accept=True,
        )
    )

    # -- database URLs ---------------------------------------------------------------------------
    k = "URLs"
    for label, url, var in [
        ("raw password with @:/%?#", "postgresql+psycopg://u:p@ss:w/rd%?#x@127.0.0.1:55432/db", "pg"),
        ("raw password with @:/%?#", "mysql+pymysql://u:p@ss:w/rd%?#x@127.0.0.1:53306/", "mysql"),
        ("nobody listening", "postgresql+psycopg://u:pw@127.0.0.1:9/db", "pg"),
        ("wrong password", "mysql+pymysql://dbbench:wrong-pw-sweep@127.0.0.1:53306/", "mysql"),
        ("another scheme", "sqlite:///tmp/x.db", "pg"),
        ("not a URL", "hello", "mysql"),
        ("100 KB long", "postgresql+psycopg://u:pw@" + "h" * 100_000 + ":1/db", "pg"),
        ("MariaDB-style URL to PostgreSQL's port", "mysql+pymysql://u:pw@127.0.0.1:55432/", "mysql"),
    ]:
        opt = "--pg-url" if var == "pg" else "--mysql-url"
        add(
            Case(
                k,
                f"{opt}: {label}",
                [*db, "info", opt, url, "--only", "postgresql" if var == "pg" else "mysql"],
            )
        )
        env = {"DBBENCH_PG_URL" if var == "pg" else "DBBENCH_MYSQL_URL": url}
        add(
            Case(
                k, f"env: {label}", [*db, "info", "--only", "postgresql" if var == "pg" else "mysql"], env=env
            )
        )

    # -- httpbench inputs ------------------------------------------------------------------------
    k = "httpbench inputs"
    for label, argv, make in [
        ("--scenarios /dev/zero", [*hb, "compare", *DOWN, "--scenarios", "/dev/zero"], None),
        ("--scenarios FIFO", [*hb, "compare", *DOWN, "--scenarios", "{d}/s.toml"], fifo("s.toml")),
        (
            "--scenarios 5 MiB",
            [*hb, "compare", *DOWN, "--scenarios", "{d}/s.toml"],
            sparse("s.toml", 5 << 20),
        ),
        (
            "--scenarios nested 100k",
            [*hb, "compare", *DOWN, "--scenarios", "{d}/s.toml"],
            write("s.toml", "x = " + "[" * 100_000 + "]" * 100_000),
        ),
        (
            "--auth file:/dev/zero",
            [*hb, "compare", *DOWN, "--auth", "a=file:/dev/zero", "--scenario", "/"],
            None,
        ),
        ("--auth file:FIFO", [*hb, "compare", *DOWN, "--auth", "a=file:{d}/t", "--scenario", "/"], fifo("t")),
        (
            "--auth the secret itself",
            [*hb, "compare", *DOWN, "--auth", f"a={SECRET}", "--scenario", "/"],
            None,
        ),
        (
            "a 100 KB target name",
            [*hb, "compare", "--target", "n" * 100_000 + "=http://127.0.0.1:9", *DOWN[2:], "--scenario", "/"],
            None,
        ),
        ("a CRLF in a header", [*hb, "compare", *DOWN, "--scenario", "path=/,header=X-A: b\r\nX-B: c"], None),
        ("--timeout nan", [*hb, "compare", *DOWN, "--scenario", "/", "--timeout", "nan"], None),
        ("--rounds 0", [*hb, "compare", *DOWN, "--scenario", "/", "--rounds", "0"], None),
        (
            "a URL with credentials in the query",
            [*hb, "compare", *DOWN, "--scenario", "/x?token=" + SECRET],
            None,
        ),
        (
            "a scenario name of 1M characters",
            [*hb, "compare", *DOWN, "--scenarios", "{d}/s.toml"],
            write("s.toml", f'[[scenario]]\nname = "{"s" * 1_000_000}"\npath = "/"\n'),
        ),
    ]:
        add(Case(k, label, argv, make))

    # -- capture ---------------------------------------------------------------------------------
    k = "capture"
    for label, argv, make in [
        ("--output /dev/full", [*db, "capture", "--namespace", NS, "--output", "/dev/full"], None),
        (
            "a namespace that does not exist (PostgreSQL)",
            [*db, "capture", "--namespace", "sweep_nowhere", "--only", "postgresql", "--output", "{d}/c.sql"],
            None,
        ),
        (
            "a namespace that does not exist (MySQL)",
            [*db, "capture", "--namespace", "sweep_nowhere", "--only", "mysql", "--output", "{d}/c.sql"],
            None,
        ),
        ("--output a directory", [*db, "capture", "--namespace", NS, "--output", "{d}"], None),
        ("--catalog /dev/zero", [*db, "capture", "--namespace", NS, "--catalog", "/dev/zero"], None),
        (
            "catalog accept over a FIFO",
            [*db, "catalog", "accept", "--catalog", "{d}/C"],
            both(write("C/queries.sql", QUERY), fifo("C/z.sql")),
        ),
    ]:
        add(Case(k, label, argv, make))
    return out


# -- the victim and the secrets ----------------------------------------------------------------------
def _targets():
    from dbbench.access.targets import open_targets

    return open_targets({})


def make_victim() -> None:
    for t in _targets():
        with t.all_or_nothing() as conn:
            cur = conn.cursor()
            if t.dialect == "postgresql":
                cur.execute(f"DROP SCHEMA IF EXISTS {VICTIM} CASCADE")
                cur.execute(f"CREATE SCHEMA {VICTIM}")
            else:
                cur.execute(f"DROP DATABASE IF EXISTS {VICTIM}")
                cur.execute(f"CREATE DATABASE {VICTIM}")
            cur.execute(f"CREATE TABLE {VICTIM}.t (id integer PRIMARY KEY, v varchar(20))")
            cur.execute(f"INSERT INTO {VICTIM}.t VALUES (1, 'one'), (2, 'two'), (3, 'three')")
            conn.commit()
        t.dispose()


def servers_answer() -> bool:
    """Both local servers accept a connection (a SHUTDOWN that got through stops one)."""
    try:
        for t in _targets():
            t.dispose()
    except Exception:
        return False
    return True


def victim_state() -> list[tuple]:
    state = []
    for t in _targets():
        try:
            with t.all_or_nothing() as conn:
                cur = conn.cursor()
                cur.execute(f"SELECT id, v FROM {VICTIM}.t ORDER BY id")
                state.append((t.dialect, tuple(map(tuple, cur.fetchall()))))
                conn.rollback()
        except Exception as exc:  # a dropped schema is a change, recorded as such
            state.append((t.dialect, type(exc).__name__))
        finally:
            t.dispose()
    return state


def drop_victim_and_namespace() -> None:
    from dbbench import dialects
    from dbbench.access import isolation

    for t in _targets():
        with t.all_or_nothing() as conn:
            cascade = " CASCADE" if t.dialect == "postgresql" else ""
            kind = "SCHEMA" if t.dialect == "postgresql" else "DATABASE"
            conn.cursor().execute(f"DROP {kind} IF EXISTS {VICTIM}{cascade}")
            conn.commit()
        with t.all_or_nothing() as conn:
            dialects.get(t.dialect).drop_namespace(conn, NS)
            conn.commit()
        isolation.drop_role(t, NS)
        t.dispose()


def server_passwords() -> list[str]:
    from urllib.parse import urlsplit

    from dbbench.servers import local_url

    found = []
    for dialect in ("postgresql", "mysql"):
        password = urlsplit(local_url(dialect) or "").password
        if password:
            found.append(password)
    return found


# -- running ---------------------------------------------------------------------------------------
def classify(case: Case, code: int | None, stdout: str, stderr: str, secrets: list[str]) -> list[str]:
    tags = []
    if code is None:
        tags.append("hang")
    if "Traceback" in stderr:
        tags.append("traceback")
    if any(s and (s in stdout or s in stderr) for s in secrets):
        tags.append("secret shown")
    if code == 0:
        tags.append("accepted")
    elif code is not None and "traceback" not in tags:
        # one error line (a catalog's problems follow it, one line each: still one line per problem)
        errors = [line for line in stderr.splitlines() if line.startswith(f"{case.argv[0]}: error: ")]
        if len(errors) == 1 and all(len(line) <= 1100 for line in stderr.splitlines()):
            tags.append("one-line error")
        else:
            tags.append("other exit")
    return tags


def run(case: Case, timeout: float, secrets: list[str]) -> tuple[list[str], str]:
    with tempfile.TemporaryDirectory(prefix="sweep-") as tmp:
        d = Path(tmp)
        if case.prepare is not None:
            case.prepare(d)
        argv = [a.replace("{d}", str(d)) for a in case.argv]
        env = {**os.environ, **case.env}
        proc = subprocess.Popen(
            [sys.executable, "-m", *argv],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            stdout, stderr = proc.communicate(timeout=timeout)
            code: int | None = proc.returncode
        except subprocess.TimeoutExpired:
            proc.kill()
            stdout, stderr = proc.communicate()
            code = None
    tags = classify(case, code, stdout, stderr, secrets)
    said = next((line for line in stderr.splitlines() if ": error: " in line), stderr.strip()[-200:])
    return tags, f"exit {code}: {said[:200]}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="*", help="Classes to run (default: all).")
    parser.add_argument(
        "--timeout", type=float, default=60.0, help="Seconds a command may take (then: hang)."
    )
    parser.add_argument("--json", type=Path, help="Write every case's outcome here.")
    parser.add_argument("-v", "--verbose", action="store_true", help="Print every case.")
    args = parser.parse_args()

    all_cases = [c for c in cases() if not args.only or c.klass in args.only]
    secrets = [SECRET, *server_passwords()]
    make_victim()
    before = victim_state()
    rows: dict[str, dict[str, int]] = {}
    notes: list[str] = []
    record = []
    started = time.monotonic()
    try:
        for case in all_cases:
            tags, said = run(case, args.timeout, secrets)
            if not servers_answer():
                tags.append("server stopped")
                subprocess.run(
                    [sys.executable, "-m", "dbbench", "servers", "up"], cwd=ROOT, capture_output=True
                )
            if victim_state() != before:
                tags.append("data touched")
                make_victim()
            counts = rows.setdefault(case.klass, {})
            counts["tried"] = counts.get("tried", 0) + 1
            for tag in tags:
                counts[tag] = counts.get(tag, 0) + 1
            bad = {"hang", "traceback", "data touched", "secret shown", "server stopped", "other exit"} & set(
                tags
            )
            if bad or ("accepted" in tags and not case.accept):
                notes.append(f"  [{case.klass}] {case.label}: {', '.join(tags)} -- {said}")
            if args.verbose:
                print(f"{case.klass:16} {', '.join(tags):28} {case.label} -- {said}", flush=True)
            record.append({"class": case.klass, "case": case.label, "tags": tags, "said": said})
    finally:
        drop_victim_and_namespace()
    from tabulate import tabulate

    columns = [
        "tried",
        "one-line error",
        "accepted",
        "traceback",
        "hang",
        "data touched",
        "server stopped",
        "secret shown",
        "other exit",
    ]
    table = [[klass, *(counts.get(c, 0) for c in columns)] for klass, counts in rows.items()]
    table.append(["all", *(sum(r[i + 1] for r in table) for i in range(len(columns)))])
    print(tabulate(table, headers=["class", *columns], tablefmt="github"))
    print(f"\n{len(all_cases)} commands in {time.monotonic() - started:.0f} s")
    if notes:
        print("\nTo read (accepted, or not a one-line error):")
        print("\n".join(notes))
    if args.json:
        args.json.write_text(json.dumps(record, indent=2))
    worst = sum(
        table[-1][columns.index(c) + 1]
        for c in ("traceback", "hang", "data touched", "server stopped", "secret shown")
    )
    return 1 if worst else 0


if __name__ == "__main__":
    sys.exit(main())
