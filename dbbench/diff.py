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
* ``slower`` (regression): decided on the samples, not on two numbers. The Hodges-Lehmann ratio of
  the result's samples to the baseline's with its exact Mann-Whitney 95 % interval
  (:func:`verdict.stats.ratio_interval`): a regression when the whole interval lies past
  ``1 + slower`` (1.0: doubled) *and* the p50 moved by more than ``noise_ms``; no finding when the
  interval lies within, or the p50 moved by less than ``noise_ms``; otherwise *inconclusive*
  (the noise is larger than the threshold at these samples: ``--runs`` takes more).
* ``assertion`` (regression): the catalog assertion fails now and held in the baseline.
* ``timeout`` (regression), ``missing`` (regression when its dialect ran), ``new`` (information).

Improvements (a better access kind, a sort gone, p50 faster beyond the same thresholds) are
reported and never fail.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from dbbench.errors import DbbenchError
from dbbench.output import fmt_factor, fmt_ms
from dbbench.plan import ACCESS_KINDS, PlanNode
from dbbench.urls import DIALECT_LABEL
from verdict import FAIL, INCONCLUSIVE, PASS, combine
from verdict.stats import Interval, ratio_interval

# Worse to the right: a change to the right is a regression, to the left an improvement.
KIND_RANK = {
    k: i
    for i, k in enumerate(
        ("const", "unique_lookup", "index_lookup", "index_range", "index_scan", "full_scan")
    )
}


@dataclass
class Thresholds:
    rows_factor: float = 10.0  # rows misestimated by more than this factor …
    rows_min: float = 100.0  # … where the larger of estimate and actual is at least this
    slower: float = 1.0  # p50 slower by more than this fraction of the baseline p50 (1.0: doubled) …
    noise_ms: float = 0.5  # … and by more than this many milliseconds
    few_rows: float = 100.0  # a scan-kind change on the same index of a table this small is equivalent
    alpha: float = 0.05  # error rate of the timing verdict


@dataclass
class Finding:
    kind: str
    regression: bool
    message: str
    improvement: bool = False
    inconclusive: bool = False  # the data cannot decide (noise larger than the threshold)


@dataclass
class SelfControl:
    """One shape's A/A (this run against a second run now): the noise floor beside the verdict."""

    verdict: str  # the A/A diff's verdict of the shape
    plans_agree: bool  # both runs chose the same plan (same plan signature)
    timing: str  # pass / fail / inconclusive of the A/A timing alone
    ratio: Interval | None  # second/first run time ratio (Hodges-Lehmann, Mann-Whitney interval)

    def describe(self) -> str:
        iv = self.ratio
        ratio = f"{iv.estimate:.2f}x [{iv.low:.2f}, {iv.high:.2f}]" if iv else "too few samples"
        return f"{self.verdict}: plans {'agree' if self.plans_agree else 'DIFFER'}; timing {self.timing}, A/A ratio {ratio}"

    def to_json(self) -> dict:
        return {
            "verdict": self.verdict,
            "plans_agree": self.plans_agree,
            "timing": self.timing,
            "ratio": self.ratio.to_json() if self.ratio else None,
        }


@dataclass
class ShapeDiff:
    shape: str
    dialect: str
    base: dict | None
    result: dict | None
    findings: list[Finding] = field(default_factory=list)

    @property
    def regressed(self) -> bool:
        return any(f.regression for f in self.findings)

    @property
    def verdict(self) -> str:
        """pass / fail / inconclusive (a shape not measured on a dialect that did not run passes)."""
        if self.regressed:
            return FAIL
        return INCONCLUSIVE if any(f.inconclusive for f in self.findings) else PASS

    @property
    def status(self) -> str:
        if self.base is None:
            return "new"
        if self.result is None:
            return "missing" if self.regressed else "not compared"
        if self.regressed:
            return "regressed"
        if any(f.inconclusive for f in self.findings):
            return "inconclusive"
        if self.findings and all(f.improvement for f in self.findings):
            return "improved"
        return "changed" if self.findings else "unchanged"


@dataclass
class DiffReport:
    baseline: str
    result: str
    thresholds: Thresholds
    shapes: list[ShapeDiff]
    notes: list[str] = field(default_factory=list)
    stability: dict[tuple[str, str], list[str]] = field(default_factory=dict)
    self_control: dict[tuple[str, str], SelfControl] = field(default_factory=dict)  # shape, dialect -> A/A
    base_doc: dict = field(default_factory=dict, repr=False)
    result_doc: dict = field(default_factory=dict, repr=False)

    @property
    def regressions(self) -> list[ShapeDiff]:
        return [s for s in self.shapes if s.regressed]

    @property
    def ok(self) -> bool:
        return not self.regressions

    @property
    def verdict(self) -> str:
        return combine(s.verdict for s in self.shapes)

    @property
    def inconclusive(self) -> list[ShapeDiff]:
        return [s for s in self.shapes if s.verdict == INCONCLUSIVE]

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": "dbbench.diff/1",
            "baseline": self.baseline,
            "result": self.result,
            "thresholds": asdict(self.thresholds),
            "ok": self.ok,
            "verdict": self.verdict,
            "notes": self.notes,
            "stability": [
                {
                    "shape": k[0],
                    "dialect": k[1],
                    "stable": len(set(v)) == 1,
                    "plans": sorted(set(v)),
                    "rounds": len(v),
                }
                for k, v in self.stability.items()
            ],
            "self_control": [
                {"shape": k[0], "dialect": k[1], **v.to_json()} for k, v in self.self_control.items()
            ],
            "shapes": [
                {
                    "shape": s.shape,
                    "dialect": s.dialect,
                    "status": s.status,
                    "verdict": s.verdict,
                    "regressed": s.regressed,
                    "baseline_p50_ms": entry_p50(s.base),
                    "result_p50_ms": entry_p50(s.result),
                    "baseline_access": entry_access(s.base),
                    "result_access": entry_access(s.result),
                    "findings": [asdict(f) for f in s.findings],
                }
                for s in self.shapes
            ],
        }


def entry_p50(entry: dict | None) -> float | None:
    return entry["remediated"].get("p50_ms") if entry else None


def entry_tree(entry: dict | None) -> PlanNode | None:
    plan = entry["remediated"].get("plan") if entry else None
    return PlanNode.from_dict(plan) if plan else None


def _is_access(n: PlanNode) -> bool:
    return n.kind in ACCESS_KINDS and bool(n.table or n.kind != "const")


def _describe(n: PlanNode) -> str:
    return f"{n.kind} on {n.table or n.alias or '?'}" + (f" using {n.index}" if n.index else "")


def entry_access(entry: dict | None) -> str:
    tree = entry_tree(entry)
    if tree is None:
        return "timeout" if entry and entry["remediated"].get("timeout") else "—"
    found = [_describe(n) for n in tree.walk() if _is_access(n)]
    return "; ".join(dict.fromkeys(found)) or "no table access"


def keyed_nodes(root: PlanNode) -> dict[tuple, tuple[PlanNode, bool]]:
    """Every node by its alignment key, with whether it sits under a ``limit``: accesses by
    (table, alias, n-th), operators by (kind, n-th)."""
    out: dict[tuple, tuple[PlanNode, bool]] = {}
    counts: dict[tuple, int] = {}

    def visit(n: PlanNode, limited: bool) -> None:
        base = ("access", n.table or n.alias or n.label, n.alias) if _is_access(n) else ("op", n.kind)
        k = counts.get(base, 0)
        counts[base] = k + 1
        out[(*base, k)] = (n, limited)
        for c in n.children:
            visit(c, limited or n.kind == "limit")

    visit(root, False)
    return out


def misestimate(n: PlanNode, limited: bool, t: Thresholds) -> float | None:
    """The factor by which ``n``'s rows were misestimated, if beyond the thresholds."""
    if n.est_rows is None or n.actual_rows is None or not n.loops:
        return None
    est, act = float(n.est_rows), float(n.actual_rows)
    if limited and est >= act:
        return None
    factor = max(est, act) / max(min(est, act), 1.0)
    if factor > t.rows_factor and max(est, act) >= t.rows_min:
        return factor
    return None


def _features(root: PlanNode, kind: str) -> list[PlanNode]:
    return [n for n in root.walk() if n.kind == kind and not n.in_subquery]


def compare_plans(base: PlanNode, new: PlanNode, t: Thresholds) -> list[Finding]:
    out: list[Finding] = []
    b_nodes, n_nodes = keyed_nodes(base), keyed_nodes(new)
    new_accesses = [n for n, _ in n_nodes.values() if _is_access(n)]
    for key, (b, _) in b_nodes.items():
        if key[0] != "access":
            continue
        match = n_nodes.get(key)
        same_table = [n for n in new_accesses if n.table == b.table]
        if b.index and not any(n.index == b.index for n in same_table):
            now = "; ".join(_describe(n) for n in same_table) or "the table is not read"
            out.append(Finding("index_lost", True, f"index lost: {b.index} on {b.table}; now {now}"))
        elif match and b.index and match[0].index and match[0].index != b.index:
            out.append(
                Finding(
                    "access_changed", True, f"access path changed: {_describe(b)} → {_describe(match[0])}"
                )
            )
        if match is None:
            if not same_table:
                out.append(
                    Finding("access_gone", False, f"no longer reads {b.table or b.alias}: was {_describe(b)}")
                )
            continue
        n = match[0]
        if n.kind != b.kind and n.kind in KIND_RANK and b.kind in KIND_RANK:
            worse = KIND_RANK[n.kind] > KIND_RANK[b.kind]
            text = f"scan kind changed on {b.table or b.alias}: {b.kind} → {n.kind}"
            rows = max(
                x for x in (b.est_rows, b.actual_rows, n.est_rows, n.actual_rows, 0.0) if x is not None
            )
            if worse and b.index and n.index == b.index and rows <= t.few_rows:
                out.append(
                    Finding(
                        "scan_kind",
                        False,
                        f"{text} (equivalent: the same index {b.index} on a "
                        f"table of {rows:,.0f} rows or fewer)",
                    )
                )
            else:
                out.append(Finding("scan_kind", worse, text, improvement=not worse))
    for key, (n, _) in n_nodes.items():
        if key[0] == "access" and key not in b_nodes:
            full = n.kind == "full_scan"
            out.append(Finding("new_access", full, f"new access: {_describe(n)}"))
    for kind in ("sort", "temp_table"):
        before, after = _features(base, kind), _features(new, kind)
        if len(after) > len(before):
            added = after[len(before) :] if before else after
            out.append(
                Finding(
                    f"{kind}_added",
                    True,
                    f"{kind.replace('_', ' ')} added: " + "; ".join(n.label for n in added),
                )
            )
        elif len(after) < len(before):
            out.append(
                Finding(
                    f"{kind}_removed",
                    False,
                    f"{kind.replace('_', ' ')} removed: " + "; ".join(n.label for n in before[len(after) :]),
                    improvement=True,
                )
            )
    for key, (n, limited) in n_nodes.items():
        factor = misestimate(n, limited, t)
        if factor is None:
            continue
        was = b_nodes.get(key)
        if was is not None and misestimate(was[0], was[1], t) is None:
            out.append(
                Finding(
                    "misestimate",
                    True,
                    f"rows misestimated {fmt_factor(factor)} on {n.label}: estimated "
                    f"{n.est_rows:,.0f}, actual {n.actual_rows:,.0f} (was {was[0].est_rows or 0:,.0f} / "
                    f"{was[0].actual_rows or 0:,.0f})",
                )
            )
    return out


def compare_entry(base: dict, new: dict, t: Thresholds) -> list[Finding]:
    out: list[Finding] = []
    b_rem, n_rem = base["remediated"], new["remediated"]
    if n_rem.get("timeout"):
        out.append(Finding("timeout", True, f"timed out: {n_rem['timeout']}"))
    b_tree, n_tree = entry_tree(base), entry_tree(new)
    if b_tree is not None and n_tree is not None:
        out += compare_plans(b_tree, n_tree, t)
    if base["ok"] and not new["ok"]:
        problems = (new.get("verdict") or {}).get("problems") or ["the catalog assertion fails"]
        out.append(Finding("assertion", True, "assertion fails: " + "; ".join(problems)))
    elif not base["ok"] and new["ok"]:
        out.append(Finding("assertion", False, "assertion holds again", improvement=True))
    b50, n50 = b_rem.get("p50_ms"), n_rem.get("p50_ms")
    if b50 is not None and n50 is not None and not n_rem.get("timeout"):
        finding = timing(b_rem.get("samples_ms") or [], n_rem.get("samples_ms") or [], b50, n50, t)
        if finding is not None:
            out.append(finding)
    return out


def timing(base: list[float], new: list[float], b50: float, n50: float, t: Thresholds) -> Finding | None:
    """The timing finding of one shape: a rank test with a minimum effect (see the module doc)."""
    limit = 1 + t.slower
    moved = abs(n50 - b50)
    change = f"p50 {fmt_ms(b50)} → {fmt_ms(n50)} ms"
    if moved <= t.noise_ms:
        return None
    iv = ratio_interval(base, new, t.alpha)
    if iv is None:
        return Finding(
            "slower",
            False,
            f"{change}: {len(base)} and {len(new)} samples are too few to decide (take more with --runs)",
            inconclusive=n50 > b50,
        )
    evidence = (
        f"{change}, typical ratio {iv.estimate:.2f}x [{iv.low:.2f}, {iv.high:.2f}] "
        f"({len(base)} vs {len(new)} samples, {iv.confidence:.1%} interval)"
    )
    if iv.low > limit:
        return Finding("slower", True, f"slower: {evidence} is past {limit:g}x")
    if iv.high < 1 / limit:
        return Finding("faster", False, f"faster: {evidence}", improvement=True)
    if iv.high > limit:
        return Finding(
            "slower",
            False,
            f"maybe slower: {evidence} straddles {limit:g}x; "
            f"{len(new)} samples are too few to decide: rerun with "
            f"--runs {max(3 * len(new), 21)}",
            inconclusive=True,
        )
    return None


def _notes(base: dict, new: dict) -> list[str]:
    notes = []
    bv = {s["dialect"]: s.get("version") for s in base.get("servers", [])}
    nv = {s["dialect"]: s.get("version") for s in new.get("servers", [])}
    for d in sorted(set(bv) & set(nv)):
        if bv[d] != nv[d]:
            notes.append(
                f"{DIALECT_LABEL[d]} server differs: baseline {bv[d]}, result {nv[d]} (plans and timings may "
                "differ for that reason alone)"
            )
    bd, nd = base.get("datasets") or {}, new.get("datasets") or {}
    for d in sorted(set(bd) & set(nd)):
        if (
            bd[d].get("fingerprints")
            and nd[d].get("fingerprints")
            and bd[d]["fingerprints"] != nd[d]["fingerprints"]
        ):
            changed = sorted(
                k
                for k in set(bd[d]["fingerprints"]) | set(nd[d]["fingerprints"])
                if bd[d]["fingerprints"].get(k) != nd[d]["fingerprints"].get(k)
            )
            notes.append(f"{DIALECT_LABEL[d]} data differs from the baseline's in: {', '.join(changed)}")
    for d in sorted(set(bd) & set(nd)):
        if (
            bd[d].get("setup_sha256")
            and nd[d].get("setup_sha256")
            and bd[d]["setup_sha256"] != nd[d]["setup_sha256"]
        ):
            notes.append(
                f"{DIALECT_LABEL[d]} setup SQL differs from the baseline's (the schema or data changed)"
            )
    bc, nc = base.get("config") or {}, new.get("config") or {}
    if bc.get("runs") and nc.get("runs") and bc["runs"] != nc["runs"]:
        notes.append(f"samples differ: baseline {bc['runs']} timed runs, result {nc['runs']}")
    return notes


PLAN_FINDINGS = ("index_lost", "access_changed", "scan_kind", "new_access", "sort_added", "temp_table_added")


def _signature(entry: dict | None) -> str | None:
    from dbbench.explain import plan_signature

    tree = entry_tree(entry)
    return plan_signature(tree) if tree is not None else None


def triage_unstable(sd: ShapeDiff, plans: list[str]) -> None:
    """A plan change that re-ANALYZE alone reproduces (both plans were seen while only the
    statistics were re-sampled) is equivalent, not a regression."""
    seen = set(plans)
    if len(seen) < 2 or _signature(sd.base) not in seen or _signature(sd.result) not in seen:
        return
    for f in sd.findings:
        if f.kind in PLAN_FINDINGS and f.regression:
            f.regression = False
            f.message += " (equivalent: re-ANALYZE alone reproduces this plan change)"


def apply_self_control(report: DiffReport, aa: DiffReport) -> None:
    """Beside each shape its A/A (the current run against a second run now): verdict, whether the
    two runs chose the same plan, and the A/A time ratio interval. The rule is per kind of
    evidence: when the A/A plans differ, the shape's plan findings against the baseline are at
    most inconclusive (the plan is not reproducible right now); when the A/A timing is not a pass,
    its timing finding is at most inconclusive. A lost index with a reproducible plan stays a
    failure even on a noisy machine: the plan does not depend on the timing noise."""
    t = report.thresholds
    for s in aa.shapes:
        if s.base is None or s.result is None:
            continue
        timings = [f for f in s.findings if f.kind in ("slower", "faster")]
        timing_verdict = combine(
            FAIL if f.regression else INCONCLUSIVE if f.inconclusive else PASS for f in timings
        )
        iv = ratio_interval(
            s.base["remediated"].get("samples_ms") or [],
            s.result["remediated"].get("samples_ms") or [],
            t.alpha,
        )
        report.self_control[(s.shape, s.dialect)] = SelfControl(
            s.verdict, _signature(s.base) == _signature(s.result), timing_verdict, iv
        )
    for s in report.shapes:
        aa_shape = report.self_control.get((s.shape, s.dialect))
        if aa_shape is None or not s.regressed:
            continue
        for f in s.findings:
            if not f.regression:
                continue
            if (f.kind in PLAN_FINDINGS and not aa_shape.plans_agree) or (
                f.kind == "slower" and aa_shape.timing != PASS
            ):
                f.regression, f.inconclusive = False, True
                f.message += f" (inconclusive: the A/A self-control of this shape is not a pass: {aa_shape.describe()})"


def compare(
    base: dict,
    new: dict,
    thresholds: Thresholds | None = None,
    *,
    baseline_name: str = "baseline",
    result_name: str = "result",
    stability: dict[tuple[str, str], list[str]] | None = None,
) -> DiffReport:
    """Compare two result documents (``dbbench.results.load`` / ``baseline.load`` / a live run)."""
    t = thresholds or Thresholds()
    bd, nd = base.get("datasets") or {}, new.get("datasets") or {}
    for d in sorted(set(bd) & set(nd)):
        b_name, n_name = bd[d].get("name"), nd[d].get("name")
        if b_name and n_name and b_name != n_name:
            raise DbbenchError(
                f"{baseline_name} and {result_name} cannot be compared: the baseline was measured on {b_name!r}, "
                f"the result on {n_name!r} ({DIALECT_LABEL.get(d, d)}); save a baseline of this catalog with "
                "`dbbench baseline save`"
            )
    b_by = {(r["shape"], r["dialect"]): r for r in base["results"]}
    n_by = {(r["shape"], r["dialect"]): r for r in new["results"]}
    ran = {r["dialect"] for r in new["results"]}
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
            sd.findings = compare_entry(b, n, t)
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
    notes = _notes(base, new)
    if not set(b_by) & set(n_by):
        notes.insert(0, "nothing in common: the result measured none of the baseline's shapes")
    return DiffReport(baseline_name, result_name, t, shapes, notes, dict(stability or {}), {}, base, new)
