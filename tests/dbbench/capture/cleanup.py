"""Namespaces the capture and SQL-catalog tests build, dropped with their roles afterwards."""

from __future__ import annotations

from dbbench import dialects, servers
from dbbench.access import isolation
from dbbench.access.targets import connect


def drop_namespaces(*namespaces: str) -> None:
    for dialect in ("postgresql", "mysql"):
        target = connect(servers.local_url(dialect), dialect=dialect)
        try:
            raw = target.engine.raw_connection()
            try:
                for ns in namespaces:
                    dialects.get(dialect).drop_namespace(raw.driver_connection, ns)
                raw.driver_connection.commit()
            finally:
                raw.close()
            for ns in namespaces:
                isolation.drop_role(target, ns)
        finally:
            target.dispose()
