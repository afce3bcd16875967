"""Statements a Python process executes through psycopg and PyMySQL (and so through SQLAlchemy),
recorded with the code that issued them and the test running: the pytest plugin's capture.

:func:`install` wraps the drivers' ``Cursor.execute``; each call costs a walk up the stack to the
first frame outside the drivers and SQLAlchemy, and a dictionary update per distinct statement
text (``benchmarks/bench_capture.py`` measures it). A statement issued from dbbench's own code
(the plugin's fixtures, ``assert_plan``) is not recorded.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from types import FrameType
from typing import Any

DBBENCH_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep  # dbbench/
MAX_TEXTS = 20_000  # distinct statement texts kept (literal-inlined SQL can vary without bound)


@dataclass
class Record:
    dialect: str
    text: str
    params: Any
    source: str | None
    function: str | None
    calls: int = 0
    tests: list[str] = field(default_factory=list)


def _library_dirs() -> tuple[str, ...]:
    """The folders of the drivers and SQLAlchemy: their frames are not where a statement comes from."""
    import psycopg
    import pymysql
    import sqlalchemy

    return tuple(
        os.path.dirname(os.path.abspath(m.__file__ or "")) + os.sep for m in (psycopg, pymysql, sqlalchemy)
    )


def _in_library(frame: FrameType, libraries: tuple[str, ...]) -> bool:
    """A frame of the drivers or SQLAlchemy: in their folders, or code they generated at run time
    (``<sqlalchemy generated … wrapper …>``, whose file name is no file: the ORM's flush)."""
    name = frame.f_code.co_filename
    return name.startswith(libraries) or name.startswith("<")


def _issuer(frame: FrameType | None, libraries: tuple[str, ...]) -> FrameType | None:
    """The frame that issued a statement: the first outside the libraries, or rather, when that
    is a private helper (``_rows``), the first public function calling it."""
    while frame is not None and _in_library(frame, libraries):
        frame = frame.f_back
    first = frame
    while frame is not None and frame.f_code.co_name.startswith("_") and frame.f_back is not None:
        frame = frame.f_back
    if frame is None or _in_library(frame, libraries):
        return first
    return frame


class Recorder:
    """What :func:`install` records: ``records`` by (dialect, text); ``test``: the running test."""

    def __init__(self, root: str | None = None):
        self.records: dict[tuple[str, str], Record] = {}
        self.test: str | None = None
        self.root = root  # sources are shown relative to it
        self.libraries: tuple[str, ...] = ()
        self._undo: list[tuple[type, str, Any]] = []

    def record(self, dialect: str, query: Any, params: Any, frame: FrameType | None) -> None:
        if isinstance(query, bytes):
            query = query.decode("utf-8", "replace")
        if not isinstance(query, str):
            return  # a composed psycopg.sql object: its text needs a connection to render
        frame = _issuer(frame, self.libraries)
        if frame is None or frame.f_code.co_filename.startswith(DBBENCH_DIR):
            return  # dbbench's own statement
        key = (dialect, query)
        rec = self.records.get(key)
        if rec is None:
            if len(self.records) >= MAX_TEXTS:
                return
            code = frame.f_code
            file = os.path.relpath(code.co_filename, self.root) if self.root else code.co_filename
            module = frame.f_globals.get("__name__", "")
            function = f"{module}.{code.co_qualname}" if code.co_qualname != "<module>" else module
            rec = self.records[key] = Record(dialect, query, params, f"{file}:{frame.f_lineno}", function)
        rec.calls += 1
        if self.test and self.test not in rec.tests and len(rec.tests) < 3:
            rec.tests.append(self.test)

    def found(self) -> list[tuple[str, str, Any, int, str | None, str | None, str | None]]:
        """The records as :func:`dbbench.capture.statements.merge` takes them."""
        return [
            (r.dialect, r.text, r.params, r.calls, r.source, r.function, r.tests[0] if r.tests else None)
            for r in self.records.values()
        ]

    def install(self) -> None:
        import psycopg
        import pymysql.cursors

        for cls, dialect in ((psycopg.Cursor, "postgresql"), (pymysql.cursors.Cursor, "mysql")):
            original = cls.execute
            self._undo.append((cls, "execute", original))
            cls.execute = _wrap(self, original, dialect)  # type: ignore[method-assign]
        self.libraries = _library_dirs()

    def uninstall(self) -> None:
        while self._undo:
            cls, name, original = self._undo.pop()
            setattr(cls, name, original)
        self.libraries = ()


def _wrap(recorder: Recorder, original: Any, dialect: str) -> Any:
    def execute(self, query, args=None, *more, **kw):
        recorder.record(dialect, query, args, sys._getframe(1))
        return original(self, query, args, *more, **kw)

    execute.__wrapped__ = original  # type: ignore[attr-defined]
    return execute
