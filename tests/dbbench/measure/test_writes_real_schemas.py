"""Write shapes and their lock footprints on a real public schema's form (issue 36).

The MySQL sample database sakila (``sakila-schema.sql``) and its PostgreSQL port (jOOQ/sakila's
``postgres-sakila-schema.sql``, a pg_dump) were run through ``dbbench explain`` with write shapes
of their own (rental returns, rental and inventory deletions, a late fee as ``INSERT … SELECT``,
an inventory checkout ``FOR UPDATE``). What they showed is reproduced here on a small schema
written in the form each real file has: ``customer``, ``inventory``, ``rental`` and ``payment``
with sakila's keys, index names and foreign keys, and a few thousand generated rows (the same rows
on both servers, no network):

* MySQL: ``rental`` has ``UNIQUE KEY (rental_date, inventory_id, customer_id)`` (named
  ``rental_date`` by the server) and one ``KEY idx_fk_*`` per foreign key; ``payment`` declares
  ``fk_payment_rental … ON DELETE SET NULL`` without an index of its own, so InnoDB creates one
  named after the constraint.
* PostgreSQL (the port): the same unique key is ``idx_unq_rental_rental_date_inventory_id_customer_id``,
  and ``payment.rental_id`` has its ``ON DELETE SET NULL`` foreign key and **no index**: every
  deleted rental reads ``payment`` whole (the port also declares that column ``NOT NULL``, so on
  the real data the delete is refused; here it is nullable, as on MySQL).

What is checked, on both servers:

* an ``UPDATE`` through the unique key passes and locks the rows it changes (MySQL: and the
  entry that ends its range);
* the DAO change that drops that key fails on both: MySQL's full scan locks every row of
  ``rental`` and the failure says so; PostgreSQL's plan loses the index, the failure names the
  full scan and the rows it locked, which stay the rows changed (PostgreSQL locks no row it only
  reads);
* a ``DELETE`` of a rental fails on PostgreSQL, naming ``payment`` and its foreign key without an
  index; on MySQL it passes and the cascade names the index InnoDB keeps for that key; with an
  index on ``payment.rental_id`` (the fix) it passes on PostgreSQL too, through that index;
* the tables' fingerprints, read here before and after every run, are unchanged.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dbbench.defaults import DIALECTS, Dialect
from dbbench.setup.loader import table_fingerprint
from tests.conftest import run_cli, shape_toml
from tests.db import connection, drop_namespaces, sql

pytestmark = pytest.mark.servers

NS = f"dbbench_t_real_writes_{os.getpid()}"
ROOT = Path(__file__).resolve().parents[3]
TABLES = ("customer", "inventory", "rental", "payment")
RENTALS = 3000  # one an hour from 2005-05-24 01:00; one payment each
DAY_ROWS = 24  # the rentals of 2005-06-01
UNIQUE_KEY: dict[Dialect, str] = {
    "postgresql": "idx_unq_rental_rental_date_inventory_id_customer_id",
    "mysql": "rental_date",
}
DROP_UNIQUE_KEY: dict[Dialect, str] = {
    "postgresql": "DROP INDEX idx_unq_rental_rental_date_inventory_id_customer_id",
    "mysql": "ALTER TABLE rental DROP INDEX rental_date",
}

# sakila-schema.sql's form (MySQL 5.x sample database, InnoDB), rows generated from a digit table
MYSQL_SETUP = """
SET @OLD_FOREIGN_KEY_CHECKS=@@FOREIGN_KEY_CHECKS, FOREIGN_KEY_CHECKS=0;

CREATE TABLE digit (d TINYINT UNSIGNED NOT NULL, PRIMARY KEY (d)) ENGINE=InnoDB;
INSERT INTO digit VALUES (0),(1),(2),(3),(4),(5),(6),(7),(8),(9);

CREATE TABLE customer (
  customer_id SMALLINT UNSIGNED NOT NULL AUTO_INCREMENT,
  store_id TINYINT UNSIGNED NOT NULL,
  first_name VARCHAR(45) NOT NULL,
  last_name VARCHAR(45) NOT NULL,
  email VARCHAR(50) DEFAULT NULL,
  active BOOLEAN NOT NULL DEFAULT TRUE,
  create_date DATETIME NOT NULL,
  PRIMARY KEY  (customer_id),
  KEY idx_fk_store_id (store_id),
  KEY idx_last_name (last_name)
)ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE inventory (
  inventory_id MEDIUMINT UNSIGNED NOT NULL AUTO_INCREMENT,
  film_id SMALLINT UNSIGNED NOT NULL,
  store_id TINYINT UNSIGNED NOT NULL,
  PRIMARY KEY  (inventory_id),
  KEY idx_fk_film_id (film_id),
  KEY idx_store_id_film_id (store_id,film_id)
)ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE rental (
  rental_id INT NOT NULL AUTO_INCREMENT,
  rental_date DATETIME NOT NULL,
  inventory_id MEDIUMINT UNSIGNED NOT NULL,
  customer_id SMALLINT UNSIGNED NOT NULL,
  return_date DATETIME DEFAULT NULL,
  staff_id TINYINT UNSIGNED NOT NULL,
  PRIMARY KEY (rental_id),
  UNIQUE KEY  (rental_date,inventory_id,customer_id),
  KEY idx_fk_inventory_id (inventory_id),
  KEY idx_fk_customer_id (customer_id),
  KEY idx_fk_staff_id (staff_id),
  CONSTRAINT fk_rental_inventory FOREIGN KEY (inventory_id) REFERENCES inventory (inventory_id) ON DELETE RESTRICT ON UPDATE CASCADE,
  CONSTRAINT fk_rental_customer FOREIGN KEY (customer_id) REFERENCES customer (customer_id) ON DELETE RESTRICT ON UPDATE CASCADE
)ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE payment (
  payment_id SMALLINT UNSIGNED NOT NULL AUTO_INCREMENT,
  customer_id SMALLINT UNSIGNED NOT NULL,
  staff_id TINYINT UNSIGNED NOT NULL,
  rental_id INT DEFAULT NULL,
  amount DECIMAL(5,2) NOT NULL,
  payment_date DATETIME NOT NULL,
  PRIMARY KEY  (payment_id),
  KEY idx_fk_staff_id (staff_id),
  KEY idx_fk_customer_id (customer_id),
  CONSTRAINT fk_payment_rental FOREIGN KEY (rental_id) REFERENCES rental (rental_id) ON DELETE SET NULL ON UPDATE CASCADE,
  CONSTRAINT fk_payment_customer FOREIGN KEY (customer_id) REFERENCES customer (customer_id) ON DELETE RESTRICT ON UPDATE CASCADE
)ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

INSERT INTO customer (customer_id, store_id, first_name, last_name, email, create_date)
SELECT n, n % 2 + 1, CONCAT('FIRST', n), CONCAT('LAST', n % 97), CONCAT('c', n, '@sakilacustomer.org'), '2006-02-14 22:04:36'
  FROM (SELECT a.d + 10 * b.d + 100 * c.d + 1 AS n FROM digit a, digit b, digit c) s WHERE n <= 300;

INSERT INTO inventory (inventory_id, film_id, store_id)
SELECT n, (n - 1) DIV 4 + 1, n % 2 + 1
  FROM (SELECT a.d + 10 * b.d + 100 * c.d + 1 AS n FROM digit a, digit b, digit c) s;

INSERT INTO rental (rental_id, rental_date, inventory_id, customer_id, return_date, staff_id)
SELECT n, '2005-05-24 00:00:00' + INTERVAL n HOUR, n * 7 % 1000 + 1, n * 13 % 300 + 1,
       CASE WHEN n <= 2900 THEN '2005-05-24 00:00:00' + INTERVAL n + 72 HOUR END, n % 2 + 1
  FROM (SELECT a.d + 10 * b.d + 100 * c.d + 1000 * e.d + 1 AS n FROM digit a, digit b, digit c, digit e) s
 WHERE n <= 3000;

INSERT INTO payment (payment_id, customer_id, staff_id, rental_id, amount, payment_date)
SELECT rental_id, customer_id, staff_id, rental_id, rental_id % 5 + 0.99, rental_date FROM rental;

SET FOREIGN_KEY_CHECKS=@OLD_FOREIGN_KEY_CHECKS;
"""

# postgres-sakila-schema.sql's form (a pg_dump: tables, then ALTER TABLE ONLY … ADD CONSTRAINT,
# indexes, foreign keys last), the same rows from generate_series
POSTGRESQL_SETUP = """
CREATE TABLE customer (
    customer_id integer NOT NULL,
    store_id smallint NOT NULL,
    first_name character varying(45) NOT NULL,
    last_name character varying(45) NOT NULL,
    email character varying(50),
    activebool boolean DEFAULT true NOT NULL,
    create_date timestamp without time zone NOT NULL
);

CREATE TABLE inventory (
    inventory_id integer NOT NULL,
    film_id smallint NOT NULL,
    store_id smallint NOT NULL
);

CREATE TABLE rental (
    rental_id integer NOT NULL,
    rental_date timestamp without time zone NOT NULL,
    inventory_id integer NOT NULL,
    customer_id smallint NOT NULL,
    return_date timestamp without time zone,
    staff_id smallint NOT NULL
);

CREATE TABLE payment (
    payment_id integer NOT NULL,
    customer_id smallint NOT NULL,
    staff_id smallint NOT NULL,
    rental_id integer,
    amount numeric(5,2) NOT NULL,
    payment_date timestamp without time zone NOT NULL
);

INSERT INTO customer
SELECT n, n % 2 + 1, 'FIRST' || n, 'LAST' || n % 97, 'c' || n || '@sakilacustomer.org', true, '2006-02-14 22:04:36'
  FROM generate_series(1, 300) n;

INSERT INTO inventory SELECT n, (n - 1) / 4 + 1, n % 2 + 1 FROM generate_series(1, 1000) n;

INSERT INTO rental
SELECT n, timestamp '2005-05-24 00:00:00' + n * interval '1 hour', n * 7 % 1000 + 1, n * 13 % 300 + 1,
       CASE WHEN n <= 2900 THEN timestamp '2005-05-24 00:00:00' + (n + 72) * interval '1 hour' END, n % 2 + 1
  FROM generate_series(1, 3000) n;

INSERT INTO payment SELECT rental_id, customer_id, staff_id, rental_id, rental_id % 5 + 0.99, rental_date FROM rental;

ALTER TABLE ONLY customer
    ADD CONSTRAINT customer_pkey PRIMARY KEY (customer_id);

ALTER TABLE ONLY inventory
    ADD CONSTRAINT inventory_pkey PRIMARY KEY (inventory_id);

ALTER TABLE ONLY payment
    ADD CONSTRAINT payment_pkey PRIMARY KEY (payment_id);

ALTER TABLE ONLY rental
    ADD CONSTRAINT rental_pkey PRIMARY KEY (rental_id);

CREATE INDEX idx_fk_customer_id ON payment USING btree (customer_id);

CREATE INDEX idx_fk_inventory_id ON rental USING btree (inventory_id);

CREATE INDEX idx_fk_staff_id ON payment USING btree (staff_id);

CREATE INDEX idx_fk_store_id ON customer USING btree (store_id);

CREATE INDEX idx_last_name ON customer USING btree (last_name);

CREATE INDEX idx_store_id_film_id ON inventory USING btree (store_id, film_id);

CREATE UNIQUE INDEX idx_unq_rental_rental_date_inventory_id_customer_id ON rental USING btree (rental_date, inventory_id, customer_id);

ALTER TABLE ONLY payment
    ADD CONSTRAINT payment_customer_id_fkey FOREIGN KEY (customer_id) REFERENCES customer(customer_id) ON UPDATE CASCADE ON DELETE RESTRICT;

ALTER TABLE ONLY payment
    ADD CONSTRAINT payment_rental_id_fkey FOREIGN KEY (rental_id) REFERENCES rental(rental_id) ON UPDATE CASCADE ON DELETE SET NULL;

ALTER TABLE ONLY rental
    ADD CONSTRAINT rental_customer_id_fkey FOREIGN KEY (customer_id) REFERENCES customer(customer_id) ON UPDATE CASCADE ON DELETE RESTRICT;

ALTER TABLE ONLY rental
    ADD CONSTRAINT rental_inventory_id_fkey FOREIGN KEY (inventory_id) REFERENCES inventory(inventory_id) ON UPDATE CASCADE ON DELETE RESTRICT;
"""

RETURNS = shape_toml(
    "rentals of a day returned",
    f"{DAY_ROWS} of {RENTALS:,}",
    params='day = "2005-06-01 00:00:00"\nnext_day = "2005-06-02 00:00:00"\nreturned = "2005-06-03 12:00:00"',
    sql="UPDATE rental SET return_date = :returned WHERE rental_date >= :day AND rental_date < :next_day",
    postgresql=f'expect = {{ table = "rental", index = "{UNIQUE_KEY["postgresql"]}" }}\n'
    'forbid = ["full_scan", "sort"]\nmax_locked_rows = 64',
    mysql=f'expect = {{ table = "rental", index = "{UNIQUE_KEY["mysql"]}" }}\n'
    'forbid = ["full_scan", "sort"]\nmax_locked_rows = 64',
    expect_rows=DAY_ROWS,
)

DELETION = shape_toml(
    "rental deletion",
    f"1 of {RENTALS:,} and its payment",
    params="rental_id = 2",
    sql="DELETE FROM rental WHERE rental_id = :rental_id",
    postgresql='expect = { table = "rental", index = "rental_pkey" }\nforbid = ["full_scan:rental"]\nmax_locked_rows = 4',
    mysql='expect = { table = "rental", index = "PRIMARY" }\nforbid = ["full_scan:rental"]\nmax_locked_rows = 4',
    expect_rows=1,
)


def _write_catalog(cat: Path) -> Path:
    """The sakila-form catalog: its setup SQL and the two write shapes."""
    cat.mkdir(parents=True)
    (cat / "setup.mysql.sql").write_text(MYSQL_SETUP)
    (cat / "setup.postgresql.sql").write_text(POSTGRESQL_SETUP)
    (cat / "01-rentals-of-a-day-returned.toml").write_text(RETURNS)
    (cat / "02-rental-deletion.toml").write_text(DELETION)
    return cat


@pytest.fixture
def catalog(local_servers, tmp_path: Path):
    """The sakila-form catalog seeded into a namespace of this module's own on both servers;
    dropped after."""
    cat = _write_catalog(tmp_path / "sakila")
    try:
        seeded = run_cli("seed", "--catalog", str(cat), "--namespace", NS)
        assert seeded.code == 0, seeded.output
        for dialect in DIALECTS:
            assert sql(dialect, "SELECT COUNT(*) FROM rental", namespace=NS) == [(RENTALS,)]
        yield cat
    finally:
        drop_namespaces(NS)


def _fingerprints() -> dict[str, dict[str, str]]:
    """Every table's content digest on each server, read here (not by the run under test)."""
    out: dict[str, dict[str, str]] = {}
    for dialect in DIALECTS:
        with connection(dialect, namespace=NS) as conn:
            out[dialect] = {t: table_fingerprint(conn, dialect, NS, t) for t in TABLES}
    return out


def _explain(cat: Path, tmp_path: Path, shape: str):
    """``dbbench explain`` of one shape on both servers, the tables' fingerprints read before and
    after it and held equal: the run and its results by dialect."""
    before = _fingerprints()
    out = tmp_path / "explain.json"
    out.unlink(missing_ok=True)
    run = run_cli(
        "explain", "--catalog", str(cat), "--namespace", NS, "--shape", shape,
        "--warmups", "1", "--runs", "3", "--output", str(out),
    )  # fmt: skip
    assert _fingerprints() == before
    assert out.exists(), run.output
    results = {r["dialect"]: r for r in json.loads(out.read_text())["results"]}
    assert set(results) == {"postgresql", "mysql"}, run.output
    for r in results.values():
        assert r["unchanged"]["equal"] is True, r["unchanged"]
        assert {"rental", "payment"} <= set(r["unchanged"]["tables"])  # the cascade's child too
    return run, results


def _fail_line(run, shape: str, dialect: str) -> str:
    label = {"postgresql": "PostgreSQL", "mysql": "MySQL"}[dialect]
    lines = [line for line in run.output.splitlines() if line.startswith(f"FAIL {shape} [{label}]")]
    assert len(lines) == 1, run.output
    return lines[0]


def test_an_update_through_the_unique_key_locks_only_the_rows_it_changes(catalog, tmp_path):
    run, results = _explain(catalog, tmp_path, "rentals of a day returned")
    assert run.code == 0, run.output
    for dialect, r in results.items():
        assert r["ok"], (dialect, r)
        assert r["remediated"]["plan"]["children"], r["remediated"]["plan"]
        locks = r["remediated"]["locks"]
        assert locks["affected"] == DAY_ROWS
        (rental,) = [t for t in locks["tables"] if t["table"] == "rental"]
        assert rental["changed"] == {"updated": DAY_ROWS}
        if dialect == "mysql":
            # the range scan's next-key lock also holds the first entry past the range (the
            # 2005-06-02 00:00 rental): under REPEATABLE READ that row is locked too
            assert locks["rows"] == DAY_ROWS + 1, locks
            assert UNIQUE_KEY["mysql"] in rental["indexes"]
        else:
            assert locks["rows"] == DAY_ROWS, locks


def test_the_dao_change_that_drops_the_unique_key_fails_on_both_naming_the_locked_rows(catalog, tmp_path):
    for dialect, statement in DROP_UNIQUE_KEY.items():
        sql(dialect, statement, namespace=NS)
    run, results = _explain(catalog, tmp_path, "rentals of a day returned")
    assert run.code == 1, run.output
    assert not results["postgresql"]["ok"] and not results["mysql"]["ok"]

    # MySQL: the full scan of rental locks every row it reads, not only the 24 it changes
    mysql = results["mysql"]["remediated"]["locks"]
    assert mysql["affected"] == DAY_ROWS
    assert mysql["rows"] == RENTALS
    assert [(t["table"], t["rows"], t["indexes"]) for t in mysql["tables"]] == [
        ("rental", RENTALS, ["PRIMARY"])
    ]
    line = _fail_line(run, "rentals of a day returned", "mysql")
    assert "expected index rental_date on rental is not used" in line
    assert (
        f"UPDATE locks {RENTALS:,} rows, more than max_locked_rows 64 (rental: {RENTALS:,} through PRIMARY)"
        in line
    )

    # PostgreSQL: the plan loses the index; it locks the rows it changes, and says which
    postgresql = results["postgresql"]["remediated"]["locks"]
    assert postgresql["rows"] == DAY_ROWS
    line = _fail_line(run, "rentals of a day returned", "postgresql")
    assert f"expected index {UNIQUE_KEY['postgresql']} on rental is not used" in line
    assert "forbidden full scan of rental" in line
    assert f"UPDATE rental locked {DAY_ROWS} rows (rental {DAY_ROWS})" in line


def test_a_rental_deletion_fails_on_postgresql_where_payment_lacks_its_fk_index(catalog, tmp_path):
    run, results = _explain(catalog, tmp_path, "rental deletion")
    assert run.code == 1, run.output

    # PostgreSQL: the plan is the key's, but ON DELETE SET NULL reads payment whole
    pg = results["postgresql"]
    assert not pg["ok"]
    locks = pg["remediated"]["locks"]
    (cascade,) = locks["cascades"]
    assert (cascade["constraint"], cascade["child"], cascade["columns"], cascade["index"]) == (
        "payment_rental_id_fkey", "payment", ["rental_id"], None,
    )  # fmt: skip
    assert cascade["child_full_scans"] == 1 and cascade["calls"] == 1
    changed = {t["table"]: t["changed"] for t in locks["tables"]}
    assert changed["rental"] == {"deleted": 1} and changed["payment"] == {"updated": 1}
    assert locks["rows"] == 2
    line = _fail_line(run, "rental deletion", "postgresql")
    assert (
        "DELETE on rental: child table payment has no index on its foreign key payment_rental_id_fkey "
        "(rental_id), so every parent row changed reads payment (1 full scan)"
    ) in line

    # MySQL: InnoDB keeps an index for every foreign key; the cascade goes through it
    my = results["mysql"]
    assert my["ok"], my
    (cascade,) = my["remediated"]["locks"]["cascades"]
    assert (cascade["constraint"], cascade["child"], cascade["rule"], cascade["index"], cascade["rows"]) == (
        "fk_payment_rental", "payment", "SET NULL", "fk_payment_rental", 1,
    )  # fmt: skip
    assert "FAIL rental deletion [MySQL]" not in run.output


def test_with_an_index_on_the_foreign_key_the_postgresql_deletion_passes_through_it(catalog, tmp_path):
    sql("postgresql", "CREATE INDEX idx_fk_rental_id ON payment USING btree (rental_id)", namespace=NS)
    run, results = _explain(catalog, tmp_path, "rental deletion")
    assert run.code == 0, run.output
    (cascade,) = results["postgresql"]["remediated"]["locks"]["cascades"]
    assert (cascade["child"], cascade["index"], cascade["child_full_scans"]) == (
        "payment",
        "idx_fk_rental_id",
        0,
    )
    assert results["postgresql"]["remediated"]["locks"]["rows"] == 2


def test_the_corpus_run_prints_each_write_shapes_footprint(local_servers, tmp_path):
    """``benchmarks/corpus.py --explain-on setup``: the shapes measured on the setup's own rows,
    one line per write shape under its schema's line; the namespaces it made are gone after."""
    _write_catalog(tmp_path / "corpus" / "sakila")
    prefix = f"dbbench_t_real_corpus_{os.getpid()}_"
    run = subprocess.run(
        [
            sys.executable,
            "benchmarks/corpus.py",
            str(tmp_path / "corpus"),
            "--explain-on",
            "setup",
            "--prefix",
            prefix,
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    out = run.stdout
    assert run.returncode == 1, out + run.stderr  # PostgreSQL's rental deletion fails
    lines = [line.split() for line in out.splitlines()]
    schemas = [(w[1], w[5:9]) for w in lines if w and w[0] == "sakila"]
    assert schemas == [("postgresql", ["0", "n/a", "n/a", "1"]), ("mysql", ["0", "n/a", "n/a", "0"])], out
    pg, my = out.split("\nsakila ")[1:3]
    assert (
        f"ok   rentals of a day returned                changed {DAY_ROWS}, locked {DAY_ROWS} rows (rental {DAY_ROWS}); "
        "data unchanged"
    ) in pg
    assert (
        "FAIL rental deletion                          changed 1, locked 2 rows (payment 1, rental 1); "
        "cascades: payment (payment_rental_id_fkey) WITHOUT AN INDEX; data unchanged"
    ) in pg
    assert (
        "ok   rental deletion                          changed 1, locked 2 rows (payment 1, rental 1), "
    ) in my
    assert "cascades: payment (fk_payment_rental) through fk_payment_rental; data unchanged" in my
    assert "writes   3 of 4 write shapes passed" in out
    left = sql(
        "mysql", f"SELECT schema_name FROM information_schema.schemata WHERE schema_name LIKE '{prefix}%'"
    )
    assert (
        left == []
        and sql("postgresql", f"SELECT nspname FROM pg_namespace WHERE nspname LIKE '{prefix}%'") == []
    )
