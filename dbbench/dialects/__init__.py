"""Everything that differs between PostgreSQL and MySQL, one module per dialect.

Both modules offer the same functions on a raw DB-API connection (see
:class:`~dbbench.dialects.contract.Dialect`, which mypy checks both modules against), so the
seeder, the analyzer and the setup runner never branch on the dialect themselves.
"""

from __future__ import annotations

import re
from pathlib import Path

from dbbench.dialects import mysql, postgresql
from dbbench.dialects.contract import Dialect

__all__ = ["MODULES", "Dialect", "get", "mysql", "postgresql", "schema_statements"]

SQL_DIR = Path(__file__).resolve().parent.parent.parent / "sql"

MODULES: dict[str, Dialect] = {"postgresql": postgresql, "mysql": mysql}


def get(dialect: str) -> Dialect:
    return MODULES[dialect]


def schema_statements(dialect: str) -> tuple[list[str], list[str]]:
    """(table statements, index statements) of ``sql/schema/<dialect>.sql``."""
    text = (SQL_DIR / "schema" / f"{dialect}.sql").read_text()
    tables, indexes = re.split(r"^-- indexes$", text, maxsplit=1, flags=re.M)
    return _split(tables), _split(indexes)


def _split(text: str) -> list[str]:
    lines = [ln for ln in text.splitlines() if not ln.strip().startswith("--")]
    return [s.strip() for s in "\n".join(lines).split(";") if s.strip()]
