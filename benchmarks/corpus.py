#!/usr/bin/env python3
"""Does the volume path work on real schemas no one here wrote?

    .venv/bin/python benchmarks/corpus.py FOLDER [--scale 20000] [--timeout 600] [--only NAME ...] [--json FILE]

FOLDER holds catalog directories (``setup.mysql.sql`` / ``setup.postgresql.sql``, a dump or a
``setup/`` folder, see docs/catalog.md), at any depth: a conformance corpus of public schemas
(vendor sample databases, an application's ``structure.sql``, a wiki's generated tables), kept out
of the repository. For every catalog and each dialect it has, on a COPY of the directory in a
temporary folder (``init`` writes ``data/spec.toml`` into the catalog: the corpus is never written),
in a namespace of its own (``corpus_NN``, ``--prefix`` to name them otherwise), one step after the other, each bounded by ``--timeout``:

1. ``dbbench seed --catalog D --namespace NS --only DIALECT``: the setup SQL, empty (the intake);
2. ``dbbench init --catalog D --namespace NS --only DIALECT``: the starter spec;
3. ``dbbench seed --catalog D --namespace NS --only DIALECT --scale N``: the spec, unedited;
4. ``dbbench explain --catalog D --namespace NS --only DIALECT``: the catalog's shapes, if any
   (``--explain-on setup``: on the rows of step 1, without steps 2 and 3).

``--install-extensions`` first does what dbbench's refusal of ``CREATE EXTENSION`` tells a user
to do, on the LOCAL PostgreSQL only and only when dbbench's own user is a superuser there: it
installs, in ``public``, every extension the selected catalogs' PostgreSQL setup files ask for
there (``CREATE EXTENSION [IF NOT EXISTS] x [WITH SCHEMA public]``) that the server ships and has
not installed, printing one line each (and one per extension it leaves: not shipped, asked in
another schema, already installed); the seed then skips those statements (docs/catalog.md). The
extensions it installed are dropped at the end (not with ``--keep``); dbbench itself never
installs one.

A step runs only when the one before it exited 0. Prints one line per schema and dialect: tables,
rows loaded by step 3, rows/s of its fill, each step's exit code (``-`` not run, ``T`` killed at the
timeout) and the first line of the first failure; under it, one line per write shape (an
``UPDATE``, ``DELETE``, ``INSERT … SELECT`` or locking read) that step 4 measured: pass or fail,
the rows it changed, the rows and gaps it locked per table, the foreign keys it went through (and
the ones with no index to use) and whether the data's fingerprints were unchanged (see
docs/writes.md); then the count of schemas that passed each step.
Drops its namespaces (and their roles) at the end. Exits 1 when any step failed.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

DIALECTS = ("postgresql", "mysql")
STEPS = ("seed", "init", "fill", "explain")
NOT_RUN, TIMED_OUT = "-", "T"


@dataclass
class Outcome:
    name: str
    dialect: str
    namespace: str
    codes: dict[str, str] = field(default_factory=dict)
    tables: int | None = None
    rows: int | None = None
    rows_per_s: float | None = None
    failure: str = ""
    seconds: float = 0.0
    writes: list[dict] = field(default_factory=list)


def dialects_of(catalog: Path) -> list[str]:
    """The dialects a catalog directory has setup SQL for (as docs/catalog.md finds it)."""
    found = []
    for d in DIALECTS:
        if (catalog / f"setup.{d}.sql").is_file() or (catalog / "setup.sql").is_file():
            found.append(d)
        elif (catalog / "setup").is_dir():
            names = [p.name for p in (catalog / "setup").glob("*.sql")]
            other = next(o for o in DIALECTS if o != d)
            if any(n.endswith(f".{d}.sql") or not n.endswith(f".{other}.sql") for n in names):
                found.append(d)
    return found


def catalogs(folder: Path) -> list[Path]:
    """Every catalog directory under ``folder`` (one that has setup SQL), in name order."""
    out = []
    for d in sorted(p for p in [folder, *folder.rglob("*")] if p.is_dir()):
        if "data" in d.relative_to(folder).parts:
            continue
        if dialects_of(d):
            out.append(d)
    return out


_CREATE_EXTENSION = re.compile(
    r'^\s*CREATE\s+EXTENSION\s+(?:IF\s+NOT\s+EXISTS\s+)?("(?:[^"]|"")+"|[A-Za-z_][\w$]*)'
    r'(?:\s+WITH)?(?:\s+SCHEMA\s+("(?:[^"]|"")+"|[A-Za-z_][\w$]*))?',
    re.I,
)


def _unquote(name: str) -> str:
    return name[1:-1].replace('""', '"') if name.startswith('"') else name.lower()


def postgresql_files(catalog: Path) -> list[Path]:
    """A catalog's PostgreSQL setup files (as docs/catalog.md finds them)."""
    for name in ("setup.postgresql.sql", "setup.sql"):
        if (catalog / name).is_file():
            return [catalog / name]
    return sorted(p for p in (catalog / "setup").glob("*.sql") if not p.name.endswith(".mysql.sql"))


def asked_extensions(catalogs: list[Path]) -> dict[str, str]:
    """The extensions the catalogs' PostgreSQL setup files create (-> the schema each asks for,
    ``public`` when none), from their ``CREATE EXTENSION`` lines; plpgsql is the server's own."""
    asked: dict[str, str] = {}
    for catalog in catalogs:
        for file in postgresql_files(catalog):
            with file.open(encoding="utf-8", errors="replace") as f:
                for line in f:
                    m = _CREATE_EXTENSION.match(line)
                    if m and _unquote(m.group(1)) != "plpgsql":
                        asked.setdefault(_unquote(m.group(1)), _unquote(m.group(2) or "public"))
    return asked


def _local_postgresql():
    from dbbench import servers
    from dbbench.access.targets import connect

    url = servers.local_url("postgresql")
    if url is None:
        sys.exit("--install-extensions: no local PostgreSQL server (dbbench servers status)")
    return connect(url, dialect="postgresql")


def install_extensions(asked: dict[str, str]) -> list[str]:
    """Install in ``public`` of the local PostgreSQL, as dbbench's own user when it is a superuser
    there, the ``asked`` extensions it ships and has not installed; says what it does. Returns
    those it installed."""

    def say(line: str) -> None:
        print(f"--install-extensions: {line}", flush=True)

    if not asked:
        say("the setup files ask for no extension")
        return []
    target = _local_postgresql()
    done: list[str] = []
    try:
        with target.all_or_nothing() as conn, conn.cursor() as cur:
            cur.execute("SELECT current_user, rolsuper FROM pg_roles WHERE rolname = current_user")
            user, superuser = cur.fetchone()
            if not superuser:
                say(f"dbbench's user {user} is no superuser on the local PostgreSQL: nothing installed")
                return []
            cur.execute(
                "SELECT e.extname, n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace"
            )
            installed = dict(cur.fetchall())
            cur.execute("SELECT name FROM pg_available_extensions")
            shipped = {r[0] for r in cur.fetchall()}
            for name, schema in sorted(asked.items()):
                if name in installed:
                    say(f"{name}: already installed (in schema {installed[name]}), left as it is")
                elif schema != "public":
                    say(f"{name}: asked for in schema {schema}, not public: not installed")
                elif name not in shipped:
                    say(f"{name}: not shipped with this PostgreSQL: not installed")
                else:
                    quoted = '"' + name.replace('"', '""') + '"'
                    try:
                        cur.execute(f"CREATE EXTENSION {quoted} SCHEMA public")
                        conn.commit()
                    except Exception as exc:  # the server's refusal, said in one line
                        conn.rollback()
                        say(f"{name}: not installed: {str(exc).splitlines()[0][:200]}")
                        continue
                    done.append(name)
                    say(f"{name}: installed in public as {user} (a superuser), as the seed's refusal says")
    finally:
        target.dispose()
    return done


def uninstall_extensions(names: list[str]) -> None:
    """Drop the extensions :func:`install_extensions` installed (after the namespaces)."""
    if not names:
        return
    target = _local_postgresql()
    try:
        with target.all_or_nothing() as conn, conn.cursor() as cur:
            for name in names:
                cur.execute('DROP EXTENSION IF EXISTS "' + name.replace('"', '""') + '"')
            conn.commit()
    finally:
        target.dispose()
    print(f"--install-extensions: dropped what it installed: {', '.join(names)}", flush=True)


def has_shapes(catalog: Path) -> bool:
    """Whether the catalog has query shapes: entry files or annotated SQL files beside its setup."""
    return any(catalog.glob("*.toml")) or any(not p.name.startswith("setup") for p in catalog.glob("*.sql"))


def first_failure(stderr: str, stdout: str) -> str:
    """The first line that says what went wrong: dbbench's own error line, else a traceback's
    last line, else the first line of stderr that is not a warning."""
    lines = stderr.splitlines()
    for line in lines:
        if line.startswith("dbbench: error: "):
            return line[len("dbbench: error: ") :]
    if "Traceback" in stderr:
        tail = [line for line in lines if line.strip()]
        return "Traceback: " + (tail[-1].strip() if tail else "")
    for line in lines:
        if line.strip() and not line.startswith("dbbench: warning:"):
            return line.strip()
    failed = [line for line in stdout.splitlines() if "FAIL" in line or "fail" in line]
    return failed[0].strip() if failed else (stdout.strip().splitlines() or [""])[-1]


def run(argv: list[str], timeout: float) -> tuple[str, str, str]:
    """Runs ``dbbench ARGV``; its exit code as text (``T`` at the timeout), stdout, stderr."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "dbbench", *argv],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "COLUMNS": "200"},
    )
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
        return str(proc.returncode), stdout, stderr
    except subprocess.TimeoutExpired:
        proc.kill()
        stdout, stderr = proc.communicate()
        return TIMED_OUT, stdout, stderr + f"\ndbbench: error: killed after {timeout:.0f} s"


def counts(result: Path, dialect: str) -> tuple[int, int, float | None]:
    """Tables, rows and fill rows/s of one dialect from a ``seed --output`` file."""
    doc = json.loads(result.read_text())
    target = next(t for t in doc["targets"] if t["dialect"] == dialect)
    prints = target.get("fingerprints", {})
    rows = sum(int(str(v).split(":", 1)[0]) for v in prints.values())
    fill = target.get("seconds", {}).get("fill generate+load")
    return len(prints), rows, (rows / fill if fill else None)


def writes_of(result: Path) -> list[dict]:
    """Each write shape's (and locking read's) lock footprint in an ``explain --output`` file, in
    a few words: shape, ok, the rows it changed (``affected``), the rows and gaps it locked, per
    table, its foreign-key cascades (child, constraint, the index used or None) and whether the
    data's fingerprints were equal after the runs (None for a locking read, which changes nothing)."""
    doc = json.loads(result.read_text())
    out = []
    for r in doc.get("results", []):
        locks = (r.get("remediated") or {}).get("locks")
        if not locks:
            continue
        out.append(
            {
                "shape": r["shape"],
                "ok": bool(r.get("ok")),
                "affected": locks.get("affected"),
                "rows": int(locks.get("rows") or 0),
                "gaps": int(locks.get("gaps") or 0),
                "tables": {
                    t["table"]: int(t.get("rows") or 0) for t in locks.get("tables") or [] if t.get("rows")
                },
                "cascades": [
                    (c.get("child"), c.get("constraint"), c.get("index")) for c in locks.get("cascades") or []
                ],
                "unchanged": (r.get("unchanged") or {}).get("equal"),
            }
        )
    return out


def write_line(w: dict) -> str:
    """One write shape of :func:`writes_of` as the corpus run prints it under its schema."""
    tables = ", ".join(f"{t} {n:,}" for t, n in w["tables"].items())
    text = (
        f"    {'ok  ' if w['ok'] else 'FAIL'} {w['shape'][:40]:<40} "
        + (f"changed {w['affected']:,}, " if w["affected"] is not None else "")
        + f"locked {w['rows']:,} row{'' if w['rows'] == 1 else 's'}"
        + (f" ({tables})" if tables else "")
        + (f", {w['gaps']:,} gaps" if w["gaps"] else "")
    )
    if w["cascades"]:
        text += "; cascades: " + ", ".join(
            f"{child} ({constraint}) " + (f"through {index}" if index else "WITHOUT AN INDEX")
            for child, constraint, index in w["cascades"]
        )
    if w["unchanged"] is not None:
        text += "; data unchanged" if w["unchanged"] else "; DATA CHANGED"
    return text


def corpus_one(catalog: Path, name: str, dialect: str, namespace: str, args: argparse.Namespace) -> Outcome:
    out = Outcome(name, dialect, namespace, {s: NOT_RUN for s in STEPS})
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="corpus-") as tmp:
        copy = Path(tmp) / catalog.name
        shutil.copytree(catalog, copy, ignore=shutil.ignore_patterns("data"))
        common = ["--catalog", str(copy), "--namespace", namespace, "--only", dialect]
        empty, filled = Path(tmp) / "empty.json", Path(tmp) / "filled.json"
        explained = Path(tmp) / "explain.json"
        steps = {
            "seed": ["seed", *common, "--output", str(empty)],
            "init": ["init", *common],
            "fill": ["seed", *common, "--scale", str(args.scale), "--output", str(filled)],
            "explain": [
                "explain",
                *common,
                "--warmups",
                "1",
                "--runs",
                "3",
                "--no-natural",
                "--output",
                str(explained),
            ],
        }
        for step in STEPS:
            if args.explain_on == "setup" and step in ("init", "fill"):
                out.codes[step] = "n/a"  # the shapes are measured on the setup's own rows
                continue
            if step == "explain" and not has_shapes(copy):
                out.codes[step] = "n/a"
                break
            code, stdout, stderr = run(steps[step], args.timeout)
            out.codes[step] = code
            if step == "seed" and code == "0":
                out.tables = counts(empty, dialect)[0]
            if step == "fill" and code in ("0", "1") and filled.is_file():
                out.tables, out.rows, out.rows_per_s = counts(filled, dialect)
            if step == "explain" and code in ("0", "1") and explained.is_file():
                out.writes = writes_of(explained)
            if code != "0":
                out.failure = f"{step}: {first_failure(stderr, stdout)}"
                break
    out.seconds = time.monotonic() - started
    return out


def drop(namespaces: list[tuple[str, str]]) -> None:
    """The namespaces this run made, and their roles."""
    from dbbench import defaults, servers
    from dbbench.access import isolation
    from dbbench.access.targets import connect

    for dialect in defaults.DIALECTS:
        mine = [ns for d, ns in namespaces if d == dialect]
        url = servers.local_url(dialect)
        if not mine or url is None:
            continue
        target = connect(url, dialect=dialect)
        try:
            for ns in mine:
                isolation.drop_namespace(target, ns)
        finally:
            target.dispose()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folder", type=Path, help="A folder of catalog directories (the corpus).")
    ap.add_argument("--scale", type=int, default=20_000, help=":scale of step 3 (default 20,000)")
    ap.add_argument("--timeout", type=float, default=600.0, help="Seconds each step may take.")
    ap.add_argument("--only", nargs="*", help="Catalog names (their path under FOLDER) to run.")
    ap.add_argument("--dialect", choices=DIALECTS, help="Run only this dialect.")
    ap.add_argument("--json", type=Path, help="Write every outcome here.")
    ap.add_argument(
        "--explain-on",
        choices=("fill", "setup"),
        default="fill",
        help="Measure the shapes on the filled namespace (step 3, default) or on the setup's own rows "
        "(right after step 1; init and fill are then left out): shapes written for a sample database's "
        "data, a write's parameters naming rows that exist there.",
    )
    ap.add_argument(
        "--prefix", default="corpus_", help="Namespaces are PREFIX00, PREFIX01, … (default corpus_)."
    )
    ap.add_argument(
        "--keep", action="store_true", help="Leave the namespaces (and installed extensions) to look at them."
    )
    ap.add_argument(
        "--install-extensions",
        action="store_true",
        help="Install in public of the LOCAL PostgreSQL (as dbbench's user, only if a superuser there) the "
        "extensions the selected setup files ask for, as the seed's refusal tells a user; dropped at the end.",
    )
    args = ap.parse_args()
    folder = args.folder.resolve()
    if not folder.is_dir():
        ap.error(f"{args.folder}: not a folder")
    todo = []
    for catalog in catalogs(folder):
        name = str(catalog.relative_to(folder)) if catalog != folder else catalog.name
        if args.only and name not in args.only and catalog.name not in args.only:
            continue
        for dialect in dialects_of(catalog):
            if args.dialect in (None, dialect):
                todo.append((catalog, name, dialect))
    if not todo:
        ap.error(f"{args.folder}: no catalog directory with setup SQL")

    outcomes: list[Outcome] = []
    made: list[tuple[str, str]] = []
    started = time.monotonic()
    installed: list[str] = []
    if args.install_extensions:
        installed = install_extensions(asked_extensions([c for c, _, d in todo if d == "postgresql"]))
    header = (
        f"{'schema':<26} {'dialect':<10} {'tables':>6} {'rows':>9} {'rows/s':>8}  "
        f"{'seed':>4} {'init':>4} {'fill':>4} {'expl':>4}  first failure"
    )
    print(header, flush=True)
    try:
        for i, (catalog, name, dialect) in enumerate(todo):
            namespace = f"{args.prefix}{i:02d}"
            made.append((dialect, namespace))
            o = corpus_one(catalog, name, dialect, namespace, args)
            outcomes.append(o)
            rate = f"{o.rows_per_s:,.0f}" if o.rows_per_s else "-"
            print(
                f"{name[:26]:<26} {dialect:<10} {o.tables if o.tables is not None else '-':>6} "
                f"{f'{o.rows:,}' if o.rows is not None else '-':>9} {rate:>8}  "
                + " ".join(f"{o.codes[s]:>4}" for s in STEPS)
                + f"  {o.failure[:300]}",
                flush=True,
            )
            for w in o.writes:
                print(write_line(w), flush=True)
    finally:
        if not args.keep:
            drop(made)
            uninstall_extensions(installed)
    print()
    for step in STEPS:
        ran = [o for o in outcomes if o.codes[step] not in (NOT_RUN, "n/a")]
        passed = [o for o in ran if o.codes[step] == "0"]
        print(f"{step:<8} {len(passed)} of {len(ran)} passed")
    writes = [w for o in outcomes for w in o.writes]
    if writes:
        print(f"writes   {sum(w['ok'] for w in writes)} of {len(writes)} write shapes passed")
    print(f"{len(outcomes)} schema/dialect pairs in {time.monotonic() - started:.0f} s")
    if args.json:
        args.json.write_text(json.dumps([o.__dict__ for o in outcomes], indent=2))
    return 1 if any(o.failure for o in outcomes) else 0


if __name__ == "__main__":
    sys.exit(main())
