"""``dbbench advise``: the catalog's shapes in need of an index get candidates built, measured and
costed for real in the namespace dbbench owns (:mod:`dbbench.advise`); the ``dbbench.advise/1``
document. ``write_migrations`` writes the verified set as one migration file per dialect."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dbbench.errors import DbbenchError
from dbbench.workflow.connect import Connect, Warn
from dbbench.workflow.runs import Run


def advise(
    connect: Connect,
    run: Run,
    options: Any = None,
    *,
    say: Warn | None = None,
    cache_dir: Path | None = None,
) -> dict[str, Any]:
    """Advise ``run``'s catalog (its ``shapes``: these, whatever their state) on every target;
    ``options``: :class:`dbbench.advise.run.AdviseOptions`. Nothing is left in the namespace."""
    from dbbench.advise.run import AdviseOptions, advise_catalog
    from dbbench.catalog import entries
    from dbbench.document.advise import advise_document

    cat = entries.open_catalog(run.catalog, run.only)  # an unknown shape: refused before connecting
    with connect() as targets:
        base = seeded_values(targets, cat, run.namespace)
        found = advise_catalog(
            targets,
            cat,
            run.measure_options(),
            options or AdviseOptions(),
            only=run.only,
            base=base,
            say=say,
            cache_dir=cache_dir,
        )
        config = run.config() | {"command": "advise"}
        return advise_document(targets, found, config)


def seeded_values(targets: list[Any], cat: Any, namespace: str) -> dict | None:
    """The seeded dataset's values the shapes' parameters are filled from (None: the targets
    hold different datasets, or a catalog's own data); refused unless every target holds a
    complete seed of ``cat`` in ``namespace``."""
    from dbbench.measure.explain import dataset_params, seeded_metas

    datasets = {m.get("dataset") for m in seeded_metas(targets, cat, namespace).values()}
    return dataset_params(datasets.pop()) if len(datasets) == 1 else None


def options(**given: Any) -> Any:
    """:class:`dbbench.advise.run.AdviseOptions` from keyword values (None: the default)."""
    from dbbench.advise.run import AdviseOptions

    return AdviseOptions(**{k: v for k, v in given.items() if v is not None})


MIGRATION = "dbbench-advise-{dialect}.sql"


def refuse_migrations_over(
    directory: Path, dialects: tuple[str, ...] = ("postgresql", "mysql"), *, catalog: str | None = None
) -> None:
    """Refuse (before any work) a ``--write`` directory that already holds a migration of ours (an
    output never replaces a file), or that lies in ``catalog``'s directory (a migration there would
    be read as one of its files)."""
    if catalog is not None:
        from dbbench.catalog.entries import resolve

        home = resolve(catalog).resolve()
        home = home if home.is_dir() else home.parent
        if directory.resolve() == home or home in directory.resolve().parents:
            raise DbbenchError(f"--write {directory}: inside the catalog {home}; give a directory outside it")
    for dialect in dialects:
        path = directory / MIGRATION.format(dialect=dialect)
        if path.exists():
            raise DbbenchError(f"--write {directory}: already holds {path.name}; give an empty directory")


def write_migrations(doc: dict[str, Any], directory: Path) -> list[Path]:
    """One migration file per dialect in ``directory``: the verified whole-catalog set (else each
    shape's best verified index), with what each serves; an existing file is never replaced."""
    from dbbench.document.advise import migrations

    refuse_migrations_over(directory)
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for dialect, text in migrations(doc).items():
        path = directory / MIGRATION.format(dialect=dialect)
        with open(path, "x", encoding="utf-8") as f:  # never replace a file
            f.write(text)
        written.append(path)
    return written
