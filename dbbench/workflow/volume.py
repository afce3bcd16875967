"""``dbbench info``, ``init``, ``fill`` and ``validate``: the targets' versions, a starter data
spec read from a live schema, a data spec loaded, and a catalog checked without a database, as
library calls. Each returns its document (:mod:`dbbench.document.volume`); the names the command
line needs from the stages (the spec's file, its limits, the fill's progress total) are here too."""

from __future__ import annotations

import contextlib
from pathlib import Path

from dbbench.document import volume
from dbbench.document.volume import Filled, Server, Starter, Validation
from dbbench.errors import DbbenchError
from dbbench.volume import SPEC_FILE, FillFailed, SpecError
from dbbench.volume.limits import LONG_FILL_ROWS, MAX_SCALE
from dbbench.volume.load import TOTAL
from dbbench.workflow.connect import Connect, ProgressFactory

__all__ = [
    "LONG_FILL_ROWS",
    "MAX_SCALE",
    "SPEC_FILE",
    "TOTAL",
    "FillFailed",
    "SpecError",
    "fill",
    "info",
    "init",
    "require_filled",
    "starter_dialect",
    "validate",
]


def info(connect: Connect) -> tuple[Server, ...]:
    """``dbbench info``: connect to each target; its dialect, server version and URL."""
    with connect() as targets:
        return volume.servers(targets)


def starter_dialect(only: str | None, pg_url: str | None, mysql_url: str | None) -> str:
    """The one target ``dbbench init`` reads: ``only``, else MySQL when only its URL is given,
    else PostgreSQL."""
    return only or ("mysql" if mysql_url and not pg_url else "postgresql")


def init(connect: Connect, namespace: str) -> Starter:
    """``dbbench init``: the starter data spec of the tables in ``namespace`` on the first target
    ``connect`` opens (:func:`dbbench.volume.starter.starter`; row counts from the tables)."""
    from dbbench.volume import schema, starter

    with connect() as targets:
        target = targets[0]
        with target.all_or_nothing() as conn:
            tables = schema.read(conn, target.dialect, namespace, count=True)
            conn.rollback()
        if not tables:
            raise DbbenchError(f"{target.label} {namespace!r} has no tables to describe")
        source = f"{target.label} {namespace!r}"
        text = starter.starter(tables, source=source)
    return Starter(source, tuple(tables), text)


def fill(
    connect: Connect,
    file: Path,
    root: Path,
    namespace: str,
    *,
    scale: int | None = None,
    isolate: bool = True,
    progress: ProgressFactory | None = None,
) -> Filled:
    """``dbbench fill``: the spec ``file`` (the files it names under ``root``) read and checked
    before anything connects, then loaded into the tables of ``namespace`` on every target
    (:func:`dbbench.volume.load.fill`). ``progress`` makes the context manager whose value gets
    the fill's progress (:data:`dbbench.volume.load.Progress`)."""
    from dbbench.volume import load, read
    from dbbench.volume.catalog_spec import checked

    spec = checked(read(file, root=root), [scale])
    with connect() as targets, progress() if progress else contextlib.nullcontext() as report:
        results = load.fill(targets, namespace, spec, scale=scale, isolate=isolate, progress=report)
    return volume.filled(results)


def require_filled(filled: Filled | None) -> None:
    """Raise :class:`~dbbench.volume.load.FillFailed` (exit 1) when a check of the spec filled does
    not hold or a fingerprint differs between dialects (after the command printed and wrote)."""
    if filled is not None and filled.problems:
        raise FillFailed("data spec verification failed: " + "; ".join(filled.problems))


def validate(catalog: str | Path, namespace: str, *, isolate: bool = True) -> Validation:
    """``dbbench validate``: the catalog's entries, each dialect's setup SQL (checked against
    ``namespace`` as ``seed`` would run it: :func:`dbbench.setup.loader.prepare`) and its data
    spec (:func:`dbbench.volume.catalog_spec.of_catalog`), without a database. Every problem of the
    setup SQL and the spec is refused at once."""
    from dbbench.catalog import entries
    from dbbench.setup import loader
    from dbbench.volume.catalog_spec import of_catalog

    cat = entries.open_catalog(catalog, need_shapes=False)
    checked = {d: loader.prepare(cat, d, namespace, isolate=isolate) for d in cat.setup}
    problems = list(dict.fromkeys(p for _, found in checked.values() for p in found))
    try:
        spec = of_catalog(cat)
    except SpecError as exc:  # reported with the setup's problems, every one at once
        raise SpecError(problems + exc.problems) from None
    if problems:
        raise loader.SetupError.of(problems)
    return volume.validation(cat, {d: (p.statements, dict(p.skipped)) for d, (p, _) in checked.items()}, spec)
