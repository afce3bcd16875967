"""Namespaces the capture and SQL-catalog tests build, dropped with their roles afterwards."""

from __future__ import annotations

from dbbench import servers
from dbbench.access import isolation
from dbbench.access.targets import connect


def drop_namespaces(*namespaces: str) -> None:
    for dialect in ("postgresql", "mysql"):
        target = connect(servers.local_url(dialect), dialect=dialect)
        try:
            for ns in namespaces:
                isolation.drop_namespace(target, ns)
        finally:
            target.dispose()
