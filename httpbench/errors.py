"""The one exception type the command line turns into a one-line error."""

from __future__ import annotations


class HttpbenchError(Exception):
    """A user-facing failure: printed as ``httpbench: error: MESSAGE``, never as a traceback.

    ``exit_code`` 2 means usage or environment (bad option, bad URL, target down, preflight);
    1 means the measurement ran but failed (failed responses, gates under ``--enforce-gates``).
    """

    def __init__(self, message: str, exit_code: int = 2):
        super().__init__(message)
        self.exit_code = exit_code
