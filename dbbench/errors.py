"""Errors a user can act on, and the one tree they form.

Every error that reaches the command line is a :class:`DbbenchError`: the CLI's one handler
(:class:`dbbench.cli.app.Cli`) prints its message on one line and exits with
:attr:`DbbenchError.exit_code`. Messages must never contain secrets; build them from
:func:`dbbench.access.urls.redact`-ed URLs.

The hierarchy, one line per class (its module in brackets; exit code 2 unless noted)::

    DbbenchError (dbbench.errors): a failure caused by input or environment
      PrerequisiteError (dbbench.errors): the local servers lack root, network, a free port or disk
      ConnectionFailed (dbbench.errors): a target cannot be reached or refused the credentials
      UnsupportedServer (dbbench.errors): the server cannot run what dbbench needs (MySQL < 8.0.18)
      NotOurs (dbbench.errors): a namespace, role or user of that name is not dbbench's
      CannotHide (dbbench.errors): the server cannot hide this index from its planner (a MySQL primary key)
      IsolationUnavailable (dbbench.access.isolation): the namespace role cannot be created or used
      CatalogError (dbbench.catalog.entries): catalog problems, one line each
      SetupError (dbbench.setup.split): a catalog's setup SQL that dbbench refuses to run
      PlanTooDeep (dbbench.dialects.plan): a plan nested deeper than dbbench reads
      ResultFileError (dbbench.document.check): a result or baseline file that cannot be read
        DocumentError (dbbench.document.check): a document field with a bad value, named
      NotSeeded (dbbench.measure.explain): the namespace holds no complete seed (of the catalog)
      GrowError (dbbench.measure.grow): a ladder that cannot be climbed
      TrialRefused (dbbench.advise.trial): an index trial dbbench will not run (namespace, table, statement)
      TrialFailed (dbbench.advise.trial): the server refused an index trial (privileges, duplicate values)
      SpecError (dbbench.volume.spec): data spec problems, one line each
      ExprError (dbbench.volume.expr): a spec number that is not an expression of :scale
      GeneratorError (dbbench.volume.generators): a column a generator cannot make as asked
      FillFailed (dbbench.volume.load): a fill whose checks or fingerprints fail (exit code 1)
      NothingToCompare (dbbench.workflow.runs): the result holds none of the baseline's shapes
      BaselineRefused (dbbench.workflow.runs): an assertion fails in a baseline to save (exit code 1)
      DatasetUnverified (dbbench.workflow.seed): a seeded dataset does not verify (exit code 1)
        ScratchDatasetFailed (dbbench.workflow.runs): ``check``'s scratch dataset (exit code 1)

Not a :class:`DbbenchError`, on purpose::

    PlanAssertionError (dbbench.measure.assertions): an AssertionError, raised by assert_plan in
      the user's own tests, so that pytest reports a failed assertion with the plan; no command
      raises it

The handler also turns a database driver's error (a statement refused mid-run) and an
:class:`OSError` naming a file (an output that cannot be written) into one line and exit code 2.
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


class CannotHide(DbbenchError):
    """The server cannot hide this index from its planner (MySQL: a primary key, or an index
    invisible already); nothing was changed."""


def server_message(exc: BaseException, limit: int | None = None) -> str:
    """What the database server (through its driver) said, as one line of at most ``limit``
    characters: PyMySQL's ``(code, message)`` as ``message (MySQL error code)``, psycopg's first line."""
    args: tuple[object, ...] = getattr(exc, "args", ())
    if len(args) == 2 and isinstance(args[0], int):  # PyMySQL: (code, message)
        return f"{args[1]} (MySQL error {args[0]})"
    lines = str(exc).strip().splitlines()
    return lines[0][:limit] if lines else type(exc).__name__
