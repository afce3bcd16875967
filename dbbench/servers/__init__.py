"""Local, loopback-only, throwaway database servers: the embedded default of every dbbench command.

>>> from dbbench import servers
>>> servers.up()                      # install on first use, start, wait until ready
>>> servers.local_url("postgresql")   # the URL dbbench uses when none is given
>>> servers.down()                    # stop exactly the processes `up` started
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from dbbench.defaults import Dialect
from dbbench.servers.base import Home, Say, ServerState, default_home  # noqa: F401 (ServerState: API)
from dbbench.servers.mysql import MySQLServer
from dbbench.servers.postgres import PostgresServer

__all__ = ["Home", "ServerStatus", "default_home", "down", "local_url", "status", "up"]

KINDS = {"postgresql": PostgresServer, "mysql": MySQLServer}


@dataclass
class ServerStatus:
    """One row of `dbbench servers status`; ``url`` is redacted."""

    server: str
    state: str  # running | stopped | not installed
    version: str | None
    port: int | None
    pid: int | None
    data_dir: str | None
    url: str | None


def _servers(home: Home, which: Iterable[Dialect] | None):
    return [KINDS[k](home) for k in (which or KINDS)]


def _quiet(_: str) -> None:
    pass


def up(
    which: Iterable[Dialect] | None = None,
    *,
    home: Home | None = None,
    ports: dict[str, int | None] | None = None,
    say: Say = _quiet,
) -> list[ServerStatus]:
    """Install (first time only) and start the local servers; a no-op for those already running."""
    home = home or Home()
    state = home.load()
    for server in _servers(home, which):
        st = server.up(state, (ports or {}).get(server.key), say)
        state.servers[server.key] = st
        home.save(state)
    return status(which, home=home)


def down(which: Iterable[Dialect] | None = None, *, home: Home | None = None) -> list[str]:
    """Stop the servers `up` started (by recorded pid). Returns the names of those stopped."""
    home = home or Home()
    if not home.exists():
        return []
    state = home.load()
    stopped = []
    for server in _servers(home, which):
        st = state.servers.get(server.key)
        if st is None:
            continue
        if server.running(st):
            server.down(st)
            stopped.append(server.key)
        st.pid = None
        home.save(state)
    return stopped


def status(which: Iterable[Dialect] | None = None, *, home: Home | None = None) -> list[ServerStatus]:
    home = home or Home()
    state = home.load()
    rows = []
    for server in _servers(home, which):
        st = state.servers.get(server.key)
        if st is None or not server.installed():
            rows.append(
                ServerStatus(
                    server.label,
                    "not installed" if not server.installed() else "stopped",
                    None,
                    None,
                    None,
                    None,
                    None,
                )
            )
            continue
        running = server.running(st)
        version = server.live_version(st, state.password) if running else st.version
        rows.append(
            ServerStatus(
                server=server.label,
                state="running" if running else "stopped",
                version=version,
                port=st.port,
                pid=st.pid if running else None,
                data_dir=st.data_dir,
                url=server.url(st, "***"),  # the password is never shown
            )
        )
    return rows


def local_url(dialect: Dialect, *, home: Home | None = None) -> str | None:
    """The URL (with password) of the local server for ``dialect``, if one was ever set up."""
    home = home or Home()
    if not home.exists():
        return None
    state = home.load()
    st = state.servers.get(dialect)
    if st is None:
        return None
    return KINDS[dialect](home).url(st, state.password)
