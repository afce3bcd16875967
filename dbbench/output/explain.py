"""An explain result document (``dbbench.explain/1``) rendered: terminal and Markdown tables,
failures with their plans, JUnit XML, the GitHub step summary and the published write-up's Markdown.

Every renderer reads the one result document (:func:`dbbench.document.build.explain_document` builds it
from a live run; ``dbbench report RESULT.json`` reads it from a file), never the measurement
objects, so a file renders exactly like the run that wrote it. They take the typed
:class:`dbbench.document.model.Document` (or the dict, validated into one).
"""

from __future__ import annotations

import hashlib
import shlex
from collections.abc import Callable, Iterator
from pathlib import Path

from dbbench import defaults
from dbbench.defaults import DIALECT_LABEL
from dbbench.dialects import timing
from dbbench.dialects.plan import PlanNode
from dbbench.document import locks
from dbbench.document.model import Document, RunConfig, ShapeResult, Spelling, Verdict, as_document
from dbbench.output import Case, junit, table
from dbbench.units import fmt_factor, fmt_ms

DIALECT_ORDER = ("mysql", "postgresql")  # the published write-up's column order
Doc = Document | dict  # what the renderers take: the typed document, or the dict (validated)
_NO_VERDICT = Verdict(expected="?", actual="?")


def dialects_of(doc: Doc) -> list[str]:
    doc = as_document(doc)
    return [d for d in DIALECT_ORDER if any(r.dialect == d for r in doc.results)]


def _pair(m: Spelling | None) -> str:
    if not m:
        return "—"
    if m.timeout:
        return "refused" if m.timeout.startswith("the server refused") else "timeout"
    return f"{fmt_ms(m.p50_ms)} / {fmt_ms(m.p95_ms)} ms{mark(m)}"


def mark(m: Spelling | None) -> str:
    """The mark of a time that is not the statement's (:data:`dbbench.dialects.timing.MARK`)."""
    return "" if m is None or not m.samples_ms else timing.MARK[m.time_kind]


def time_kinds(doc: Doc) -> list[str]:
    """The kinds of time the document's spellings hold (:mod:`dbbench.dialects.timing`)."""
    doc = as_document(doc)
    return list(dict.fromkeys(m.time_kind for r in doc.results for _, m in r.spellings() if m.samples_ms))


def time_legend(doc: Doc) -> list[str]:
    """One line per mark the tables use: what a marked time is (none when every time is the
    statement's)."""
    return timing.legend(time_kinds(doc))


def _with_legend(text: str, doc: Doc, fmt: str) -> str:
    lines = time_legend(doc)
    if not lines:
        return text
    return text + "\n\n" + ("\n\n" if fmt == "markdown" else "\n").join(lines)


def by_shape(doc: Doc) -> Iterator[tuple[str, dict[tuple[str, str], ShapeResult]]]:
    doc = as_document(doc)
    by = doc.by_key()
    for shape in dict.fromkeys(r.shape for r in doc.results):
        yield shape, by


# -- tables ------------------------------------------------------------------------------------
Rows = tuple[list[str], list[list[str]], str]  # headers, rows, column alignment


def _timing_rows(doc: Doc, last: str, describe: Callable[[list[str], list[ShapeResult | None]], str]) -> Rows:
    """Per shape: cardinality, p50 / p95 per dialect and, in a column headed ``last``,
    ``describe(dialects, results)`` (a dialect's result None where it has none)."""
    doc = as_document(doc)
    dialects = dialects_of(doc)
    rows = []
    for shape, by in by_shape(doc):
        rs = [by.get((shape, d)) for d in dialects]
        first = next(r for r in rs if r)
        pairs = [_pair(r.remediated) if r else "—" for r in rs]
        rows.append([shape, first.cardinality, *pairs, describe(dialects, rs)])
    headers = ["Query shape", "Cardinality", *[f"{DIALECT_LABEL[d]} p50 / p95" for d in dialects], last]
    return headers, rows, "ll" + "r" * len(dialects) + "l"


def _verdicts(dialects: list[str], rs: list[ShapeResult | None]) -> str:
    verdicts = []
    judged = [(d, r, r.verdict) for d, r in zip(dialects, rs) if r is not None and r.verdict is not None]
    same = {v.expected for _, _, v in judged}
    if len(judged) > 1 and all(r.ok for _, r, _ in judged) and len(same) == 1:
        verdicts.append(f"ok: {same.pop()}")  # every dialect, one path: say it once
    for d, r, v in judged if not verdicts else []:
        mark = "ok" if r.ok else "FAIL"
        verdicts.append(f"{DIALECT_LABEL[d]} {mark}: {v.expected if r.ok else v.actual}")
    return "; ".join(verdicts)


def shape_rows(doc: Doc) -> Rows:
    """Per shape: cardinality, p50 / p95 per dialect and each dialect's access-path verdict."""
    return _timing_rows(doc, "Access path", _verdicts)


def shape_table(doc: Doc, fmt: str = "simple") -> str:
    """:func:`shape_rows` as a table, what its marked times are and, when the document holds
    writes or locking reads, their lock footprint (:func:`lock_table`)."""
    return _with_locks(_with_legend(table(*shape_rows(doc), fmt), doc, fmt), doc, fmt)


def lock_rows(doc: Doc) -> Rows:
    """Per write or locking read and dialect: the statement (verb and table), the rows it changed,
    what it locked in a few words (rows per table, gaps) and the foreign-key cascades it caused
    (child table, key, the index the child was read through, PostgreSQL's trigger time)."""
    rows = [
        [
            r.shape,
            DIALECT_LABEL[r.dialect],
            locks.statement(r.remediated),
            locks.changed(r.remediated.locks),
            locks.summary(r.remediated.locks),
            locks.cascades_words(r.remediated.locks),
        ]
        for shape, by in by_shape(doc)
        for r in (by.get((shape, d)) for d in dialects_of(doc))
        if r is not None and r.remediated.locks is not None
    ]
    headers = ["Write or locking read", "Dialect", "Statement", "Rows changed", "Locked", "Cascades"]
    return headers, rows, "lllrll"


def has_locks(doc: Doc) -> bool:
    """Whether a spelling of the document holds a lock footprint (a write or a locking read)."""
    return any(r.remediated.locks is not None for r in as_document(doc).results)


def lock_table(doc: Doc, fmt: str = "simple") -> str:
    """:func:`lock_rows` as a table ("" when the document holds only reads)."""
    return table(*lock_rows(doc), fmt) if has_locks(doc) else ""


def _with_locks(text: str, doc: Doc, fmt: str) -> str:
    return text + "\n\n" + lock_table(doc, fmt) if has_locks(doc) else text


def _bounded_words(dialects: list[str], rs: list[ShapeResult | None]) -> str:
    first = next(r for r in rs if r)
    words = first.access_path or "; ".join(dict.fromkeys(r.verdict.expected for r in rs if r and r.verdict))
    bad = [
        f"{DIALECT_LABEL[d]}: {r.verdict.actual}"
        for d, r in zip(dialects, rs)
        if r and not r.ok and r.verdict
    ]
    if bad:
        words += " — FAIL " + "; ".join(bad)
    return words


def seed_rows(doc: Doc) -> Rows:
    """The published write-up's table: shape, cardinality, p50 / p95 per dialect, bounded access path
    (the catalog's ``access_path`` words, else the asserted index; a failing dialect says so)."""
    return _timing_rows(doc, "Bounded access path", _bounded_words)


def seed_table(doc: Doc, fmt: str = "markdown") -> str:
    """:func:`seed_rows` as a table, and what its marked times are."""
    return _with_legend(table(*seed_rows(doc), fmt), doc, fmt)


def remediation_rows_table(doc: Doc) -> tuple[list[str], list[list[str]], str]:
    """Natural against remediated p50 per shape and dialect; a time that is not the statement's
    is marked, and two unlike times (one resolved while planning, or an executor time beside a
    statement time) are not divided: the change says so."""
    doc = as_document(doc)
    by = doc.by_key()
    rows = []
    for item in doc.remediation_rows():
        r = by.get((item.shape, item.dialect))
        nat, rem = (r.natural, r.remediated) if r is not None else (None, None)
        before = "timeout" if item.natural_timeout else f"{fmt_ms(item.before_p50_ms)} ms{mark(nat)}"
        sp = item.speedup
        change = (
            "—" if sp is None else (f"{fmt_factor(sp)} faster" if sp >= 1 else f"{fmt_factor(1 / sp)} slower")
        )
        if _unlike(nat, rem):
            change = "not compared: unlike times"
        rows.append(
            [
                f"{DIALECT_LABEL[item.dialect]} {item.shape}: {item.change}",
                before,
                f"{fmt_ms(item.final_p50_ms)} ms{mark(rem)}",
                change,
            ]
        )
    return ["Remediated plan", "Before", "Final p50", "Change"], rows, "lrrr"


def _unlike(a: Spelling | None, b: Spelling | None) -> bool:
    """Whether two measured spellings' times are no base for a ratio: of two kinds, or resolved
    while planning (a few nanoseconds of the executor's, not the query's time)."""
    if a is None or b is None or not a.samples_ms or not b.samples_ms:
        return False
    return a.time_kind != b.time_kind or a.time_kind == timing.RESOLVED


def remediation_table(doc: Doc, fmt: str = "simple") -> str:
    """:func:`remediation_rows_table` as a table (the marks are explained under the shape table)."""
    return table(*remediation_rows_table(doc), fmt)


def has_remediation(doc: Doc) -> bool:
    return bool(as_document(doc).remediation_rows())


def plan_tree(m: Spelling | None) -> PlanNode | None:
    return m.plan if m else None


def failures(doc: Doc) -> list[str]:
    """Each failed shape: what it expected and got, its plan, and the ``dbbench advise`` command
    that builds and measures the indexes that would fix it."""
    lines = []
    typed = as_document(doc)
    for r in typed.results:
        if r.ok:
            continue
        v = r.verdict or _NO_VERDICT
        if v.problems and all(p.startswith("race with ") for p in v.problems):
            # the plan is as expected; the two-session check failed, which no index fixes
            lines.append(f"FAIL {r.shape} [{DIALECT_LABEL[r.dialect]}]: " + "; ".join(v.problems))
            continue
        planned = all(  # only what it locks or cascades into failed (or what it locked, said)
            "more than max_locked_rows" in p or "has no index on its foreign key" in p or " locked " in p
            for p in v.problems
        )
        head = (
            f"plan as expected ({v.expected}); "  # what failed is what it locks or cascades into
            if planned and v.problems and r.remediated.locks
            else f"expected {v.expected}; actual: {v.actual}; "
        )
        lines.append(f"FAIL {r.shape} [{DIALECT_LABEL[r.dialect]}]: " + head + "; ".join(v.problems))
        tree = plan_tree(r.remediated)
        if tree is not None:
            lines.append(tree.render(1))
        lines.append(f"  advice: {advise_command(typed, r.shape, r.dialect)}")
    return lines


def advise_command(doc: Document, shape: str, dialect: str) -> str:
    """The command that answers "which index fixes it": candidates built, measured and costed."""
    cfg = doc.config or RunConfig()
    words = ["dbbench", "advise", "--only", dialect, "--shape", shape]
    if cfg.catalog and cfg.catalog != defaults.CATALOG:
        words += ["--catalog", str(cfg.catalog)]
    if cfg.namespace and cfg.namespace != defaults.NAMESPACE:
        words += ["--namespace", cfg.namespace]
    return shlex.join(words)


# -- CI ----------------------------------------------------------------------------------------
def junit_xml(doc: Doc, suite: str = "dbbench") -> str:
    """JUnit XML: one test case per shape and dialect; a failed assertion is a <failure> with the plan."""
    cases = []
    for r in as_document(doc).results:
        rem = r.remediated
        seconds = sum(rem.samples_ms) / 1000 if rem.samples_ms else 0.0
        case = Case(f"{suite}.{r.dialect}", r.shape, f"{seconds:.6f}")
        v = r.verdict or Verdict(expected="?", actual="?", problems=("no verdict",))
        if not r.ok:
            body = [f"expected: {v.expected}", f"actual: {v.actual}", *_junit_locks(rem)]
            tree = plan_tree(rem)
            if tree is not None:
                body.append(tree.render())
            case.failure, case.failure_type, case.detail = (
                "; ".join(v.problems),
                "PlanAssertion",
                "\n".join(body),
            )
        else:
            kind = "" if rem.time_kind == timing.STATEMENT else f" ({timing.MEANING[rem.time_kind]})"
            case.system_out = f"{v.expected}; p50 {fmt_ms(rem.p50_ms)} ms, p95 {fmt_ms(rem.p95_ms)} ms{kind}"
            case.system_out += "".join(f"; {line}" for line in _junit_locks(rem))
        cases.append(case)
    return junit(suite, cases)


def _junit_locks(m: Spelling) -> list[str]:
    """A write's or locking read's footprint for a JUnit case: ``locks: UPDATE package_relation
    locked 100 rows (package_relation 100), 101 gaps`` and its cascades; nothing for a read."""
    if m.locks is None:
        return []
    out = [f"locks: {locks.statement(m)} locked {locks.summary(m.locks)}"]
    if locks.cascades(m.locks):
        out.append(f"cascades: {locks.cascades_words(m.locks)}")
    return out


def github_summary(doc: Doc, title: str) -> str:
    """Markdown for ``$GITHUB_STEP_SUMMARY``: verdict line, the shape table, failures with plans."""
    doc = as_document(doc)
    bad = [r for r in doc.results if not r.ok]
    head = f"### {title}: {len(doc.results) - len(bad)} of {len(doc.results)} checks hold" + (
        "" if not bad else f", **{len(bad)} failed**"
    )
    out = [head, "", shape_table(doc, "markdown")]
    if bad:
        out += ["", "```", *failures(doc), "```"]
    return "\n".join(out) + "\n"


# -- the report (the published write-up's Markdown) -----------------------------------------
def _sample_counts(doc: Document) -> tuple[int | None, int | None]:
    cfg = doc.config or RunConfig()
    runs = cfg.runs
    if runs is None:
        counts = {len(r.remediated.samples_ms) for r in doc.results if r.remediated.samples_ms}
        runs = counts.pop() if len(counts) == 1 else None
    return runs, cfg.warmups


def intro(doc: Doc) -> list[str]:
    doc = as_document(doc)
    servers = ", ".join(f"{DIALECT_LABEL.get(s.dialect, s.dialect)} {s.version}" for s in doc.servers)
    datasets = doc.datasets or {}
    names = sorted({str(d.name) for d in datasets.values() if d.name})
    cfg = doc.config or RunConfig()
    runs, warmups = _sample_counts(doc)
    lines = []
    where = f" in namespace `{cfg.namespace}`" if cfg.namespace else ""
    catalog = f"catalog `{cfg.catalog}`, " if cfg.catalog else ""
    lines.append(
        f"Servers: {servers or 'unknown'}; {catalog}dataset {', '.join(f'`{n}`' for n in names) or 'unknown'}"
        f"{where}; generated {'?' if doc.generated_at is None else doc.generated_at} by dbbench "
        f"{(doc.tool or {}).get('version', '?')}."
    )
    if runs:
        lines.append("")
        what = _time_words(time_kinds(doc))
        if warmups:
            lines.append(
                f"Each row below is {what} from {runs} consecutive warmed `EXPLAIN ANALYZE` "
                f"runs after {warmups} untimed warm-ups. The p50 and p95 use nearest-rank selection over "
                f"those {runs} samples."
            )
        else:
            lines.append(
                f"Each row below is {what} from {runs} `EXPLAIN ANALYZE` "
                f"run{'s' if runs != 1 else ''} without warm-up (nearest-rank p50 and p95)."
            )
    return lines


def _time_words(kinds: list[str]) -> str:
    """What the document's times are, in the intro's words."""
    statement = (
        "the time the server spent on the statement (PostgreSQL planning + execution; MySQL the "
        "statement's own time from performance_schema)"
    )
    if kinds and all(k == timing.STATEMENT for k in kinds):
        return statement
    if timing.STATEMENT not in kinds:
        return "database executor time"
    return f"{statement}, where the server reported it (a marked time is not: see under the table)"


def markdown(doc: Doc, source: Path | None = None) -> str:
    """The published write-up's database section, reproduced from a result: the shape table, the
    remediation table (when the run measured natural spellings), failures, and the file's SHA-256."""
    doc = as_document(doc)
    out = intro(doc) + ["", seed_table(doc, "markdown")]
    if has_locks(doc):
        out += ["", lock_table(doc, "markdown")]
    if has_remediation(doc):
        out += ["", remediation_table(doc, "markdown")]
    if any(not r.ok for r in doc.results):
        out += ["", "Failed assertions:", "", "```", *failures(doc), "```"]
    if source is not None:
        digest = hashlib.sha256(Path(source).read_bytes()).hexdigest()
        out += [
            "",
            f"All individual samples and plans are in `{Path(source).name}`. Its SHA-256 is `{digest}`.",
        ]
    return "\n".join(out) + "\n"
