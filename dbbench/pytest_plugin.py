"""dbbench's pytest plugin: plan assertions in your own DAO tests, on PostgreSQL and MySQL.

Enable it with ``-p dbbench.pytest_plugin`` or ``pytest_plugins = ["dbbench.pytest_plugin"]`` in
your root ``conftest.py`` (or automatically, where dbbench is installed with its ``pytest11``
entry point). Then::

    def test_recent_orders_use_their_index(dbbench_conn, assert_plan):
        assert_plan(dbbench_conn, RECENT_ORDERS, {"customer_id": 42},
                    uses_index="ix_orders_customer_placed", forbid=["seq_scan", "filesort"])

runs once per dialect (``test_…[postgresql]``, ``test_…[mysql]``). A failure shows the expected
and actual access paths, the statement and the plan tree. ``max_rows_examined=N`` also bounds the
statement's work, counted as ``dbbench diff`` counts it (rows every plan node produced or read and
discarded, times its loops): like the plan, and unlike a time, it does not move with machine noise.

Options (command line; the ini keys without dashes, ``dbbench_catalog`` …, work too):

``--dbbench-pg-url`` / ``--dbbench-mysql-url``
    Targets (default: ``DBBENCH_PG_URL`` / ``DBBENCH_MYSQL_URL``, else the local servers started
    by ``dbbench servers up``). A dialect whose default target is not running is skipped; one you
    named explicitly must connect.
``--dbbench-only postgresql|mysql``
    One dialect only.
``--dbbench-catalog DIR``
    A catalog whose setup SQL builds the test schema and data (once per session, in a namespace
    dbbench owns; reused while the setup files are unchanged; ``--dbbench-rebuild`` forces it).
``--dbbench-namespace NAME``
    That namespace (default ``dbbench_pytest``).

Fixtures: ``dbbench_dialect`` (parametrized), ``dbbench_target`` (:class:`dbbench.Target`),
``dbbench_engine`` (a SQLAlchemy engine whose connections start in the namespace),
``dbbench_conn`` (a psycopg / PyMySQL connection in the namespace, rolled back after the test) and
``assert_plan`` (:func:`dbbench.assert_plan`). Marker: ``@pytest.mark.dbbench_dialects("mysql")``
limits a test to some dialects.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, cast

import pytest

if TYPE_CHECKING:
    from dbbench.defaults import Dialect

_OPTIONS = {
    "dbbench_pg_url": "PostgreSQL URL for plan assertions (env DBBENCH_PG_URL; default: the local server)",
    "dbbench_mysql_url": "MySQL URL for plan assertions (env DBBENCH_MYSQL_URL; default: the local server)",
    "dbbench_only": "postgresql or mysql: run plan assertions on one dialect only",
    "dbbench_catalog": "catalog directory whose setup SQL builds the test data",
    "dbbench_namespace": "namespace the catalog's setup SQL is loaded into (default dbbench_pytest)",
    "dbbench_capture": "record every statement the tests execute (psycopg, PyMySQL, SQLAlchemy); at the "
    "end check each shape on the catalog's namespace and write new ones to this annotated .sql file",
}


def pytest_addoption(parser) -> None:
    group = parser.getgroup("dbbench", "dbbench plan assertions")
    for name, text in _OPTIONS.items():
        group.addoption("--" + name.replace("_", "-"), dest=name, default=None, help=text)
        parser.addini(name, text, default=None)
    group.addoption(
        "--dbbench-rebuild",
        dest="dbbench_rebuild",
        action="store_true",
        help="rebuild the catalog's namespace even if its setup SQL is unchanged",
    )
    group.addoption(
        "--dbbench-accept-scans",
        dest="dbbench_accept_scans",
        action="store_true",
        help="with --dbbench-capture: accept new shapes whose plan uses no index (see dbbench capture --accept-scans)",
    )


def pytest_configure(config) -> None:
    config.addinivalue_line("markers", "dbbench_dialects(*names): run this plan test on these dialects only")
    if _option(config, "dbbench_capture"):
        from dbbench.workflow.capture import start_recording

        config.stash[_RECORDER] = start_recording(str(config.rootpath))


_RECORDER = pytest.StashKey[Any]()
_REPORT = pytest.StashKey[list[str]]()


def _path(config, value: str) -> str:
    """``value`` relative to the ini file's folder (else the root), as the ini's paths are meant."""
    if os.path.isabs(value):
        return value
    base = config.inipath.parent if getattr(config, "inipath", None) else config.rootpath
    return str(base / value)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """The capture names the test that issued each statement."""
    recorder = item.config.stash.get(_RECORDER, None)
    if recorder is not None:
        recorder.test = item.nodeid
    yield
    if recorder is not None:
        recorder.test = None


def pytest_sessionfinish(session, exitstatus) -> None:
    """With ``--dbbench-capture``: every captured shape checked on the catalog's namespace (the
    catalog's own expectation, every parameter), new ones written down; a failure fails the run.
    A captured write (``UPDATE`` / ``DELETE`` … ``WHERE``, ``INSERT``, ``SELECT … FOR UPDATE``) is
    run in a transaction that is rolled back, and the report says what it locked."""
    recorder = session.config.stash.get(_RECORDER, None)
    if recorder is None:
        return
    recorder.uninstall()
    lines, failed = _check_captured(session.config, recorder)
    session.config.stash[_REPORT] = lines
    if failed:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def _check_captured(config, recorder) -> tuple[list[str], bool]:
    from pathlib import Path

    from dbbench.errors import DbbenchError
    from dbbench.output.capture import lines
    from dbbench.workflow.capture import captured, check_captured

    seen = captured(recorder)
    if not seen.shapes:
        return ["dbbench capture: no application statement was executed"], False
    state = _Session(config)
    if not state.catalog:
        return ["dbbench capture: needs --dbbench-catalog (the namespace the shapes are checked in)"], True
    out = Path(_path(config, _option(config, "dbbench_capture")))
    try:
        targets = []
        for dialect in seen.dialects:
            try:
                targets.append(state.target(dialect))
                state.build(dialect)
            except BaseException as exc:  # pytest's skip / fail outcome: the line it would show
                return [f"dbbench capture: {exc}"], True
        report = check_captured(
            targets,
            seen,
            catalog=state.catalog,
            namespace=state.namespace,
            out=out,
            accept_scans=bool(config.getoption("dbbench_accept_scans", default=False)),
        )
    except DbbenchError as exc:
        return [f"dbbench capture: error: {exc}"], True
    except OSError as exc:  # the captured file cannot be read or written
        return [f"dbbench capture: error: {exc.filename}: {exc.strerror or exc}"], True
    finally:
        state.close()
    return lines(report), bool(report.failed)


def pytest_terminal_summary(terminalreporter) -> None:
    report = terminalreporter.config.stash.get(_REPORT, None)
    if report:
        terminalreporter.section("dbbench capture")
        for line in report:
            terminalreporter.write_line(line)


def _option(config, name: str):
    value = config.getoption(name, default=None)
    if value is None:
        value = config.getini(name)
    return value or None


def _dialects(config) -> list[str]:
    from dbbench.defaults import DIALECTS

    only = _option(config, "dbbench_only")
    if only and only not in DIALECTS:
        raise pytest.UsageError(f"--dbbench-only: {only!r} is not postgresql or mysql")
    return [only] if only else list(DIALECTS)


def pytest_generate_tests(metafunc) -> None:
    if "dbbench_dialect" not in metafunc.fixturenames:
        return
    chosen = _dialects(metafunc.config)
    marker = metafunc.definition.get_closest_marker("dbbench_dialects")
    if marker:
        chosen = [d for d in chosen if d in marker.args]
    metafunc.parametrize("dbbench_dialect", chosen, ids=chosen, scope="session")


class _Session:
    """Targets, engines and built namespaces, shared by the whole test session."""

    def __init__(self, config):
        self.config = config
        self.targets: dict = {}
        self.engines: dict = {}
        self.failures: dict[str, str] = {}
        self.namespace = _option(config, "dbbench_namespace") or "dbbench_pytest"
        self.catalog = _option(config, "dbbench_catalog")
        if self.catalog and not os.path.isabs(self.catalog):
            base = config.inipath.parent if getattr(config, "inipath", None) else config.rootpath
            if (base / self.catalog).exists():
                self.catalog = str(base / self.catalog)
        self.built: set[str] = set()

    def target(self, dialect: str):
        from dbbench import connect
        from dbbench.errors import DbbenchError
        from dbbench.workflow.capture import ENV_VARS, target_error, target_url

        if dialect in self.targets:
            return self.targets[dialect]
        if dialect in self.failures:
            pytest.skip(self.failures[dialect])
        key = "dbbench_pg_url" if dialect == "postgresql" else "dbbench_mysql_url"
        url, explicit = target_url(cast("Dialect", dialect), _option(self.config, key))
        if url is None:
            self.failures[dialect] = (
                f"no {dialect} target (--{key.replace('_', '-')}, "
                f"{ENV_VARS[dialect]}, or `dbbench servers up`)"
            )
            pytest.skip(self.failures[dialect])
        unexpected = refused = None
        try:
            target = connect(url, dialect=cast("Dialect", dialect))
        except DbbenchError as exc:
            refused = f"dbbench: {exc}"
        except Exception as exc:  # the driver's own (a query parameter it cannot read, say)
            unexpected = target_error(exc, url, dialect)
        # failed outside the except block: pytest would show the exception chained
        if unexpected:
            pytest.fail(unexpected, pytrace=False)
        if refused:
            if explicit:
                pytest.fail(refused, pytrace=False)
            self.failures[dialect] = refused
            pytest.skip(refused)
        self.targets[dialect] = target
        return target

    def build(self, dialect: str) -> str | None:
        """The namespace tests run in (built from the catalog's setup once), or None."""
        if not self.catalog:
            return None
        if dialect in self.built:
            return self.namespace
        from dbbench.errors import DbbenchError
        from dbbench.workflow.capture import build_namespace, target_error

        target, unexpected = self.target(dialect), None
        try:
            build_namespace(
                target, self.catalog, self.namespace, rebuild=bool(self.config.getoption("dbbench_rebuild"))
            )
        except DbbenchError as exc:
            pytest.fail(f"dbbench: {exc}", pytrace=False)
        except Exception as exc:
            unexpected = target_error(exc, target.url, dialect)
        if unexpected:
            pytest.fail(unexpected, pytrace=False)
        self.built.add(dialect)
        return self.namespace

    def engine(self, dialect: str):
        from dbbench.workflow.capture import namespace_engine

        if dialect in self.engines:
            return self.engines[dialect]
        target = self.target(dialect)
        self.engines[dialect] = namespace_engine(target, self.build(dialect))
        return self.engines[dialect]

    def close(self) -> None:
        for e in self.engines.values():
            e.dispose()
        for t in self.targets.values():
            t.dispose()


@pytest.fixture(scope="session")
def _dbbench_session(request):
    state = _Session(request.config)
    yield state
    state.close()


@pytest.fixture(scope="session")
def dbbench_dialect(request) -> str:
    """``postgresql`` or ``mysql`` (tests using the dbbench fixtures run once per dialect)."""
    return getattr(request, "param", "postgresql")


@pytest.fixture(scope="session")
def dbbench_target(_dbbench_session, dbbench_dialect):
    """The connected, version-checked :class:`dbbench.Target` of this dialect."""
    return _dbbench_session.target(dbbench_dialect)


@pytest.fixture(scope="session")
def dbbench_engine(_dbbench_session, dbbench_dialect):
    """A SQLAlchemy engine whose connections start in the test namespace (if a catalog is set)."""
    return _dbbench_session.engine(dbbench_dialect)


@pytest.fixture
def dbbench_conn(dbbench_engine):
    """A psycopg / PyMySQL connection in the test namespace; rolled back after the test."""
    raw = dbbench_engine.raw_connection()
    conn = raw.driver_connection
    try:
        yield conn
    finally:
        try:
            conn.rollback()
        finally:
            raw.close()


@pytest.fixture
def assert_plan():
    """:func:`dbbench.assert_plan`: ``assert_plan(conn, sql, params, uses_index=…, forbid=[…])``."""
    from dbbench import assert_plan as _assert_plan

    return _assert_plan


def pytest_report_header(config) -> str | None:
    catalog = _option(config, "dbbench_catalog")
    if not catalog:
        return None
    ns = _option(config, "dbbench_namespace") or "dbbench_pytest"
    return f"dbbench: catalog {catalog} (setup SQL into namespace {ns}); dialects: {', '.join(_dialects(config))}"
