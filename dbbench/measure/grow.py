"""`dbbench grow`: how each shape's work grows with the data.

A plan that holds at one size proves little: the claim worth having is that a hot query stays
*bounded* as the tables grow. ``grow`` seeds the dataset at a ladder of sizes (10k, 100k and 1M
packages by default, every table scaled as its dataset definition says), runs every shape at each
size, both spellings, and records **work** that does not depend on machine noise:

* rows every plan node produced, times its loops, summed over the plan -- what the executor
  examined (from ``EXPLAIN ANALYZE``; on PostgreSQL the rows a node read and filtered away count
  too, since its scans report only the rows they kept; MySQL's tree shows them as the scan's own
  rows);
* on PostgreSQL also the shared buffers hit and read (``BUFFERS``);
* the time (p50: the statement's time, or the executor's where the server gave none, marked;
  docs/statistics.md), which is shown but not judged.

Between consecutive sizes the growth exponent is the log-log slope
``k = log(work_2 / work_1) / log(N_2 / N_1)``, and the worst slope on the ladder classifies the
shape: **bounded** (``k <= 0.1``: work independent of N), **logarithmic** (``k <= 0.5``) or
**linear** (worse). A catalog entry's ``growth = "bounded"`` (or ``"logarithmic"``) is an
assertion: a remediated spelling measured worse makes ``grow`` exit 1.

Sizes are loaded once each into a namespace of their own (``dbbench_grow_<size>``) and reused
while they hold that dataset completely. A catalog with its own setup SQL grows through the
``:scale`` parameter of its setup SQL (see docs/grow.md) and of its data spec (``data/spec.toml``,
filled after the setup SQL at each size: docs/volume.md).
"""

from __future__ import annotations

import functools
import itertools
import math
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dbbench import defaults, dialects
from dbbench.access.targets import Target
from dbbench.catalog import entries
from dbbench.catalog.entries import GROWTH_CLASSES, Catalog
from dbbench.dialects.plan import PlanNode
from dbbench.errors import DbbenchError
from dbbench.measure import explain
from dbbench.measure.explain import Measurement, ShapeMeasurement
from dbbench.units import size_label
from verdict.files import excerpt

# The alpine ladder: size -> dataset definition under seeds/.
ALPINE_DATASETS = {10_000: "alpine-10k", 100_000: "alpine-100k", 1_000_000: "alpine-1m"}
DEFAULT_SIZES = (10_000, 100_000, 1_000_000)
BOUNDED_MAX_K = 0.1
LOGARITHMIC_MAX_K = 0.5

Progress = Callable[[str], None]


class GrowError(DbbenchError):
    """A ladder that cannot be climbed: bad sizes, no dataset of a size, a size that does not verify."""


MAX_SIZES = 12  # sizes of one ladder: each is seeded and measured


def parse_sizes(text: str, *, option: str = "--sizes", at_least: int = 2) -> list[int]:
    """``"10k,100k,1m"`` -> [10000, 100000, 1000000] (k = 1,000, m = 1,000,000), ascending; each
    at most :data:`dbbench.volume.limits.MAX_SCALE`, at most :data:`MAX_SIZES` of them, at least ``at_least``; ``option`` names them in an error."""
    from decimal import Decimal

    from dbbench.volume.limits import MAX_SCALE

    sizes = []
    parts = text.split(",")
    if len(parts) > MAX_SIZES:
        raise GrowError(f"{option}: {len(parts):,} sizes; a ladder has at most {MAX_SIZES}")
    for part in parts:
        shown = excerpt(repr(part.strip()), 40)
        m = re.fullmatch(r"\s*(\d+)(\.\d+)?\s*([kKmM]?)\s*", part)
        if not m:
            raise GrowError(f"{option}: {shown} is not a size like 10k, 100k or 1m")
        whole, fraction, unit = m.groups()
        n = Decimal(whole.lstrip("0")[:20] or "0") if len(whole.lstrip("0")) <= 20 else Decimal(10**20)
        n = (n + Decimal(f"0{(fraction or '')[:20]}")) * {"": 1, "k": 1_000, "m": 1_000_000}[unit.lower()]
        if n > MAX_SCALE:  # compared before any conversion: 400 nines are a number, not an overflow
            raise GrowError(f"{option}: {shown} is above the largest size, {MAX_SCALE:,}")
        if n < 1 or n != int(n):
            raise GrowError(f"{option}: {shown} is not a whole number of rows")
        sizes.append(int(n))
    if len(set(sizes)) < at_least:
        raise GrowError(f"{option}: give at least two different sizes (growth is a slope)")
    return sorted(set(sizes))


def work(tree: PlanNode | None) -> float | None:
    """Rows every node produced or read and discarded, times its loops, summed: what the executor
    examined (:attr:`PlanNode.examined`; PostgreSQL's scans report the rows they filtered away
    apart, MySQL's tree shows them as the scan's own rows)."""
    if tree is None:
        return None
    return sum(n.examined for n in tree.walk())


def pg_work(raw: object) -> float | None:
    """:func:`work` of PostgreSQL's ``EXPLAIN (ANALYZE, FORMAT JSON)`` output."""
    from dbbench.dialects import postgresql

    return work(postgresql.parse_plan(raw)[0])


def buffers(tree: PlanNode | None) -> int | None:
    """PostgreSQL: shared buffers hit + read by the whole plan (the top node counts its children)."""
    return None if tree is None or tree.buffers is None else int(tree.buffers)


def exponent(a: tuple[int, float], b: tuple[int, float]) -> float:
    """Log-log slope between (N, work) points; work below one row counts as one row."""
    (n1, w1), (n2, w2) = a, b
    return math.log(max(w2, 1.0) / max(w1, 1.0)) / math.log(n2 / n1)


def classify(k: float | None) -> str | None:
    if k is None:
        return None
    if k <= BOUNDED_MAX_K:
        return "bounded"
    return "logarithmic" if k <= LOGARITHMIC_MAX_K else "linear"


@dataclass
class Point:
    """One spelling of one shape on one dialect at one size."""

    size: int
    work: float | None
    buffers: int | None
    p50_ms: float | None
    rows: float | None
    plan: str
    timing: str | None = None  # what p50_ms is (dbbench.dialects.timing; None: no sample)


_GROWTH_FIELDS = ("shape", "dialect", "spelling", "declared", "k", "slopes", "verdict", "ok")  # then points


@dataclass
class Growth:
    shape: str
    dialect: str
    spelling: str  # remediated | natural
    declared: str | None  # the catalog's growth (remediated spelling only)
    points: list[Point] = field(default_factory=list)

    @property
    def slopes(self) -> list[float]:
        pts = [(p.size, p.work) for p in self.points if p.work is not None]
        return [exponent(a, b) for a, b in itertools.pairwise(pts)]

    @property
    def k(self) -> float | None:
        """The worst (largest) slope on the ladder."""
        return max(self.slopes) if self.slopes else None

    @property
    def verdict(self) -> str | None:
        return classify(self.k)

    @property
    def ok(self) -> bool:
        """Measured no worse than declared (always true without a declaration; false when one was
        declared and nothing was measured)."""
        if self.declared is None:
            return True
        if self.verdict is None:
            return False
        return GROWTH_CLASSES.index(self.verdict) <= GROWTH_CLASSES.index(self.declared)

    def problem(self) -> str | None:
        if self.ok:
            return None
        if self.verdict is None:
            return f"{self.dialect} {self.shape}: no work measured (timeouts?), declared {self.declared}"
        sizes = ", ".join(
            f"{size_label(p.size)}: {p.work:,.0f} rows" for p in self.points if p.work is not None
        )
        return (
            f"{self.dialect} {self.shape}: work grows {self.verdict} (k = {self.k:.2f}; {sizes}), declared "
            f"{self.declared}; plan at {size_label(self.points[-1].size)}: {self.points[-1].plan}"
        )

    def to_json(self) -> dict[str, Any]:
        out = {name: getattr(self, name) for name in _GROWTH_FIELDS}
        return out | {"points": [p.__dict__ for p in self.points]}


@dataclass
class Ladder:
    sizes: list[int]
    catalog: Catalog
    growth: list[Growth]
    seconds: dict[str, float] = field(default_factory=dict)  # per size: seed / measure

    @property
    def problems(self) -> list[str]:
        return [p for g in self.growth if (p := g.problem())]

    def ratio_at_largest(self, shape: str, dialect: str) -> float | None:
        """Natural work / remediated work at the largest size."""
        got = {g.spelling: g for g in self.growth if g.shape == shape and g.dialect == dialect}
        if "natural" not in got or "remediated" not in got:
            return None
        nat, rem = got["natural"].points[-1].work, got["remediated"].points[-1].work
        return nat / max(rem, 1.0) if nat is not None and rem is not None else None


def namespace_for(base: str, size: int) -> str:
    return f"{base}_{size_label(size)}"


def _holds(target: Target, namespace: str, dataset: str) -> bool:
    """Whether ``namespace`` holds ``dataset`` completely (then it is reused, not seeded again)."""
    d = dialects.get(target.dialect)
    with target.all_or_nothing() as conn:
        state = d.namespace_state(conn, namespace)
        meta = d.read_meta(conn, namespace) if state == "complete" else {}
        conn.rollback()
    return state == "complete" and meta.get("dataset") == dataset


def load_size(
    targets: list[Target], cat: Catalog, size: int, namespace: str, *, cache_dir: Path | None, isolate: bool
) -> bool:
    """Make ``namespace`` hold size ``size``; False when it already did."""
    from dbbench.dataset import seed
    from dbbench.setup import loader
    from dbbench.volume import catalog_spec
    from dbbench.volume.load import problems

    if cat.has_setup:
        spec = catalog_spec.of_catalog(cat, [size])
        _, setup = loader.load(targets, cat, namespace=namespace, isolate=isolate, scale=size)
        if spec is not None:  # the catalog's data spec at :scale = size
            filled = catalog_spec.after_setup(targets, namespace, spec, setup, scale=size, isolate=isolate)
            bad = problems(filled)
            if bad:
                raise GrowError(f"the data spec at scale {size:,} did not verify: {'; '.join(bad)}")
        return True
    dataset = ALPINE_DATASETS.get(size)
    if dataset is None:
        have = ", ".join(size_label(n) for n in ALPINE_DATASETS)
        raise GrowError(f"no dataset of {size:,} packages (the alpine ladder has {have})")
    stale = [t for t in targets if not _holds(t, namespace, dataset)]
    if not stale:
        return False
    _, results, _ = seed.seed(stale, dataset, namespace=namespace, cache_dir=cache_dir)
    bad = [f"{r.dialect}: {c.name}" for r in results for c in r.checks if not c.ok]
    if bad:
        raise GrowError(f"the {dataset} dataset did not verify: {'; '.join(bad)}")
    return True


def _report(say: Progress, size: int, dialect: str, shape: str, spelling: str) -> None:
    say(f"{size_label(size)}: {dialect} {shape} ({spelling})")


def _picked(cat: Catalog, only: list[str] | None) -> list:
    """The catalog's shapes a run measures (``only``: these names)."""
    return [s for s in cat.shapes if not only or s.name in only]


def progress_steps(
    targets: list[Target], cat: Catalog, sizes: list[int], only: list[str] | None = None
) -> int:
    """How many progress messages :func:`run` sends: per size, one for the load and one per
    spelling measured (the natural one where a shape has it)."""
    per_size = 1 + sum(
        1 + bool(s.variants[t.dialect].natural)
        for t in targets
        for s in _picked(cat, only)
        if t.dialect in s.variants
    )
    return per_size * len(sizes)


@dataclass(frozen=True)
class LadderOptions:
    """How :func:`run` climbs the ladder: the ``sizes``, the prefix of the namespaces (one per size,
    :func:`namespace_for`), ``warmups`` untimed and ``runs`` timed EXPLAIN ANALYZE of each spelling
    under a statement timeout of ``timeout_ms`` (the servers take 0 as no timeout at all, so it is
    refused), and whether the shapes run as the namespace's own role (``isolate``)."""

    sizes: tuple[int, ...] = DEFAULT_SIZES
    namespace: str = defaults.GROW_NAMESPACE
    warmups: int = defaults.GROW_WARMUPS
    runs: int = defaults.GROW_RUNS
    timeout_ms: int = int(defaults.GROW_TIMEOUT_S * 1000)
    isolate: bool = True

    def __post_init__(self) -> None:
        if not isinstance(self.timeout_ms, int) or self.timeout_ms <= 0:
            raise GrowError(
                f"timeout_ms = {self.timeout_ms!r}: a statement timeout must be a positive number of milliseconds"
            )

    def at(self, size: int) -> explain.MeasureOptions:
        """The measurement at ``size``: both spellings, only the access path asserted (the catalog's
        row counts hold at one size)."""
        return explain.MeasureOptions(
            namespace=namespace_for(self.namespace, size),
            warmups=self.warmups,
            runs=self.runs,
            timeout_ms=self.timeout_ms,
            natural=True,
            access_only=True,
            isolate=self.isolate,
        )


def run_ladder(
    targets: list[Target],
    catalog: str | Catalog = defaults.CATALOG,
    options: LadderOptions = LadderOptions(),
    *,
    only: list[str] | None = None,
    cache_dir: Path | None = None,
    progress: Progress | None = None,
) -> Ladder:
    """Load every size (or reuse it), run every shape (``only``: these) at each, and fit the growth."""
    cat = catalog if isinstance(catalog, Catalog) else entries.open_catalog(catalog, only)
    declared = {s.name: s.growth for s in _picked(cat, only)}
    say = progress or (lambda _msg: None)
    growth: dict[tuple[str, str, str], Growth] = {}
    ladder = Ladder(sorted(options.sizes), cat, [])
    if cat.has_setup:  # the data spec checked at every size before the first is touched
        from dbbench.volume import catalog_spec

        catalog_spec.of_catalog(cat, ladder.sizes)
    for size in ladder.sizes:
        results = _at_size(targets, cat, size, options, only, cache_dir, say, ladder.seconds)
        for r in results:
            for m in (r.remediated, r.natural):
                if m is None:
                    continue
                rem = m.spelling == "remediated"
                key = (r.shape, r.dialect, m.spelling)
                g = growth.setdefault(
                    key, Growth(r.shape, r.dialect, m.spelling, declared.get(r.shape) if rem else None)
                )
                g.points.append(_point(size, m))
    ladder.growth = list(growth.values())
    return ladder


def _at_size(
    targets: list[Target],
    cat: Catalog,
    size: int,
    options: LadderOptions,
    only: list[str] | None,
    cache_dir: Path | None,
    say: Progress,
    seconds: dict[str, float],
) -> list[ShapeMeasurement]:
    """Size ``size`` loaded (or reused) and the catalog measured there; the seconds each took go
    into ``seconds``."""
    ns, label = namespace_for(options.namespace, size), size_label(size)
    start = time.perf_counter()
    say(f"{label}: loading {ns}")
    seeded = load_size(targets, cat, size, ns, cache_dir=cache_dir, isolate=options.isolate)
    seconds[f"{label} {'load' if seeded else 'reused'}"] = time.perf_counter() - start
    start = time.perf_counter()
    say(f"{label}: measuring {len(_picked(cat, only))} shapes")
    report = functools.partial(_report, say, size)
    _, results, _ = explain.run(targets, cat, options.at(size), only=only, progress=report)
    seconds[f"{label} measure"] = time.perf_counter() - start
    return results


def _point(size: int, m: Measurement) -> Point:
    """One spelling's work at one size (PostgreSQL's counts the rows its scans read and discarded)."""
    tree = m._tree
    return Point(
        size,
        work(tree),
        buffers(tree),
        m.p50,
        m.rows,
        "timeout" if tree is None else explain.plan_signature(tree),
        m.timing,
    )
