"""mysqldump output and published MySQL sample dumps load unchanged as a catalog's setup SQL.

The source is a namespace seeded from a catalog of this module (types, AUTO_INCREMENT, a view, a
trigger, a procedure and a function, foreign keys, a few thousand rows); the real ``mysqldump``
of the local server's version (Debian's ``mysql-client-core`` in the server's chroot, installed on
first use by :func:`dbbench.servers.mysql.client_tool`) dumps it; each dump, unchanged, is the
``setup.mysql.sql`` of a new catalog seeded into another namespace, whose fingerprints must equal
the source's.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from dbbench.servers import mysql
from dbbench.setup import mysqldump
from dbbench.setup.guard import check_file, statements
from dbbench.setup.split import split_sql
from tests.conftest import run_cli, shape_toml
from tests.db import connection

pytestmark = pytest.mark.servers

SOURCE = "mdsrc"
SHAPE = shape_toml(
    "customer by email",
    "1 of 2,000",
    expect_rows=1,
    params='email = "customer42@example.com"',
    sql="SELECT id, tier FROM customers WHERE email = :email",
    postgresql='expect = { table = "customers", index = "email" }',
)

SOURCE_SQL = r"""
SET SESSION cte_max_recursion_depth = 100000;

CREATE TABLE customers (
    id          integer unsigned NOT NULL AUTO_INCREMENT PRIMARY KEY,
    email       varchar(200) NOT NULL UNIQUE,
    tier        ENUM('free', 'pro', 'team') NOT NULL DEFAULT 'free',
    flags       SET('beta', 'vip', 'newsletter') NOT NULL DEFAULT '',
    profile     JSON,
    balance     DECIMAL(12, 2) NOT NULL DEFAULT 0,
    created_at  DATETIME(3) NOT NULL,
    seen_at     TIMESTAMP NULL,
    note        text,
    avatar      VARBINARY(32)
);

CREATE TABLE orders (
    id           bigint NOT NULL AUTO_INCREMENT PRIMARY KEY,
    customer_id  integer unsigned NOT NULL,
    status       ENUM('open', 'shipped', 'delivered') NOT NULL,
    placed_at    DATETIME NOT NULL,
    total        DECIMAL(10, 2) NOT NULL,
    KEY ix_orders_customer_placed (customer_id, placed_at),
    CONSTRAINT fk_orders_customer FOREIGN KEY (customer_id) REFERENCES customers (id) ON DELETE CASCADE
);

CREATE TABLE order_audit (
    id        integer NOT NULL AUTO_INCREMENT PRIMARY KEY,
    order_id  bigint NOT NULL,
    event     varchar(32) NOT NULL,
    FOREIGN KEY (order_id) REFERENCES orders (id) ON DELETE CASCADE
);

DELIMITER //
CREATE TRIGGER trg_orders_audit AFTER INSERT ON orders FOR EACH ROW
BEGIN
    INSERT INTO order_audit (order_id, event) VALUES (NEW.id, CONCAT('placed;', NEW.status));
END //

CREATE PROCEDURE close_old_orders(IN before_day DATETIME)
BEGIN
    UPDATE orders SET status = 'delivered' WHERE status = 'shipped' AND placed_at < before_day;
    SELECT ROW_COUNT();
END //

CREATE FUNCTION order_label(o_id bigint) RETURNS varchar(64) DETERMINISTIC READS SQL DATA
BEGIN
    DECLARE s varchar(16);
    SELECT status INTO s FROM orders WHERE id = o_id;
    RETURN CONCAT('#', o_id, ' (', s, ')');
END //
DELIMITER ;

CREATE VIEW open_orders AS
    SELECT o.id, o.customer_id, c.email, o.total FROM orders o JOIN customers c ON c.id = o.customer_id
     WHERE o.status = 'open';

INSERT INTO customers (email, tier, flags, profile, balance, created_at, seen_at, note, avatar)
WITH RECURSIVE g (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < 2000)
SELECT CONCAT('customer', n, '@example.com'),
       ELT(1 + n % 3, 'free', 'pro', 'team'),
       CASE n % 4 WHEN 0 THEN '' WHEN 1 THEN 'beta' WHEN 2 THEN 'vip,newsletter' ELSE 'beta,vip' END,
       JSON_OBJECT('n', n, 'tags', JSON_ARRAY('a', n % 7), 'quote', 'it''s "quoted"; \\ back'),
       (n * 37 % 100000) / 100,
       TIMESTAMP '2025-01-01 00:00:00.123' + INTERVAL n * 1001 SECOND,
       CASE WHEN n % 3 = 0 THEN NULL ELSE TIMESTAMP '2025-06-01 00:00:00' + INTERVAL n HOUR END,
       CASE WHEN n % 5 = 0 THEN NULL
            ELSE CONCAT('line one\nline two; -- no comment /* nor this */ mdsrc.orders ', n) END,
       CASE WHEN n % 2 = 0 THEN NULL ELSE UNHEX(SHA2(CONCAT('a', n), 256)) END
  FROM g;

INSERT INTO orders (customer_id, status, placed_at, total)
WITH RECURSIVE g (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < 3000)
SELECT 1 + (n * 7919) % 2000, ELT(1 + n % 3, 'open', 'shipped', 'delivered'),
       TIMESTAMP '2026-01-01 00:00:00' + INTERVAL n * 10 MINUTE, (500 + (n * 131) % 20000) / 100
  FROM g;

SET SESSION sql_mode = CONCAT(@@sql_mode, ',NO_AUTO_VALUE_ON_ZERO');
INSERT INTO customers (id, email, created_at) VALUES (0, 'zero@example.com', '2025-01-01');
CALL close_old_orders(TIMESTAMP '2026-01-05 00:00:00');
"""

# In the style of the published sakila / world / employees sample dumps: the schema named, dropped
# and created, USE, SET AUTOCOMMIT=0 … COMMIT around the data, the client's SET @OLD_… lines.
SAMPLE_DUMP = r"""-- Sample database, in the style of a published one (sakila-schema.sql + sakila-data.sql).

SET NAMES utf8mb4;
SET @OLD_UNIQUE_CHECKS=@@UNIQUE_CHECKS, UNIQUE_CHECKS=0;
SET @OLD_FOREIGN_KEY_CHECKS=@@FOREIGN_KEY_CHECKS, FOREIGN_KEY_CHECKS=0;
SET @OLD_SQL_MODE=@@SQL_MODE, SQL_MODE='TRADITIONAL';

DROP SCHEMA IF EXISTS sample;
CREATE SCHEMA sample;
USE sample;

-- film_actor references film and actor before they exist: FOREIGN_KEY_CHECKS=0 allows it
CREATE TABLE film_actor (
  actor_id SMALLINT UNSIGNED NOT NULL,
  film_id SMALLINT UNSIGNED NOT NULL,
  PRIMARY KEY (actor_id, film_id),
  CONSTRAINT fk_film_actor_actor FOREIGN KEY (actor_id) REFERENCES actor (actor_id),
  CONSTRAINT fk_film_actor_film FOREIGN KEY (film_id) REFERENCES sample.film (film_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE actor (
  actor_id SMALLINT UNSIGNED NOT NULL AUTO_INCREMENT,
  first_name VARCHAR(45) NOT NULL,
  last_name VARCHAR(45) NOT NULL,
  last_update TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP,
  PRIMARY KEY (actor_id),
  KEY idx_actor_last_name (last_name)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE sample.film (
  film_id SMALLINT UNSIGNED NOT NULL AUTO_INCREMENT,
  title VARCHAR(128) NOT NULL,
  rating ENUM('G','PG','PG-13','R','NC-17') DEFAULT 'G',
  special_features SET('Trailers','Commentaries','Deleted Scenes','Behind the Scenes') DEFAULT NULL,
  PRIMARY KEY (film_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE `sample`.`film_text` (
  film_id SMALLINT NOT NULL,
  title VARCHAR(255) NOT NULL,
  PRIMARY KEY (film_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

DELIMITER ;;
CREATE DEFINER=`root`@`localhost` TRIGGER `ins_film` AFTER INSERT ON `film` FOR EACH ROW BEGIN
    INSERT INTO sample.film_text (film_id, title) VALUES (new.film_id, new.title);
  END;;
DELIMITER ;

CREATE DEFINER='root'@'localhost' SQL SECURITY INVOKER VIEW actor_info AS
SELECT a.actor_id, a.first_name, a.last_name, COUNT(fa.film_id) AS films
FROM sample.actor a LEFT JOIN film_actor fa ON fa.actor_id = a.actor_id
GROUP BY a.actor_id, a.first_name, a.last_name;

DELIMITER //
CREATE DEFINER=root@localhost PROCEDURE film_count (IN p_film_id INT, OUT p_count INT)
READS SQL DATA
BEGIN
  SELECT COUNT(*) INTO p_count FROM sample.film_actor WHERE film_id = p_film_id;
END //
DELIMITER ;

SET AUTOCOMMIT=0;
INSERT INTO actor VALUES (1,'PENELOPE','GUINESS','2006-02-15 04:34:33'),
  (2,'NICK','WAHLBERG','2006-02-15 04:34:33'),(3,'ED','CHASE','2006-02-15 04:34:33');
COMMIT;
INSERT INTO sample.film (film_id, title, rating, special_features) VALUES
  (1,'ACADEMY DINOSAUR','PG','Deleted Scenes,Behind the Scenes'),
  (2,'ACE GOLDFINGER','G','Trailers'),(3,'sample.film; not a name','R',NULL);
COMMIT;
INSERT INTO film_actor VALUES (1,1),(2,1),(3,2),(1,3);
COMMIT;

SET SQL_MODE=@OLD_SQL_MODE;
SET FOREIGN_KEY_CHECKS=@OLD_FOREIGN_KEY_CHECKS;
SET UNIQUE_CHECKS=@OLD_UNIQUE_CHECKS;
"""


def _seed(cat: Path, namespace: str, tmp_path: Path) -> tuple[object, dict]:
    out = tmp_path / f"seed-{namespace}.json"
    run = run_cli(
        "seed", "--catalog", str(cat), "--only", "mysql", "--namespace", namespace, "--output", str(out)
    )
    doc = json.loads(out.read_text()) if run.code == 0 else {}
    return run, doc


def _catalog(root: Path, setup: str) -> Path:
    root.mkdir(parents=True)
    (root / "setup.mysql.sql").write_bytes(setup.encode("utf-8", "surrogateescape"))  # binary columns: raw
    (root / "01-customer.toml").write_text(SHAPE)
    return root


@pytest.fixture(scope="module")
def source(local_urls, tmp_path_factory) -> dict[str, str]:
    """The source namespace, seeded; its fingerprints."""
    tmp = tmp_path_factory.mktemp("mysqldump")
    run, doc = _seed(_catalog(tmp / "source", SOURCE_SQL), SOURCE, tmp)
    assert run.code == 0, run.output
    return doc["targets"][0]["fingerprints"]


@pytest.fixture(scope="module")
def dump(local_urls):
    """``dump(*options)``: the real mysqldump's output for the source namespace."""
    url = local_urls["mysql"]

    def run(*options: str) -> str:
        proc = mysql.client("mysqldump", url, [*options, SOURCE])
        assert proc.stdout.startswith("-- MySQL dump"), proc.stderr
        return proc.stdout

    return run


@pytest.mark.parametrize(
    ("options", "namespace"),
    [
        (("--routines", "--triggers"), "mdplain"),
        (("--single-transaction", "--routines", "--triggers"), "mdsingle"),
        (("--single-transaction", "--routines", "--triggers", "--databases"), "mddatabases"),
        (
            (
                *("--routines", "--triggers", "--databases", "--add-drop-database", "--hex-blob"),
                *("--complete-insert", "--skip-extended-insert", "--set-gtid-purged=OFF"),
            ),
            "mdrows",
        ),
    ],
    ids=["routines-triggers", "single-transaction", "databases", "row-per-insert-hex-blob"],
)
def test_a_real_mysqldump_loads_unchanged_and_verifies(
    source, dump, local_servers, tmp_path, options, namespace
):
    text = dump(*options)
    cat = _catalog(tmp_path / "cat", text)
    assert (cat / "setup.mysql.sql").read_bytes() == text.encode("utf-8", "surrogateescape")  # unchanged
    run, doc = _seed(cat, namespace, tmp_path)
    assert run.code == 0, run.output
    assert "Traceback" not in run.output
    assert doc["targets"][0]["fingerprints"] == source
    lines = run.stdout.splitlines()
    for reason in (mysqldump.LOCKS, mysqldump.CHARSET, mysqldump.DEFINER, mysqldump.META):
        assert any(line.startswith("MySQL setup.mysql.sql: ") and line.endswith(reason) for line in lines), (
            reason,
            run.stdout,
        )
    assert any("4 statements: " + mysqldump.DEFINER in line for line in lines), run.stdout
    if "--databases" in options:  # CREATE DATABASE and USE (twice), with DROP DATABASE if asked
        n = 3 + ("--add-drop-database" in options)
        assert any(f"{n} statements: " + mysqldump.DATABASE in line for line in lines), run.stdout
    # the view, the trigger and both routines are there, owned by the namespace user, and work
    role = f"dbbench_{namespace}@%"
    with connection("mysql", namespace=namespace) as conn, conn.cursor() as cur:
        cur.execute(
            "SELECT routine_name, definer FROM information_schema.routines WHERE routine_schema = %s "
            "ORDER BY routine_name",
            (namespace,),
        )
        assert cur.fetchall() == (("close_old_orders", role), ("order_label", role))
        cur.execute("SELECT definer FROM information_schema.triggers WHERE trigger_schema = %s", (namespace,))
        assert cur.fetchall() == ((role,),)
        cur.execute("SELECT definer FROM information_schema.views WHERE table_schema = %s", (namespace,))
        assert cur.fetchall() == ((role,),)
        cur.execute("SELECT order_label(1), COUNT(*) FROM open_orders")
        assert cur.fetchone() == ("#1 (delivered)", 1000)
        cur.execute("SELECT id FROM customers WHERE email = 'zero@example.com'")
        assert cur.fetchone() == (0,)  # NO_AUTO_VALUE_ON_ZERO was honoured


def test_a_sample_dump_naming_its_schema_loads_into_the_namespace(local_servers, tmp_path):
    cat = _catalog(tmp_path / "cat", SAMPLE_DUMP)
    run, doc = _seed(cat, "mdsample", tmp_path)
    assert run.code == 0, run.output
    rows = {c["name"]: c["actual"] for c in doc["targets"][0]["cardinalities"]}
    assert rows == {"rows in actor": 3, "rows in film": 3, "rows in film_actor": 4, "rows in film_text": 3}
    expected = {
        mysqldump.DATABASE: 3,  # DROP SCHEMA, CREATE SCHEMA, USE
        mysqldump.TRANSACTION: 4,  # SET AUTOCOMMIT=0, COMMIT x3
        mysqldump.CHARSET: 1,  # SET NAMES
        mysqldump.DEFINER: 3,  # trigger, view, procedure
        mysqldump.QUALIFIED: 7,  # statements naming sample.x
    }
    for reason, n in expected.items():
        assert f"MySQL setup.mysql.sql: {n} statement{'s' if n != 1 else ''}: {reason}" in run.stdout, (
            run.stdout
        )
    with connection("mysql", namespace="mdsample") as conn, conn.cursor() as cur:
        cur.execute("SELECT title FROM film_text ORDER BY film_id")
        assert [r[0] for r in cur.fetchall()][2] == "sample.film; not a name"  # text not rewritten
        cur.execute("SELECT films FROM actor_info WHERE actor_id = 1")
        assert cur.fetchone() == (2,)
        cur.execute("SELECT view_definition FROM information_schema.views WHERE table_schema = 'mdsample'")
        definition = cur.fetchone()[0]
        assert "`mdsample`.`actor`" in definition and "`sample`" not in definition


@pytest.mark.parametrize(
    ("extra", "why"),
    [
        ("USE mysql;\nCREATE TABLE t (id int);\n", "switches database (USE)"),
        ("CREATE DATABASE other;\n", "creates, drops or alters a schema/database"),
        ("DROP SCHEMA IF EXISTS other;\n", "creates, drops or alters a schema/database"),
        ("INSERT INTO other.actor VALUES (9, 'A', 'B', NOW());\n", "outside the namespace"),
        ("/*!40101 SET GLOBAL local_infile = 1 */;\n", "changes server-wide settings"),
        ("/*!50003 GRANT ALL ON *.* TO CURRENT_USER */;\n", "changes privileges"),
        ("SET @@GLOBAL.max_connections = 1;\n", "changes server-wide settings"),
        (
            "DELIMITER ;;\n/*!50106 CREATE*/ /*!50117 DEFINER=`root`@`localhost`*/ /*!50106 EVENT `purge` "
            "ON SCHEDULE EVERY 1 DAY DO DELETE FROM actor */ ;;\nDELIMITER ;\n",
            "schedules an event, which would run while dbbench measures (dump without --events)",
        ),
    ],
    ids=[
        "use",
        "create-database",
        "drop-schema",
        "qualified-write",
        "conditional-global",
        "conditional-grant",
        "global",
        "event",
    ],
)
def test_a_dump_naming_another_database_is_refused(tmp_path, extra, why):
    cat = _catalog(tmp_path / "cat", SAMPLE_DUMP + extra)
    run = run_cli("validate", "--catalog", str(cat), "--namespace", "mdsample")
    assert run.code == 2, run.output
    assert "Traceback" not in run.output
    assert why in run.stderr and "statement" in run.stderr, run.stderr


def _checked(f: Path) -> tuple[list, list[str], Counter[str]]:
    """A setup file's statements as they run in the namespace ``ns``, its problems, its skips."""
    skipped: Counter[str] = Counter()
    found = check_file(f, "mysql", "ns", skipped=skipped)
    return list(statements(f, "mysql", "ns", facts=found.facts)), found.problems, skipped


def test_the_first_use_of_an_ordinary_setup_file_is_not_a_dump(tmp_path):
    """Ordinary setup SQL is not a dump: its USE, COMMIT and LOCK TABLES stay refused."""
    f = tmp_path / "setup.mysql.sql"
    f.write_text("CREATE TABLE t (id int);\nUSE t;\nCOMMIT;\nLOCK TABLES t WRITE;\n")
    _, problems, skipped = _checked(f)
    assert len(problems) == 2 and not skipped, problems  # USE and COMMIT (LOCK TABLES: the server)


def test_conditional_comments_are_code_and_their_markers_are_kept():
    (s,) = split_sql("/*!40101 SET @OLD_SQL_MODE=@@SQL_MODE, SQL_MODE='NO_AUTO_VALUE_ON_ZERO' */;", "mysql")
    assert s.text.startswith("/*!40101 SET") and s.text.endswith("*/")
    assert s.code.strip().startswith("SET @OLD_SQL_MODE") and "/*" not in s.code
    (plain,) = split_sql("/* USE mysql */ SELECT 1;", "mysql")
    assert "USE" not in plain.code
    # a marker inside quoted text is text
    (lit,) = split_sql("SELECT '/*!40101 x */';", "mysql")
    assert lit.code == "SELECT ''"


def test_client_tool_is_the_servers_own_mysqldump(local_urls):
    proc = mysql.client("mysqldump", local_urls["mysql"], ["--version"])
    assert "9.7" in proc.stdout or "8.0" in proc.stdout, proc.stdout


@pytest.mark.parametrize(
    "header",
    [
        "-- MySQL dump 10.13  Distrib 8.0.36, for Linux (x86_64)\n--\n-- Host: db    Database: shop\n",
        "/*M!999999\\- enable the sandbox mode */\n-- MariaDB dump 10.19  Distrib 10.11.6-MariaDB\n"
        "--\n-- Host: db    Database: shop\n",
    ],
    ids=["mysqldump", "mariadb-dump"],
)
def test_the_header_names_the_dumped_database(tmp_path, header):
    """A single-database dump names its database in the header only: its qualified names and a
    later USE of it map to the namespace; another database's stay refused."""
    f = tmp_path / "setup.mysql.sql"
    f.write_text(
        header + "CREATE TABLE t (id int);\nUSE `shop`;\nINSERT INTO shop.t VALUES (1);\n"
        "INSERT INTO t SELECT COUNT(*) FROM `shop`.`t` WHERE 'shop.t' <> '';\nUSE other;\n"
    )
    stmts, problems, skipped = _checked(f)
    assert [s.text for s in stmts][1:4] == [
        "INSERT INTO `ns`.t VALUES (1)",
        "INSERT INTO t SELECT COUNT(*) FROM `ns`.`t` WHERE 'shop.t' <> ''",
        "USE other",
    ]
    assert skipped == {mysqldump.DATABASE: 1, mysqldump.QUALIFIED: 2}
    assert len(problems) == 1 and "switches database (USE)" in problems[0]


def test_a_table_named_like_the_dumped_database_keeps_its_columns(tmp_path):
    """``orders.id`` is the column of table ``orders`` when the dump creates no object ``id``: only
    ``orders.<an object of the dump>`` is the dumped database's name."""
    f = tmp_path / "setup.mysql.sql"
    f.write_text(
        "-- MySQL dump 10.13\n-- Host: db    Database: orders\n"
        "CREATE TABLE orders (id int);\n"
        "CREATE VIEW v AS SELECT orders.id FROM orders.orders;\n"
        "INSERT INTO `orders`.orders SELECT orders.id + 1 FROM orders;\n"
    )
    stmts, problems, skipped = _checked(f)
    assert [s.text for s in stmts][1:] == [
        "CREATE VIEW v AS SELECT orders.id FROM `ns`.orders",
        "INSERT INTO `ns`.orders SELECT orders.id + 1 FROM orders",
    ]
    assert not problems and skipped == {mysqldump.QUALIFIED: 2}


def test_a_dumps_data_rows_are_not_rescanned_but_anything_else_in_them_is():
    """An INSERT whose rows hold data only is checked by its head (a dump's rows are most of its
    bytes); rows holding anything else -- a subquery, a function, a name -- are checked whole."""
    from dbbench.setup.guard import _without_data_rows, check_statement

    rows = ",".join(f"({i},'it''s; USE mysql',NULL,-1.5e3,_binary 'x',0x1F,DEFAULT)" for i in range(2000))
    (data,) = split_sql(f"INSERT INTO `t` (a, b, c, d, e, f, g) VALUES {rows}", "mysql")
    assert _without_data_rows(data.code) == "INSERT INTO `t` (a, b, c, d, e, f, g) VALUES"
    assert check_statement(data, "ns") is None
    (outside,) = split_sql(f"INSERT INTO other.t VALUES {rows}", "mysql")
    assert "outside the namespace" in (check_statement(outside, "ns") or "")
    for tail, why in [
        (",(1,(SELECT load_file('/etc/passwd')))", "reads or writes server-side files"),
        (" ON DUPLICATE KEY UPDATE b = (SELECT b FROM dbbench_meta LIMIT 1)", "dbbench's ownership marker"),
    ]:
        (s,) = split_sql(f"INSERT INTO t VALUES {rows}{tail}", "mysql")
        assert _without_data_rows(s.code) is s.code
        assert why in (check_statement(s, "ns") or ""), tail
