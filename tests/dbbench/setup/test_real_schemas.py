"""Setup SQL as public sample databases and applications ship it loads unchanged (issue 32's corpus).

Each intake failure class found by ``benchmarks/corpus.py`` on real public schemas, reproduced by a
small schema written here, in the form the real file has:

* an old plain ``pg_dump`` (8.x / 9.x, before pg_dump 10.3's ``set_config('search_path', …)``):
  ``SET search_path = public, pg_catalog;`` with unqualified names after it, ``CREATE OR REPLACE
  PROCEDURAL LANGUAGE plpgsql``, ``ALTER … OWNER TO`` and GRANT/REVOKE on ``public`` (the
  PostgreSQL port of sakila);
* a psql script that creates its database and connects to it (``DROP DATABASE IF EXISTS x;
  CREATE DATABASE x; \\c x;``, as ``pg_dump --create`` does, without the dump's SETs: chinook);
* a MySQL sample script that flushes the server's logs before its data (``flush /*!50503 binary
  */ logs``: the employees sample);
* a mysqldump whose tables keep zero dates as defaults (``datetime NOT NULL DEFAULT '0000-00-00
  00:00:00'``, created under the dump's own ``SQL_MODE``: WordPress): the seed's statistics step
  altered each table under the server's strict mode, which refused the default.

Each loads into a namespace of its own as that namespace's role; what reaches outside stays
refused (the same text checks, the same server boundary).
"""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path

import pytest

from dbbench.setup import mysqldump, pgdump
from dbbench.setup.guard import check_statement
from dbbench.setup.split import split_sql
from tests.conftest import run_cli, shape_toml
from tests.db import connection, drop_namespaces, execute

NS = f"dbbench_t_real_{os.getpid()}"

SHAPE = shape_toml(
    "item by name",
    "1 of a few",
    params='name = "one"',
    sql="SELECT id FROM item WHERE name = :name",
    # two rows: PostgreSQL would rightly scan them
    postgresql='expect = { table = "item", index = "idx_item_name" }\nsettings = { enable_seqscan = "off" }',
    mysql='expect = { table = "item", index = "idx_item_name" }',
)

# pg_dump 8.4's plain format, as the sakila port's schema file has it (a schema of our own)
OLD_PG_DUMP = """--
-- PostgreSQL database dump
--

SET client_encoding = 'UTF8';
SET standard_conforming_strings = off;
SET check_function_bodies = false;
SET client_min_messages = warning;
SET escape_string_warning = off;

--
-- Name: SCHEMA public; Type: COMMENT; Schema: -; Owner: postgres
--

COMMENT ON SCHEMA public IS 'Standard public schema';

CREATE OR REPLACE PROCEDURAL LANGUAGE plpgsql;

ALTER PROCEDURAL LANGUAGE plpgsql OWNER TO postgres;

SET search_path = public, pg_catalog;

CREATE SEQUENCE item_id_seq
    INCREMENT BY 1
    NO MAXVALUE
    NO MINVALUE
    CACHE 1;

ALTER TABLE public.item_id_seq OWNER TO postgres;

SET default_tablespace = '';

SET default_with_oids = false;

CREATE DOMAIN year AS integer
	CONSTRAINT year_check CHECK (((VALUE >= 1901) AND (VALUE <= 2155)));

ALTER DOMAIN public.year OWNER TO postgres;

CREATE TABLE item (
    id integer DEFAULT nextval('item_id_seq'::regclass) NOT NULL,
    name character varying(45) NOT NULL,
    made year,
    note text
);

ALTER TABLE public.item OWNER TO postgres;

CREATE FUNCTION lower_name() RETURNS trigger
    AS $$
BEGIN
    NEW.name := lower(NEW.name);
    RETURN NEW;
END $$
    LANGUAGE plpgsql;

ALTER FUNCTION public.lower_name() OWNER TO postgres;

SELECT pg_catalog.setval('item_id_seq', 2, true);

COPY item (id, name, made, note) FROM stdin;
1	one	1999	it\\'s
2	two	\\N	\\N
\\.

ALTER TABLE ONLY item
    ADD CONSTRAINT item_pkey PRIMARY KEY (id);

CREATE INDEX idx_item_name ON item USING btree (name);

CREATE TRIGGER item_lower_name
    BEFORE INSERT OR UPDATE ON item
    FOR EACH ROW
    EXECUTE PROCEDURE lower_name();

REVOKE ALL ON SCHEMA public FROM PUBLIC;
REVOKE ALL ON SCHEMA public FROM postgres;
GRANT ALL ON SCHEMA public TO postgres;
GRANT ALL ON SCHEMA public TO PUBLIC;

--
-- PostgreSQL database dump complete
--
"""

# a generated psql script that makes its own database (chinook's form, a schema of our own)
PSQL_CREATES_ITS_DATABASE = """/*******************************************************************************
   Drop database if it exists
********************************************************************************/
DROP DATABASE IF EXISTS shop;

CREATE DATABASE shop;

\\c shop;

CREATE TABLE item
(
    id INT NOT NULL,
    name VARCHAR(45) NOT NULL,
    CONSTRAINT item_pkey PRIMARY KEY (id)
);

CREATE INDEX idx_item_name ON item (name);

INSERT INTO item (id, name) VALUES (1, 'one'), (2, 'two');
"""

# the employees sample's install script (a schema of our own), without its `source` lines
MYSQL_FLUSHES_LOGS = """DROP DATABASE IF EXISTS shop;
CREATE DATABASE IF NOT EXISTS shop;
USE shop;

SELECT 'CREATING DATABASE STRUCTURE' as 'INFO';

DROP TABLE IF EXISTS item;

/*!50503 set default_storage_engine = InnoDB */;
/*!50503 select CONCAT('storage engine: ', @@default_storage_engine) as INFO */;

CREATE TABLE item (
    id      INT             NOT NULL,
    name    VARCHAR(45)     NOT NULL,
    gender  ENUM ('M','F')  NOT NULL,
    PRIMARY KEY (id),
    KEY idx_item_name (name)
);

flush /*!50503 binary */ logs;

INSERT INTO item VALUES (1, 'one', 'M'), (2, 'two', 'F');
"""


# mysqldump 5.5 of WordPress (a table of our own): zero-date defaults, loaded under the dump's SQL_MODE
MYSQL_ZERO_DATES = """-- MySQL dump 10.13  Distrib 5.5.43, for debian-linux-gnu (x86_64)
--
-- Host: localhost    Database: blog
-- ------------------------------------------------------
/*!40101 SET @OLD_SQL_MODE=@@SQL_MODE, SQL_MODE='NO_AUTO_VALUE_ON_ZERO' */;

DROP TABLE IF EXISTS `item`;
CREATE TABLE `item` (
  `id` bigint(20) unsigned NOT NULL AUTO_INCREMENT,
  `name` varchar(45) NOT NULL DEFAULT '',
  `posted` datetime NOT NULL DEFAULT '0000-00-00 00:00:00',
  PRIMARY KEY (`id`),
  KEY `idx_item_name` (`name`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8;

LOCK TABLES `item` WRITE;
INSERT INTO `item` VALUES (1,'one','0000-00-00 00:00:00'),(2,'two','2015-05-01 10:00:00');
UNLOCK TABLES;
/*!40101 SET SQL_MODE=@OLD_SQL_MODE */;
"""


@pytest.fixture
def namespace(local_servers):
    yield NS
    drop_namespaces(NS)


def _seed(tmp_path: Path, dialect: str, sql: str):
    cat = tmp_path / "cat"
    cat.mkdir()
    (cat / "01-item-by-name.toml").write_text(SHAPE)
    (cat / f"setup.{dialect}.sql").write_text(sql)
    out = tmp_path / "seed.json"
    run = run_cli("seed", "--catalog", str(cat), "--only", dialect, "--namespace", NS, "--output", str(out))
    return run, out


def _rows(out: Path) -> dict[str, str]:
    (target,) = json.loads(out.read_text())["targets"]
    return {t: f.split(":", 1)[0] for t, f in target["fingerprints"].items()}


@pytest.mark.parametrize(
    ("dialect", "sql", "said"),
    [
        ("postgresql", OLD_PG_DUMP, pgdump.SKIP_SEARCH_PATH),
        ("postgresql", PSQL_CREATES_ITS_DATABASE, pgdump.SKIP_DATABASE),
        ("mysql", MYSQL_FLUSHES_LOGS, mysqldump.FLUSH_LOGS),
        ("mysql", MYSQL_ZERO_DATES, mysqldump.LOCKS),
    ],
    ids=["old-pg_dump", "psql-creates-its-database", "mysql-flush-logs", "mysql-zero-date-defaults"],
)
def test_a_real_schemas_setup_form_loads_unchanged(namespace, tmp_path, dialect, sql, said):
    run, out = _seed(tmp_path, dialect, sql)
    assert run.code == 0, run.output
    assert said in run.stdout
    assert _rows(out) == {"item": "2"}
    explain = run_cli("explain", "--catalog", str(tmp_path / "cat"), "--only", dialect, "--namespace", NS)
    assert explain.code == 0, explain.output


def test_the_old_pg_dump_trigger_and_domain_are_the_namespaces(namespace, tmp_path):
    """What the old dump's unqualified names created is in the namespace and works there: the
    trigger lower-cases a name, the domain checks a year, the sequence goes on from setval."""
    run, _ = _seed(tmp_path, "postgresql", OLD_PG_DUMP)
    assert run.code == 0, run.output
    with connection("postgresql", namespace=NS) as conn:
        execute(conn, "INSERT INTO item (name, made) VALUES ('THREE', 2001)")
        assert execute(conn, "SELECT id, name FROM item WHERE made = 2001") == [(3, "three")]
        with pytest.raises(Exception, match="year_check"):
            execute(conn, "INSERT INTO item (name, made) VALUES ('x', 1800)")
        conn.rollback()


# -- on text: what is recognised, skipped, mapped; what stays refused --------------------------------
def _pg(sql: str) -> tuple[list[str], Counter[str]]:
    skipped: Counter[str] = Counter()
    return [s.text for s in pgdump.adapt(split_sql(sql, "postgresql"), "ns", skipped)], skipped


def test_an_old_pg_dump_is_recognised_by_its_search_path_and_mapped():
    texts, skipped = _pg(OLD_PG_DUMP)
    assert texts[:3] == [
        "SET LOCAL standard_conforming_strings = off",
        "SET LOCAL check_function_bodies = false",
        "SET LOCAL client_min_messages = warning",
    ]
    assert "CREATE OR REPLACE PROCEDURAL LANGUAGE plpgsql" not in texts
    assert not any("OWNER TO" in t or t.startswith(("GRANT", "REVOKE", "COMMENT ON SCHEMA")) for t in texts)
    assert skipped[pgdump.SKIP_SEARCH_PATH] == 1
    assert skipped[pgdump.SKIP_PLPGSQL] == 1
    assert skipped[pgdump.SKIP_OWNER] == 5
    assert skipped[pgdump.SKIP_PRIVILEGES] == 4
    assert skipped[pgdump.SKIP_SCHEMA] == 1
    stmts = list(pgdump.adapt(split_sql(OLD_PG_DUMP, "postgresql"), "ns", Counter()))
    assert all(check_statement(s, "ns", "postgresql") is None for s in stmts), [
        (s.text[:60], check_statement(s, "ns", "postgresql")) for s in stmts
    ]


def test_pg_dump_9_forms_before_the_search_path_are_recognised():
    """pg_dump 9.x: CREATE EXTENSION plpgsql and its COMMENT, or a -n dump's CREATE SCHEMA and its
    owner, come before ``SET search_path = x, pg_catalog``."""
    texts, skipped = _pg(
        "SET statement_timeout = 0;\nSET client_encoding = 'UTF8';\n"
        "CREATE SCHEMA shop;\nALTER SCHEMA shop OWNER TO admin;\n"
        "CREATE EXTENSION IF NOT EXISTS plpgsql WITH SCHEMA pg_catalog;\n"
        "COMMENT ON EXTENSION plpgsql IS 'PL/pgSQL procedural language';\n"
        "SET search_path = shop, pg_catalog;\n"
        "CREATE TABLE item (id integer NOT NULL);\nALTER TABLE shop.item OWNER TO admin;\n"
    )
    assert texts == ["CREATE TABLE item (id integer NOT NULL)"]
    assert skipped[pgdump.SKIP_SCHEMA] == 1 and skipped[pgdump.SKIP_PLPGSQL] == 2
    assert skipped[pgdump.SKIP_OWNER] == 2 and skipped[pgdump.SKIP_SEARCH_PATH] == 1


@pytest.mark.parametrize(
    "sql",
    [
        # ordinary setup SQL that sets its own search_path: not pg_dump's form
        "SET search_path = public;\nCREATE TABLE t (id int);\n",
        "SET search_path TO public, pg_catalog, other;\nCREATE TABLE t (id int);\n",
        # a statement before the search_path that pg_dump never writes there
        "CREATE TABLE t (id int);\nSET search_path = public, pg_catalog;\n",
        # connecting to a database the script did not create
        "\\c other;\nCREATE TABLE t (id int);\n",
        "CREATE DATABASE a;\n\\c b\nCREATE TABLE t (id int);\n",
    ],
)
def test_what_is_not_a_dump_stays_ordinary_setup_sql_and_refused(sql):
    texts, skipped = _pg(sql)
    assert not skipped
    stmts = list(split_sql(sql, "postgresql"))
    assert texts == [s.text for s in stmts]
    assert any(check_statement(s, "ns", "postgresql") for s in stmts)


def test_a_created_database_is_mapped_only_with_its_own_connect():
    texts, skipped = _pg(PSQL_CREATES_ITS_DATABASE + "\\c other\nCREATE DATABASE other;\n")
    assert texts[0].startswith("CREATE TABLE item") and texts[-2:] == ["\\c other", "CREATE DATABASE other"]
    assert skipped[pgdump.SKIP_DATABASE] == 3
    refused = [
        check_statement(s, "ns", "postgresql")
        for s in split_sql("\\c other\nCREATE DATABASE other;\n", "postgresql")
    ]
    assert all(refused)


def _my(sql: str) -> tuple[list[str], Counter[str]]:
    skipped: Counter[str] = Counter()
    stmts = split_sql(sql, "mysql")
    return [s.text for s in mysqldump.adapt(stmts, "ns", skipped, sql[:4096], mysqldump.Facts())], skipped


def test_a_mysql_dumps_flush_logs_is_skipped_and_other_flushes_stay_refused():
    texts, skipped = _my(MYSQL_FLUSHES_LOGS + "FLUSH PRIVILEGES;\n")
    assert not any("logs" in t for t in texts)
    assert skipped[mysqldump.FLUSH_LOGS] == 1
    (flush,) = [s for s in split_sql("FLUSH PRIVILEGES;\n", "mysql")]
    assert texts[-1] == "FLUSH PRIVILEGES" and check_statement(flush, "ns", "mysql")
    # ordinary setup SQL (not a dump): FLUSH LOGS stays refused by the text checks
    plain = "CREATE TABLE t (id int);\nFLUSH LOGS;\n"
    texts, skipped = _my(plain)
    assert not skipped and texts == ["CREATE TABLE t (id int)", "FLUSH LOGS"]
    assert check_statement(list(split_sql(plain, "mysql"))[1], "ns", "mysql")
