"""``mysqldump`` output (and published MySQL sample dumps) mapped onto the namespace (see :mod:`dbbench.setup.dumps`)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator

from dbbench.setup.split import Statement


def adapt(statements: Iterable[Statement], namespace: str, skipped: Counter[str]) -> Iterator[Statement]:
    """Ordinary setup SQL passes through unchanged (dump recognition comes next)."""
    yield from statements
