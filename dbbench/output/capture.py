"""What a capture found, as lines: each captured shape held against its catalog, the new ones
written down with their proposed expectation (``dbbench capture``, the pytest plugin's capture)."""

from __future__ import annotations

from dbbench.capture.check import Report
from dbbench.defaults import DIALECT_LABEL


def lines(report: Report, what: str = "dbbench capture") -> list[str]:
    counts = {s: sum(o.status == s for o in report.outcomes) for s in ("holds", "fails", "new", "skipped")}
    head = (
        f"{what}: {len(report.outcomes)} shape{'s' if len(report.outcomes) != 1 else ''} captured: "
        f"{counts['holds']} hold, {counts['fails']} failed, {counts['new']} new"
        + (f" (written to {report.written})" if report.written else "")
        + (f", {counts['skipped']} not run in the namespace" if counts["skipped"] else "")
    )
    out = [head]
    for o in report.outcomes:
        dialects = ", ".join(DIALECT_LABEL[d] for d in o.seen.dialects)
        where = o.seen.where()
        if o.status == "fails":
            at = (
                f"{o.shape.path}:{o.shape.line}"
                if o.shape and o.shape.line
                else str(o.shape and o.shape.path)
            )
            out.append(f"FAIL {o.name} (catalog {at}), captured from {where or dialects}:")
            out += [f"  {line}" for line in o.lines]
        elif o.status == "holds":
            out.append(f"ok   {o.name} [{dialects}]" + (f" ({where})" if where else ""))
        elif o.status == "new":
            proposed = "; ".join(f"{DIALECT_LABEL[d]}: {p.line}" for d, p in o.proposals.items())
            out.append(f"NEW  {o.name} [{dialects}]: {proposed}" + (f" ({where})" if where else ""))
            out += [f"  {line}" for line in o.lines]
            out += [f"  probe {kind} off: {why}" for kind, why in sorted(o.unstable.items())]
    return out
