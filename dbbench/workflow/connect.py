"""What every call of :mod:`dbbench.workflow` shares: the targets it opens (``connect``) and the
callbacks it reports through (``warn``, ``progress``)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Protocol

from dbbench.access.targets import Target, open_targets

if TYPE_CHECKING:
    pass

__all__ = ["Connect", "ProgressFactory", "Target", "Warn", "opened"]

Warn = Callable[[str], None]
ProgressFactory = Callable[
    [], AbstractContextManager[Any]
]  # makes the context manager a run reports progress to


class Connect(Protocol):
    """Opens the targets (``warn``: say their connection warnings) for the ``with`` block."""

    def __call__(self, *, warn: bool = True) -> AbstractContextManager[list[Target]]: ...


@contextlib.contextmanager
def opened(
    urls: dict[Any, str | None], only: Any = None, *, home: Any = None, warn: Warn | None = None
) -> Iterator[list[Target]]:
    """Connect to the targets (:func:`dbbench.access.targets.open_targets`), pass each target's warnings
    to ``warn``, and dispose of the targets when the block ends."""
    targets = open_targets(urls, only, home=home)
    try:
        if warn is not None:
            for t in targets:
                for w in t.warnings:
                    warn(f"warning: {w}")
        yield targets
    finally:
        for t in targets:
            t.dispose()
