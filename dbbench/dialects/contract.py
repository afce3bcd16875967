"""What every dialect module offers: :class:`Dialect`, checked by mypy against both modules.

A dialect is a module (:mod:`dbbench.dialects.postgresql`, :mod:`dbbench.dialects.mysql`); a
module object satisfies a :class:`typing.Protocol` whose members are its functions and constants.
Every function takes a raw DB-API connection of its driver (psycopg or PyMySQL) as ``conn``.
:class:`Dialect` is the sum of small protocols, one a concern (:class:`Names`,
:class:`NamespaceStore`, :class:`Loader`, …), so that code using one concern can say so.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from dbbench.dialects.plan import PlanNode
from dbbench.dialects.timing import Sample

Connection = Any  # a raw DB-API connection of the dialect's driver


class LoadFile(Protocol):
    """A table's rows encoded for each dialect's bulk load (what
    :class:`dbbench.dataset.loadfiles.PreparedTable` is), as a dialect reads it."""

    @property
    def name(self) -> str: ...
    @property
    def columns(self) -> list[str]: ...
    @property
    def files(self) -> dict[str, Path]: ...
    @property
    def binary_columns(self) -> frozenset[str]: ...


@dataclass(frozen=True)
class SqlSyntax:
    """How a dialect's scripts are split into statements (:func:`dbbench.setup.split.split_sql`)."""

    delimiter_lines: bool = False  # the mysql client's ``DELIMITER //`` lines
    hash_comments: bool = False  # ``# comment`` to the end of the line
    backslash_escapes: bool = False  # ``\'`` inside '…' and "…" text
    double_quoted_identifiers: bool = False  # "name" is an identifier (else text)
    dollar_quotes: bool = False  # ``$tag$ … $tag$`` bodies
    conditional_comments: bool = False  # MySQL's ``/*!40101 … */``: code the server runs, not a comment
    psql_input: bool = False  # psql's ``\meta`` lines and ``COPY … FROM stdin`` rows up to ``\.``


class Names(Protocol):
    """What a dialect is called, how it quotes a name, and the DB-API helpers every caller uses."""

    NAME: str  # "postgresql" / "mysql": its key in dbbench.dialects.MODULES and in result files

    def quote(self, name: str, /) -> str: ...
    # ``-> object`` where a caller may evaluate the call in an expression (a lambda of steps)
    def execute(self, conn: Connection, statements: list[str], /) -> object: ...
    def commit(self, conn: Connection, /) -> None: ...
    def is_driver_error(self, exc: BaseException, /) -> bool: ...
    # a statement refused for the data it would write (not for a privilege): its shape fails
    def refuses_data(self, exc: BaseException, /) -> bool: ...


class NamespaceStore(Protocol):
    """The namespace dbbench owns and its ownership marker (dbbench.dataset.seed, dbbench.access)."""

    NAMESPACE_KIND: str  # what a namespace is called there: "schema" / "database"
    META: str  # dbbench's ownership marker table in the namespace

    def namespace_state(self, conn: Connection, ns: str, /) -> str: ...
    def begin_reload(self, conn: Connection, ns: str, meta: dict[str, str], /) -> object: ...
    def drop_namespace(self, conn: Connection, ns: str, /) -> None: ...
    def use(self, conn: Connection, ns: str, /) -> None: ...
    def write_meta(self, conn: Connection, ns: str, meta: dict[str, str], /) -> None: ...
    def read_meta(self, conn: Connection, ns: str, /) -> dict[str, str]: ...


class Loader(Protocol):
    """A seed's bulk load, the statistics plans are made from, and the rows' fingerprints."""

    LOAD_COMMITTED_BEFORE_VERIFY: bool  # whether other sessions see the seeded rows before the end

    def encode(self, rows: list[tuple[Any, ...]], kinds: list[str], /) -> str: ...
    def bulk_load(self, conn: Connection, table: LoadFile, /) -> None: ...
    def freeze_statistics(self, conn: Connection, tables: list[str], /) -> None: ...
    def analyze(self, conn: Connection, tables: list[str], /) -> None: ...
    def restore_statistics(self, conn: Connection, ns: str, /) -> bool: ...
    # after rolled-back writes: what the rollback left that later plans would read (dead rows),
    # recorded before the writes run, so that the next run settles what a killed one left
    def settle_pending(self, conn: Connection, ns: str, tables: list[str], /) -> None: ...
    def settle_writes(self, conn: Connection, ns: str, tables: list[str], /) -> None: ...
    def recover_settle(self, conn: Connection, ns: str, /) -> list[str]: ...
    # around rolled-back writes: a digest per table that any committed change moves
    def unchanged_digests(self, conn: Connection, ns: str, tables: list[str], /) -> dict[str, str]: ...
    def statistics_frozen(self, conn: Connection, ns: str, /) -> dict[str, bool]: ...
    def canonical(self, column: str, kind: str, /) -> str: ...
    def fingerprint_sql(self, table: str, row_text: str, /) -> str: ...
    def concat(self, parts: list[str], /) -> str: ...


class VolumeLoader(Protocol):
    """Generated volume (dbbench.volume): a schema read, its rows streamed in, keys put back."""

    def encode_bytes(self, value: bytes, /) -> str: ...
    # ``chunks``: the rows as bulk-load text (:mod:`dbbench.dialects.encode`), streamed as they come
    def stream_load(
        self,
        conn: Connection,
        table: str,
        columns: list[str],
        binary: frozenset[str],
        chunks: Iterable[bytes],
        /,
        *,
        emptied: bool = False,  # the table was emptied in this transaction
    ) -> None: ...
    def update_from(self, table: str, source: str, keys: list[str], columns: list[str], /) -> str: ...
    def empty_tables(self, conn: Connection, tables: list[str], /) -> None: ...
    def defer_constraints(
        self, conn: Connection, tables: list[str], early: list[str], /
    ) -> Callable[[Connection], None]: ...
    def schema_columns(self, conn: Connection, ns: str, /) -> list[tuple[Any, ...]]: ...
    def schema_keys(self, conn: Connection, ns: str, /) -> list[tuple[Any, ...]]: ...


class SetupRunner(Protocol):
    """Setup SQL (dbbench.setup.loader): how it is split, run and checked for changes outside."""

    SETUP_SYNTAX: SqlSyntax  # how setup SQL is split into statements
    COMMIT_EACH_SETUP_STATEMENT: bool  # setup SQL: commit after each statement, else one transaction
    FREEZE_EACH_CREATED_TABLE: bool  # setup SQL: statistics frozen at each CREATE TABLE, not only at the end
    COLUMN_TYPE: str  # information_schema.columns: the column telling tinyint(1) apart

    # ``rows``: the data of a ``COPY … FROM stdin`` statement, in chunks (``SqlSyntax.psql_input``)
    def run_setup_statement(
        self, conn: Connection, text: str, rows: Iterable[str] | None = None, /
    ) -> None: ...
    def outside_relations(self, conn: Connection, ns: str, /) -> dict[int, str]: ...
    def outside_changes(self, conn: Connection, ns: str, before: dict[int, str], /) -> list[str]: ...


class Explainer(Protocol):
    """EXPLAIN ANALYZE samples, always rolled back (dbbench.measure), with the literal values and
    with every parameter as an ORM's prepared statement sends it (issue 24)."""

    GENERIC_PLAN: str  # how the plan an ORM's prepared statement gets is obtained, in words
    GROUPING_HINT: str  # after SELECT in dbbench's own GROUP BY of a whole column (probe values)

    def parse_plan(self, raw: Any, /) -> tuple[PlanNode, float]: ...
    def run_explain(
        self,
        conn: Connection,
        sql: str,
        params: dict[str, Any],
        timeout_ms: int,
        settings: dict[str, Any] | None = None,
        /,
    ) -> tuple[Any, PlanNode, float]: ...
    # one timed sample with the statement's own time (``observer``: a connection that may read
    # MySQL's performance_schema; PostgreSQL reports its planning time itself)
    def run_sample(
        self,
        conn: Connection,
        sql: str,
        params: dict[str, Any],
        timeout_ms: int,
        settings: dict[str, Any] | None = None,
        observer: Connection | None = None,
        footprint: bool = False,
        /,
    ) -> Sample: ...
    # ``sql`` in the drivers' ``%(name)s`` form, as for :meth:`run_explain`
    def run_explain_generic(
        self,
        conn: Connection,
        sql: str,
        params: dict[str, Any],
        timeout_ms: int,
        settings: dict[str, Any] | None = None,
        /,
    ) -> tuple[Any, PlanNode, float]: ...
    def query_row(self, conn: Connection, sql: str, params: dict[str, Any], /) -> dict[str, Any] | None: ...


class RoleKeeper(Protocol):
    """The namespace role (dbbench.access.isolation) that runs a catalog's SQL in its namespace only."""

    ROLE_PRIVILEGE: str  # what dbbench's user needs to create the namespace role

    def open_role(self, conn: Connection, ns: str, role: str, password: str, /) -> None: ...
    def grant_namespace(self, conn: Connection, ns: str, role: str, /) -> None: ...
    def close_role(self, conn: Connection, role: str, /) -> None: ...
    def owned_outside(self, conn: Connection, ns: str, role: str, /) -> list[str]: ...
    def drop_owned(self, conn: Connection, role: str, /) -> None: ...
    def drop_role(self, conn: Connection, ns: str, role: str, /) -> None: ...


class Capture(Protocol):
    """The statements any client ran, from the server's own statistics (dbbench.capture); a failed
    read or reset is rolled back before it is raised."""

    def captured_statements(self, conn: Connection, ns: str, /) -> list[tuple[str, int]]: ...
    def reset_captured(self, conn: Connection, /) -> None: ...


# -- index trials (dbbench.advise) --
class IndexTrials(Protocol):
    """An index under trial (dbbench.advise.trial): built for real in the namespace dbbench owns,
    measured there, never left behind; and the writes whose cost it adds."""

    # the index lives in one transaction rolled back at the end (else: added, recorded, dropped)
    TRIAL_IN_TRANSACTION: bool
    # the statements a trial runs and undoes it with: groups name, schema, table (and rest, the
    # parenthesised key list and what follows it, in TRIAL_CREATE); TRIAL_TAIL: what may follow
    TRIAL_CREATE: tuple[re.Pattern[str], ...]
    TRIAL_DROP: tuple[re.Pattern[str], ...]
    TRIAL_TAIL: re.Pattern[str]

    def identifier(self, text: str, /) -> str: ...
    def trial_connection(self, url: Any, connect_args: dict[str, Any], /) -> Connection: ...
    # every index of ``indexes`` ((table, name, ddl, drop)) present for the block, built in that
    # order; yields the seconds each statement took
    def index_trial(
        self, conn: Connection, ns: str, indexes: Sequence[tuple[str, str, str, str]], wait_s: float, /
    ) -> AbstractContextManager[list[float]]: ...
    def trial_session(self, conn: Connection, /) -> int: ...
    def end_trial_session(self, conn: Connection, session: int, /) -> None: ...
    def recover_index_trials(self, conn: Connection, ns: str, wait_s: float, /) -> list[str]: ...
    def index_definitions(self, conn: Connection, ns: str, /) -> list[tuple[str, str, str]]: ...
    def index_size_bytes(self, conn: Connection, ns: str, table: str, name: str, /) -> int: ...
    # (table, index, primary|unique|index, key parts, definition) of every index of the namespace
    def index_keys(
        self, conn: Connection, ns: str, /
    ) -> list[tuple[str, str, str, tuple[str, ...], str]]: ...
    # indexes ((table, name) each) hidden from the planner for the block (dbbench indexes);
    # yields what went with each
    def index_hidden(
        self, conn: Connection, ns: str, indexes: Sequence[tuple[str, str]], wait_s: float, /
    ) -> AbstractContextManager[list[str]]: ...
    def write_frame(
        self, conn: Connection, timeout_ms: int, /
    ) -> AbstractContextManager[tuple[Any, Any]]: ...
    # where a write batch writes inside its frame (``without``: a copy lacking that index)
    def write_copy(
        self, conn: Connection, ns: str, table: str, columns: list[str], without: str | None = None, /
    ) -> str: ...
    # a copy made before the frame where the copy is DDL that commits (MySQL), else None
    def write_outside(
        self, conn: Connection, ns: str, table: str, columns: list[str], without: str | None, /
    ) -> AbstractContextManager[str | None]: ...
    def write_counters(
        self, conn: Connection, ns: str, relation: str, /
    ) -> tuple[int | None, dict[str, int]]: ...


# -- planner estimates (dbbench.advise) --
class PlannerEstimates(Protocol):
    """What the planner alone says of a statement (dbbench.advise.verify.estimate): plain
    ``EXPLAIN``, nothing executed, in a frame always undone (a savepoint inside the caller's open
    transaction, which keeps an index under trial)."""

    # (the plan tree, without actuals; the planner's estimated total cost, None when it gives none)
    def estimate_plan(
        self,
        conn: Connection,
        sql: str,
        params: dict[str, Any],
        timeout_ms: int,
        settings: dict[str, Any] | None = None,
        /,
    ) -> tuple[PlanNode, float | None]: ...


class RaceSessions(Protocol):
    """Two sessions racing for rows (dbbench.measure.race): a statement's bounds with a short lock
    wait, its cursor, what an error means, how a watcher knows a session, the lock it waits for
    (dbbench.dialects.common.lock_wait), and a cancel."""

    def race_limits(
        self, conn: Connection, settings: dict[str, Any] | None, timeout_ms: int, lock_wait_ms: int, /
    ) -> AbstractContextManager[None]: ...
    def race_cursor(self, conn: Connection, /) -> Any: ...
    def race_error(self, exc: BaseException, /) -> tuple[str, str | None]: ...
    def race_session(self, conn: Connection, /) -> int: ...
    def race_cancel(self, admin: Connection, conn: Connection, /) -> None: ...
    def race_wait(self, admin: Connection, session: int, holder: int, /) -> dict[str, Any] | None: ...


class Dialect(
    Names,
    NamespaceStore,
    Loader,
    VolumeLoader,
    SetupRunner,
    Explainer,
    RoleKeeper,
    Capture,
    IndexTrials,
    PlannerEstimates,
    RaceSessions,
    Protocol,
):
    """The functions and constants of one dialect module: every part above."""
