"""``dbbench diff``: a run compared with a baseline, node by node on the normalized plans.

For each shape and dialect of the baseline, the remediated spelling's plan trees are aligned node
by node: table accesses by table (and alias, in order of appearance), operators by kind (in order
of appearance). Findings (docs/diff.md explains each with real output):

* ``index_lost`` (regression): an index the baseline read a table through is no longer used on it;
  the message names the table's new access path.
* ``access_changed`` (regression): the same table node is read through a different index.
* ``scan_kind`` (regression when worse): the access kind changed; worse means further right in
  const < unique_lookup < index_lookup < index_range < index_scan < full_scan. Triaged as
  *equivalent* (not a regression) when the same index still serves the same table and that table
  holds a few rows (at most ``few_rows``): a range vs a full scan of a two-row index is the
  optimizer's coin, not a lost access path.
* ``new_access`` (regression when it is a full scan): a table the baseline did not read.
* ``sort_added`` / ``temp_table_added`` (regression): on the statement's own path.
* ``misestimate`` (regression when new): estimated vs actual rows of a matched node differ by
  more than ``rows_factor`` and the larger side is at least ``rows_min`` rows. Under a ``Limit`` an
  estimate above the actual rows is the limit at work, so only underestimates count there.
* ``work`` (regression): rows examined (rows produced or read and discarded, times loops) up by
  more than ``work_factor`` and by at least ``work_min`` rows, at a plan node or in total, named
  at the node (:mod:`dbbench.diff.work`; PostgreSQL's shared buffers and every node's q-error
  beside it). Needs both documents to record work (``dbbench.explain/2``): with an older
  baseline, a note says work is unknown and the verdict falls back to plan shape.
* ``locks`` (regression): a write's or a locking read's rows locked up past the same thresholds as
  the work, in one line naming the statement (``UPDATE package_relation now locks 2,048 rows (was
  100)``); ``cascade`` (regression): a foreign-key cascade into a child that lost the index on its
  key (:mod:`dbbench.diff.locks`). A baseline without footprints gives no verdict on locks (a note
  names the shapes).
* ``slower`` / ``faster`` (advisory): the Hodges-Lehmann ratio of the result's samples to the
  baseline's with its exact Mann-Whitney 95 % interval (:func:`verdict.stats.ratio_interval`),
  reported when the p50 moved by more than ``noise_ms`` and the interval reaches past ``1 +
  slower``. It decides only with ``gate_timing``, and then on the interval widened by the
  run-to-run spread of an A/A of two runs now (``floors``): a regression when the whole widened
  interval lies past ``1 + slower``, *inconclusive* when it straddles it.
* ``assertion`` (regression): the catalog assertion fails now and held in the baseline.
* ``timeout`` (regression), ``missing`` (regression when its dialect ran), ``new`` (information).
* ``index_dropped`` (regression when the shape needed it): the schema dropped (or redefined) an
  index the baseline plan read, known from the indexes both documents record
  (:mod:`dbbench.diff.indexes`). Needed when the shape regressed on more than the access the index
  served (check, full scan, sort, work, ...); else another index took over with no more work, the
  access findings are equivalent and the finding names what took over. An index added that no
  result plan reads is a note.

Improvements (a better access kind, a sort gone, work down) are reported and never fail.
"""

from __future__ import annotations

from dbbench.defaults import DIALECT_LABEL
from dbbench.diff.indexes import changes as index_changes
from dbbench.diff.judge import (
    KIND_RANK,
    _features,
    compare_entry,
    compare_plans,
    keyed_nodes,
    misestimate,
    timing,
)
from dbbench.diff.locks import lock_findings, unrecorded
from dbbench.diff.triage import (
    PLAN_FINDINGS,
    _signature,
    apply_self_control,
    self_controls,
    triage_unstable,
)
from dbbench.diff.work import q_error, work_diff, work_findings
from dbbench.document.diff import (
    DiffReport,
    Finding,
    NodeWork,
    SelfControl,
    ShapeDiff,
    Thresholds,
    WorkDiff,
    _describe,
    _is_access,
    entry_access,
    entry_p50,
    entry_tree,
)
from dbbench.document.model import Document, as_document
from dbbench.errors import DbbenchError
from verdict.stats import Interval

__all__ = [
    "KIND_RANK",
    "PLAN_FINDINGS",
    "DiffReport",
    "Finding",
    "NodeWork",
    "SelfControl",
    "ShapeDiff",
    "Thresholds",
    "WorkDiff",
    "_describe",
    "_features",
    "_is_access",
    "_notes",
    "_signature",
    "apply_self_control",
    "compare",
    "compare_entry",
    "compare_plans",
    "entry_access",
    "entry_p50",
    "entry_tree",
    "index_changes",
    "keyed_nodes",
    "lock_findings",
    "misestimate",
    "q_error",
    "self_controls",
    "timing",
    "triage_unstable",
    "work_diff",
    "work_findings",
]


def _notes(base: Document, new: Document) -> list[str]:
    notes = []
    bv, nv = base.server_versions(), new.server_versions()
    for d in sorted(set(bv) & set(nv)):
        if bv[d] != nv[d]:
            notes.append(
                f"{DIALECT_LABEL[d]} server differs: baseline {bv[d]}, result {nv[d]} (plans and timings may "
                "differ for that reason alone)"
            )
    bd, nd = base.datasets or {}, new.datasets or {}
    for d in sorted(set(bd) & set(nd)):
        bf, nf = bd[d].fingerprints, nd[d].fingerprints
        if bf and nf and bf != nf:
            changed = sorted(k for k in set(bf) | set(nf) if bf.get(k) != nf.get(k))
            notes.append(f"{DIALECT_LABEL[d]} data differs from the baseline's in: {', '.join(changed)}")
    for d in sorted(set(bd) & set(nd)):
        b_sha, n_sha = bd[d].setup_sha256, nd[d].setup_sha256
        if b_sha and n_sha and b_sha != n_sha:
            notes.append(
                f"{DIALECT_LABEL[d]} setup SQL differs from the baseline's (the schema or data changed)"
            )
    for doc, name in ((base, "the baseline"), (new, "the result")):
        if not doc.records_work:
            notes.append(
                f"work unknown: {name} is a {doc.schema} document, which records no work per plan node; "
                "the verdict falls back to plan shape (save a new baseline with `dbbench baseline save`)"
            )
    b_runs, n_runs = (d.config.runs if d.config else None for d in (base, new))
    if b_runs and n_runs and b_runs != n_runs:
        notes.append(f"samples differ: baseline {b_runs} timed runs, result {n_runs}")
    return notes


def compare(
    base: Document | dict,
    new: Document | dict,
    thresholds: Thresholds | None = None,
    *,
    baseline_name: str = "baseline",
    result_name: str = "result",
    stability: dict[tuple[str, str], list[str]] | None = None,
    floors: dict[tuple[str, str], Interval] | None = None,
) -> DiffReport:
    """Compare two result documents (``dbbench.document.store.load_document`` / ``baseline.load`` / a live
    run's dict, validated here). ``stability``: the plans re-ANALYZE alone gave per shape and
    dialect (``--stability``); ``floors``: the A/A time ratio interval of two runs now per shape and
    dialect, the run-to-run spread a gated timing (``thresholds.gate_timing``) must include."""
    t = thresholds or Thresholds()
    base, new = as_document(base, baseline_name), as_document(new, result_name)
    bd, nd = base.datasets or {}, new.datasets or {}
    for d in sorted(set(bd) & set(nd)):
        b_name, n_name = bd[d].name, nd[d].name
        if b_name and n_name and b_name != n_name:
            raise DbbenchError(
                f"{baseline_name} and {result_name} cannot be compared: the baseline was measured on {b_name!r}, "
                f"the result on {n_name!r} ({DIALECT_LABEL.get(d, d)}); save a baseline of this catalog with "
                "`dbbench baseline save`"
            )
    b_by, n_by = base.by_key(), new.by_key()
    ran = {r.dialect for r in new.results}
    with_work = base.records_work and new.records_work
    shapes = []
    for key, b in b_by.items():
        n = n_by.get(key)
        sd = ShapeDiff(key[0], key[1], b, n)
        if n is None:
            if key[1] in ran:
                sd.findings.append(Finding("missing", True, "not measured in the result"))
            else:
                sd.findings.append(Finding("missing", False, f"{DIALECT_LABEL[key[1]]} did not run"))
        else:
            b_tree, n_tree = entry_tree(b), entry_tree(n)
            if with_work and b_tree is not None and n_tree is not None:
                sd.work = work_diff(b_tree, n_tree)
            sd.findings = compare_entry(b, n, t, work=sd.work, floor=(floors or {}).get(key))
            if stability and key in stability:
                triage_unstable(sd, stability[key])
        shapes.append(sd)
    for key, n in n_by.items():
        if key not in b_by:
            shapes.append(
                ShapeDiff(
                    key[0],
                    key[1],
                    None,
                    n,
                    [Finding("new", False, "not in the baseline (save a new baseline to track it)")],
                )
            )
    order = {name: i for i, name in enumerate(dict.fromkeys([k[0] for k in b_by] + [k[0] for k in n_by]))}
    dialect_rank = {"mysql": 0, "postgresql": 1}
    shapes.sort(key=lambda s: (order[s.shape], dialect_rank.get(s.dialect, 9)))
    index_notes = index_changes(base, new, shapes)
    notes = _notes(base, new) + index_notes + unrecorded(shapes)
    if not set(b_by) & set(n_by):
        notes.insert(0, "nothing in common: the result measured none of the baseline's shapes")
    return DiffReport(baseline_name, result_name, t, shapes, notes, dict(stability or {}), {}, base, new)
