"""A table's fingerprint (dbbench.setup.fingerprint) is the same text on both servers for the same
rows, however wide the table: PostgreSQL takes at most 100 arguments per function call, so a table
of more columns (zabbix's widest have over 100) is joined from one array, with the same result."""

from __future__ import annotations

import pytest

from dbbench import dialects
from dbbench.setup.fingerprint import fingerprint
from tests.db import connection, drop_namespaces

pytestmark = pytest.mark.servers
NS = "dbbench_t_fingerprint_wide"


@pytest.mark.parametrize("width", [3, 99, 100, 150])
def test_a_table_of_any_width_fingerprints_alike_on_both_servers(local_servers, width):
    columns = [f"c{i}" for i in range(width)]
    rows = [
        [str(i) for i in range(width)],
        ["NULL" if i % 3 == 0 else f"'v{i}'" for i in range(width)],  # NULLs among values
    ]
    got = {}
    try:
        for dialect in ("postgresql", "mysql"):
            d = dialects.get(dialect)
            with connection(dialect) as conn:
                d.begin_reload(conn, NS, {})  # an owned namespace, as a seed starts one
                d.use(conn, NS)
                with conn.cursor() as cur:
                    cur.execute(f"CREATE TABLE wide ({', '.join(f'{c} varchar(20)' for c in columns)})")
                    for row in rows:
                        cur.execute(f"INSERT INTO wide VALUES ({', '.join(row)})")
                conn.commit()
                got[dialect] = fingerprint(conn, dialect, "wide", columns, ["text"] * width)
    finally:
        drop_namespaces(NS)
    assert got["postgresql"] == got["mysql"] and got["mysql"].startswith("2:"), got
