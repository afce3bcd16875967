"""``dbbench seed``: the built-in dataset, or a catalog's setup SQL and data spec, loaded into the
targets and verified, as library calls. Each returns its document
(:class:`~dbbench.document.volume.Seeded`, :class:`~dbbench.document.volume.SetUp`)."""

from __future__ import annotations

import contextlib
from pathlib import Path

from dbbench import defaults
from dbbench.access.targets import Target
from dbbench.document import volume
from dbbench.document.volume import Seeded, SetUp
from dbbench.errors import DbbenchError
from dbbench.workflow.connect import ProgressFactory

__all__ = ["DatasetUnverified", "Seeded", "SetUp", "dataset_rows", "seed_catalog", "seed_dataset"]


class DatasetUnverified(DbbenchError):
    """``dbbench seed``: the dataset loaded does not verify (exit code 1)."""

    exit_code = 1


def dataset_rows(dataset: str = defaults.DATASET) -> int:
    """The rows a dataset's definition says it has, all tables (what ``seed``'s progress counts
    to). A definition that cannot be read is refused here, before anything connects."""
    from dbbench.dataset import definition

    return sum(definition.load(dataset).expected_counts.values())


def seed_dataset(
    targets: list[Target],
    dataset: str = defaults.DATASET,
    *,
    namespace: str = defaults.NAMESPACE,
    cache_dir: Path | None = None,
    progress: ProgressFactory | None = None,
) -> Seeded:
    """``dbbench seed``: :func:`dbbench.dataset.seed.seed`, then the fingerprints compared across dialects."""
    from dbbench.dataset import seed

    with progress() if progress else contextlib.nullcontext() as report:
        ds, res, generated = seed.seed(
            targets, dataset, namespace=namespace, progress=report, cache_dir=cache_dir
        )
    return volume.seeded(ds, targets, res, generated)


def seed_catalog(
    targets: list[Target],
    catalog: str | Path,
    *,
    namespace: str = defaults.NAMESPACE,
    isolate: bool = True,
    scale: int | None = None,
    progress: ProgressFactory | None = None,
    fill_progress: ProgressFactory | None = None,
) -> SetUp:
    """``dbbench seed --catalog DIR``: the catalog's setup SQL (:func:`dbbench.setup.loader.load`),
    then its data spec when it has one (:func:`dbbench.volume.catalog_spec.after_setup`; read before
    anything is touched). ``scale`` is ``:scale`` of both (default: the setup SQL's 10,000, the
    spec's own ``scale``). ``progress`` and ``fill_progress`` make the context managers whose
    values get the setup's and the fill's progress (:data:`dbbench.setup.loader.Progress`,
    :data:`dbbench.volume.load.Progress`)."""
    from dbbench.catalog import entries
    from dbbench.setup import loader
    from dbbench.volume import catalog_spec

    cat = entries.open_catalog(catalog, need_shapes=False)
    spec = catalog_spec.of_catalog(cat, [scale])  # checked at the run's scale too, before anything is touched
    with progress() if progress else contextlib.nullcontext() as report:
        cat, res = loader.load(
            targets,
            cat,
            namespace=namespace,
            isolate=isolate,
            scale=loader.DEFAULT_SCALE if scale is None else scale,
            progress=report,
        )
    filled = None
    if spec is not None:
        with fill_progress() if fill_progress else contextlib.nullcontext() as report:
            filled = catalog_spec.after_setup(
                targets, namespace, spec, res, scale=scale, isolate=isolate, progress=report
            )
    return volume.set_up(cat, targets, res, filled)
