"""Errors a user can act on, and the one tree they form.

Every error that reaches the command line is an :class:`HttpbenchError`: the CLI's one handler
(:func:`httpbench.cli.app.run`) prints its message on one line (``httpbench: error: MESSAGE``) and
exits with :attr:`HttpbenchError.exit_code`. Messages must never contain secrets: URLs in them are
redacted (:meth:`httpbench.model.Target.parse` drops userinfo; recorded commands go through
:func:`httpbench.measure.client_rounds.redact`).

The hierarchy, one line per class (its module in brackets; exit code 2 unless noted)::

    HttpbenchError (httpbench.errors): a failure caused by input or environment (a bad option, URL
      or file, a target down, a preflight check), or exit code 1 when the measurement ran and
      failed (failed timed responses, gates under --enforce-gates, the apk client's checks)
      ApkError (httpbench.errors): a malformed, unsigned or wrongly signed APK v2 package or index
        (raised by httpbench.profiles.alpine.apk)

Not an :class:`HttpbenchError`, on purpose::

    BodyTooLarge (httpbench.measure.preflight): an httpx.RequestError, raised by the preflight's
      bounded reader past its byte limit; it never leaves the preflight, which reports it as an
      HttpbenchError naming the target

The handler also turns click's usage errors into one line and exit code 2, Ctrl-C into
``interrupted`` and 130, and an :class:`OSError` (the environment refused: a file, a socket, a
process) into one line and 2; anything else is a bug: its traceback, then one line saying so.
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
