"""Everything that differs between PostgreSQL and MySQL, one module per dialect.

Both modules offer the same functions on a raw DB-API connection (see
:class:`~dbbench.dialects.contract.Dialect`, which mypy checks both modules against), so the
seeder, the analyzer and the setup runner never branch on the dialect themselves.
"""

from __future__ import annotations

from dbbench.dialects import mysql, postgresql
from dbbench.dialects.contract import Dialect

__all__ = ["MODULES", "Dialect", "get", "mysql", "postgresql"]

MODULES: dict[str, Dialect] = {"postgresql": postgresql, "mysql": mysql}


def get(dialect: str) -> Dialect:
    return MODULES[dialect]
