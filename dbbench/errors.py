"""Errors a user can act on.

Every error that reaches the command line is a :class:`DbbenchError`: the CLI prints its message
on one line and exits with :attr:`DbbenchError.exit_code`. Messages must never contain secrets;
build them from :func:`dbbench.access.urls.redact`-ed URLs.
"""


class DbbenchError(Exception):
    """A failure caused by input or environment, reported as one line (exit code 2)."""

    exit_code = 2


class PrerequisiteError(DbbenchError):
    """Something the local servers need is missing (root, network, free port, disk space)."""


class ConnectionFailed(DbbenchError):
    """A database target could not be reached or refused our credentials."""


class UnsupportedServer(DbbenchError):
    """The server answered but cannot run what dbbench needs (e.g. MySQL < 8.0.18)."""


class NotOurs(DbbenchError):
    """A namespace, role or user of that name exists and is not dbbench's: it is never touched."""


def server_message(exc: BaseException, limit: int | None = None) -> str:
    """What the database server (through its driver) said, as one line of at most ``limit``
    characters: PyMySQL's ``(code, message)`` as ``message (MySQL error code)``, psycopg's first line."""
    args: tuple[object, ...] = getattr(exc, "args", ())
    if len(args) == 2 and isinstance(args[0], int):  # PyMySQL: (code, message)
        return f"{args[1]} (MySQL error {args[0]})"
    lines = str(exc).strip().splitlines()
    return lines[0][:limit] if lines else type(exc).__name__
