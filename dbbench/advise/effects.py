"""What a present index does to the rest of the catalog: every other shape measured again on the
connection that sees it (:func:`rerun`), against the same shapes measured without it
(:func:`baseline`). A shape *regresses* when its plan check newly fails, or it examines more than
twice the rows it did (and at least :data:`NOISE_ROWS` more); the index *helps* a shape that
examines at most half the rows it did, or whose failing check now passes.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from dbbench.access.targets import Target
from dbbench.advise import verify
from dbbench.catalog.entries import Shape
from dbbench.measure.explain import MeasureOptions, ShapeMeasurement
from dbbench.measure.grow import work

NOISE_ROWS = 100.0  # fewer more rows examined than this is never a regression
FACTOR = 2.0


@dataclass(frozen=True)
class Effect:
    """One shape measured without and with the index: rows examined, and whether its check held."""

    shape: str
    work: tuple[float | None, float | None]
    ok: tuple[bool, bool]

    @property
    def regressed(self) -> bool:
        before, after = self.work
        if self.ok[0] and not self.ok[1]:
            return True
        return (
            before is not None
            and after is not None
            and after > FACTOR * before
            and after - before >= NOISE_ROWS
        )

    @property
    def helped(self) -> bool:
        before, after = self.work
        if not self.ok[0] and self.ok[1]:
            return True
        return before is not None and after is not None and after * FACTOR <= before and before - after >= 1

    def __str__(self) -> str:
        before, after = self.work
        rows = "timeout" if after is None else f"{after:,.0f}"
        was = "timeout" if before is None else f"{before:,.0f}"
        check = (
            ""
            if self.ok[0] == self.ok[1]
            else (" (its check now fails)" if self.ok[0] else " (its check now passes)")
        )
        return f"{self.shape}: {was} → {rows} rows examined{check}"


@dataclass(frozen=True)
class Effects:
    """Every other shape of the catalog with the index present."""

    effects: tuple[Effect, ...] = ()

    @property
    def helps(self) -> tuple[Effect, ...]:
        return tuple(e for e in self.effects if e.helped)

    @property
    def regresses(self) -> tuple[Effect, ...]:
        return tuple(e for e in self.effects if e.regressed)


def _ok(m: ShapeMeasurement) -> bool:
    return m.verdict is None or m.verdict.ok


def baseline(
    target: Target, conn, shapes: Iterable[Shape], options: MeasureOptions, base: dict | None = None
) -> dict[str, ShapeMeasurement]:
    """Each shape (of ``target``'s dialect) measured on ``conn`` as the advise stage measures it."""
    out = {}
    for s in shapes:
        if target.dialect in s.variants:
            out[s.name] = verify.measure(target, conn, s, options, base)
            conn.rollback()
    return out


def rerun(
    target: Target,
    conn,
    shapes: Iterable[Shape],
    before: dict[str, ShapeMeasurement],
    options: MeasureOptions,
    base: dict | None = None,
    *,
    skip: Iterable[str] = (),
) -> Effects:
    """The shapes measured in ``before`` (but those in ``skip``) measured again on ``conn``."""
    skipped = set(skip)
    found = []
    for s in shapes:
        if s.name in skipped or s.name not in before:
            continue
        after = verify.measure(target, conn, s, options, base)
        conn.rollback()
        was = before[s.name]
        found.append(
            Effect(s.name, (work(was.remediated._tree), work(after.remediated._tree)), (_ok(was), _ok(after)))
        )
    return Effects(tuple(found))
