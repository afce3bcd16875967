"""Every exception httpbench raises on purpose, and what the command line makes of it.

::

    Exception
    ├── HttpbenchError      a user-facing failure: printed as one line, ``httpbench: error: MESSAGE``;
    │   │                   exit code 2 for usage or environment (a bad option, URL or file, a
    │   │                   target down, a preflight check), 1 when the measurement ran and failed
    │   │                   (failed timed responses, gates under --enforce-gates, apk-client's checks)
    │   └── ApkError        a malformed, unsigned or wrongly signed APK v2 package or index
    │                       (raised by httpbench.profiles.alpine.apk; exit code 2)
    └── httpx.RequestError
        └── BodyTooLarge    a preflight answer past its byte bound (httpbench.measure.preflight,
                            beside the reader that raises it); it never leaves the preflight,
                            which reports it as an HttpbenchError naming the target

The command line has one error handler, :func:`httpbench.cli.app.run`: an ``HttpbenchError`` is its
message and exit code; click's usage errors are one line and exit 2; Ctrl-C is ``interrupted`` and
130; an ``OSError`` (the environment refused: a file, a socket, a process) one line and 2; anything
else is a bug: its traceback, then one line saying so, and 2.
"""

from __future__ import annotations


class HttpbenchError(Exception):
    """A user-facing failure: printed as ``httpbench: error: MESSAGE``, never as a traceback.

    ``exit_code`` 2 means usage or environment (bad option, bad URL, target down, preflight);
    1 means the measurement ran but failed (failed responses, gates under ``--enforce-gates``).
    """

    def __init__(self, message: str, exit_code: int = 2):
        super().__init__(message)
        self.exit_code = exit_code


class ApkError(HttpbenchError):
    """A malformed, unsigned or wrongly signed APK v2 package or index (one-line reason)."""
