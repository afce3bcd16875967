"""A verified candidate at a second size of the ladder (smaller or larger): the same index built in
the namespace that holds that size (``dbbench grow``'s, loaded or reused as grow loads it), the shape measured
there, and the work's log-log slope between the two sizes (:func:`dbbench.measure.grow.exponent`)
classed as grow classes it. Where the shape claims a growth (``growth = "logarithmic"``), a
candidate whose work grows worse is *not bounded*."""

from __future__ import annotations

from dataclasses import dataclass

from dbbench import dialects
from dbbench.access.targets import Target
from dbbench.advise import candidates, trial, verify
from dbbench.catalog.entries import GROWTH_CLASSES, Shape
from dbbench.measure.explain import MeasureOptions
from dbbench.measure.grow import classify, exponent, work
from dbbench.units import size_label


@dataclass(frozen=True)
class Growth:
    """Work with the candidate at two sizes, smaller first (the table's rows, rows examined), the
    slope and its class, and the shape's claim."""

    small: tuple[int, float | None]
    large: tuple[int, float | None]
    k: float | None
    verdict: str | None
    declared: str | None

    @property
    def bounded(self) -> bool:
        """No worse than the shape claims (always, without a claim)."""
        if self.declared is None or self.verdict is None:  # no claim, or nothing to judge (said so)
            return True
        return GROWTH_CLASSES.index(self.verdict) <= GROWTH_CLASSES.index(self.declared)

    def __str__(self) -> str:
        (n1, w1), (n2, w2) = self.small, self.large
        rows = ", ".join(
            f"{size_label(n)} rows: {'timeout' if w is None else f'{w:,.0f}'} examined"
            for n, w in ((n1, w1), (n2, w2))
        )
        k = "" if self.k is None else f" (k = {self.k:.2f})"
        return f"work grows {self.verdict or 'unmeasured'}{k}; {rows}"


def _rows(conn, d, namespace: str, table: str) -> int:
    with conn.cursor() as cur:
        cur.execute(f"SELECT count(*) FROM {d.quote(namespace)}.{d.quote(table)}")
        (n,) = cur.fetchone()
    conn.rollback()
    return int(n)


def measure(
    target: Target,
    shape: Shape,
    cand: candidates.Candidate,
    large: tuple[str, float | None],
    small_namespace: str,
    options: MeasureOptions,
    small_base: dict | None,
) -> Growth:
    """``cand`` built in ``small_namespace`` (the second size) and ``shape`` measured there, against
    its work in the advised namespace (``large``: it and the rows examined there with the candidate)."""
    from dataclasses import replace

    d = dialects.get(target.dialect)
    large_ns, large_work = large
    with target.all_or_nothing() as conn:
        n_large = _rows(conn, d, large_ns, cand.table)
        n_small = _rows(conn, d, small_namespace, cand.table)
    ddl, drop = cand.ddl(target.dialect), cand.drop_ddl(target.dialect)
    with trial.present(target, small_namespace, ddl, drop, cand.name) as conn:
        m = verify.measure(target, conn, shape, replace(options, namespace=small_namespace), small_base)
    small_work = work(m.remediated._tree)
    points = sorted([(n_small, small_work), (n_large, large_work)], key=lambda p: p[0])
    (n1, w1), (n2, w2) = points
    k = exponent((n1, w1), (n2, w2)) if w1 is not None and w2 is not None and n2 > n1 > 0 else None
    return Growth(points[0], points[1], k, classify(k), shape.growth)
