"""``dbbench capture`` and ``dbbench catalog propose`` / ``accept``, and what the pytest plugin does
with the stages (its targets, its namespace, its ``--dbbench-capture``), as library calls. Each
returns the capture stage's results as a document of :mod:`dbbench.document.capture`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dbbench.access.urls import ENV_VARS
from dbbench.capture.recorder import Recorder
from dbbench.defaults import DIALECTS, Dialect
from dbbench.document.capture import CaptureReport, Proposals, capture_report, proposals
from dbbench.workflow.connect import Connect

if TYPE_CHECKING:
    import sqlalchemy as sa

    from dbbench.access.targets import Target
    from dbbench.capture.statements import Seen

__all__ = [
    "ENV_VARS",
    "Captured",
    "Recorder",
    "accept",
    "build_namespace",
    "capture_shapes",
    "captured",
    "check_captured",
    "namespace_engine",
    "propose",
    "reset_statistics",
    "start_recording",
    "target_error",
    "target_url",
]


def capture_shapes(
    connect: Connect,
    namespace: str,
    *,
    catalog: str | Path | None,
    out: Path | None,
    isolate: bool = True,
    accept_scans: bool = False,
) -> CaptureReport:
    """``dbbench capture``: the statements the servers' statistics hold (run in ``namespace``),
    each shape checked against ``catalog`` and the new ones appended to ``out``
    (:func:`dbbench.capture.check.run`)."""
    from dbbench.capture import check, statistics

    with connect() as opened:
        seen = statistics.read(opened, namespace)
        report = check.run(
            opened,
            seen,
            catalog=catalog,
            namespace=namespace,
            out=out,
            isolate=isolate,
            accept_scans=accept_scans,
        )
    return capture_report(report)


def reset_statistics(connect: Connect) -> list[str]:
    """``dbbench capture --reset``: the servers' statement statistics cleared; the targets' labels."""
    from dbbench.capture import statistics

    with connect() as opened:
        statistics.reset(opened)
        return [t.label for t in opened]


def propose(connect: Connect, catalog: str | Path, namespace: str, *, isolate: bool = True) -> Proposals:
    """``dbbench catalog propose``: the expectation each block without one would get from its plan
    in ``namespace`` (:func:`dbbench.capture.expectations.proposals`)."""
    from dbbench.capture import expectations

    with connect() as opened:
        return proposals(expectations.proposals(opened, catalog, namespace, isolate=isolate))


def accept(
    connect: Connect,
    catalog: str | Path,
    namespace: str,
    *,
    isolate: bool = True,
    proposed: Callable[[Proposals], None] | None = None,
    advice: Path | None = None,
) -> Proposals:
    """``dbbench catalog accept``: the proposals (given to ``proposed`` before any file is
    touched), then written into the files (:func:`dbbench.capture.expectations.write`); ``written``
    counts the blocks that got an expectation. ``advice``: a ``dbbench advise --output`` file,
    whose verified indexes are the proposals (nothing is measured, no server is opened)."""
    from dbbench.capture import expectations

    if advice is not None:
        from dbbench.document.advise import load_advice, verified_indexes

        found = expectations.from_advice(catalog, verified_indexes(load_advice(advice)))
    else:
        with connect() as opened:
            found = expectations.proposals(opened, catalog, namespace, isolate=isolate)
    if proposed is not None:
        proposed(proposals(found))
    return proposals(found, len(expectations.write(found)))


# The pytest plugin: its targets and namespace, and its capture of a test session's statements.


def start_recording(root: str) -> Recorder:
    """Every statement the process executes through psycopg and PyMySQL recorded from now on
    (sources shown relative to ``root``) until the recorder's ``uninstall()``."""
    recorder = Recorder(root)
    recorder.install()
    return recorder


@dataclass(frozen=True)
class Captured:
    """The shapes of the statements a recorder holds (:func:`dbbench.capture.statements.merge`)."""

    shapes: list[Seen]

    @property
    def dialects(self) -> tuple[str, ...]:
        """The dialects they ran on, in dbbench's order."""
        return tuple(d for d in DIALECTS if any(d in s.dialects for s in self.shapes))


def captured(recorder: Recorder) -> Captured:
    from dbbench.capture import statements

    return Captured(statements.merge(recorder.found()))


def check_captured(
    targets: list[Target],
    found: Captured,
    *,
    catalog: str | Path,
    namespace: str,
    out: Path,
    accept_scans: bool = False,
) -> CaptureReport:
    """``--dbbench-capture`` at the session's end: every captured shape checked on ``targets`` in
    the catalog's ``namespace``, the new ones written to ``out`` (:func:`dbbench.capture.check.run`)."""
    from dbbench.capture import check

    report = check.run(
        targets, found.shapes, catalog=catalog, namespace=namespace, out=out, accept_scans=accept_scans
    )
    return capture_report(report)


def target_url(dialect: Dialect, given: str | None) -> tuple[str | None, bool]:
    """The URL of the plugin's target of ``dialect`` and whether it was named (``given``, else the
    environment's); else the local server's, not named; None when there is none."""
    from dbbench import servers
    from dbbench.access import urls

    if given is not None:
        return given, True
    url = urls.from_env(dialect)
    if url is not None:
        return url, True
    try:
        return servers.local_url(dialect), False
    except Exception:  # no local server installed here
        return None, False


def build_namespace(target: Target, catalog: str, namespace: str, *, rebuild: bool = False) -> None:
    """The catalog's setup SQL loaded into ``namespace``, unless it holds that setup complete
    already (``rebuild``: load it anyway) (:func:`dbbench.setup.loader.load`)."""
    from dbbench import dialects
    from dbbench.catalog.entries import open_catalog
    from dbbench.setup import loader

    cat = open_catalog(catalog)
    d = dialects.get(target.dialect)
    raw = target.engine.raw_connection()
    try:
        conn: Any = raw.driver_connection
        fresh = d.namespace_state(conn, namespace) == "complete" and d.read_meta(conn, namespace).get(
            "setup_sha256"
        ) == cat.setup_digest(target.dialect)
        conn.rollback()
    finally:
        raw.close()
    if not fresh or rebuild:
        loader.load([target], cat, namespace=namespace)


def namespace_engine(target: Target, namespace: str | None) -> sa.Engine:
    """A SQLAlchemy engine on ``target`` whose connections start in ``namespace`` (if any); its repr
    (in a failing test's arguments) shows no password, whatever the URL's form."""
    import sqlalchemy as sa

    from dbbench.access import urls

    url, args = target.url, dict[str, Any](connect_timeout=10)
    if namespace and target.dialect == "postgresql":
        args["options"] = f"-c search_path={namespace}"
    elif namespace:
        url = url.set(database=namespace)
    return sa.create_engine(urls.RedactedURL(*url), connect_args=args, pool_pre_ping=True)


def target_error(exc: Exception, url: Any, dialect: str) -> str:
    """An unexpected error of the driver or SQLAlchemy as one line without the URL's secrets,
    reported without a traceback: its frames hold the URL and the driver's keyword arguments,
    password included, and pytest prints a frame's arguments."""
    from sqlalchemy.engine import make_url

    from dbbench.access import urls

    try:
        parsed = make_url(url) if isinstance(url, str) else url
        where, text = urls.redact(parsed), urls.scrub((str(exc).strip().splitlines() or [""])[0], parsed)
    except Exception:
        where, text = "the URL given", ""
    return f"dbbench: cannot use the {dialect} target {where}: {type(exc).__name__}: {text}"
