"""What a capture found, as lines: each captured shape held against its catalog, the new ones
written down with their proposed expectation (``dbbench capture``, the pytest plugin's capture);
and the expectations ``dbbench catalog propose`` / ``accept`` proposed."""

from __future__ import annotations

from dbbench.defaults import DIALECT_LABEL
from dbbench.document.capture import SCAN_ADVICE, CaptureReport, Outcome, Proposals


def lines(report: CaptureReport, what: str = "dbbench capture") -> list[str]:
    counts = {
        s: sum(o.status == s for o in report.outcomes) for s in ("holds", "fails", "new", "skipped", "scan")
    }
    accepted = sum(o.status == "scan" and o.accepted for o in report.outcomes)
    scans = counts["scan"] - accepted
    head = (
        f"{what}: {len(report.outcomes)} shape{'s' if len(report.outcomes) != 1 else ''} captured: "
        f"{counts['holds']} hold, {counts['fails']} failed, {counts['new']} new"
        + (f", {scans} without an index" if scans else "")
        + (f", {accepted} accepted scan{'s' if accepted != 1 else ''}" if accepted else "")
        + (f" (written to {report.written})" if report.written else "")
        + (f", {counts['skipped']} not run in the namespace" if counts["skipped"] else "")
    )
    out = [head]
    for o in report.outcomes:
        dialects = ", ".join(DIALECT_LABEL[d] for d in o.dialects)
        where = o.where
        if o.status == "fails":
            at = (
                f"{o.shape_path}:{o.shape_line}"
                if o.shape_path is not None and o.shape_line
                else str(o.shape_path)
            )
            out.append(f"FAIL {o.name} (catalog {at}), captured from {where or dialects}:")
            out += [f"  {line}" for line in o.lines]
        elif o.status == "holds":  # a write's footprint and its tables unchanged, a timeout
            out.append(f"ok   {o.name} [{dialects}]" + (f" ({where})" if where else ""))
            out += [f"  {line}" for line in o.lines]
        elif o.status == "new":
            proposed = "; ".join(f"{DIALECT_LABEL[d]}: {p.line}" for d, p in o.proposals.items())
            out.append(f"NEW  {o.name} [{dialects}]: {proposed}" + (f" ({where})" if where else ""))
            out += [f"  {line}" for line in o.lines]
            out += [f"  probe {kind} off: {why}" for kind, why in sorted(o.unstable.items())]
        elif o.status == "scan":
            out += _scan(o, where)
    return out


def _scan(o: Outcome, where: str) -> list[str]:
    """A new shape whose plan uses no index on some dialect: which, what it did, what to do."""
    on = ", ".join(DIALECT_LABEL[d] for d in o.scans)
    seen = "; ".join(f"{DIALECT_LABEL[d]}: {p.seen}" for d, p in o.scans.items())
    indexed = ", ".join(DIALECT_LABEL[d] for d in o.indexed)
    head = f"SCAN {o.name} [{on}]: no index used ({seen}), so there is nothing to expect there"
    if o.accepted:
        done = f"written for {indexed} only" if indexed else "not written"
        return [f"{head}; scan accepted (--accept-scans): {done}" + (f" ({where})" if where else "")]
    return [
        f"{head}: not written" + (f" ({where})" if where else ""),
        f"  {SCAN_ADVICE}",
        *[f"  {line}" for line in o.lines],
    ]


def proposed(found: Proposals) -> list[str]:
    """Each block without an expectation and what its plans propose (``catalog propose`` / ``accept``)."""
    out = [
        f"{b.name} ({b.where}): "
        + "; ".join(f"{DIALECT_LABEL[d]}: {line}" for d, line in b.proposals.items())
        for b in found.blocks
    ]
    return out or ["every block has an expectation"]


def written(found: Proposals) -> str:
    """What ``catalog accept`` wrote."""
    n = found.written or 0
    return f"wrote the expectations of {n} block{'s' if n != 1 else ''}"
