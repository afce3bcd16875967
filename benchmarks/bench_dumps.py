#!/usr/bin/env python3
"""How fast does a team's dump load as setup SQL, and how much does dbbench's Python side add?

    .venv/bin/python benchmarks/bench_dumps.py [--mb 100] [--only postgresql|mysql] [--repeat 3] [--keep DIR]

Per dialect: writes a generated dump of about ``--mb`` MB in the form its tool writes
(``pg_dump`` plain: session SETs, ``public.``-qualified DDL, ``OWNER TO``, ``COPY … FROM stdin``
blocks; ``mysqldump``: conditional comments, ``LOCK TABLES``, ``DISABLE KEYS``, extended
``INSERT``s of about 1 MB per line), plus one catalog entry, then measures side by side in one run,
``--repeat`` times in alternating order (the median is printed):

* **split + check**: the Python side alone (:func:`dbbench.setup.guard.check_file`: split, dump
  adapter, text checks), in MB/s;
* **floor**: the server's own client loading the same dump into a scratch database
  (``psql -f``; the local server's ``mysql`` client, ``source``): the servers' own time;
* **dbbench**: :func:`dbbench.setup.loader.load` of the catalog (the check pass, then the load
  as the namespace's role: the ``check`` and ``setup SQL`` stages it reports), and its overhead
  over the floor. The stages after the load (ANALYZE, the fingerprints that verify it) are
  printed apart: the native client does neither.

Nothing is timed in a test: this prints numbers to compare, measured in the same run.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import unquote, urlsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from dbbench import servers  # noqa: E402 (after the sys.path line)
from dbbench.access.targets import open_targets  # noqa: E402
from dbbench.servers import mysql  # noqa: E402
from dbbench.setup import loader  # noqa: E402
from dbbench.setup.guard import check_file  # noqa: E402

FLOOR_DB = "dbbench_bench_floor"
NAMESPACE = "dbbench_bench_dump"
ENTRY = """name = "films of a rating"
cardinality = "1 of 5 ratings, 10 rows"
expect_rows = 10

[params]
rating = 3

[query]
sql = "SELECT id, title FROM film WHERE rating = :rating ORDER BY id LIMIT 10"

[postgresql]
expect = { table = "film", index = "ix_film_rating" }

[mysql]
expect = { table = "film", index = "ix_film_rating" }
"""


def _rows(target_bytes: int):
    """Deterministic rows (id, title, description, rating) until about ``target_bytes`` of text."""
    rnd = random.Random(7)
    words = ["epic", "drama", "of", "a", "boy", "who", "must", "meet", "the", "robot", "in", "Berlin"]
    total, k = 0, 0
    while total < target_bytes:
        k += 1
        descr = " ".join(rnd.choice(words) for _ in range(rnd.randint(8, 20)))
        row = (k, f"Film {k}", descr, rnd.randint(1, 5))
        total += len(descr) + 20
        yield row


OWNER = "dbbench"  # the local server's user: the role a dump made there names (the floor's psql runs it)


def pg_dump_text(path: Path, mb: int) -> int:
    with path.open("w") as out:
        out.write(
            "--\n-- PostgreSQL database dump\n--\n\n-- Dumped from database version 12.22\n"
            "-- Dumped by pg_dump version 15.18\n\nSET statement_timeout = 0;\nSET lock_timeout = 0;\n"
            "SET client_encoding = 'UTF8';\nSET standard_conforming_strings = on;\n"
            "SELECT pg_catalog.set_config('search_path', '', false);\nSET check_function_bodies = false;\n"
            "SET client_min_messages = warning;\nSET row_security = off;\n\n"
            "SET default_tablespace = '';\n\nSET default_table_access_method = heap;\n\n"
            "CREATE TABLE public.film (\n    id integer NOT NULL,\n    title text NOT NULL,\n"
            "    description text,\n    rating integer NOT NULL\n);\n\n"
            f"ALTER TABLE public.film OWNER TO {OWNER};\n\n"
            "COPY public.film (id, title, description, rating) FROM stdin;\n"
        )
        n = 0
        for k, title, descr, rating in _rows(mb << 20):
            out.write(f"{k}\t{title}\t{descr}\t{rating}\n")
            n += 1
        out.write(
            "\\.\n\n\nALTER TABLE ONLY public.film\n    ADD CONSTRAINT film_pkey PRIMARY KEY (id);\n\n"
            "CREATE INDEX ix_film_rating ON public.film USING btree (rating);\n\n"
            "--\n-- PostgreSQL database dump complete\n--\n\n"
        )
    return n


def mysqldump_text(path: Path, mb: int) -> int:
    with path.open("w") as out:
        out.write(
            "-- MySQL dump 10.13  Distrib 9.7.4, for Linux (x86_64)\n--\n-- Host: 127.0.0.1    Database: shop\n"
            "-- ------------------------------------------------------\n-- Server version\t9.7.4\n\n"
            "/*!40101 SET @OLD_CHARACTER_SET_CLIENT=@@CHARACTER_SET_CLIENT */;\n"
            "/*!50503 SET NAMES utf8mb4 */;\n/*!40103 SET @OLD_TIME_ZONE=@@TIME_ZONE */;\n"
            "/*!40103 SET TIME_ZONE='+00:00' */;\n"
            "/*!40014 SET @OLD_UNIQUE_CHECKS=@@UNIQUE_CHECKS, UNIQUE_CHECKS=0 */;\n"
            "/*!40101 SET @OLD_SQL_MODE=@@SQL_MODE, SQL_MODE='NO_AUTO_VALUE_ON_ZERO' */;\n\n"
            "DROP TABLE IF EXISTS `film`;\n/*!40101 SET @saved_cs_client     = @@character_set_client */;\n"
            "/*!50503 SET character_set_client = utf8mb4 */;\nCREATE TABLE `film` (\n  `id` int NOT NULL,\n"
            "  `title` varchar(200) NOT NULL,\n  `description` text,\n  `rating` int NOT NULL,\n"
            "  PRIMARY KEY (`id`),\n  KEY `ix_film_rating` (`rating`)\n"
            ") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_0900_ai_ci;\n"
            "/*!40101 SET character_set_client = @saved_cs_client */;\n\n"
            "LOCK TABLES `film` WRITE;\n/*!40000 ALTER TABLE `film` DISABLE KEYS */;\n"
        )
        n, line, size = 0, [], 0
        for k, title, descr, rating in _rows(mb << 20):
            value = f"({k},'{title}','{descr}',{rating})"
            line.append(value)
            size += len(value)
            n += 1
            if size > 1 << 20:
                out.write("INSERT INTO `film` VALUES " + ",".join(line) + ";\n")
                line, size = [], 0
        if line:
            out.write("INSERT INTO `film` VALUES " + ",".join(line) + ";\n")
        out.write(
            "/*!40000 ALTER TABLE `film` ENABLE KEYS */;\nUNLOCK TABLES;\n"
            "/*!40103 SET TIME_ZONE=@OLD_TIME_ZONE */;\n/*!40101 SET SQL_MODE=@OLD_SQL_MODE */;\n"
            "/*!40014 SET UNIQUE_CHECKS=@OLD_UNIQUE_CHECKS */;\n"
            "/*!40101 SET CHARACTER_SET_CLIENT=@OLD_CHARACTER_SET_CLIENT */;\n\n-- Dump completed\n"
        )
    return n


def _floor_postgresql(dump: Path) -> float:
    """psql loading the dump into a fresh scratch database; wall seconds."""
    url = servers.local_url("postgresql")
    assert url is not None
    parts = urlsplit(url)
    env = {**os.environ, "PGPASSWORD": unquote(parts.password or ""), "PGHOST": parts.hostname or "127.0.0.1"}
    env |= {"PGPORT": str(parts.port), "PGUSER": unquote(parts.username or "")}
    base = ["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1"]
    admin = [*base, "-d", parts.path.lstrip("/") or "postgres", "-c"]
    subprocess.run([*admin, f"DROP DATABASE IF EXISTS {FLOOR_DB}"], env=env, check=True, capture_output=True)
    subprocess.run([*admin, f"CREATE DATABASE {FLOOR_DB}"], env=env, check=True, capture_output=True)
    try:
        start = time.perf_counter()
        subprocess.run([*base, "-d", FLOOR_DB, "-f", str(dump)], env=env, check=True, capture_output=True)
        return time.perf_counter() - start
    finally:
        subprocess.run(
            [*admin, f"DROP DATABASE IF EXISTS {FLOOR_DB}"], env=env, check=True, capture_output=True
        )


def _floor_mysql(dump: Path) -> float:
    """The local server's mysql client sourcing the dump into a fresh scratch database; wall seconds."""
    url = servers.local_url("mysql")
    assert url is not None
    root = Path(mysql.client_tool("mysql")[1])
    inside = root / "tmp" / f"bench-dump-{os.getpid()}.sql"
    os.link(dump, inside) if dump.stat().st_dev == root.stat().st_dev else inside.write_bytes(
        dump.read_bytes()
    )
    try:
        mysql.client("mysql", url, ["-e", f"DROP DATABASE IF EXISTS {FLOOR_DB}; CREATE DATABASE {FLOOR_DB}"])
        start = time.perf_counter()
        mysql.client("mysql", url, ["--commands", FLOOR_DB, "-e", f"source /tmp/{inside.name}"], timeout=3600)
        wall = time.perf_counter() - start
        mysql.client("mysql", url, ["-e", f"DROP DATABASE IF EXISTS {FLOOR_DB}"])
        return wall
    finally:
        inside.unlink()


def _dbbench(dialect: str, cat: Path) -> dict[str, float]:
    """dbbench's load of the catalog (as ``dbbench seed --catalog`` runs it): its stages' seconds."""
    targets = open_targets({}, only=dialect)  # type: ignore[arg-type]
    try:
        cpu = time.process_time()
        _, (result,) = loader.load(targets, cat, namespace=NAMESPACE)
        cpu = time.process_time() - cpu
        return {**result.seconds, "cpu": cpu}
    finally:
        for t in targets:
            t.dispose()


def measure(dialect: str, directory: Path, mb: int, repeat: int) -> dict[str, float]:
    cat = directory / dialect
    cat.mkdir(parents=True, exist_ok=True)
    (cat / "01-films-of-a-rating.toml").write_text(ENTRY)
    dump = cat / f"setup.{dialect}.sql"
    rows = (pg_dump_text if dialect == "postgresql" else mysqldump_text)(dump, mb)
    size_mb = dump.stat().st_size / (1 << 20)
    start = time.perf_counter()
    found = check_file(dump, dialect, NAMESPACE)
    check_s = time.perf_counter() - start
    if found.problems:
        raise SystemExit(f"{dialect}: the generated dump is refused: {found.problems[:3]}")
    floor_of = _floor_postgresql if dialect == "postgresql" else _floor_mysql
    floors, loads, after = [], [], []
    for k in range(repeat):  # alternating order: neither side always runs on a warmer server
        runs = [lambda: floors.append(floor_of(dump)), lambda: loads.append(_dbbench(dialect, cat))]
        for run in runs if k % 2 == 0 else runs[::-1]:
            run()
    for seconds in loads:
        after.append(seconds.get("analyze", 0) + seconds.get("fingerprint", 0))
    load = [s["check"] + s["setup SQL"] for s in loads]
    # the process's CPU over the whole load() (verification included), against the time it waited
    cpu_share = [s["cpu"] / max(sum(v for k, v in s.items() if k != "cpu") - s["cpu"], 1e-9) for s in loads]
    floor = statistics.median(floors)
    dbbench = statistics.median(load)
    return {
        "MB": size_mb,
        "rows": rows,
        "statements": found.statements,
        "check_s": check_s,
        "check_mbps": size_mb / check_s,
        "floor_s": floor,
        "dbbench_s": dbbench,
        "check_pass_s": statistics.median(s["check"] for s in loads),
        "after_s": statistics.median(after),
        "overhead": dbbench / floor - 1,
        "cpu_s": statistics.median(s["cpu"] for s in loads),
        "cpu_share": statistics.median(cpu_share),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=int, default=100, help="size of each generated dump, MB")
    ap.add_argument("--only", choices=["postgresql", "mysql"])
    ap.add_argument(
        "--repeat", type=int, default=3, help="runs of each side, alternating (the median is printed)"
    )
    ap.add_argument(
        "--keep", type=Path, help="write the dumps and catalogs here (default: a temporary directory)"
    )
    args = ap.parse_args()
    dialects = [args.only] if args.only else ["postgresql", "mysql"]
    with tempfile.TemporaryDirectory(prefix="bench-dumps-") as tmp:
        directory = args.keep or Path(tmp)
        results = {d: measure(d, directory, args.mb, args.repeat) for d in dialects}
    print(
        f"{'dialect':<11} {'dump MB':>8} {'rows':>10} {'split+check':>12} {'MB/s':>7} "
        f"{'floor':>8} {'dbbench':>8} {'(check)':>8} {'overhead':>9} {'verify':>8} {'py CPU':>8} {'/servers':>9}"
    )
    for d, r in results.items():
        print(
            f"{d:<11} {r['MB']:>8.1f} {r['rows']:>10,} {r['check_s']:>10.2f} s {r['check_mbps']:>7.1f} "
            f"{r['floor_s']:>6.2f} s {r['dbbench_s']:>6.2f} s {r['check_pass_s']:>6.2f} s {r['overhead']:>8.0%} "
            f"{r['after_s']:>6.2f} s {r['cpu_s']:>6.2f} s {r['cpu_share']:>8.0%}"
        )
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    biggest = max(r["MB"] for r in results.values())
    print(
        f"peak memory of this whole run (generation, checks, loads): {peak:,.0f} MB for dumps of up to {biggest:,.0f} MB"
    )
    print(
        "floor: the server's own client (psql -f / mysql source) into a scratch database; dbbench: check "
        "pass + load as the namespace role;\nverify: ANALYZE and fingerprints after the load (dbbench only);\npy CPU: the dbbench process's CPU time over "
        "the whole load, and its ratio to the rest of the wall time (the servers' own time)."
    )


if __name__ == "__main__":
    main()
