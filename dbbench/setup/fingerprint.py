"""What a loaded namespace holds, as one digest per table: computed by the server, equal across
dialects for equal content. Seed, setup SQL and fill all end by fingerprinting what they loaded."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dbbench import dialects


def fingerprint(conn, dialect: str, table: str, columns: Sequence[str], kinds: Sequence[str]) -> str:
    """Order-independent digest of ``table``'s content (``table`` and ``columns`` quoted as the
    dialect quotes them; ``kinds`` the columns' generator kinds): ``ROWS:HEX``."""
    d = dialects.get(dialect)
    row_text = d.concat([d.canonical(c, k) for c, k in zip(columns, kinds)])
    with conn.cursor() as cur:
        cur.execute(d.fingerprint_sql(table, row_text))
        count, total = cur.fetchone()
    return f"{int(count)}:{int(total):x}"


def fingerprints_agree(results: Sequence[Any], *, by_name: bool = False) -> dict[str, bool]:
    """Per table (every table any result has, in first-seen order, or sorted ``by_name`` where the
    servers' own orders differ): whether all results hold the same fingerprint (a table missing on
    one side disagrees). ``results``: anything with a ``fingerprints`` mapping."""
    tables = dict.fromkeys(t for r in results for t in r.fingerprints)
    agree = {t: len({r.fingerprints.get(t) for r in results}) == 1 for t in tables}
    return dict(sorted(agree.items())) if by_name else agree
