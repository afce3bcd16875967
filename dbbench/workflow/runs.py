"""``dbbench explain``, ``check``, ``diff``, ``baseline save`` and ``grow``: the catalog measured on
the targets, as library calls."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dbbench import defaults
from dbbench.document.check import setting_problem
from dbbench.document.model import RunConfig
from dbbench.errors import DbbenchError
from dbbench.measure.grow import LadderOptions, parse_sizes
from dbbench.workflow.connect import Connect, ProgressFactory, Warn
from dbbench.workflow.seed import DatasetUnverified

if TYPE_CHECKING:
    from dbbench.document.diff import DiffReport, Thresholds
    from dbbench.document.model import Document
    from dbbench.measure.explain import MeasureOptions


__all__ = [
    "BaselineRefused",
    "Comparison",
    "LadderOptions",
    "NothingToCompare",
    "Run",
    "SavedBaseline",
    "ScratchDatasetFailed",
    "check",
    "check_against",
    "diff",
    "grow",
    "measure",
    "parse_sizes",
    "save_baseline",
    "stability",
]


class ScratchDatasetFailed(DatasetUnverified):
    """``dbbench check``: the scratch dataset does not verify (exit code 1)."""


class BaselineRefused(DbbenchError):
    """``dbbench baseline save``: an assertion fails and failures were not allowed (exit code 1)."""

    exit_code = 1


class NothingToCompare(DbbenchError):
    """``dbbench diff``: the result measured none of the baseline's shapes (exit code 2)."""


@dataclass(frozen=True)
class Run:
    """What a measurement runs: the catalog (name, directory or entry file), the shapes (all when
    empty), the namespace and the sampling. :meth:`config` is the result document's ``config``."""

    catalog: str = defaults.CATALOG
    shapes: tuple[str, ...] = ()
    namespace: str = defaults.NAMESPACE
    timeout_s: float = defaults.TIMEOUT_S
    warmups: int = defaults.WARMUPS
    runs: int = defaults.RUNS
    natural: bool = True
    command: str = "explain"
    isolate: bool = True
    access_only: bool = False
    # (shape, dialect) -> the parameter values a baseline measured it with: ``diff`` measures a
    # parameter that has no value of its own with the baseline's (a changed shape, same values)
    samples: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        """The namespace and sampling held to the command line's bounds (the same check as a result
        file's ``config``: :func:`dbbench.document.check.setting_problem`)."""
        for key in ("namespace", "warmups", "runs", "timeout_s"):
            if why := setting_problem(key, getattr(self, key)):
                raise DbbenchError(f"{key}: {why}")

    @classmethod
    def from_config(
        cls,
        cfg: RunConfig | None,
        *,
        catalog: str | None = None,
        namespace: str | None = None,
        timeout_s: float | None = None,
        warmups: int | None = None,
        runs: int | None = None,
        command: str = "diff",
        isolate: bool = True,
        samples: dict[tuple[str, str], dict[str, Any]] | None = None,
    ) -> Run:
        """The run a baseline's ``config`` describes, each value overridden when given (``diff``);
        ``samples``: the baseline's parameter values per shape and dialect."""
        cfg = cfg or RunConfig()
        if warmups is None:
            warmups = defaults.WARMUPS if cfg.warmups is None else cfg.warmups
        if runs is None:
            runs = defaults.RUNS if cfg.runs is None else cfg.runs
        return cls(
            catalog=catalog or cfg.catalog or defaults.CATALOG,
            shapes=tuple(cfg.shapes or ()),
            namespace=namespace or cfg.namespace or defaults.NAMESPACE,
            timeout_s=timeout_s or cfg.timeout_s or defaults.TIMEOUT_S,
            warmups=warmups,
            runs=runs,
            natural=False,
            command=command,
            isolate=isolate,
            samples=dict(samples or {}),
        )

    @property
    def only(self) -> list[str] | None:
        return list(self.shapes) or None

    @property
    def timeout_ms(self) -> int:
        return int(self.timeout_s * 1000)

    def measure_options(self) -> MeasureOptions:
        """How :func:`dbbench.measure.explain.run` measures this run."""
        from dbbench.measure.explain import MeasureOptions

        return MeasureOptions(
            namespace=self.namespace,
            warmups=self.warmups,
            runs=self.runs,
            timeout_ms=self.timeout_ms,
            natural=self.natural,
            access_only=self.access_only,
            isolate=self.isolate,
        )

    def config(self) -> dict[str, Any]:
        return {
            "command": self.command,
            "catalog": str(self.catalog),
            "namespace": self.namespace,
            "warmups": self.warmups,
            "runs": self.runs,
            "timeout_s": self.timeout_s,
            "natural": self.natural,
            "shapes": list(self.shapes),
            "isolation": "namespace role" if self.isolate else "none",
        }


def measure(
    connect: Connect, run: Run, *, progress: ProgressFactory | None = None, warn: Warn | None = None
) -> dict[str, Any]:
    """``dbbench explain``: run the catalog on the targets; the result document (dbbench.explain/1).
    ``progress`` makes the context manager whose value is passed to :func:`dbbench.measure.explain.run`;
    ``warn`` gets the warnings about stale setup SQL and unfrozen statistics."""
    from dbbench.catalog import entries
    from dbbench.document import build
    from dbbench.measure import explain
    from dbbench.setup import loader
    from dbbench.volume import catalog_spec

    cat = entries.open_catalog(run.catalog, run.only)
    for shape in cat.shapes:
        shape.samples = {d: dict(v) for (name, d), v in run.samples.items() if name == shape.name}
    with connect() as targets:
        with progress() if progress else contextlib.nullcontext() as report:
            _, res, metas = explain.run(targets, cat, run.measure_options(), only=run.only, progress=report)
        stale = loader.stale(cat, metas, run.namespace) + catalog_spec.stale(cat, metas, run.namespace)
        for w in stale + explain.statistics_warnings(targets, run.namespace):
            if warn is not None:
                warn(f"warning: {w}")
        return build.explain_document(targets, res, metas, run.config())


def check(
    connect: Connect,
    run: Run,
    *,
    dataset: str | None = None,
    cache_dir: Path | None = None,
    progress: ProgressFactory | None = None,
    warn: Warn | None = None,
) -> dict[str, Any]:
    """``dbbench check``: seed a scratch dataset (``dataset``, else the catalog's own setup SQL when
    it has one, and its data spec at a small scale, :func:`dbbench.volume.catalog_spec.check_scale`; else
    the CI-size alpine dataset) into the scratch namespace (``run.namespace``; the default namespace
    means :data:`dbbench.defaults.CHECK_NAMESPACE`), then measure once. Raises
    :class:`ScratchDatasetFailed` when the scratch dataset does not verify."""
    from dbbench.catalog import entries
    from dbbench.dataset import seed
    from dbbench.setup import loader
    from dbbench.volume import catalog_spec
    from dbbench.volume.load import problems

    namespace = defaults.CHECK_NAMESPACE if run.namespace == defaults.NAMESPACE else run.namespace
    cat = entries.open_catalog(run.catalog)
    own_setup = cat.has_setup and dataset is None
    bad: list[str] = []
    spec = catalog_spec.of_catalog(cat) if own_setup else None  # read before anything is touched
    with connect(warn=False) as targets:
        if own_setup:
            _, setup = loader.load(targets, cat, namespace=namespace, isolate=run.isolate)
            if spec is not None:  # the catalog's data spec, small
                filled = catalog_spec.after_setup(
                    targets, namespace, spec, setup, scale=catalog_spec.check_scale(spec), isolate=run.isolate
                )
                bad = [f"data spec: {p}" for p in problems(filled)]
        else:
            _, res, _ = seed.seed(
                targets, dataset or defaults.CHECK_DATASET, namespace=namespace, cache_dir=cache_dir
            )
            bad = [f"{r.dialect}: {c.name}" for r in res for c in r.checks if not c.ok]
    if bad:
        raise ScratchDatasetFailed("scratch dataset verification failed: " + "; ".join(bad))
    # A catalog's own setup is the data it was written for: assert everything. The CI-size alpine
    # dataset is not, so only the access path is asserted there.
    once = Run(
        catalog=run.catalog,
        shapes=run.shapes,
        namespace=namespace,
        timeout_s=run.timeout_s,
        warmups=0,
        runs=1,
        natural=False,
        command="check",
        isolate=run.isolate,
        access_only=not own_setup,
    )
    return measure(connect, once, progress=progress, warn=warn)


def stability(connect: Connect, run: Run, *, times: int) -> dict[tuple[str, str], list[str]]:
    """``dbbench diff --stability N``: :func:`dbbench.measure.explain.stability` on the run's catalog."""
    from dbbench.catalog import entries
    from dbbench.measure import explain

    cat = entries.open_catalog(run.catalog, run.only)
    for shape in cat.shapes:
        shape.samples = {d: dict(v) for (name, d), v in run.samples.items() if name == shape.name}
    with connect(warn=False) as targets:
        return explain.stability(targets, cat, run.measure_options(), times=times, only=run.only)


@dataclass(frozen=True)
class Comparison:
    """What ``dbbench diff`` compares: the ``baseline`` file with the ``result`` file or, without
    one, with a run measured now: the baseline's run (:meth:`Run.from_config`), each of ``catalog``,
    ``namespace``, ``warmups``, ``runs`` and ``timeout_s`` overriding it when given. A run now may
    first re-plan every shape ``stability`` times (:func:`stability`), measure twice and diff the two
    runs (``self_control``, or ``thresholds.gate_timing``: the A/A noise floor, which a gated timing
    must include), and keep its result document in ``save_result``."""

    baseline: Path
    result: Path | None = None
    thresholds: Thresholds | None = None
    catalog: str | None = None
    namespace: str | None = None
    warmups: int | None = None
    runs: int | None = None
    timeout_s: float | None = None
    isolate: bool = True
    stability: int | None = None
    self_control: bool = False
    save_result: Path | None = None

    @property
    def gate_timing(self) -> bool:
        """Timing joins the verdict: a live run then measures twice (the run-to-run spread)."""
        return bool(self.thresholds and self.thresholds.gate_timing)

    @property
    def result_name(self) -> str:
        """How the diff names the result: its file, else the file the run now is saved to."""
        if self.result:
            return str(self.result)
        return str(self.save_result) if self.save_result else "this run"

    def run(self, base: Document) -> Run:
        """The run measured now: the baseline's, overridden."""
        return Run.from_config(
            base.config,
            catalog=self.catalog,
            namespace=self.namespace,
            timeout_s=self.timeout_s,
            warmups=self.warmups,
            runs=self.runs,
            isolate=self.isolate,
            samples={r.key: dict(r.params) for r in base.results if isinstance(r.params, dict)},
        )


def diff(
    connect: Connect,
    comparison: Comparison,
    *,
    progress: ProgressFactory | None = None,
    warn: Warn | None = None,
) -> DiffReport:
    """``dbbench diff``: the comparison's result (read, or measured now) compared with its baseline,
    node by node (:func:`dbbench.diff.compare`). Raises :class:`NothingToCompare` when the result
    holds none of the baseline's shapes."""
    from dbbench.diff import apply_self_control, compare, self_controls
    from dbbench.document import baseline, store

    c = comparison
    base = baseline.load(c.baseline)
    if c.result and (c.stability or c.self_control or c.gate_timing):
        raise DbbenchError(
            "--stability, --self-control and --gate-timing measure now (--gate-timing: a second run, "
            "for the run-to-run variance): give no RESULT file"
        )
    if c.result:
        new, plans, aa = store.load_document(c.result), None, None
    else:
        new, plans, aa = _measure_now(connect, c, c.run(base), progress=progress, warn=warn)
    floors = None if aa is None else {k: v.ratio for k, v in self_controls(aa).items() if v.ratio}
    report = compare(
        base,
        new,
        c.thresholds,
        baseline_name=str(c.baseline),
        result_name=c.result_name,
        stability=plans,
        floors=floors,
    )
    if aa is not None:
        apply_self_control(report, aa)
    return _compared(report)


def compare_files(baseline: Path, result: Path) -> DiffReport:
    """A result file against a baseline file at the default thresholds, no server
    (``dbbench report --baseline``); as :func:`diff` with a RESULT."""

    def offline(*_: object, **__: object) -> Any:
        raise DbbenchError("comparing two files needs no server")  # pragma: no cover: never called

    return diff(offline, Comparison(baseline, result))


def _compared(report: DiffReport) -> DiffReport:
    """``report``, unless it compared nothing (:class:`NothingToCompare`)."""
    if not any(s.base and s.result for s in report.shapes):
        raise NothingToCompare(
            f"nothing to compare: {report.result} measured none of the shapes in {report.baseline}"
        )
    return report


def check_against(
    base: Document, doc: Document | dict[str, Any], baseline_name: str, thresholds: Thresholds | None = None
) -> DiffReport:
    """``dbbench check --baseline FILE``: the check's run compared with a baseline of a check run
    (``dbbench baseline save --from CHECK.json``, read with :func:`dbbench.document.baseline.load`)
    on the deterministic evidence ``diff`` decides on, plan shape and work; one sample has no
    timing to judge (it stays advisory)."""
    from dbbench.diff import compare

    return _compared(compare(base, doc, thresholds, baseline_name=baseline_name, result_name="this check"))


def _measure_now(
    connect: Connect, c: Comparison, run: Run, *, progress: ProgressFactory | None, warn: Warn | None
) -> tuple[Document, dict[tuple[str, str], list[str]] | None, DiffReport | None]:
    """``diff`` without a result file: the plans' stability (when asked), the run (kept in
    ``c.save_result`` when given) and the A/A diff of a second run (when asked)."""
    from dbbench.diff import compare
    from dbbench.document import store
    from dbbench.document.diff import Thresholds
    from dbbench.document.model import as_document

    plans = stability(connect, run, times=c.stability) if c.stability else None
    live = measure(connect, run, progress=progress, warn=warn)
    aa = None
    if c.self_control or c.gate_timing:
        aa_thresholds = replace(c.thresholds or Thresholds(), gate_timing=False)
        aa = compare(live, measure(connect, run, progress=progress, warn=warn), aa_thresholds)
    if c.save_result:
        store.write(c.save_result, live)
    return as_document(live, c.result_name), plans, aa


@dataclass(frozen=True)
class SavedBaseline:
    """``dbbench baseline save``: the document kept and the SHA-256 of the file written."""

    document: Document
    digest: str


def save_baseline(
    connect: Connect,
    path: Path,
    source: Run | Path,
    *,
    allow_failures: bool = False,
    show: Callable[[Document], None] | None = None,
    progress: ProgressFactory | None = None,
    warn: Warn | None = None,
) -> SavedBaseline:
    """``dbbench baseline save``: the ``source`` run measured now (a result file: read) and kept as
    the baseline in ``path`` (:func:`dbbench.document.baseline.save`). ``show`` sees the document
    before it is saved. Raises :class:`BaselineRefused` when an assertion fails in it, unless
    ``allow_failures``."""
    from dbbench.document import baseline, store
    from dbbench.document.model import as_document

    if isinstance(source, Run):
        doc = as_document(measure(connect, source, progress=progress, warn=warn), "this run")
    else:
        doc = store.load_document(source)
    if show is not None:
        show(doc)
    if not allow_failures and any(not r.ok for r in doc.results):
        raise BaselineRefused(
            f"not saving a baseline in which {_failure_count(doc)} assertion(s) fail "
            "(fix them, or pass --allow-failures)"
        )
    digest = baseline.save(path, doc, source="run" if isinstance(source, Run) else str(source))
    return SavedBaseline(doc, digest)


def _failure_count(doc: Document) -> int:
    """The failures a refused baseline names: the document's ``failures``, else (a file without
    them) as many as the lines the command prints for them, a failing entry and its plan."""
    if doc.failures:
        return len(doc.failures)
    return sum(
        1 + (r.remediated is not None and r.remediated.plan is not None) for r in doc.results if not r.ok
    )


def grow(
    connect: Connect,
    catalog: str,
    options: LadderOptions,
    *,
    shapes: tuple[str, ...] = (),
    cache_dir: Path | None = None,
    progress: Callable[[int], AbstractContextManager[Any]] | None = None,
) -> dict[str, Any]:
    """``dbbench grow``: the catalog (``shapes`` of it; all when empty) measured at every size of the
    ladder (:func:`dbbench.measure.grow.run_ladder`); the result document (dbbench.grow/1). ``progress``
    makes, from the number of steps, the context manager whose value gets each step's message."""
    from dbbench.catalog import entries
    from dbbench.document import build
    from dbbench.measure.grow import progress_steps, run_ladder

    picked = list(shapes) or None
    cat = entries.open_catalog(catalog, picked)
    with connect() as targets:
        steps = progress_steps(targets, cat, sorted(options.sizes), picked)
        with progress(steps) if progress else contextlib.nullcontext() as report:
            ladder = run_ladder(targets, cat, options, only=picked, cache_dir=cache_dir, progress=report)
        return build.grow_document(ladder, targets)
