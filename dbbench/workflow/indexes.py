"""``dbbench indexes``: the index-necessity map of a catalog on every target (:mod:`dbbench.indexmap`),
as the ``dbbench.indexes/1`` document. Nothing is left changed in the namespace."""

from __future__ import annotations

from typing import Any

from dbbench.workflow.connect import Connect, Warn
from dbbench.workflow.runs import Run


def index_map(connect: Connect, run: Run, options: Any = None, *, say: Warn | None = None) -> dict[str, Any]:
    """Map ``run``'s catalog (its ``shapes``: these only) on every target; ``options``:
    :class:`dbbench.indexmap.run.MapOptions`."""
    from dbbench.catalog import entries
    from dbbench.indexmap.document import indexes_document
    from dbbench.indexmap.run import MapOptions, map_catalog
    from dbbench.workflow.advise import seeded_values

    cat = entries.open_catalog(run.catalog, run.only)  # an unknown shape: refused before connecting
    with connect() as targets:
        base = seeded_values(targets, cat, run.namespace)
        found = map_catalog(
            targets, cat, run.measure_options(), options or MapOptions(), only=run.only, base=base, say=say
        )
        return indexes_document(targets, found, run.config() | {"command": "indexes"})


def options(**given: Any) -> Any:
    """:class:`dbbench.indexmap.run.MapOptions` from keyword values (None: the default)."""
    from dbbench.indexmap.run import MapOptions

    return MapOptions(**{k: v for k, v in given.items() if v is not None})
