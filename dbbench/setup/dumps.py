"""Dumps as setup SQL: a team's ``pg_dump`` or ``mysqldump`` output, loaded unchanged.

A setup file's statements pass through the dump adapter of their dialect before the text checks
(:func:`dbbench.setup.guard.statements_for`): :mod:`dbbench.setup.pgdump` for PostgreSQL,
:mod:`dbbench.setup.mysqldump` for MySQL. An adapter recognizes its tool's output and maps it onto
the namespace dbbench owns -- the dumped schema or database becomes the namespace, statements that
only make sense on the dumped server (ownership, privileges, the client's session settings) are
skipped -- and passes ordinary setup SQL through unchanged. What it skips it counts in ``skipped``
(reason -> statements), which the commands print as one summary line per reason.

The server stays the boundary: everything an adapter lets through still runs as the namespace's own
role, and still passes the text checks.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator

from dbbench.setup import mysqldump, pgdump
from dbbench.setup.extensions import Extensions
from dbbench.setup.mysqldump import Facts
from dbbench.setup.split import Statement

__all__ = ["Facts", "adapt"]


def adapt(
    dialect: str,
    statements: Iterable[Statement],
    namespace: str,
    skipped: Counter[str],
    head: str = "",
    facts: Facts | None = None,
    extensions: Extensions | None = None,
) -> Iterator[Statement]:
    """``statements`` as the namespace should run them (see the module docstring); ``head``: the
    file's first lines, where mysqldump names the database it dumps; ``facts``: what is known of
    the whole file so far, and filled as the statements go by; ``extensions``: the PostgreSQL
    server's (:mod:`dbbench.setup.extensions`; None: none)."""
    if dialect == "postgresql":
        return pgdump.adapt(statements, namespace, skipped, extensions)
    return mysqldump.adapt(statements, namespace, skipped, head, Facts() if facts is None else facts)
