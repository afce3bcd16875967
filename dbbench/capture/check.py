"""Captured shapes held against the catalog they belong to, and the new ones written down.

A captured shape is the catalog's when its text is one of the catalog's shapes (any placeholder
style, any values), or when it was issued by the function a captured entry is named after (the
DAO's code changed: its new text is checked against the entry's expectation). Those are checked
as ``dbbench check`` checks a shape, every parameter included, on the captured SQL and values.
A shape the catalog does not have is measured once and appended to the output file, with the
expectation its plan proposes (:mod:`dbbench.measure.propose`) and where it was captured from.

A new shape whose plan uses no index (on a dialect it ran on) has nothing to expect there, and a
block without an expectation fails ``dbbench explain``: it is a ``scan``, which fails the capture
and is not written, unless scans are accepted (``--accept-scans``). An accepted scan is written
as a block limited (``only``) to the dialects where an index serves it, its description naming
the scan; a shape no index serves is not written at all (there is nothing to expect). Either way
the file passes ``explain`` as written.

The output is only ever a file capture wrote (its first line is :data:`HEADER`'s) or a new one,
never a catalog's setup SQL, entry file or a user's annotated file; it is read bounded and
replaced atomically (:func:`verdict.files.write_output`): a write that fails leaves it as it was.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dbbench import dialects
from dbbench.access.targets import Target
from dbbench.capture.statements import Seen
from dbbench.catalog import files, sqlfiles
from dbbench.catalog.entries import Shape, Variant, inserts_values, open_catalog, resolve, sql_shape
from dbbench.catalog.params import to_pyformat
from dbbench.catalog.sqltext import compared_columns, shape_key, table_aliases
from dbbench.defaults import DIALECT_LABEL, DIALECTS
from dbbench.dialects import common
from dbbench.dialects.plan import accesses
from dbbench.errors import DbbenchError
from dbbench.measure import explain, probes, writes
from dbbench.measure.propose import Proposal, propose
from verdict.files import write_output, writes_through

HEADER = (
    "-- Shapes captured by dbbench (dbbench capture, or the pytest plugin's --dbbench-capture):\n"
    "-- the expectations are proposed from the plans observed on the loaded data; review them.\n"
)
MARK = HEADER.split(" (", 1)[0]  # the first line's start: a file capture wrote


@dataclass
class Outcome:
    """What became of one captured shape: ``holds`` / ``fails`` (a catalog shape), ``new``
    (written with ``proposals``), ``skipped`` (it does not run in the namespace: ``lines`` says why),
    ``scan`` (new, and its plan uses no index on some dialect; ``accepted``: with --accept-scans)."""

    seen: Seen
    name: str
    status: str
    shape: Shape | None = None
    lines: list[str] = field(default_factory=list)
    proposals: dict[str, Proposal] = field(default_factory=dict)
    unstable: dict[str, str] = field(default_factory=dict)  # probe kind -> how it lost the proposal
    accepted: bool = False  # a scan accepted (--accept-scans)

    @property
    def scans(self) -> dict[str, Proposal]:
        """The dialects whose plan used no index, with what it did instead."""
        return {d: p for d, p in self.proposals.items() if p.table is None}

    @property
    def indexed(self) -> tuple[str, ...]:
        """The dialects whose plan used an index (the ones a block can expect it on)."""
        return tuple(d for d in DIALECTS if d in self.proposals and self.proposals[d].table)


@dataclass
class Report:
    outcomes: list[Outcome]
    written: Path | None = None

    @property
    def failed(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.status == "fails" or (o.status == "scan" and not o.accepted)]


def existing(out: Path | None, catalog: str | Path | None) -> str | None:
    """The text of the output file capture appends to (None: a new file, or a device written
    through), read bounded. Refused (:class:`DbbenchError`) when it is not capture's to write: a
    file of the catalog that is not an annotated SQL file (its setup SQL, an entry, ``setup/``,
    ``data/``), a name that is not ``.sql``, or an existing file capture did not write (a user's
    ``queries.sql``): capture appends to its own files only."""
    if out is None or writes_through(out):
        return None
    if out.is_dir():
        raise DbbenchError(f"--output {out}: is a directory; give a .sql file")
    if out.suffix != ".sql" or out.name in sqlfiles.SETUP_NAMES:
        raise DbbenchError(
            f"--output {out}: capture writes an annotated .sql file (not setup SQL nor another kind of "
            "file); give a new .sql file, or the catalog's captured.sql"
        )
    if catalog is not None:
        root = resolve(catalog)
        if root.is_dir():
            try:
                inside = out.resolve().relative_to(root.resolve())
            except (ValueError, OSError, RuntimeError):
                inside = None
            if inside is not None and len(inside.parts) > 1:
                raise DbbenchError(
                    f"--output {out}: is inside {inside.parts[0]}/ of catalog {root}, which the catalog "
                    "reads; write it directly in the catalog directory (captured.sql) or outside it"
                )
    if not out.exists():
        return None
    text = files.read_text(out)  # bounded as every catalog file is
    if text.strip() and not text.startswith(MARK):
        raise DbbenchError(
            f"--output {out}: not a file dbbench capture wrote (its first line is not {MARK!r}); "
            "capture appends only to its own files: give a new file, or the catalog's captured.sql"
        )
    return text


def _through_link(out: Path | None) -> Path | None:
    """The file a symbolic link given as the output leads to (checked and replaced as itself, the
    link kept): a link to the user's ``queries.sql`` is refused as that file is."""
    if out is None or not out.is_symlink():
        return out
    real = Path(os.path.realpath(out))
    return real if not real.exists() or real.is_file() else out


def _catalog_shapes(catalog: str | Path | None, out: Path | None, text: str | None) -> list[Shape]:
    shapes = open_catalog(catalog).shapes if catalog else []
    known = {(s.path, s.name) for s in shapes}
    if out is not None and text:
        problems: list[str] = []
        blocks = sqlfiles.parse(text, out, problems)
        if problems:
            raise DbbenchError("\n".join(problems))
        shapes += [sql_shape(b) for b in blocks if (b.path, b.name) not in known]
    return shapes


def _name(seen: Seen, taken: set[str]) -> str:
    """The function that issued it, else its table and the columns it is compared with."""
    if seen.function:
        base = seen.function.rsplit(".", 1)[-1].strip("<>") or "shape"
    else:
        tables = list(dict.fromkeys(table_aliases(seen.sql).values()))
        cols = list(dict.fromkeys(c for _, c, _ in compared_columns(seen.sql).values()))
        base = (tables[0] if tables else "shape") + ("_by_" + "_".join(cols[:3]) if cols else "")
    name, n = base, 2
    while name in taken:
        name, n = f"{base}_{n}", n + 1
    taken.add(name)
    return name


def _match(seen: Seen, by_key: dict[str, Shape], by_name: dict[str, Shape]) -> Shape | None:
    if seen.key in by_key:
        return by_key[seen.key]
    if seen.function:
        return by_name.get(seen.function.rsplit(".", 1)[-1])
    return None


def run(
    targets: list[Target],
    captured: list[Seen],
    *,
    catalog: str | Path | None,
    namespace: str,
    out: Path | None,
    isolate: bool = True,
    timeout_ms: int = 30_000,
    accept_scans: bool = False,
) -> Report:
    """Check every captured shape on ``targets`` (in ``namespace``, which must hold the loaded
    data), against ``catalog`` and the shapes already in ``out``; append the new ones to ``out``
    (a new shape whose plan uses no index only when ``accept_scans``)."""
    if catalog is not None:
        explain.seeded_metas(targets, open_catalog(catalog), namespace)
    else:
        for target in targets:
            explain.require_seeded(target, namespace)
    out = _through_link(out)
    text = existing(out, catalog)
    shapes = _catalog_shapes(catalog, out, text)
    by_key = {shape_key(v.sql): s for s in shapes for v in s.variants.values()}
    by_name = {s.name: s for s in shapes}
    taken = set(by_name)
    outcomes = []
    for seen in captured:
        match = _match(seen, by_key, by_name)
        name = match.name if match else _name(seen, taken)
        outcomes.append(Outcome(seen, name, "holds" if match else "new", match))
    options = explain.MeasureOptions(
        namespace=namespace, warmups=0, runs=1, natural=False, timeout_ms=timeout_ms
    )
    for target in targets:
        mine = [o for o in outcomes if target.dialect in o.seen.dialects]
        if not mine:
            continue
        with explain._connections(target, namespace, isolate) as (admin, conn):
            for o in mine:
                _one(target, admin, conn, o, options)
    for o in outcomes:
        if o.status == "new" and o.scans:
            o.status, o.accepted = "scan", accept_scans
    report = Report(outcomes)
    new = [o for o in outcomes if o.indexed and (o.status == "new" or (o.status == "scan" and o.accepted))]
    if out is not None and new:
        _write(out, text, new)
        report.written = out
    return report


def _one(target: Target, admin: Any, conn: Any, o: Outcome, options: explain.MeasureOptions) -> None:
    """Check (a catalog shape) or measure and propose (a new one) on one target: ``conn`` runs the
    statement, ``admin`` (dbbench's own connection) reads what it locked and fingerprints what a
    write may change."""
    d = dialects.get(target.dialect)
    label = f"[{target.label}]"
    try:
        if o.shape is not None:
            if target.dialect not in o.shape.variants:
                return
            shape = _checked(o)
            shape.params = probes.fill(conn, d, shape, shape.variants[target.dialect].sql, shape.params)
            result = explain.run_shape(target, conn, shape, options, admin=admin)
            if not result.ok and result.verdict is not None:
                if o.status != "fails" and common.locks_rows(o.seen.sql):
                    o.lines.insert(0, f"statement: {o.seen.sql}")  # the write that failed, as run
                o.status = "fails"
                o.lines.append(
                    f"{label} actual: {result.verdict.actual}; " + "; ".join(result.verdict.problems)
                )
            elif result.verdict is not None and common.locks_rows(o.seen.sql):
                o.lines.append(f"{label} {_held(result)}")
            return
        _new(target, d, admin, conn, o, options)
    except TimeoutError as exc:
        o.lines.append(f"{label} {exc}")
    except DbbenchError as exc:
        o.status, o.lines = ("fails" if o.shape is not None else "skipped"), [*o.lines, f"{label} {exc}"]
    except Exception as exc:
        if not d.is_driver_error(exc):
            raise
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        if o.shape is not None:
            o.status = "fails"
        elif o.status == "new" and not o.proposals:
            o.status = "skipped"
        o.lines.append(f"{label} does not run in the namespace: {first}")


def _new(target: Target, d: Any, admin: Any, conn: Any, o: Outcome, options: explain.MeasureOptions) -> None:
    """Measure a shape the catalog does not have and propose its expectation. A write (or a
    locking read) runs in a rolled-back transaction, as every sample does: what it locked is read
    before the rollback, and the tables it may change are fingerprinted before and after."""
    label = f"[{target.label}]"
    shape = Shape(o.name, Path("captured"), "", "", None, False, {}, [])
    sql, values, lists = o.seen.expanded()  # a folded IN-list with every value it had
    with writes.guard(admin, d, options.namespace, sql) as unchanged:
        params = probes.fill(conn, d, shape, sql, values)
        sample = d.run_sample(conn, to_pyformat(sql), params, options.timeout_ms, None, admin, True)
        tree, locked = sample.tree, sample.footprint
        if not accesses(tree) and any(v is not None for v in values.values()) and not inserts_values(sql):
            # The sample's values matched nothing when planned (MySQL reads a unique key's row at
            # plan time: no table access at all): measured, and written, with the data's values.
            drawn = probes.fill(conn, d, shape, sql, {})
            again = d.run_sample(conn, to_pyformat(sql), drawn, options.timeout_ms, None, admin, True)
            if accesses(again.tree):
                tree, locked, params = again.tree, again.footprint, drawn
                o.seen.take(drawn, lists, replace=True)
        proposal: Proposal
        if inserts_values(sql):
            proposal = o.proposals[target.dialect] = _inserting(admin, d, options.namespace, tree)
        else:
            proposal = o.proposals[target.dialect] = propose(tree)
        o.seen.take(params, lists)
    if common.locks_rows(sql):
        _settle(d, admin, options.namespace, unchanged)
        o.lines.append(f"{label} {_measured(writes.verb_of(tree, sql), proposal.line, locked, unchanged)}")
    if proposal.table and proposal.index:
        # after the settle: the probes plan on the tables as every later run will find them
        shape.probes = sqlfiles.PROBES
        v = Variant(sql, proposal.table, proposal.index, list(proposal.forbid))
        for problem in probes.run(conn, d, shape, v, params, options.timeout_ms, False):
            kind = "generic" if problem.startswith(d.GENERIC_PLAN) else "values"
            o.unstable.setdefault(kind, f"{label} {problem}")


class InsertProposal(Proposal):
    """What a plain ``INSERT … VALUES`` proposes: no access path, nothing to expect; its cost is
    the indexes each row writes, named (``table`` is the table it inserts into, ``index`` None)."""

    @property
    def line(self) -> str:
        return self.seen


def _inserting(admin: Any, d: Any, namespace: str, tree: Any) -> InsertProposal:
    """The proposal of an ``INSERT … VALUES`` (``tree``: its plan, the insert into one table): the
    table and the indexes every row it inserts writes."""
    table = tree.table or ""
    written = [i["index"] for i in explain.index_definitions(admin, d, namespace) if i["table"] == table]
    admin.rollback()
    many = "es" if len(written) != 1 else ""
    return InsertProposal(
        table,
        None,
        (),
        f"no access path (INSERT … VALUES): inserts into {table}, writing {len(written)} index{many}"
        + (f": {', '.join(written)}" if written else ""),
    )


def _settle(d: Any, admin: Any, namespace: str, unchanged: dict[str, Any]) -> None:
    """After rolled-back writes: the server's statistics as they were, the row versions the
    rollback left behind removed (as :func:`dbbench.measure.explain.run_shape` does)."""
    d.restore_statistics(admin, namespace)
    admin.commit()
    if unchanged.get("tables"):
        d.settle_writes(admin, namespace, unchanged["tables"])


def _held(result: explain.ShapeMeasurement) -> str:
    """A write (or locking read) of the catalog that holds, in one line: the statement, the index
    expected and the path taken, what it locked, and that the data is as it was."""
    m, v = result.remediated, result.verdict
    assert v is not None
    return _measured(
        writes.verb_of(m._tree, m.sql),
        f"expected {v.expected}; actual: {v.actual}",
        m.locks,
        result.unchanged,
    )


def _measured(verb: str, plan: str, locked: dict | None, unchanged: dict | None) -> str:
    """``UPDATE tickets: expected …; actual: …; locks 12 rows (tickets 12); rolled back: tickets
    unchanged``."""
    text = f"{verb}: {plan}"
    if locked:
        text += f"; locks {common.footprint_summary(locked)}"
    if unchanged and unchanged.get("tables"):
        tables = ", ".join(unchanged["tables"])
        text += (
            f"; rolled back: {tables} unchanged (fingerprints equal before and after)"
            if unchanged.get("equal")
            else f"; {writes.unchanged_problem(unchanged)}"
        )
    return text


def _checked(o: Outcome) -> Shape:
    """The catalog shape's expectations on the captured SQL and values, named where it came from:
    its index, its forbidden features and, for a write, the rows it may lock (``max_locked_rows``)."""
    assert o.shape is not None
    s = o.shape
    shape = Shape(s.name, s.path, s.description, s.cardinality, None, False, {}, [])
    shape.line, shape.probes = s.line or 0, s.probes
    shape.source = o.seen.where() or None
    shape.max_locked_rows = s.max_locked_rows
    sql, values, _ = o.seen.expanded()  # a folded IN-list with every value it had
    shape.variants = {
        d: Variant(sql, v.expect_table, v.expect_index, v.forbid, max_locked_rows=v.max_locked_rows)
        for d, v in s.variants.items()
    }
    shape.params = {k: v for k, v in values.items() if v is not None}
    return shape


def block(o: Outcome, out: Path) -> sqlfiles.Block:
    """The annotated SQL block a new shape is written as: on the dialects whose plan used an index
    (an accepted scan's other dialects are named in its description)."""
    seen_on = o.indexed
    b = sqlfiles.Block(o.name, out, 0, sql=o.seen.sql, only=seen_on, source=o.seen.where() or None)
    b.params = o.seen.written()
    expects: dict[str | None, Any] = {
        d: (p.table, p.index) for d, p in o.proposals.items() if p.table and p.index
    }
    b.expect = _shared(expects, seen_on)
    forbids: dict[str | None, Any] = {d: list(p.forbid) for d, p in o.proposals.items() if d in seen_on}
    b.forbid = _shared(forbids, seen_on)
    said = []
    if o.scans:  # said in the file: the scan was accepted on these dialects
        said.append(
            "Scan accepted on "
            + "; ".join(
                f"{DIALECT_LABEL[d]} (no index used when captured: {p.seen})" for d, p in o.scans.items()
            )
            + "."
        )
    inserts = any(isinstance(p, InsertProposal) for p in o.proposals.values())
    b.probes = () if inserts else tuple(p for p in sqlfiles.PROBES if p not in o.unstable)
    if o.unstable:  # said in the file: the probe is off because the plan changed under it
        said += [f"Probe {kind} off: {why}." for kind, why in sorted(o.unstable.items())]
    b.description = " ".join(said)
    return b


def _shared(per_dialect: dict[str | None, Any], seen_on: tuple[str, ...]) -> dict[str | None, Any]:
    """One value for every dialect (key None) when they all agree, else one per dialect."""
    if len(per_dialect) == len(seen_on) and len({repr(v) for v in per_dialect.values()}) == 1:
        return {None: next(iter(per_dialect.values()))}
    return {d: v for d, v in per_dialect.items()}


def _write(out: Path, text: str | None, new: list[Outcome]) -> None:
    """``text`` (the output file as read, or the header of a new one) with the new blocks appended,
    written at once, atomically (a failed write leaves the file as it was)."""
    text = text if text and text.strip() else HEADER
    blocks = "\n".join(sqlfiles.render(block(o, out)) for o in new)
    write_output(out, text.rstrip("\n") + "\n\n" + blocks)
