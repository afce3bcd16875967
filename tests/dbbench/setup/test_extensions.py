"""Setup SQL that uses PostgreSQL extensions loads once a superuser installed them (issue 32).

Real schemas ask for extensions (Rails ``structure.sql``: openstreetmap's btree_gist, danbooru's
pg_trgm, pgcrypto …): ``CREATE EXTENSION IF NOT EXISTS x WITH SCHEMA public`` and its ``COMMENT``,
then names qualified with ``public`` that are the extension's (``public.gin_trgm_ops``,
``OPERATOR(public.%)``) and unqualified calls of its functions (``gen_random_uuid()``). dbbench never
installs an extension; the refusal says to have a superuser install it in ``public``. Once that is
done, the setup:

1. skips the ``CREATE`` / ``COMMENT ON`` / ``DROP EXTENSION`` of an installed extension, each
   counted under its own reason (one not installed: refused as before);
2. leaves the dumped schema's qualifier on names of the installed extensions' objects (the rest of
   the dump is still mapped onto the namespace), and the text checks read them as reads, while a
   write or DDL to ``public`` stays refused;
3. resolves their unqualified names: search_path is the namespace, then the extensions' schemas.

The extensions are installed here as the admin (dbbench's own user, a superuser on the local
server), and only those this test installed are dropped afterwards.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path

import pytest

from dbbench.setup import extensions, pgdump
from dbbench.setup.guard import check_statement
from dbbench.setup.split import split_sql
from tests.conftest import run_cli
from tests.db import drop_namespaces, sql

NS = f"h32ext_{os.getpid()}"
WANTED = ("pg_trgm", "btree_gist", "pgcrypto")

SHAPE = """name = "item by name"
cardinality = "1 of a few"

[params]
name = "one"

[query]
sql = "SELECT id FROM item WHERE name = :name"

[postgresql]
expect = { table = "item", index = "idx_item_name" }
settings = { enable_seqscan = "off" }
"""

# pg_dump 12's plain format of a schema using three extensions, as a Rails structure.sql has it
DUMP = """SET statement_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);
SET check_function_bodies = false;
SET client_min_messages = warning;

CREATE EXTENSION IF NOT EXISTS btree_gist WITH SCHEMA public;
COMMENT ON EXTENSION btree_gist IS 'support for indexing common datatypes in GiST';
CREATE EXTENSION IF NOT EXISTS pg_trgm WITH SCHEMA public;
COMMENT ON EXTENSION pg_trgm IS 'text similarity measurement and index searching based on trigrams';
CREATE EXTENSION IF NOT EXISTS pgcrypto WITH SCHEMA public;
COMMENT ON EXTENSION pgcrypto IS 'cryptographic functions';

CREATE FUNCTION public.trigram_score(a text, b text) RETURNS real
    LANGUAGE sql IMMUTABLE
    AS $$ SELECT similarity(a, b) $$;

CREATE TABLE public.item (
    id integer NOT NULL,
    token uuid DEFAULT gen_random_uuid() NOT NULL,
    name text NOT NULL,
    checksum text DEFAULT encode(public.digest('x'::text, 'sha1'::text), 'hex'::text)
);

CREATE SEQUENCE public.item_id_seq AS integer START WITH 1 INCREMENT BY 1 NO MINVALUE NO MAXVALUE CACHE 1;
ALTER SEQUENCE public.item_id_seq OWNED BY public.item.id;
ALTER TABLE ONLY public.item ALTER COLUMN id SET DEFAULT nextval('public.item_id_seq'::regclass);

CREATE VIEW public.similar_items AS
 SELECT item.id
   FROM public.item
  WHERE ((item.name OPERATOR(public.%) 'one'::text) AND (public.similarity(item.name, 'one'::text) > (0.5)::double precision));

COPY public.item (id, name) FROM stdin;
1\tone
2\ttwo
\\.

SELECT pg_catalog.setval('public.item_id_seq', 2, true);
ALTER TABLE ONLY public.item ADD CONSTRAINT item_pkey PRIMARY KEY (id);
CREATE INDEX idx_item_name ON public.item USING btree (name);
CREATE INDEX index_item_on_name_trgm ON public.item USING gin (name public.gin_trgm_ops);
CREATE INDEX index_item_on_id_gist ON public.item USING gist (id);
"""

# ordinary setup SQL (no dump): unqualified names of the extension
PLAIN = """CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE TABLE item (id integer PRIMARY KEY, name text NOT NULL);
INSERT INTO item VALUES (1, 'one'), (2, 'two');
CREATE INDEX idx_item_name ON item (name);
CREATE INDEX item_name_trgm ON item USING gin (name gin_trgm_ops);
CREATE TABLE scores AS SELECT id, similarity(name, 'one') AS score FROM item WHERE name % 'one';
"""


@pytest.fixture
def installed(local_servers):
    """pg_trgm, btree_gist and pgcrypto installed in public (as a superuser following dbbench's
    message does); those this fixture installed are dropped afterwards, the others left."""
    had = {r[0] for r in sql("postgresql", "SELECT extname FROM pg_extension")}
    mine = [e for e in WANTED if e not in had]
    for e in mine:
        sql("postgresql", f'CREATE EXTENSION IF NOT EXISTS "{e}" SCHEMA public')
    try:
        yield
    finally:
        drop_namespaces(NS)
        for e in mine:
            sql("postgresql", f'DROP EXTENSION IF EXISTS "{e}"')


def _seed(tmp_path: Path, sql: str, *extra: str):
    cat = tmp_path / "cat"
    cat.mkdir(exist_ok=True)
    (cat / "01-item-by-name.toml").write_text(SHAPE)
    (cat / "setup.postgresql.sql").write_text(sql)
    out = tmp_path / "seed.json"
    run = run_cli(
        "seed", "--catalog", str(cat), "--only", "postgresql", "--namespace", NS, "--output", str(out), *extra
    )
    return run, out


def _rows(out: Path) -> dict[str, str]:
    (target,) = json.loads(out.read_text())["targets"]
    return {t: f.split(":", 1)[0] for t, f in target["fingerprints"].items()}


# -- 1 and 3: a dump and plain SQL load once the extensions are installed -------------------------
@pytest.mark.servers
@pytest.mark.parametrize("isolation", [(), ("--no-isolation",)], ids=["isolated", "no-isolation"])
def test_a_dump_using_installed_extensions_seeds_and_uses_them(installed, tmp_path, isolation):
    run, out = _seed(tmp_path, DUMP, *isolation)
    assert run.code == 0, run.output
    for name in WANTED:  # CREATE and COMMENT, each extension under its own reason
        assert f"2 statements: {extensions.installed_reason(name, 'public')}" in run.stdout, run.stdout
    assert pgdump.kept_names("public") in run.stdout
    assert _rows(out) == {"item": "2"}
    # the extensions' objects are the server's, everything the dump made is the namespace's
    assert sql("postgresql", f'SELECT count(*) FROM "{NS}".similar_items') == [(1,)]
    assert sql(
        "postgresql", f'SELECT count(*) FROM "{NS}".item WHERE token IS NOT NULL AND checksum IS NOT NULL'
    ) == [(2,)]
    assert sql("postgresql", f"SELECT \"{NS}\".trigram_score('one', 'one')") == [(1.0,)]
    opclasses = sql(
        "postgresql",
        "SELECT c.relname, n.nspname, o.opcname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
        "JOIN pg_namespace cn ON cn.oid = c.relnamespace JOIN pg_opclass o ON o.oid = i.indclass[0] "
        f"JOIN pg_namespace n ON n.oid = o.opcnamespace WHERE cn.nspname = '{NS}' AND c.relname LIKE 'index_item%' "
        "ORDER BY 1",
    )
    assert opclasses == [
        ("index_item_on_id_gist", "public", "gist_int4_ops"),
        ("index_item_on_name_trgm", "public", "gin_trgm_ops"),
    ]
    assert sql(
        "postgresql",
        "SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
        "WHERE n.nspname = 'public' AND c.relname IN ('item', 'similar_items', 'item_id_seq')",
    ) == [(0,)]
    explain = run_cli(
        "explain", "--catalog", str(tmp_path / "cat"), "--only", "postgresql", "--namespace", NS
    )
    assert explain.code == 0, explain.output


@pytest.mark.servers
def test_plain_setup_sql_resolves_an_installed_extensions_unqualified_names(installed, tmp_path):
    run, out = _seed(tmp_path, PLAIN)
    assert run.code == 0, run.output
    assert f"1 statement: {extensions.installed_reason('pg_trgm', 'public')}" in run.stdout
    assert _rows(out) == {"item": "2", "scores": "1"}


@pytest.mark.servers
def test_an_extension_the_server_has_not_is_refused_in_one_line(installed, tmp_path):
    run, _ = _seed(
        tmp_path, "CREATE EXTENSION IF NOT EXISTS h32_no_such_extension WITH SCHEMA public;\n" + PLAIN
    )
    assert run.code == 2, run.output
    assert run.stderr.count("\n") == 1, run.stderr
    assert (
        "statement 1 (line 1) creates server-wide objects (the extension h32_no_such_extension, which only a "
        "superuser may create): have one install it on the server first, outside the namespace "
        "(CREATE EXTENSION h32_no_such_extension SCHEMA public)"
    ) in run.stderr


def test_validate_reads_no_server_and_leaves_the_extensions_to_the_seed(tmp_path):
    cat = tmp_path / "cat"
    cat.mkdir()
    (cat / "01-item-by-name.toml").write_text(SHAPE)
    (cat / "setup.postgresql.sql").write_text(DUMP)
    run = run_cli("validate", "--catalog", str(cat))
    assert run.code == 0, run.output
    assert f"2 statements: {extensions.unread_reason('pg_trgm')}" in run.stdout


# -- 2: what is the extension's and what is the dump's --------------------------------------------
TRGM = extensions.Extensions(
    {"pg_trgm": "public"},
    {"public": frozenset({"gin_trgm_ops", "%", "similarity", "gtrgm", "_gtrgm"})},
)


def _adapt(sql: str, ext: extensions.Extensions | None = TRGM) -> tuple[list[str], Counter[str]]:
    skipped: Counter[str] = Counter()
    head = "SELECT pg_catalog.set_config('search_path', '', false);\n"
    stmts = list(pgdump.adapt(split_sql(head + sql, "postgresql"), "ns", skipped, ext))
    return [s.text for s in stmts], skipped


def test_names_of_an_installed_extensions_objects_keep_their_schema_and_the_rest_is_mapped():
    texts, skipped = _adapt(
        "CREATE EXTENSION IF NOT EXISTS pg_trgm WITH SCHEMA public;\n"
        "CREATE INDEX i ON public.item USING gin (name public.gin_trgm_ops);\n"
        "CREATE VIEW public.v AS SELECT id FROM public.item WHERE name OPERATOR(public.%) 'x' "
        "AND public.\"similarity\"(name, 'x') > 0.5;\n"
        "CREATE TABLE public.t (g public.gtrgm, h public.gtrgm[], s text DEFAULT public.similar_name());\n"
        "SELECT pg_catalog.setval('public.item_id_seq', 2, true);\n"
    )
    assert texts == [
        'CREATE INDEX i ON "ns".item USING gin (name public.gin_trgm_ops)',
        'CREATE VIEW "ns".v AS SELECT id FROM "ns".item WHERE name OPERATOR(public.%) \'x\' '
        "AND public.\"similarity\"(name, 'x') > 0.5",
        'CREATE TABLE "ns".t (g public.gtrgm, h public.gtrgm[], s text DEFAULT "ns".similar_name())',
        "SELECT pg_catalog.setval('\"ns\".item_id_seq', 2, true)",
    ]
    assert skipped[extensions.installed_reason("pg_trgm", "public")] == 1
    assert skipped[pgdump.kept_names("public")] == 3
    assert TRGM.search_path("ns") == ["ns", "public"]
    # without the server's extensions (nothing installed) every public. is the dump's, as before
    texts, _ = _adapt("CREATE INDEX i ON public.item USING gin (name public.gin_trgm_ops);\n", None)
    assert texts == ['CREATE INDEX i ON "ns".item USING gin (name "ns".gin_trgm_ops)']


@pytest.mark.parametrize(
    "sql",
    [
        "CREATE OPERATOR public.% (PROCEDURE = ns.f, LEFTARG = text, RIGHTARG = text)",
        "CREATE OPERATOR CLASS public.gin_trgm_ops FOR TYPE text USING gin AS STORAGE int4",
        "DROP FUNCTION public.similarity(text, text)",
        "COMMENT ON FUNCTION public.similarity(text, text) IS 'x'",
        "CREATE FUNCTION public.similarity(a int) RETURNS int LANGUAGE sql AS $$ SELECT 1 $$",
        "ALTER EXTENSION pg_trgm UPDATE",
    ],
)
def test_writes_and_ddl_to_an_extensions_schema_stay_refused(sql):
    """The dump's DDL naming the extension's objects keeps their schema, and is refused there."""
    (text,) = _adapt(sql + ";\n")[0]
    assert "public" in text or "EXTENSION" in text, text
    (stmt,) = split_sql(text, "postgresql")
    for any_reference in (False, True):
        assert check_statement(stmt, "ns", "postgresql", any_reference=any_reference, extensions=TRGM), sql


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT public.similarity('a', 'b')",
        "CREATE VIEW v AS SELECT id FROM item WHERE name OPERATOR(public.%) 'x'",
        "CREATE INDEX i ON item USING gin (name public.gin_trgm_ops)",
    ],
)
def test_an_installed_extensions_objects_are_reads_under_no_isolation(sql):
    """Under --no-isolation (the text the only boundary) an object of an installed extension is a
    read; another name of its schema stays a reference outside the namespace, a write refused."""
    for write in ("INSERT INTO public.item VALUES (1)", "DELETE FROM public.similarity"):
        assert check_statement(split_sql(write, "postgresql")[0], "ns", "postgresql", extensions=TRGM)
    (stmt,) = split_sql(sql, "postgresql")
    assert check_statement(stmt, "ns", "postgresql", extensions=TRGM) is None
    other = split_sql(sql.replace("similarity", "secrets").replace("%", "~~~"), "postgresql")[0]
    if "gin_trgm_ops" not in sql:  # an operator class of another schema reads nothing either way
        assert check_statement(other, "ns", "postgresql", extensions=TRGM) is not None
        assert check_statement(stmt, "ns", "postgresql") is not None  # no server read: as before


# -- benchmarks/corpus.py --install-extensions -----------------------------------------------------
ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.servers
def test_the_corpus_run_installs_what_the_setup_asks_for_and_drops_it_after(local_servers, tmp_path):
    """What a user does following the refusal, done by the corpus script on the local server: the
    schema seeds, and the extension it installed is gone afterwards (one already there stays)."""
    import subprocess
    import sys

    cat = tmp_path / "corpus" / "postgresql" / "trgm"
    cat.mkdir(parents=True)
    (cat / "setup.postgresql.sql").write_text(
        "CREATE EXTENSION IF NOT EXISTS pg_trgm WITH SCHEMA public;\n"
        "CREATE EXTENSION IF NOT EXISTS pg_stat_statements;\n" + PLAIN
    )
    missing = tmp_path / "corpus" / "postgresql" / "missing"
    missing.mkdir()
    (missing / "setup.postgresql.sql").write_text(
        "CREATE EXTENSION h32_not_shipped;\nCREATE TABLE t (id int);\n"
    )
    had = {r[0] for r in sql("postgresql", "SELECT extname FROM pg_extension")}
    assert "pg_trgm" not in had  # else this test shows nothing
    run = subprocess.run(
        [
            sys.executable,
            "benchmarks/corpus.py",
            str(tmp_path / "corpus"),
            "--install-extensions",
            "--scale",
            "100",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    out = run.stdout
    assert "--install-extensions: pg_trgm: installed in public as" in out, out + run.stderr
    assert "--install-extensions: h32_not_shipped: not shipped with this PostgreSQL: not installed" in out
    if "pg_stat_statements" in had:  # made by dbbench's capture where the server loads it
        assert "pg_stat_statements: already installed (in schema public), left as it is" in out
        assert "--install-extensions: dropped what it installed: pg_trgm\n" in out
    else:
        assert "--install-extensions: dropped what it installed: pg_stat_statements, pg_trgm\n" in out
    line = next(x for x in out.splitlines() if x.startswith("postgresql/trgm"))
    assert line.split()[5:7] == ["0", "0"], out  # seed and init passed
    line = next(x for x in out.splitlines() if x.startswith("postgresql/missing"))
    assert line.split()[5] == "2" and "the extension h32_not_shipped, which only a superuser" in line, out
    assert {r[0] for r in sql("postgresql", "SELECT extname FROM pg_extension")} == had
