#!/usr/bin/env python3
"""How fast does a team's dump load as setup SQL, and how much does dbbench's Python side add?

    .venv/bin/python benchmarks/bench_dumps.py [--mb 100] [--only postgresql|mysql] [--keep DIR]

Per dialect: writes a generated dump of about ``--mb`` MB in the form its tool writes
(``pg_dump`` plain: session SETs, ``public.``-qualified DDL, ``OWNER TO``, ``COPY … FROM stdin``
blocks; ``mysqldump``: conditional comments, ``LOCK TABLES``, ``DISABLE KEYS``, extended
``INSERT``s of about 1 MB per line), plus one catalog entry, then measures side by side in one run:

* **split + check**: the Python side alone (:func:`dbbench.setup.guard.check_file`: split, dump
  adapter, text checks), in MB/s;
* **seed**: ``dbbench seed --catalog DIR --only DIALECT`` end to end (wall), and the CPU time the
  dbbench process itself used (user + sys, from ``getrusage``): the servers' time is the wall
  less that CPU time, and the Python overhead is their ratio.

Nothing is timed in a test: this prints numbers to compare, measured in the same run.
"""

from __future__ import annotations

import argparse
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from dbbench.setup.guard import check_file  # noqa: E402 (after the sys.path line)

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
            "ALTER TABLE public.film OWNER TO postgres;\n\n"
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


def measure(dialect: str, directory: Path, mb: int) -> dict[str, float]:
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
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "dbbench",
            "seed",
            "--catalog",
            str(cat),
            "--only",
            dialect,
            "--namespace",
            NAMESPACE,
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=3600,
        check=False,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if run.returncode != 0:
        raise SystemExit(f"{dialect}: dbbench seed failed ({run.returncode}): {run.stderr.strip()[-500:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    server = max(wall - cpu, 1e-9)
    return {
        "MB": size_mb,
        "rows": rows,
        "statements": found.statements,
        "check_s": check_s,
        "check_mbps": size_mb / check_s,
        "seed_wall_s": wall,
        "python_cpu_s": cpu,
        "server_s": server,
        "overhead": cpu / server,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mb", type=int, default=100, help="size of each generated dump, MB")
    ap.add_argument("--only", choices=["postgresql", "mysql"])
    ap.add_argument(
        "--keep", type=Path, help="write the dumps and catalogs here (default: a temporary directory)"
    )
    args = ap.parse_args()
    dialects = [args.only] if args.only else ["postgresql", "mysql"]
    with tempfile.TemporaryDirectory(prefix="bench-dumps-") as tmp:
        directory = args.keep or Path(tmp)
        results = {d: measure(d, directory, args.mb) for d in dialects}
    print(
        f"{'dialect':<11} {'dump MB':>8} {'rows':>10} {'split+check':>12} {'MB/s':>7} "
        f"{'seed wall':>10} {'python CPU':>11} {'servers':>9} {'overhead':>9}"
    )
    for d, r in results.items():
        print(
            f"{d:<11} {r['MB']:>8.1f} {r['rows']:>10,} {r['check_s']:>10.2f} s {r['check_mbps']:>7.1f} "
            f"{r['seed_wall_s']:>8.1f} s {r['python_cpu_s']:>9.1f} s {r['server_s']:>7.1f} s {r['overhead']:>8.0%}"
        )


if __name__ == "__main__":
    main()
