"""Two regressions on alpine-100k that a plan check cannot see, built for the live diff tests and
for ``benchmarks/bench_diff_stability.py``: a DAO change the index no longer bounds (more rows),
and a table reloaded out of its index's order (the same rows from more pages)."""

from __future__ import annotations

import shutil
from pathlib import Path

from dbbench import dialects
from tests.db import sql

ROOT = Path(__file__).resolve().parents[3]
KEYSET = "AND (package_name, id) > (:after_name, :after_id)"  # PostgreSQL's namespace page
# The same comparison, but its first member is an expression: ix_package_namespace still serves the
# scan (repository and distribution bound it, its order saves the sort), no longer from row 90,000.
UNBOUNDED = "AND (package_name || '', id) > (:after_name, :after_id)"
SEEDED_ORDER = "id"
SHUFFLED_ORDER = "md5(id::text)"


def unbounded_catalog(where: Path) -> Path:
    """A copy of the alpine catalog at ``where`` whose PostgreSQL namespace page its index no
    longer bounds."""
    shutil.copytree(ROOT / "sql" / "catalog" / "alpine", where)
    entry = where / "02-namespace-late-keyset-page.toml"
    text = entry.read_text()
    if not 0 <= text.find(KEYSET) < text.find("[mysql]"):
        raise ValueError(f"{entry.name}: the PostgreSQL keyset predicate is not where it was")
    entry.write_text(text.replace(KEYSET, UNBOUNDED, 1))
    return where


def rewrite_group_binding(namespace: str, order: str) -> None:
    """PostgreSQL's group_binding in ``namespace`` rewritten in ``order`` and reindexed: the same
    rows, its statistics untouched (:data:`SEEDED_ORDER` leaves it as seeded: the same pages, the
    same buffers; :data:`SHUFFLED_ORDER` puts about every row of a page of its index on its own
    heap page)."""
    table = f"{dialects.get('postgresql').quote(namespace)}.group_binding"
    sql(
        "postgresql",
        [
            f"CREATE TEMP TABLE gb AS SELECT * FROM {table} ORDER BY {order}",
            f"DELETE FROM {table}",
            f"INSERT INTO {table} SELECT * FROM gb",
            "DROP TABLE gb",
        ],
    )
    sql(
        "postgresql",
        [
            f"VACUUM {table}",  # the dead rows go; pg_statistic stays as it was
            f"REINDEX TABLE {table}",  # as compact as the seed built them
        ],
        autocommit=True,
    )


# The keyset predicate of the namespace page on each dialect, and the OFFSET page a DAO change
# might put in its place: the same rows, the same index, but every row before the page read.
OFFSET_PAGE = "ORDER BY package_name, id LIMIT 2048 OFFSET :late_row_offset"


def offset_catalog(where: Path) -> Path:
    """A copy of the alpine catalog at ``where`` whose namespace page is paginated by OFFSET on
    both dialects (keyset pagination rewritten as ``LIMIT 2048 OFFSET 90,000``; the natural
    spellings stay): the same plan shape and index, 2,048 → about 92,000 rows examined."""
    shutil.copytree(ROOT / "sql" / "catalog" / "alpine", where)
    entry = where / "02-namespace-late-keyset-page.toml"
    text = entry.read_text()
    head, pg, my = text.partition("[postgresql]")[0], *text.split("[postgresql]")[1].split("[mysql]")
    keysets = (
        "   AND (package_name, id) > (:after_name, :after_id)\n",
        "   AND (package_name > :after_name OR (package_name = :after_name AND id > :after_id))\n",
    )
    order = "ORDER BY package_name, id LIMIT 2048"

    def offset(section: str, keyset: str) -> str:
        sql_end = section.index('"""', section.index('sql = """') + 9)
        spelled, rest = section[:sql_end], section[sql_end:]
        if keyset not in spelled or order not in spelled:
            raise ValueError(f"{entry.name}: the keyset page is not spelled as it was")
        return spelled.replace(keyset, "").replace(order, OFFSET_PAGE) + rest

    entry.write_text(f"{head}[postgresql]{offset(pg, keysets[0])}[mysql]{offset(my, keysets[1])}")
    return where
