"""What the commands that build or check a namespace's data return, as typed, immutable values:
``dbbench info`` (:class:`Server` per target), ``seed`` (:class:`Seeded`, :class:`SetUp`),
``fill`` (:class:`Filled`), ``validate`` (:class:`Validation`) and ``init`` (:class:`Starter`).

Each is built here from the stages' results (the builders below), with what the output says
about them computed once: fingerprint agreement, the problems that fail the command, and the JSON
document ``--output`` writes (:mod:`dbbench.document.build`). :mod:`dbbench.output.commands` and
:mod:`dbbench.output.volume` render them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dbbench.document import build
from dbbench.document.model import Server
from dbbench.setup.fingerprint import fingerprints_agree
from dbbench.volume.load import agree, problems

if TYPE_CHECKING:
    from collections.abc import Iterable

    from dbbench.access.targets import Target
    from dbbench.catalog.entries import Catalog
    from dbbench.dataset.definition import Dataset
    from dbbench.dataset.seed import SeedResult
    from dbbench.setup.loader import SetupResult
    from dbbench.volume.load import FillResult
    from dbbench.volume.spec import Spec

__all__ = [
    "Count",
    "Expectation",
    "Filled",
    "FilledTarget",
    "Seeded",
    "SeededTarget",
    "Server",
    "SetUp",
    "SetupCheck",
    "SetupTarget",
    "SpecSummary",
    "Starter",
    "Validation",
    "filled",
    "seeded",
    "servers",
    "set_up",
    "validation",
]


@dataclass(frozen=True)
class Count:
    """A cardinality of a dataset or a check of a data spec: ``actual`` against ``expected``
    (None: no expectation, a table's rows as the setup SQL left them)."""

    name: str
    expected: int | None
    actual: int
    ok: bool


def _counts(checks: Iterable[Any]) -> tuple[Count, ...]:
    return tuple(Count(c.name, c.expected, c.actual, c.ok) for c in checks)


def _problems(results: Iterable[Any], agreed: dict[str, bool]) -> tuple[str, ...]:
    """What does not verify: a count off its expectation, a fingerprint differing between dialects."""
    bad = [
        f"{r.dialect}: {c.name} = {c.actual}, expected {c.expected}"
        for r in results
        for c in r.checks
        if not c.ok
    ]
    return (*bad, *(f"fingerprint of {t} differs between dialects" for t, ok in agreed.items() if not ok))


def servers(targets: list[Target]) -> tuple[Server, ...]:
    """``dbbench info``: each target's dialect, server version and URL (its password masked)."""
    return tuple(Server(dialect=t.dialect, version=t.version_text, url=t.safe_url) for t in targets)


# -- seed: the built-in dataset --------------------------------------------------------------------
@dataclass(frozen=True)
class SeededTarget:
    """One target after ``dbbench seed``: its steps' seconds, cardinalities and fingerprints."""

    dialect: str
    namespace: str
    rows: int  # rows loaded, all tables
    seconds: dict[str, float]
    counts: tuple[Count, ...]
    fingerprints: dict[str, str]

    @property
    def total_seconds(self) -> float:
        return sum(self.seconds.values())


@dataclass(frozen=True)
class Seeded:
    """``dbbench seed``: the dataset loaded, one entry per target, the seconds spent preparing load
    files, per table whether the fingerprints agree across dialects, and what does not verify."""

    dataset: str
    targets: tuple[SeededTarget, ...]
    generated: float
    agree: dict[str, bool]
    problems: tuple[str, ...]
    json: dict[str, Any]  # the dbbench.seed document --output writes


def seeded(ds: Dataset, targets: list[Target], results: list[SeedResult], generated: float) -> Seeded:
    agreed = fingerprints_agree(results)
    return Seeded(
        dataset=ds.name,
        targets=tuple(
            SeededTarget(
                r.dialect, r.namespace, r.rows, dict(r.seconds), _counts(r.checks), dict(r.fingerprints)
            )
            for r in results
        ),
        generated=generated,
        agree=agreed,
        problems=_problems(results, agreed),
        json=build.seed_document(ds, targets, results, generated, agreed),
    )


# -- fill: a data spec loaded ----------------------------------------------------------------------
@dataclass(frozen=True)
class FilledTarget:
    """One target after a fill: the spec's identity, the rows made per spec table, the rows counted
    per table of the namespace, the steps' seconds and the spec's checks."""

    dialect: str
    namespace: str
    spec: str
    seed: int
    scale: int
    faker: str
    loaded: dict[str, int]
    rows: dict[str, int]
    seconds: dict[str, float]
    counts: tuple[Count, ...]

    @property
    def total_seconds(self) -> float:
        return sum(self.seconds.values())


@dataclass(frozen=True)
class Filled:
    """``dbbench fill`` (and the fill ``seed --catalog`` runs after the setup SQL): one entry per
    target, per table whether the fingerprints agree, and what does not verify."""

    targets: tuple[FilledTarget, ...]
    agree: dict[str, bool]
    problems: tuple[str, ...]
    json: dict[str, Any]  # the document ``dbbench fill --output`` writes


def filled(results: list[FillResult]) -> Filled:
    return Filled(
        targets=tuple(
            FilledTarget(
                r.dialect,
                r.namespace,
                r.spec,
                r.seed,
                r.scale,
                r.faker,
                dict(r.loaded),
                dict(r.rows),
                dict(r.seconds),
                _counts(r.checks),
            )
            for r in results
        ),
        agree=agree(results),
        problems=tuple(problems(results)),
        json=build.fill_document(results),
    )


# -- seed --catalog: a catalog's setup SQL, then its data spec ---------------------------------------
@dataclass(frozen=True)
class SetupTarget:
    """One target after a catalog's setup SQL (and its spec's fill): the setup file, its statements
    and steps, the rows per table, and a dump's statements skipped or rewritten (reason -> count)."""

    dialect: str
    namespace: str
    file: str  # the setup file's name
    statements: int
    seconds: dict[str, float]
    rows: dict[str, int]
    skipped: dict[str, int]

    @property
    def total_seconds(self) -> float:
        return sum(self.seconds.values())


@dataclass(frozen=True)
class SetUp:
    """``dbbench seed --catalog``: one entry per target, per table whether the fingerprints agree,
    the fill of the catalog's data spec when it has one, and what does not verify (the fill's)."""

    targets: tuple[SetupTarget, ...]
    agree: dict[str, bool]
    filled: Filled | None
    problems: tuple[str, ...]
    json: dict[str, Any]  # the dbbench.seed document --output writes


def set_up(
    catalog: Catalog, targets: list[Target], results: list[SetupResult], fill: list[FillResult] | None
) -> SetUp:
    """``results``: the setup's, with the fill's rows, fingerprints and steps when ``fill`` ran
    (:func:`dbbench.volume.catalog_spec.after_setup`)."""
    agreed = fingerprints_agree(results, by_name=True)
    doc = build.setup_document(catalog, targets, results, agreed)
    spec = filled(fill) if fill else None
    return SetUp(
        targets=tuple(
            SetupTarget(
                r.dialect,
                r.namespace,
                Path(r.file).name,
                r.statements,
                dict(r.seconds),
                dict(r.rows),
                dict(r.skipped),
            )
            for r in results
        ),
        agree=agreed,
        filled=spec,
        problems=spec.problems if spec else (),
        json=build.seeded_document(doc, fill) if fill else doc,
    )


# -- validate: a catalog checked without a database -------------------------------------------------
@dataclass(frozen=True)
class Expectation:
    """A shape's variant in one dialect: the access path it expects, the ones it forbids, and
    whether it has a natural spelling."""

    shape: str
    dialect: str
    expect_table: str
    expect_index: str
    forbid: tuple[str, ...]
    natural: bool


@dataclass(frozen=True)
class SetupCheck:
    """A dialect's setup SQL, checked: as the output names it, its statements, and what a dump
    adapter would skip or rewrite (reason -> statements)."""

    dialect: str
    label: str
    statements: int
    skipped: dict[str, int]


@dataclass(frozen=True)
class SpecSummary:
    """A catalog's data spec, valid: its seed and scale, each table's row count as written, and
    how many checks it has."""

    path: str
    seed: int
    scale: int | None
    tables: tuple[tuple[str, str], ...]  # (table, its rows expression)
    checks: int


@dataclass(frozen=True)
class Validation:
    """``dbbench validate``: the catalog's shapes and their expectations, its setup SQL, its spec."""

    catalog: str  # the catalog's directory
    shapes: int
    expectations: tuple[Expectation, ...]
    setup: tuple[SetupCheck, ...]
    spec: SpecSummary | None


def validation(
    catalog: Catalog, setup: dict[str, tuple[int, dict[str, int]]], spec: Spec | None
) -> Validation:
    """``setup``: per dialect, its setup SQL's statements and skips (reason -> statements)."""
    return Validation(
        catalog=str(catalog.path),
        shapes=len(catalog.shapes),
        expectations=tuple(
            Expectation(shape.name, d, v.expect_table, v.expect_index, tuple(v.forbid), bool(v.natural))
            for shape in catalog.shapes
            for d, v in shape.variants.items()
        ),
        setup=tuple(
            SetupCheck(d, catalog.setup_label(d), n, dict(skipped)) for d, (n, skipped) in setup.items()
        ),
        spec=None
        if spec is None
        else SpecSummary(
            str(spec.path),
            spec.seed,
            spec.scale,
            tuple((t.name, t.rows.text) for t in spec.tables.values()),
            len(spec.verify),
        ),
    )


# -- init: a starter data spec --------------------------------------------------------------------
@dataclass(frozen=True)
class Starter:
    """``dbbench init``: the starter spec's text, the schema it was read from, and its tables."""

    source: str
    tables: tuple[str, ...]
    text: str
