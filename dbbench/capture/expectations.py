"""``dbbench catalog propose`` / ``accept``: the expectation of each annotated SQL block that has
none, proposed from its plan on the loaded data (:mod:`dbbench.measure.propose`), and written
into the file after the block's name line."""

from __future__ import annotations

import errno
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dbbench import dialects
from dbbench.access.targets import Target
from dbbench.catalog import files, sqlfiles
from dbbench.catalog.entries import CatalogError, inserts_values, open_catalog, resolve, sql_shape
from dbbench.catalog.params import to_pyformat
from dbbench.measure import explain, probes
from dbbench.measure.propose import Proposal, propose
from verdict.files import write_output, writes_through
from verdict.outputs import unwritable


@dataclass
class Proposed:
    block: sqlfiles.Block
    proposals: dict[str, Proposal] = field(default_factory=dict)

    def lines(self) -> sqlfiles.Block:
        """The block's expect / forbid lines as proposed (one for both dialects when they agree)."""
        out = sqlfiles.Block(self.block.name, self.block.path, self.block.line)
        expects: dict[str | None, Any] = {d: (p.table, p.index) for d, p in self.proposals.items() if p.table}
        forbids: dict[str | None, Any] = {d: list(p.forbid) for d, p in self.proposals.items() if p.table}
        agree = len(expects) == len(self.block.only) and len({repr(v) for v in expects.values()}) == 1
        out.expect = {None: next(iter(expects.values()))} if agree else expects
        agree = agree and len({repr(v) for v in forbids.values()}) == 1
        out.forbid = {None: next(iter(forbids.values()))} if agree and forbids else forbids
        return out


def _blocks(catalog: str | Path) -> tuple[Path, list[sqlfiles.Block]]:
    """The annotated .sql catalog's path and blocks; a catalog of another kind, or a malformed
    block, is a :class:`CatalogError`."""
    path = resolve(catalog)
    if not sqlfiles.is_sql_catalog(path):
        raise CatalogError(f"{path}: not a catalog of annotated .sql files (-- name: blocks)")
    blocks, problems = sqlfiles.read(path)
    if problems:
        raise CatalogError(problems)
    return path, blocks


def proposals(
    targets: list[Target],
    catalog: str | Path,
    namespace: str,
    *,
    isolate: bool = True,
    timeout_ms: int = 30_000,
) -> list[Proposed]:
    """Each block without an expectation (on some dialect), measured once in ``namespace``."""
    path, blocks = _blocks(catalog)
    explain.seeded_metas(targets, open_catalog(path), namespace)
    # a plain INSERT … VALUES has no access path: it needs no expectation
    todo = [
        Proposed(b)
        for b in blocks
        if any(b.expected(d) is None for d in b.only) and not inserts_values(b.sql)
    ]
    for target in targets:
        d = dialects.get(target.dialect)
        with explain._connections(target, namespace, isolate) as (_, conn):
            for p in todo:
                if target.dialect not in p.block.only or p.block.expected(target.dialect):
                    continue
                shape = sql_shape(p.block)
                params = probes.fill(conn, d, shape, p.block.sql, dict(p.block.params))
                _, tree, _ = d.run_explain(conn, to_pyformat(p.block.sql), params, timeout_ms)
                p.proposals[target.dialect] = propose(tree)
    return todo


def from_advice(catalog: str | Path, verified: dict[tuple[str, str], tuple[str, str]]) -> list[Proposed]:
    """Each block without an expectation (on some dialect) that ``dbbench advise`` verified an
    index for (``verified``: (shape, dialect) -> (table, index)): that index as its expectation,
    with no full scan of its table. Nothing is measured: the advice was."""
    _, blocks = _blocks(catalog)
    found = []
    for b in blocks:
        p = Proposed(b)
        for d in b.only:
            if b.expected(d) is None and (b.name, d) in verified:
                table, index = verified[(b.name, d)]
                p.proposals[d] = Proposal(
                    table, index, ("full_scan",), f"{table} using {index} (dbbench advise)"
                )
        if p.proposals:
            found.append(p)
    return found


def write(found: list[Proposed]) -> list[Proposed]:
    """Write every proposal that names an index into its file; the ones written.

    Every file's new text is made, and every file checked writable (:func:`writable`), before
    any is rewritten; each is then replaced atomically (:func:`verdict.files.write_output`). So a
    file that cannot be written is one error with nothing changed, and a write that fails (a full
    disk) leaves that file as it was."""
    written = [(p, lines) for p in found if (lines := p.lines()).expect]
    texts: dict[Path, str] = {}
    for p, lines in written:
        path = p.block.path
        if path not in texts:  # read once: blocks accepted before in the same file keep their lines
            texts[path] = files.read_text(path)
        texts[path] = sqlfiles.inserted(texts[path], p.block.name, lines)
    for path in texts:
        writable(path)
    for path, text in texts.items():
        write_output(path, text)
    return [p for p, _ in written]


def writable(path: Path) -> None:
    """Raise an :class:`OSError` naming ``path`` unless it can be replaced: the file itself can be
    opened for writing (an immutable or read-only file, a read-only file system refuse it) and a
    file can be created beside it (the atomic replacement's temporary file)."""
    reason = unwritable(path)
    if reason is None and not writes_through(path):
        reason = unwritable(path.parent / f".{path.name}.dbbench-accept-check")
    if reason is not None:
        raise OSError(errno.EACCES, f"cannot be written ({reason}); nothing was changed", str(path))
