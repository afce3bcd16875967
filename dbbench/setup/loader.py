"""A user catalog's own schema and data: its setup SQL, run into a namespace dbbench owns.

``dbbench seed --catalog DIR`` (and ``dbbench check --catalog DIR``) run ``DIR/setup.<dialect>.sql``
(or ``DIR/setup.sql``) instead of a dataset definition, under the same ownership rules as
``dbbench seed``:

* a namespace that exists without the ``dbbench_meta`` marker is refused before anything is touched;
* the namespace is dropped and re-created, and every statement runs inside it (``search_path`` /
  ``USE``), so unqualified names land there;
* before anything runs, every statement is checked: switching namespace (``USE``, ``search_path``),
  creating/dropping schemas or databases, transaction control, privileges, extensions (but one
  the PostgreSQL server already has, which is skipped: :mod:`dbbench.setup.extensions`), server-wide
  settings, the ``dbbench_meta`` marker, and any name of another schema or database (also in
  views and routine bodies: :mod:`dbbench.setup.references`) are refused, naming the file, the
  statement and its line;
* on PostgreSQL the whole setup is one transaction, and before it commits dbbench verifies that no
  relation outside the namespace was created, altered, dropped or written to by it (otherwise it
  rolls back);
* afterwards every table is analyzed, counted and fingerprinted (the same content fingerprint as
  ``dbbench seed``), and the namespace is marked complete with the setup file's SHA-256.
"""

from __future__ import annotations

import contextlib
import re
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from dbbench import defaults, dialects
from dbbench.access import isolation
from dbbench.access.targets import Target
from dbbench.catalog.entries import Catalog, open_catalog
from dbbench.errors import DbbenchError, server_message
from dbbench.setup.dumps import Facts
from dbbench.setup.extensions import Extensions, read_installed, unread
from dbbench.setup.fingerprint import fingerprint
from dbbench.setup.guard import (  # noqa: F401 (check_statement, statements_for: re-exported)
    check_file,
    check_statement,
    checked_statements,
    statements_for,
)
from dbbench.setup.readahead import read_ahead
from dbbench.setup.split import SetupError, Statement, split_sql  # noqa: F401 (split_sql: re-exported)


@dataclass
class SetupResult:
    dialect: str
    server_version: str
    namespace: str
    file: str
    sha256: str
    statements: int
    seconds: dict[str, float] = field(default_factory=dict)
    rows: dict[str, int] = field(default_factory=dict)
    fingerprints: dict[str, str] = field(default_factory=dict)
    isolation: str = "none"  # the role the setup SQL ran as, or "none" (dbbench's own user)
    # the dump adapter's skips and rewrites (dbbench.setup.dumps): why -> statements
    skipped: dict[str, int] = field(default_factory=dict)

    @property
    def total_seconds(self) -> float:
        return sum(self.seconds.values())


# -- running -----------------------------------------------------------------------------------
# a table the setup SQL creates (not a temporary one); its own name, whatever schema it names
# (the guard refused every statement naming another than the namespace)
_NAME = r"(?:`[^`]*(?:``[^`]*)*`|\"[^\"]*(?:\"\"[^\"]*)*\"|[\w$]+)"
_CREATE_TABLE = re.compile(
    rf"^\s*CREATE\s+TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?(?:{_NAME}\s*\.\s*)?(?P<name>{_NAME})", re.I
)


def _tables(conn, dialect: str, ns: str) -> list[str]:
    sql = (
        "SELECT table_name FROM information_schema.tables WHERE table_schema = %s "
        "AND table_type = 'BASE TABLE' AND table_name <> 'dbbench_meta' ORDER BY table_name"
    )
    with conn.cursor() as cur:
        cur.execute(sql, (ns,))
        return [r[0] for r in cur.fetchall()]


_BYTES = {"bytea", "binary", "varbinary", "blob", "tinyblob", "mediumblob", "longblob"}
_DATETIME = {"timestamp without time zone", "timestamp with time zone", "timestamp", "datetime"}


def _kinds(rows) -> tuple[list[str], list[str]]:
    names, kinds = [], []
    for name, data_type, column_type in rows:
        dt = str(data_type).lower()
        ct = str(column_type).lower()
        if dt in _BYTES:
            kind = "bytes"
        elif dt in _DATETIME:
            kind = "datetime"
        elif dt == "boolean" or ct.startswith("tinyint(1)"):
            kind = "bool"
        else:
            kind = "text"
        names.append(name)
        kinds.append(kind)
    return names, kinds


def _describe(conn, dialect: str, ns: str, table: str):
    sql = (
        f"SELECT column_name, data_type, {dialects.get(dialect).COLUMN_TYPE} FROM information_schema.columns "
        "WHERE table_schema = %s AND table_name = %s ORDER BY ordinal_position"
    )
    with conn.cursor() as cur:
        cur.execute(sql, (ns, table))
        return cur.fetchall()


def table_fingerprint(conn, dialect: str, ns: str, table: str) -> str:
    """The content digest of table ``table`` of namespace ``ns`` (its columns as the server
    describes them), :func:`dbbench.setup.fingerprint.fingerprint`."""
    d = dialects.get(dialect)
    names, kinds = _kinds(_describe(conn, dialect, ns, table))
    return fingerprint(conn, dialect, d.quote(table), [d.quote(c) for c in names], kinds)


Progress = Callable[[str, str, int, int], object]
"""``progress(dialect, step, advance, total)``: ``advance`` more bytes of the dialect's ``total``
were read in ``step`` (``checking``, then ``loading``)."""


@dataclass
class Prepared:
    """What the check pass found in one dialect's setup files (read once, kept nowhere)."""

    files: list[Path]
    statements: int
    skipped: Counter[str]
    seconds: float
    facts: list[Facts]  # per file: what its dump adapter learned, for the pass that runs it
    # PostgreSQL: the server's extensions, and those the setup SQL asked for (its search_path)
    extensions: Extensions | None = None


def prepare(
    catalog: Catalog,
    dialect: str,
    namespace: str,
    *,
    text_checks: bool = True,
    isolate: bool = True,
    scale: int | None = None,
    progress: Progress | None = None,
    extensions: Extensions | None = None,
) -> tuple[Prepared, list[str]]:
    """The check pass over a dialect's setup files (:func:`~dbbench.setup.guard.check_file`):
    their statement count and skips, and every problem of every file. ``isolate=False`` (the SQL
    will run as dbbench's own user): any reference outside the namespace is refused too.
    ``extensions``: the PostgreSQL server's (:func:`dbbench.setup.extensions.read_installed`); None: no
    server read (``dbbench validate``), what the SQL does to extensions is left to the seed."""
    if dialect == "postgresql" and extensions is None:
        extensions = unread()
    files = catalog.setup[dialect]
    on_bytes = _on_bytes(progress, dialect, "checking", files)
    skipped: Counter[str] = Counter()
    start = time.perf_counter()
    checks = [
        check_file(
            file,
            dialect,
            namespace,
            text_checks=text_checks,
            any_reference=not isolate,
            binds=_binds(scale),
            skipped=skipped,
            on_bytes=on_bytes,
            extensions=extensions,
        )
        for file in files
    ]
    count = sum(c.statements for c in checks)
    prepared = Prepared(
        files, count, skipped, time.perf_counter() - start, [c.facts for c in checks], extensions
    )
    return prepared, [p for c in checks for p in c.problems]


def server_extensions(target: Target) -> Extensions | None:
    """The extensions a PostgreSQL target has installed (None on MySQL), read as dbbench's own
    user (:func:`dbbench.setup.extensions.read_installed`)."""
    if target.dialect != "postgresql":
        return None
    with target.all_or_nothing() as conn:
        return read_installed(conn)


def _binds(scale: int | None) -> dict[str, str]:
    return {"scale": str(int(DEFAULT_SCALE if scale is None else scale))}


def _on_bytes(
    progress: Progress | None, dialect: str, step: str, files: list[Path]
) -> Callable[[int], object] | None:
    if progress is None:
        return None
    total = sum(f.stat().st_size for f in files)
    return lambda n: progress(dialect, step, n, total)


class Cancel:
    """Ctrl-C of a setup run in worker threads (a signal reaches the main thread only): once
    :meth:`set`, every worker stops before its next statement and before it marks its namespace
    complete, and the statement each is running is cancelled on its server, so that the run stops
    within moments, not when a long statement ends."""

    def __init__(self) -> None:
        self.event = threading.Event()
        self._lock = threading.Lock()
        self._running: dict[int, tuple[Target, object]] = {}

    def is_set(self) -> bool:
        return self.event.is_set()

    def check(self) -> None:
        """Raise KeyboardInterrupt (in a worker: the main thread's Ctrl-C) once set."""
        if self.event.is_set():
            raise KeyboardInterrupt

    @contextlib.contextmanager
    def watch(self, target: Target, conn) -> Iterator[None]:
        """While inside, a :meth:`set` cancels the statement ``conn`` runs (``target``: dbbench's
        own login, which may cancel it on MySQL, whoever ``conn`` is logged in as)."""
        with self._lock:
            self._running[id(conn)] = (target, conn)
        try:
            self.check()
            yield
        finally:
            with self._lock:
                self._running.pop(id(conn), None)
        self.check()

    def set(self) -> None:
        self.event.set()
        with self._lock:
            running = list(self._running.values())
        for target, conn in running:
            with contextlib.suppress(Exception):  # best effort: the check before each statement stops it too
                _cancel_statement(target, conn)


def _cancel_statement(target: Target, conn) -> None:
    """Cancel the statement running on ``conn`` (PostgreSQL: the protocol's cancel request; MySQL:
    ``KILL QUERY`` of its connection id, from a connection of its own)."""
    if target.dialect == "postgresql":
        conn.cancel()
        return
    with target.all_or_nothing() as admin, admin.cursor() as cur:
        cur.execute(f"KILL QUERY {int(conn.thread_id())}")


# MySQL session settings that change where quoted text ends: the text checks read quotes and
# backslashes as MySQL's defaults have them, so after one of these the server would read other
# statements than the ones checked (``"db"."t"`` a name, ``'a\\'`` closed early, a multibyte
# character swallowing a backslash).
_QUOTING_SETTING = re.compile(r"sql_mode|\bnames\b|character|charset", re.I)
_UNREADABLE_MODES = frozenset({"ANSI_QUOTES", "NO_BACKSLASH_ESCAPES"})
_UNREADABLE_CHARSETS = frozenset({"big5", "cp932", "gbk", "gb18030", "sjis"})


def _refuse_unreadable_quoting(conn, where: str) -> None:
    """Raise :class:`SetupError` when the MySQL session quotes otherwise than the text checks
    read (``where``: after which statement, or before any)."""
    with conn.cursor() as cur:
        cur.execute("SELECT @@SESSION.sql_mode, @@SESSION.character_set_client")
        mode, charset = cur.fetchone()
    modes = sorted(set(str(mode).upper().split(",")) & _UNREADABLE_MODES)
    if not modes and str(charset).lower() not in _UNREADABLE_CHARSETS:
        return
    what = f"sql_mode {'+'.join(modes)}" if modes else f"character_set_client {charset}"
    raise SetupError(
        f"{where} the session has {what}, under which MySQL reads quotes and backslashes otherwise "
        "than the text checks did: the statements after it would not be the ones checked (nothing "
        "more was run; set no such mode in setup SQL)"
    )


def _run_files(
    conn,
    dialect: str,
    namespace: str,
    prepared: Prepared,
    *,
    text_checks: bool,
    isolate: bool,
    scale: int,
    progress: Progress | None,
    cancel: Cancel | None = None,
) -> None:
    """Run the setup files' statements on ``conn`` (its namespace already in use), as they are read
    again (each checked again: :func:`~dbbench.setup.guard.checked_statements`; split ahead while
    the server runs the one before: :func:`~dbbench.setup.readahead.read_ahead`): in one transaction
    the caller commits, or committing each where the dialect says so (MySQL: its DDL commits anyway)."""
    d = dialects.get(dialect)
    on_bytes = _on_bytes(progress, dialect, "loading", prepared.files)
    quoting = dialect == "mysql" and text_checks
    if quoting:
        _refuse_unreadable_quoting(conn, "before the setup SQL runs,")
    if prepared.extensions is not None and len(prepared.extensions.search_path(namespace)) > 1:
        # the schemas of the installed extensions the setup SQL asked for follow the namespace:
        # their unqualified functions, operators and types resolve (what the role may use there)
        path = ", ".join(d.quote(s) for s in prepared.extensions.search_path(namespace))
        with conn.cursor() as cur:
            cur.execute(f"SET search_path TO {path}")
    for file, facts in zip(prepared.files, prepared.facts, strict=True):
        stmts = checked_statements(
            file,
            dialect,
            namespace,
            facts,
            text_checks=text_checks,
            any_reference=not isolate,
            binds=_binds(scale),
            on_bytes=on_bytes,
            extensions=prepared.extensions,
        )
        for k, s in enumerate(read_ahead(stmts), start=1):
            if cancel is not None:
                cancel.check()
            try:
                d.run_setup_statement(conn, s.text, None if s.data is None else s.data.chunks())
            except Exception as exc:
                if not d.is_driver_error(exc):
                    raise
                if cancel is not None:
                    cancel.check()  # the statement was cancelled for a Ctrl-C
                raise SetupError(
                    f"{file}: statement {k} ({_where(s, exc)}): the server reported: {server_message(exc, 300)}"
                ) from None
            if d.FREEZE_EACH_CREATED_TABLE and (made := _CREATE_TABLE.match(s.code)):
                d.freeze_statistics(conn, [f"{d.quote(namespace)}.{made.group('name')}"])
            if d.COMMIT_EACH_SETUP_STATEMENT:
                conn.commit()
            if quoting and _QUOTING_SETTING.search(s.code):
                _refuse_unreadable_quoting(conn, f"{file}: after statement {k} (line {s.line})")


def _where(s: Statement, exc: BaseException) -> str:
    """The line a failed statement is at; for a COPY's rows, the row the server names (its
    diagnostic context ``COPY t, line N``) as a line of the file."""
    context = str(getattr(getattr(exc, "diag", None), "context", None) or "")
    m = re.match(r"COPY [^,]*, line (\d+)", context)
    if s.data is None or m is None:
        return f"line {s.line}"
    return f"line {s.data.line + int(m.group(1)) - 1}, row {m.group(1)} of the COPY of line {s.line}"


def _finish(
    target: Target, conn, namespace: str, file: str, result: SetupResult, cancel: Cancel | None = None
) -> None:
    """Analyze, count and fingerprint the namespace's tables, mark it complete and commit (not
    after a Ctrl-C: ``cancel``)."""
    d = dialects.get(target.dialect)
    clock = time.perf_counter
    tables = _tables(conn, target.dialect, namespace)
    if not tables:
        raise SetupError(f"{file}: created no tables in the namespace")
    start = clock()
    d.use(conn, namespace)
    d.analyze(conn, [d.quote(t) for t in tables])
    result.seconds["analyze"] = clock() - start
    start = clock()
    result.fingerprints = {t: table_fingerprint(conn, target.dialect, namespace, t) for t in tables}
    result.rows = {t: int(fp.split(":")[0]) for t, fp in result.fingerprints.items()}
    result.seconds["fingerprint"] = clock() - start
    if cancel is not None:
        cancel.check()
    d.write_meta(
        conn,
        namespace,
        {
            "state": "complete",
            "finished_at": datetime.now().isoformat(),
            **{f"fingerprint.{k}": v for k, v in result.fingerprints.items()},
        },
    )
    d.commit(conn)


DEFAULT_SCALE = 10_000  # what ``:scale`` in a catalog's setup SQL is, unless dbbench grow says


def setup_target(
    target: Target,
    catalog: Catalog,
    namespace: str,
    *,
    isolate: bool = True,
    text_checks: bool = True,
    scale: int = DEFAULT_SCALE,
    prepared: Prepared | None = None,
    progress: Progress | None = None,
    cancel: Cancel | None = None,
) -> SetupResult:
    """Rebuild ``namespace`` from the catalog's setup SQL on one target.

    ``isolate`` (the default): the statements run logged in as the namespace's own role
    (:mod:`dbbench.access.isolation`), so the server refuses anything outside the namespace; the namespace
    is re-created and marked ``loading`` first, so a setup that fails leaves it incomplete (never
    half-trusted). ``isolate=False``: they run as dbbench's own user, behind the text checks only;
    on PostgreSQL the whole rebuild is then one transaction, verified before it commits.
    ``text_checks=False`` skips the early text checks (tests use it to show the server refuses).
    ``scale`` replaces ``:scale`` in the setup SQL's code (not in its literals: :func:`split_sql`).
    ``prepared``: the check pass (:func:`prepare`), when the caller ran it; the files are read
    again to run them, a statement at a time (never held whole). ``cancel``: set on Ctrl-C
    (:class:`Cancel`): the setup stops and the namespace is not marked complete."""

    if target.dialect not in catalog.setup:
        raise SetupError(
            f"{catalog.path}: no setup SQL for {target.label} (setup.{target.dialect}.sql, setup.sql "
            f"or setup/); use --only to skip that dialect"
        )
    if prepared is None:
        prepared, problems = prepare(
            catalog,
            target.dialect,
            namespace,
            text_checks=text_checks,
            isolate=isolate,
            scale=scale,
            progress=progress,
            extensions=server_extensions(target),
        )
        if problems:
            raise SetupError.of(problems)
    files = prepared.files
    label = str(files[0] if len(files) == 1 else files[0].parent)
    result = SetupResult(
        target.dialect,
        target.version_text,
        namespace,
        label,
        catalog.setup_digest(target.dialect),
        prepared.statements,
        seconds={"check": prepared.seconds},
        isolation=isolation.role_name(namespace) if isolate else "none",
        skipped=dict(prepared.skipped),
    )
    meta = {
        "dataset": catalog.dataset_name,
        "catalog": str(catalog.path),
        "setup_file": catalog.setup_label(target.dialect),
        "setup_sha256": result.sha256,
        "started_at": datetime.now().isoformat(),
        "isolation": result.isolation,
        "scale": str(int(scale)),
    }

    cancel = cancel or Cancel()

    def run(conn) -> None:
        with cancel.watch(target, conn):
            _run_files(
                conn,
                target.dialect,
                namespace,
                prepared,
                text_checks=text_checks,
                isolate=isolate,
                scale=scale,
                progress=progress,
                cancel=cancel,
            )

    rebuild = _rebuild_isolated if isolate else _rebuild_verified
    rebuild(target, namespace, label, run, meta, result, cancel)
    return result


def _rebuild_verified(
    target: Target,
    namespace: str,
    label: str,
    run: Callable[[object], None],
    meta: dict[str, str],
    result: SetupResult,
    cancel: Cancel,
) -> None:
    """As dbbench's own user, in one transaction, committed only if no relation outside the
    namespace was created, altered, dropped or written to (PostgreSQL; MySQL has nothing to compare)."""

    d = dialects.get(target.dialect)
    clock = time.perf_counter
    with target.all_or_nothing() as conn:
        isolation.refuse_foreign(target, conn, namespace)
        before = d.outside_relations(conn, namespace)
        start = clock()
        d.begin_reload(conn, namespace, meta)
        d.use(conn, namespace)
        result.seconds["namespace"] = clock() - start
        start = clock()
        run(conn)
        result.seconds["setup SQL"] = clock() - start
        outside = d.outside_changes(conn, namespace, before)
        if outside:
            raise SetupError(
                f"{label}: created, altered, dropped or wrote to relations outside "
                f"{namespace!r}: {', '.join(outside[:5])}; rolled back, nothing was changed"
            )
        _finish(target, conn, namespace, label, result, cancel)


def _rebuild_isolated(
    target: Target,
    namespace: str,
    label: str,
    run: Callable[[object], None],
    meta: dict[str, str],
    result: SetupResult,
    cancel: Cancel,
) -> None:
    """Once the namespace's own role is ready (else nothing is touched), the namespace re-created
    and marked ``loading`` (committed), the statements run as that role, then anything it made
    outside the namespace dropped and refused."""

    d = dialects.get(target.dialect)
    clock = time.perf_counter
    with target.all_or_nothing() as conn:
        isolation.refuse_foreign(
            target, conn, namespace
        )  # before the role is armed: no grant on a schema not ours
        conn.rollback()

    def reload(conn) -> None:
        start = clock()
        isolation.refuse_foreign(target, conn, namespace)  # again, in the transaction that empties it
        d.begin_reload(conn, namespace, meta)
        result.seconds["namespace"] = clock() - start

    with isolation.sandbox(target, namespace, reload=reload) as inner, inner.all_or_nothing() as conn:
        start = clock()
        d.use(conn, namespace)
        run(conn)
        d.commit(conn)
    result.seconds["setup SQL"] = clock() - start
    outside = isolation.escaped(target, namespace)
    if outside:
        isolation.drop_escaped(target, namespace)
        raise SetupError(
            f"{label}: created objects outside {namespace!r}: {', '.join(outside[:5])}; they were "
            f"dropped with the namespace's own objects (run the seed again once fixed)"
        )
    with target.all_or_nothing() as conn:
        _finish(target, conn, namespace, label, result, cancel)


def load(
    targets: list[Target],
    catalog: str | Path | Catalog,
    *,
    namespace: str = "dbbench",
    isolate: bool = True,
    text_checks: bool = True,
    scale: int = DEFAULT_SCALE,
    progress: Progress | None = None,
) -> tuple[Catalog, list[SetupResult]]:
    """Run the catalog's setup SQL into ``namespace`` on every target (concurrently); see
    :func:`setup_target` for ``isolate`` and ``text_checks``. Every file of every target is
    checked first (:func:`prepare`): every refused statement is listed before anything is touched."""
    if not defaults.valid_namespace(namespace):
        raise DbbenchError(f"namespace {namespace!r}: {defaults.NAMESPACE_RULE}")
    cat = catalog if isinstance(catalog, Catalog) else open_catalog(catalog, need_shapes=False)
    if not cat.has_setup:
        raise SetupError(f"{cat.path}: the catalog has no setup SQL (setup.sql or setup.<dialect>.sql)")
    problems: list[str] = []
    prepared: dict[str, Prepared] = {}
    for t in targets:  # refuse before touching anything, every problem of every file at once
        if t.dialect not in cat.setup:
            raise SetupError(
                f"{cat.path}: no setup SQL for {t.label} (setup.{t.dialect}.sql, setup.sql or setup/); "
                "use --only to skip that dialect"
            )
        prepared[t.dialect], found = prepare(
            cat,
            t.dialect,
            namespace,
            text_checks=text_checks,
            isolate=isolate,
            scale=scale,
            progress=progress,
            extensions=server_extensions(t),
        )
        problems += found
    if problems:
        raise SetupError.of(list(dict.fromkeys(problems)))  # one setup.sql serves both dialects
    cancel = Cancel()  # Ctrl-C reaches the main thread only: stop the workers and their statements
    with ThreadPoolExecutor(max_workers=len(targets) or 1) as pool:
        futures = [
            pool.submit(
                setup_target,
                t,
                cat,
                namespace,
                isolate=isolate,
                text_checks=text_checks,
                scale=scale,
                prepared=prepared[t.dialect],
                progress=progress,
                cancel=cancel,
            )
            for t in targets
        ]
        try:
            results = [f.result() for f in futures]
        except BaseException:
            cancel.set()
            raise
    return cat, results


def stale(catalog: Catalog, metas: dict[str, dict], namespace: str | None = None) -> list[str]:
    """Warnings for namespaces built from an older version of the catalog's setup SQL."""
    out = []
    where = f" --namespace {namespace}" if namespace else ""
    for dialect, meta in metas.items():
        if dialect in catalog.setup and meta.get("setup_sha256") not in (None, catalog.setup_digest(dialect)):
            out.append(
                f"{dialect}: {catalog.setup_label(dialect)} changed since the namespace was built; "
                f"run `dbbench seed --catalog {catalog.path}{where}` to rebuild it"
            )
    return out
