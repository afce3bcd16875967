"""What a capture found (``dbbench capture``, the pytest plugin's ``--dbbench-capture``) and what
``dbbench catalog propose`` / ``accept`` proposed, as immutable values for
:mod:`dbbench.output.capture` to render: built here from the capture stage's own results
(:mod:`dbbench.capture.check`'s report, :mod:`dbbench.capture.expectations`' proposals), which the
stage, below this layer, cannot build itself."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from dbbench.defaults import DIALECTS

if TYPE_CHECKING:
    from dbbench.capture.check import Report
    from dbbench.capture.expectations import Proposed
    from dbbench.measure.propose import Proposal

SCAN_ADVICE = (
    "add an index that serves it (`dbbench advise` will propose one), reload the data and capture "
    "again; or, if the scan is what you want, accept it: capture with --accept-scans (the pytest "
    "plugin: --dbbench-accept-scans)"
)


@dataclass(frozen=True)
class PlanProposal:
    """The expectation a plan proposes on one dialect: ``line`` in words, ``seen`` the plan's
    accesses in words, ``table`` the table of the index it used (None: it used none)."""

    line: str
    seen: str
    table: str | None


@dataclass(frozen=True)
class Outcome:
    """What became of one captured shape: ``holds`` / ``fails`` (a catalog shape, at ``shape_path``
    line ``shape_line``), ``new`` (written with ``proposals``), ``skipped`` (it does not run in the
    namespace: ``lines`` says why), ``scan`` (new, and its plan uses no index on some dialect;
    ``accepted``: with --accept-scans). ``where``: the code and test it was captured from."""

    name: str
    status: str
    dialects: tuple[str, ...]
    where: str
    shape_path: Path | None = None
    shape_line: int | None = None
    lines: tuple[str, ...] = ()
    proposals: Mapping[str, PlanProposal] = field(default_factory=dict)
    unstable: Mapping[str, str] = field(default_factory=dict)  # probe kind -> how it lost the proposal
    accepted: bool = False

    @property
    def scans(self) -> dict[str, PlanProposal]:
        """The dialects whose plan used no index, with what it did instead."""
        return {d: p for d, p in self.proposals.items() if p.table is None}

    @property
    def indexed(self) -> tuple[str, ...]:
        """The dialects whose plan used an index."""
        return tuple(d for d in DIALECTS if d in self.proposals and self.proposals[d].table)


@dataclass(frozen=True)
class CaptureReport:
    """Every captured shape's outcome, and the file the new ones were written to (if any)."""

    outcomes: tuple[Outcome, ...]
    written: Path | None = None

    @property
    def failed(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.status == "fails" or (o.status == "scan" and not o.accepted)]


@dataclass(frozen=True)
class BlockProposal:
    """An annotated SQL block without an expectation: its name, ``file:line``, and per dialect the
    expectation its plan proposes, in words."""

    name: str
    where: str
    proposals: Mapping[str, str]


@dataclass(frozen=True)
class Proposals:
    """``catalog propose`` / ``accept``: the blocks proposed for; ``written``: how many blocks
    ``accept`` wrote an expectation into (None: ``propose``, nothing written)."""

    blocks: tuple[BlockProposal, ...]
    written: int | None = None


def capture_report(report: Report) -> CaptureReport:
    """The document of :func:`dbbench.capture.check.run`'s report."""
    return CaptureReport(
        tuple(
            Outcome(
                name=o.name,
                status=o.status,
                dialects=tuple(o.seen.dialects),
                where=o.seen.where(),
                shape_path=o.shape.path if o.shape is not None else None,
                shape_line=o.shape.line if o.shape is not None else None,
                lines=tuple(o.lines),
                proposals={d: _proposal(p) for d, p in o.proposals.items()},
                unstable=dict(o.unstable),
                accepted=o.accepted,
            )
            for o in report.outcomes
        ),
        report.written,
    )


def _proposal(p: Proposal) -> PlanProposal:
    return PlanProposal(p.line, p.seen, p.table)


def proposals(found: list[Proposed], written: int | None = None) -> Proposals:
    """The document of :func:`dbbench.capture.expectations.proposals` (and of what ``accept`` wrote)."""
    return Proposals(
        tuple(
            BlockProposal(p.block.name, p.block.where, {d: prop.line for d, prop in p.proposals.items()})
            for p in found
        ),
        written,
    )
