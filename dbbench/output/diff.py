"""A :class:`dbbench.diff.DiffReport` rendered: terminal text, Markdown for a pull request or a
GitHub step summary, and JUnit XML (one test case per shape and dialect)."""

from __future__ import annotations

from dataclasses import dataclass, replace

from dbbench.defaults import DIALECT_LABEL
from dbbench.dialects import timing
from dbbench.document import locks, plandiff
from dbbench.document.diff import (
    DiffReport,
    NodeWork,
    ShapeDiff,
    Thresholds,
    entry_access,
    entry_p50,
    entry_tree,
    ratio,
)
from dbbench.document.model import Document, ShapeResult
from dbbench.output import Case, junit, md_table, table
from dbbench.units import fmt_factor, fmt_ms
from verdict import FAIL, INCONCLUSIVE, PASS


def _rows(report: DiffReport, markdown: bool) -> tuple[list[str], list[list[str]], str]:
    """The table of every shape and dialect; a *Rows locked* column after *Rows examined* when a
    document records a lock footprint (a catalog of reads renders as it always did)."""
    with_locks = _has_locks(report)
    rows = []
    for s in report.ranked():
        status = s.status.upper() if s.regressed else s.status
        if markdown and s.regressed:
            status = f"**{status}**"
        b50, n50 = entry_p50(s.base), entry_p50(s.result)
        rows.append(
            [
                s.shape,
                DIALECT_LABEL[s.dialect],
                entry_access(s.base),
                entry_access(s.result),
                _work_cell(report, s),
                *([_locks_cell(s)] if with_locks else []),
                "—" if b50 is None else f"{fmt_ms(b50)} ms{_mark(s.base)}",
                "—" if n50 is None else f"{fmt_ms(n50)} ms{_mark(s.result)}",
                status,
            ]
        )
    timing = "" if report.thresholds.gate_timing else " (advisory)"
    return (
        [
            "Shape",
            "Dialect",
            "Baseline access",
            "Result access",
            "Rows examined",
            *(["Rows locked"] if with_locks else []),
            f"Baseline p50{timing}",
            f"Result p50{timing}",
            "Verdict",
        ],
        rows,
        "llllr" + ("r" if with_locks else "") + "rrl",
    )


def _has_locks(report: DiffReport) -> bool:
    """Whether either document records a lock footprint (a write or a locking read)."""
    return any(
        e is not None and e.remediated.locks is not None for s in report.shapes for e in (s.base, s.result)
    )


def _locks_cell(s: ShapeDiff) -> str:
    """Rows locked, baseline → result (one number when equal); ``—`` for a read; the result's
    alone, said so, when the baseline records none."""
    before = None if s.base is None else s.base.remediated.locks
    after = None if s.result is None else s.result.remediated.locks
    if before is None and after is None:
        return "—"
    b = None if s.base is None else s.base.remediated.locked_rows
    n = None if s.result is None else s.result.remediated.locked_rows
    if before is None:
        return f"{n or 0:,}" + ("" if s.base is None else " (not recorded in the baseline)")
    if after is None or n is None:
        return f"{b or 0:,} → —"
    if b == n:
        return f"{n:,}"
    return f"{b or 0:,} → {n:,} ({fmt_factor(ratio(b or 0, n))})"


def _mark(entry: ShapeResult | None) -> str:
    """The mark of a p50 that is not the statement's time (:mod:`dbbench.dialects.timing`)."""
    if entry is None or not entry.remediated.samples_ms:
        return ""
    return timing.MARK[entry.remediated.time_kind]


def _legend(report: DiffReport) -> list[str]:
    """What the table's marked p50s are: one line per mark used."""
    kinds = [
        e.remediated.time_kind
        for s in report.shapes
        for e in (s.base, s.result)
        if e is not None and e.remediated.samples_ms and e.remediated.p50_ms is not None
    ]
    return timing.legend(kinds)


def _work_cell(report: DiffReport, s: ShapeDiff) -> str:
    """Rows examined, baseline → result (one number when equal); ``unknown`` when a document
    records no work."""
    w = s.work
    if w is None:
        known = report.base_doc.records_work and report.result_doc.records_work
        return "—" if known or s.base is None or s.result is None else "unknown"
    if w.before == w.after:
        return f"{w.after:,.0f}"
    return f"{w.before:,.0f} → {w.after:,.0f} ({fmt_factor(w.ratio)})"


def _work_sections(report: DiffReport, markdown: bool) -> list[str]:
    """Per plan node, the work of each shape whose work changed past the thresholds: rows examined,
    PostgreSQL's own shared buffers, and the q-error (estimate error) in both plans; the nodes whose
    rows examined or own buffers moved most first (ties in plan order)."""
    out: list[str] = []
    fmt = "markdown" if markdown else "simple"
    for s in report.ranked():
        if s.work is None or not any(f.kind == "work" for f in s.findings):
            continue
        rows = [
            [
                n.label,
                f"{n.before:,.0f}" if n.in_baseline else "—",
                f"{n.after:,.0f}" if n.in_result else "—",
                n.change,
                _pair(n.buffers_before, n.buffers_after, "{:,.0f}"),
                _pair(n.q_before, n.q_after, "{:.1f}"),
            ]
            for n in sorted(s.work.nodes, key=_moved)
        ]
        title = f"Work by plan node, moved most first: {s.shape} [{DIALECT_LABEL[s.dialect]}]"
        out += [
            "",
            f"#### {title}" if markdown else title,
            *([""] if markdown else []),
            table(
                ["Node", "Rows examined before", "after", "ratio", "Own buffers", "q-error"],
                rows,
                "lrrrrr",
                fmt,
            ),
        ]
    return out


def _moved(n: NodeWork) -> float:
    """Sort key of a node of the work table, moved most first: the larger factor of its rows
    examined and its own shared buffers, negated."""
    a, b = n.buffers_before, n.buffers_after
    by_pages = plandiff.factor(a, b) if a is not None and b is not None else 1.0
    return -max(plandiff.factor(n.before, n.after), by_pages)


def _locks_sections(report: DiffReport, markdown: bool) -> list[str]:
    """Per table, the rows and gaps locked and the indexes they were locked through, baseline →
    result, and the cascades of each, for every shape with a ``locks`` or ``cascade`` finding."""
    out: list[str] = []
    fmt = "markdown" if markdown else "simple"
    for s in report.ranked():
        if s.base is None or s.result is None or not any(f.kind in ("locks", "cascade") for f in s.findings):
            continue
        b, n = s.base.remediated.locks, s.result.remediated.locks
        was = {t["table"]: t for t in locks.tables(b)}
        now = {t["table"]: t for t in locks.tables(n)}
        rows = [
            [
                name,
                _count(was.get(name), "rows"),
                _count(now.get(name), "rows"),
                _count(was.get(name), "gaps"),
                _count(now.get(name), "gaps"),
                locks.through(was.get(name)),
                locks.through(now.get(name)),
            ]
            for name in dict.fromkeys([*now, *was])
        ]
        title = f"Locks: {s.shape} [{DIALECT_LABEL[s.dialect]}]: {locks.statement(s.result.remediated)}"
        out += [
            "",
            f"#### {title}" if markdown else title,
            *([""] if markdown else []),
            table(
                ["Table", "Rows locked before", "after", "Gaps before", "after", "Through before", "after"],
                rows,
                "lrrrrll",
                fmt,
            ),
        ]
        for when, footprint in (("before", b), ("after", n)):
            if locks.cascades(b) or locks.cascades(n):
                out += ["", f"Cascades {when}: {locks.cascades_words(footprint)}"]
    return out


def _count(t: dict | None, key: str) -> str:
    return "—" if t is None else f"{int(t.get(key) or 0):,}"


def _pair(before: float | None, after: float | None, form: str) -> str:
    if before is None and after is None:
        return "—"
    return " → ".join("—" if v is None else form.format(v) for v in (before, after))


def _headline(report: DiffReport) -> str:
    return f"{report.verdict}: {_counts(report)}"


def _counts(report: DiffReport) -> str:
    reg = report.regressions
    unsure = report.inconclusive
    unchanged = sum(1 for s in report.shapes if s.status == "unchanged")
    if unsure and not reg:
        which = "; ".join(f"{s.shape} ({DIALECT_LABEL[s.dialect]})" for s in unsure)
        return (
            f"{len(unsure)} inconclusive: {which}; no regressions; "
            f"{unchanged} of {len(report.shapes)} unchanged"
        )
    if reg:
        names: dict[str, list[str]] = {}
        for s in reg:
            names.setdefault(s.shape, []).append(DIALECT_LABEL[s.dialect])
        which = "; ".join(f"{k} ({', '.join(v)})" for k, v in names.items())
        return (
            f"{len(reg)} regression{'s' if len(reg) != 1 else ''}: {which}; "
            f"{unchanged} of {len(report.shapes)} unchanged"
        )
    return f"no regressions; {unchanged} of {len(report.shapes)} unchanged"


def _thresholds_line(t: Thresholds) -> str:
    if t.gate_timing:
        timing = (
            f"slower (--gate-timing): the {1 - t.alpha:.0%} interval of the sample ratio, widened by the "
            f"run-to-run spread of two runs now, wholly past {1 + t.slower:g}x and the p50 moved > {t.noise_ms:g} ms"
        )
    else:
        timing = (
            f"timing is advisory (reported when the p50 moved > {t.noise_ms:g} ms and its {1 - t.alpha:.0%} "
            f"interval reaches past {1 + t.slower:g}x; --gate-timing to decide on it)"
        )
    return (
        f"work: rows examined up > {t.work_factor:g}x and by >= {t.work_min:,.0f} rows at a plan node or in "
        f"total, or PostgreSQL's shared buffers up > {t.work_factor:g}x and by >= {t.buffers_min:,.0f} pages; "
        f"rows misestimated > {t.rows_factor:g}x (at least {t.rows_min:g} rows); {timing}; "
        f"scan-kind changes on the same index of tables of <= {t.few_rows:g} rows are equivalent"
    )


def _sources(report: DiffReport) -> str:
    def describe(name: str, doc: Document) -> str:
        servers = ", ".join(f"{DIALECT_LABEL.get(s.dialect, s.dialect)} {s.version}" for s in doc.servers)
        when = (doc.baseline or {}).get("saved_at") or doc.generated_at or "?"
        return f"`{name}` ({when}; {servers})"

    return f"baseline {describe(report.baseline, report.base_doc)} vs result {describe(report.result, report.result_doc)}"


ALIGNED_LINES = 40  # of a regressed shape's aligned plans shown (the rest counted)
ALIGNED_HEAD = "plan, baseline → result (= same, ~ changed, + new, - gone):"


def aligned(s: ShapeDiff, most: int = ALIGNED_LINES) -> list[str]:
    """The baseline's and the result's plans as one tree aligned node by node
    (:mod:`dbbench.document.plandiff`: ``=`` same, ``~`` changed, ``+`` new, ``-`` gone; unchanged
    subtrees folded), at most ``most`` lines; nothing when neither has a plan."""
    d = s.aligned
    if d is None:
        return []
    lines = plandiff.render(d)
    cut = len(lines) - most
    return [ALIGNED_HEAD, *lines[:most]] + ([f"… {cut} more plan lines"] if cut > 0 else [])


def text_parts(report: DiffReport) -> list[str | ShapeDiff]:
    """The terminal report as lines, a regressed shape standing for its aligned plans (drawn plain
    by :func:`to_text`; as a coloured tree by the command line, :mod:`dbbench.cli.styled`)."""
    out: list[str | ShapeDiff] = [
        f"dbbench diff: {_headline(report)}",
        _sources(report).replace("`", ""),
        f"thresholds: {_thresholds_line(report.thresholds)}",
        "",
    ]
    out.append(table(*_rows(report, False), "simple"))
    out += _legend(report)
    for title, pick in (
        ("Regressions", lambda s: s.regressed),
        ("Inconclusive", lambda s: s.verdict == INCONCLUSIVE),
        ("Other changes", lambda s: s.verdict == PASS and s.findings),
    ):
        chosen = [s for s in report.ranked() if pick(s)]
        if not chosen:
            continue
        out += ["", f"{title}:"]
        for s in chosen:
            out.append(f"  {s.shape} [{DIALECT_LABEL[s.dialect]}]")
            out += [f"    - {f.message}" for f in s.findings]
            if s.regressed and s.aligned is not None:
                out.append(s)
    out += _work_sections(report, markdown=False)
    out += _locks_sections(report, markdown=False)
    out += _extra_sections(report, markdown=False)
    if report.notes:
        out += ["", "Notes:"] + [f"  - {n}" for n in report.notes]
    return out


def to_text(report: DiffReport) -> str:
    """The diff for a terminal or a log, plain text (a regressed shape's aligned plans marked
    ``= ~ + -``)."""
    out: list[str] = []
    for part in text_parts(report):
        if isinstance(part, str):
            out.append(part)
        else:
            out += [f"    {line}" for line in aligned(part)]
    return "\n".join(out)


def _extra_sections(report: DiffReport, markdown: bool) -> list[str]:
    out: list[str] = []
    fmt = "markdown" if markdown else "simple"
    gap = [""] if markdown else []
    if report.stability:
        rows = [
            [
                k[0],
                DIALECT_LABEL[k[1]],
                "stable" if len(set(v)) == 1 else f"UNSTABLE ({len(set(v))} plans)",
                " | ".join(sorted(set(v))) if len(set(v)) > 1 else v[0],
            ]
            for k, v in report.stability.items()
        ]
        n = max(len(v) for v in report.stability.values())
        out += [
            "",
            f"{'#### ' if markdown else ''}Plan stability ({n} re-ANALYZE + re-plan rounds)",
            *gap,
            table(["Shape", "Dialect", "Plan", "Plans seen"], rows, "llll", fmt),
        ]
    if report.self_control:
        rows = [
            [
                k[0],
                DIALECT_LABEL[k[1]],
                v.verdict,
                "agree" if v.plans_agree else "DIFFER",
                "agrees" if v.work_agrees else "DIFFERS",
                v.timing,
                f"{v.ratio.estimate:.2f}x [{v.ratio.low:.2f}, {v.ratio.high:.2f}]"
                if v.ratio
                else "too few samples",
            ]
            for k, v in report.self_control.items()
        ]
        title = (
            f"{'#### ' if markdown else ''}Self-control (this run against a second run now: the noise floor)"
        )
        out += [
            "",
            title,
            *gap,
            table(
                [
                    "Shape",
                    "Dialect",
                    "A/A verdict",
                    "A/A plans",
                    "A/A work",
                    "A/A timing",
                    "A/A time ratio [95% interval]",
                ],
                rows,
                "lllllll",
                fmt,
            ),
        ]
    return out


GITHUB_COMMENT_LIMIT = 65_536  # characters of one pull-request comment GitHub accepts
SHORT_PLAN_LINES = 12  # of each aligned plan, when the whole ones do not fit


@dataclass(frozen=True)
class _Fit:
    """How much of the diff a Markdown comment holds: each regressed shape's two plans as the
    server printed them (``raw``), its aligned plan in at most ``plan_lines`` lines, ``details``
    of the regressed shapes with their plans (None: all), and the per-node work and locks tables
    (``tables``); ``cut`` says what was left out."""

    raw: bool = True
    plan_lines: int = ALIGNED_LINES
    details: int | None = None
    tables: bool = True
    cut: str = ""


# From the whole comment to the least: each step leaves out more (the headline, the table of every
# shape and every finding always stay).
_FITS = (
    _Fit(),
    _Fit(raw=False, cut="the plans as each server printed them (the aligned plans stay)"),
    _Fit(
        raw=False,
        plan_lines=SHORT_PLAN_LINES,
        cut=f"the plans as each server printed them; aligned plans past {SHORT_PLAN_LINES} lines",
    ),
    _Fit(
        raw=False,
        plan_lines=SHORT_PLAN_LINES,
        tables=False,
        cut=f"the plans as each server printed them; aligned plans past {SHORT_PLAN_LINES} lines; "
        "the per-node work and lock tables",
    ),
)


def to_markdown(report: DiffReport, plans: bool = True, limit: int = GITHUB_COMMENT_LIMIT) -> str:
    """Markdown for a pull-request comment or a GitHub step summary, at most ``limit`` characters
    (GitHub's comment limit): when the whole diff is longer, the plans as the servers printed
    them go first, then aligned plans past :data:`SHORT_PLAN_LINES` lines, then the per-node
    tables, then the plans of the smallest regressions (biggest differences first); the comment
    says what it left out. ``plans=False``: no plans at all."""
    fits = _FITS if plans else (_Fit(raw=False, details=0), _Fit(raw=False, details=0, tables=False))
    text = ""
    for fit in fits:
        text = _markdown(report, fit)
        if len(text) <= limit:
            return text
    fit = _FITS[-1]
    if not plans:
        return _hard_cut(text, limit)
    with_plans = [s for s in report.ranked() if s.regressed and s.aligned is not None]
    for keep in range(len(with_plans) - 1, -1, -1):
        cut = f"{fit.cut}; the plans of {len(with_plans) - keep} of {len(with_plans)} regressions (the smallest)"
        text = _markdown(report, replace(fit, details=keep, cut=cut))
        if len(text) <= limit:
            return text
    return _hard_cut(text, limit)


def _hard_cut(text: str, limit: int) -> str:
    """The first ``limit`` characters of ``text`` and a line that says so (a table of thousands of
    shapes: nothing else was left to leave out)."""
    tail = "\n\n_… cut at GitHub's comment limit; the whole diff: `--html FILE` or `--output FILE`._\n"
    return text[: limit - len(tail)] + tail


def _markdown(report: DiffReport, fit: _Fit) -> str:
    mark = {FAIL: "❌", INCONCLUSIVE: "⚠️", PASS: "✅"}[report.verdict]
    out = [
        f"### {mark} dbbench diff: {_headline(report)}",
        "",
        _sources(report) + ".  ",
        f"Thresholds: {_thresholds_line(report.thresholds)}.",
        "",
        md_table(*_rows(report, True)),
    ]
    for line in _legend(report):
        out += ["", line]
    ranked = report.ranked()
    reg = [s for s in ranked if s.regressed]
    if reg:
        out += ["", "#### Regressions", ""]
        for s in reg:
            out.append(f"- **{s.shape}** [{DIALECT_LABEL[s.dialect]}]")
            out += [f"  - {'❌ ' if f.regression else ''}{f.message}" for f in s.findings]
    unsure = [s for s in ranked if s.verdict == INCONCLUSIVE]
    if unsure:
        out += ["", "#### Inconclusive", ""]
        for s in unsure:
            out.append(
                f"- ⚠️ **{s.shape}** [{DIALECT_LABEL[s.dialect]}]: "
                + "; ".join(f.message for f in s.findings if f.inconclusive)
            )
    others = [s for s in ranked if s.verdict == PASS and s.findings]
    if others:
        out += ["", "#### Other changes", ""]
        for s in others:
            out.append(
                f"- {s.shape} [{DIALECT_LABEL[s.dialect]}]: " + "; ".join(f.message for f in s.findings)
            )
    if fit.tables:
        out += _work_sections(report, markdown=True)
        out += _locks_sections(report, markdown=True)
    out += _extra_sections(report, markdown=True)
    if report.notes:
        out += ["", "#### Notes", ""] + [f"- {n}" for n in report.notes]
    with_plans = [s for s in reg if s.aligned is not None]
    for s in with_plans if fit.details is None else with_plans[: fit.details]:
        out += ["", f"<details><summary>Plans: {s.shape} [{DIALECT_LABEL[s.dialect]}]</summary>", ""]
        out += ["```", *aligned(s, fit.plan_lines), "```"]
        if fit.raw:
            b, n = entry_tree(s.base), entry_tree(s.result)
            for title, tree in (("Baseline", b), ("Result", n)):
                out += ["", f"{title}:", "", "```", tree.render() if tree else "(none)", "```"]
        out += ["", "</details>"]
    if fit.cut:
        out += [
            "",
            f"_Cut to fit GitHub's comment limit ({GITHUB_COMMENT_LIMIT:,} characters): {fit.cut}. "
            "The whole diff: `dbbench diff … --html FILE` or `--output FILE`._",
        ]
    return "\n".join(out) + "\n"


def junit_xml(report: DiffReport, suite: str = "dbbench.diff") -> str:
    cases = []
    for s in report.shapes:
        case = Case(f"{suite}.{s.dialect}", s.shape)
        if s.regressed:
            n = entry_tree(s.result)
            case.failure = "; ".join(f.message for f in s.findings if f.regression)
            case.failure_type = "PlanRegression"
            case.detail = "\n".join([f.message for f in s.findings] + ([n.render()] if n else []))
        elif s.verdict == INCONCLUSIVE:
            case.skipped = "inconclusive: " + "; ".join(f.message for f in s.findings if f.inconclusive)
        elif s.findings:
            case.system_out = "\n".join(f.message for f in s.findings)
        cases.append(case)
    return junit(suite, cases)
