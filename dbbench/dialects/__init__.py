"""Everything that differs between PostgreSQL and MySQL, one module per dialect.

Both modules offer the same functions on a raw DB-API connection (see :class:`Dialect`), so the
seeder and the analyzer never branch on the dialect themselves.
"""

from __future__ import annotations

import re
from pathlib import Path

from dbbench.dialects import mysql, postgresql

SQL_DIR = Path(__file__).resolve().parent.parent.parent / "sql"

MODULES = {"postgresql": postgresql, "mysql": mysql}


def get(dialect: str):
    return MODULES[dialect]


def schema_statements(dialect: str) -> tuple[list[str], list[str]]:
    """(table statements, index statements) of ``sql/schema/<dialect>.sql``."""
    text = (SQL_DIR / "schema" / f"{dialect}.sql").read_text()
    tables, indexes = re.split(r"^-- indexes$", text, maxsplit=1, flags=re.M)
    return _split(tables), _split(indexes)


def _split(text: str) -> list[str]:
    lines = [ln for ln in text.splitlines() if not ln.strip().startswith("--")]
    return [s.strip() for s in "\n".join(lines).split(";") if s.strip()]
