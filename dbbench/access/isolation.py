"""User SQL runs as the namespace's own role, confined by the server's privileges.

A catalog's setup SQL and its query shapes are code from the catalog's author. dbbench does not
try to judge that code by its text (the checks in :mod:`dbbench.setup.loader` are early, friendly
errors only): it runs it logged in as a role that can reach nothing but the namespace, so the
server itself refuses what reaches outside.

* **PostgreSQL** -- a role ``dbbench_<namespace>`` with no attributes (not superuser, cannot
  create roles or databases, no replication, no RLS bypass), member of no other role, holding
  ``USAGE, CREATE`` on the namespace schema and the usual table privileges on its tables
  (``dbbench_meta`` is read-only to it). dbbench logs in *as* that role: ``SET ROLE`` would not
  do, because a superuser session can ``RESET ROLE`` from inside a ``DO`` block. One gap is the
  server's own default before PostgreSQL 15: every role may create objects in ``public``. After
  the setup, anything the role owns outside the namespace fails the setup and is dropped.
* **MySQL** -- a user ``'dbbench_<namespace>'@'%'`` whose only grant is ``ALL`` on the namespace
  database (no ``GRANT OPTION``, no global privilege: no ``FILE``, ``SUPER``, ``SHUTDOWN``,
  ``CREATE USER``), connected without ``local_infile``. Routines it creates run as itself.

The role logs in with a fresh random password for each use and is locked (``NOLOGIN`` /
``ACCOUNT LOCK``) afterwards; the password is never written anywhere.

On a server where dbbench's own user may not create roles, :func:`sandbox` raises
:class:`IsolationUnavailable`; the caller may then choose ``isolate=False`` (``--no-isolation``),
which runs user SQL with dbbench's own privileges behind the text checks only.
"""

from __future__ import annotations

import contextlib
import hashlib
import secrets
from collections.abc import Callable, Iterator
from typing import Any

from dbbench import dialects
from dbbench.access import urls
from dbbench.access.targets import Target, connect
from dbbench.errors import ConnectionFailed, DbbenchError, NotOurs, server_message

NO_ISOLATION_FLAG = "--no-isolation"


class IsolationUnavailable(DbbenchError):
    """dbbench cannot create or use the namespace role on this server."""


def refuse_foreign(target: Target, conn, namespace: str) -> None:
    """Raise :class:`NotOurs` when ``namespace`` exists without dbbench's marker (never touched)."""
    d = dialects.get(target.dialect)
    if d.namespace_state(conn, namespace) == "foreign":
        raise NotOurs(
            f"{target.label} {d.NAMESPACE_KIND} {namespace!r} exists and is not dbbench's "
            "(no dbbench_meta marker); nothing was changed. Choose another name with "
            "--namespace or remove it yourself"
        )


def role_name(namespace: str) -> str:
    """The namespace's role (PostgreSQL) / user (MySQL): at most 32 characters, MySQL's limit."""
    name = f"dbbench_{namespace}"
    if len(name) <= 32:
        return name
    return f"dbbench_{namespace[:14]}_{hashlib.sha256(namespace.encode()).hexdigest()[:8]}"


@contextlib.contextmanager
def sandbox(
    target: Target,
    namespace: str,
    *,
    isolate: bool = True,
    reload: Callable[[Any], None] | None = None,
) -> Iterator[Target]:
    """A :class:`Target` logged in as ``namespace``'s own role (created or re-armed here, locked
    again on exit). ``isolate=False`` yields ``target`` itself: user SQL then runs with dbbench's
    own privileges.

    ``reload(conn)`` (a seed: the namespace emptied and marked ``loading``) runs as dbbench's own
    user only once the role is armed and has logged in, and the role gets its privileges on the new
    namespace in the same transaction: a role that cannot be prepared or used leaves the namespace
    as it was, its data and state untouched."""
    d = dialects.get(target.dialect)
    with target.all_or_nothing() as conn:  # an index trial a killed `dbbench advise` left behind
        d.recover_index_trials(conn, namespace, 0)
    if not isolate:
        if reload is not None:
            _reload(target, reload)
        yield target
        return
    role = role_name(namespace)
    try:
        password = _arm(target, namespace, role)  # refused (not ours, no privilege): nothing to lock again
    except DbbenchError as exc:
        _note_left_incomplete(exc, target, namespace)
        raise
    try:
        try:
            inner = _login(target, namespace, role, password)
        except DbbenchError as exc:
            _note_left_incomplete(exc, target, namespace)
            raise
        try:
            if reload is not None:
                _reload(target, reload, lambda conn: d.grant_namespace(conn, namespace, role))
            yield inner
        finally:
            inner.dispose()
    finally:
        with target.all_or_nothing() as conn:
            d.close_role(conn, role)
            conn.commit()


def _reload(target: Target, *steps: Callable[[Any], None]) -> None:
    """Run ``steps`` as dbbench's own user in one transaction, committed."""
    with target.all_or_nothing() as conn:
        for step in steps:
            step(conn)
        conn.commit()


def _arm(target: Target, namespace: str, role: str) -> str:
    """Create or re-arm ``role`` with a fresh random password (committed); the password."""
    d = dialects.get(target.dialect)
    password = secrets.token_urlsafe(24)
    with target.all_or_nothing() as conn:
        try:
            d.open_role(conn, namespace, role, password)
            conn.commit()
        except DbbenchError:
            raise
        except Exception as exc:
            if not d.is_driver_error(exc):
                raise
            raise IsolationUnavailable(
                f"cannot prepare the namespace role {role!r} on {target.label} at {target.safe_url}: "
                f"{server_message(exc)}. User SQL runs "
                f"as that role so the server confines it to {d.NAMESPACE_KIND} {namespace!r}; give dbbench's "
                f"user {d.ROLE_PRIVILEGE}, or pass {NO_ISOLATION_FLAG} to run it with dbbench's own privileges "
                "(text checks only)"
            ) from None
    return password


def _login(target: Target, namespace: str, role: str, password: str) -> Target:
    """``target`` logged in as ``role``; re-armed once if the login is refused (another dbbench
    run on this namespace may lock the role in between)."""

    def as_role(password: str) -> Target:
        login_url = urls.as_login(target.url, role, password)
        return connect(login_url, dialect=target.dialect, source="the namespace role")

    try:
        return as_role(password)
    except ConnectionFailed:
        pass
    try:
        return as_role(_arm(target, namespace, role))
    except ConnectionFailed as exc:
        raise IsolationUnavailable(
            f"cannot log in as the namespace role {role!r}: {exc}; pass {NO_ISOLATION_FLAG} to run "
            "user SQL with dbbench's own privileges"
        ) from None


def _note_left_incomplete(exc: DbbenchError, target: Target, namespace: str) -> None:
    """Add to ``exc`` (the role could not be prepared or used) that the namespace is left incomplete
    when it is: a seed empties it and marks it ``loading`` before its setup SQL runs as the role."""
    d = dialects.get(target.dialect)
    try:
        with target.all_or_nothing() as conn:
            state = d.namespace_state(conn, namespace)
            conn.rollback()
    except Exception:  # the refusal itself is the error to report
        return
    if state == "incomplete":
        exc.args = (
            f"{exc}; {d.NAMESPACE_KIND} {namespace!r} is left empty and marked incomplete (state "
            "loading): no command uses it until `dbbench seed` builds it again",
        )


def escaped(target: Target, namespace: str) -> list[str]:
    """What the namespace role owns outside its namespace (PostgreSQL ``public`` is writable by
    every role before version 15); always empty on MySQL, whose grants confine the user."""
    d = dialects.get(target.dialect)
    with target.all_or_nothing() as conn:
        found = d.owned_outside(conn, namespace, role_name(namespace))
        conn.rollback()
    return found


def drop_escaped(target: Target, namespace: str) -> None:
    """Drop everything the namespace role owns in this database (the namespace's own objects
    included: the namespace is then incomplete and must be built again)."""
    d = dialects.get(target.dialect)
    with target.all_or_nothing() as conn:
        d.drop_owned(conn, role_name(namespace))
        conn.commit()


def drop_namespace(target: Target, namespace: str) -> None:
    """Drop ``namespace`` if it is dbbench's (complete or not; anything else is left alone) and its
    role; absent is fine."""
    d = dialects.get(target.dialect)
    with target.all_or_nothing() as conn:
        d.drop_namespace(conn, namespace)
        d.drop_role(conn, namespace, role_name(namespace))
        conn.commit()


def drop_role(target: Target, namespace: str) -> None:
    """Remove the namespace role (its namespace dropped already, or never made); absent is fine."""
    d = dialects.get(target.dialect)
    with target.all_or_nothing() as conn:
        d.drop_role(conn, namespace, role_name(namespace))
        conn.commit()
