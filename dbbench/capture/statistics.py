"""Statements any client ran, read from the servers' own statement statistics: PostgreSQL's
``pg_stat_statements`` (normalised text, ``$n`` parameters, no values: values are drawn from the
data when checked) and MySQL's ``performance_schema.events_statements_summary_by_digest``
(``QUERY_SAMPLE_TEXT``: one execution's text with its real values), for ``dbbench capture``."""

from __future__ import annotations

from typing import Any

from dbbench import dialects
from dbbench.access.targets import Target
from dbbench.capture.statements import Seen, merge

SOURCES = {"postgresql": "pg_stat_statements", "mysql": "performance_schema digest"}


def _driver(target: Target) -> tuple[Any, Any]:
    raw = target.engine.raw_connection()
    return raw, raw.driver_connection


def read(targets: list[Target], namespace: str) -> list[Seen]:
    """Every application statement each target's statistics hold (for MySQL: run with ``namespace``
    as the default database), as shapes."""
    found = []
    for target in targets:
        raw, conn = _driver(target)
        try:
            rows = dialects.get(target.dialect).captured_statements(conn, namespace)
        finally:
            raw.close()
        for text, calls in rows:
            if text.endswith("..."):  # a sample longer than the server keeps
                continue
            source = f"{SOURCES[target.dialect]}, {calls:,} call{'s' if calls != 1 else ''}"
            found.append((target.dialect, text, None, calls, source, None, None))
    return merge(found)


def reset(targets: list[Target]) -> None:
    """Forget what the statistics hold, before the run to capture."""
    for target in targets:
        raw, conn = _driver(target)
        try:
            dialects.get(target.dialect).reset_captured(conn)
        finally:
            raw.close()
