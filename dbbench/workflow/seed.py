"""``dbbench seed``: the built-in dataset, or a catalog's setup SQL and data spec, loaded into the
targets and verified, as library calls."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dbbench import defaults
from dbbench.access.targets import Target
from dbbench.errors import DbbenchError
from dbbench.setup.fingerprint import fingerprints_agree

if TYPE_CHECKING:
    pass

from dbbench.workflow.connect import ProgressFactory


class DatasetUnverified(DbbenchError):
    """``dbbench seed``: the dataset loaded does not verify (exit code 1)."""

    exit_code = 1


@dataclass
class Seeded:
    """``dbbench seed``: the dataset loaded, one result per target, the seconds spent preparing
    load files, and per table whether the fingerprints agree across dialects."""

    dataset: Any
    results: list[Any]
    generated: float
    agree: dict[str, bool] = field(default_factory=dict)

    @property
    def problems(self) -> list[str]:
        """What does not verify: a cardinality off its definition, a fingerprint differing between dialects."""
        bad = [
            f"{r.dialect}: {c.name} = {c.actual}, expected {c.expected}"
            for r in self.results
            for c in r.checks
            if not c.ok
        ]
        return bad + [
            f"fingerprint of {t} differs between dialects" for t, ok in self.agree.items() if not ok
        ]

    def document(self, targets: list[Target]) -> dict[str, Any]:
        from dbbench.document import build

        return build.seed_document(self.dataset, targets, self.results, self.generated, self.agree)


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
    return Seeded(ds, res, generated, fingerprints_agree(res))


@dataclass
class SetUp:
    """``dbbench seed --catalog``: the catalog, one setup result per target, fingerprint agreement,
    and the fill of the catalog's data spec when it has one (``filled``, one result per target)."""

    catalog: Any
    results: list[Any]
    agree: dict[str, bool]
    filled: list[Any] | None = None

    @property
    def problems(self) -> list[str]:
        """What does not verify: a check of the data spec, a fingerprint differing between dialects."""
        from dbbench.volume.load import problems

        return problems(self.filled) if self.filled else []

    def document(self, targets: list[Target]) -> dict[str, Any]:
        from dbbench.document import build

        doc = build.setup_document(self.catalog, targets, self.results, self.agree)
        return build.seeded_document(doc, self.filled) if self.filled else doc


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
    """``dbbench seed --catalog DIR``: the catalog's setup SQL (:func:`dbbench.setup.namespace.load`),
    then its data spec when it has one (:func:`dbbench.volume.catalog.after_setup`; read before
    anything is touched). ``scale`` is ``:scale`` of both (default: the setup SQL's 10,000, the
    spec's own ``scale``). ``progress`` and ``fill_progress`` make the context managers whose
    values get the setup's and the fill's progress (:data:`dbbench.setup.namespace.Progress`,
    :data:`dbbench.volume.load.Progress`)."""
    from dbbench.catalog import entries as catalogs
    from dbbench.setup import namespace as setupsql
    from dbbench.volume import catalog as volume

    cat = catalogs.open_catalog(catalog, need_shapes=False)
    spec = volume.of_catalog(cat, [scale])  # checked at the run's scale too, before anything is touched
    with progress() if progress else contextlib.nullcontext() as report:
        cat, res = setupsql.load(
            targets,
            cat,
            namespace=namespace,
            isolate=isolate,
            scale=setupsql.DEFAULT_SCALE if scale is None else scale,
            progress=report,
        )
    filled = None
    if spec is not None:
        with fill_progress() if fill_progress else contextlib.nullcontext() as report:
            filled = volume.after_setup(
                targets, namespace, spec, res, scale=scale, isolate=isolate, progress=report
            )
    return SetUp(cat, res, fingerprints_agree(res, by_name=True), filled)
