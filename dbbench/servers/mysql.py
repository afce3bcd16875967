"""The local MySQL server, from a Debian sid minbase chroot.

No MySQL 8.0 build is installable here; Debian sid ships the 9.x line (same optimizer lineage and
tree-format ``EXPLAIN ANALYZE``). dbbench itself stays MySQL 8.0.18+ compatible; point it at a
real 8.0 server with ``--mysql-url`` to get reference results.

Recipe: ``debootstrap --variant=minbase sid`` (mirror read from the host's apt sources, or
``DBBENCH_DEBIAN_MIRROR``), then ``apt-get install --no-install-recommends mysql-server-core``
inside the chroot. ``chroot`` needs root; mysqld itself runs as the unprivileged service user.

The client programs of the same version (``mysqldump``, ``mysql``: Debian's ``mysql-client-core``)
are installed into the same chroot on first use by :func:`client`, not by ``servers up``.
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlsplit

import pymysql

from dbbench.errors import PrerequisiteError
from dbbench.servers.base import (
    DB_USER,
    Home,
    Kind,
    LocalServer,
    ServerState,
    keep_running,
    pid_alive,
    run,
    stop_pid,
    wait_until,
)

if TYPE_CHECKING:
    from dbbench.servers.base import Account, InstanceState, Recorded, Say

SUITE = "sid"
PACKAGE = "mysql-server-core"
CLIENT_PACKAGE = "mysql-client-core"  # mysql, mysqldump, mysqladmin, … of the server's version
CLIENT_PROGRAMS = ("mysql", "mysqldump", "mysqladmin", "mysqlcheck", "mysqlimport", "mysqlshow")

# Throwaway benchmark server: no binary log, relaxed redo flushing (neither changes plans), a buffer
# pool large enough for the dataset, LOAD DATA LOCAL allowed for fast seeding.
SETTINGS = [
    "--mysqlx=OFF",
    "--bind-address=127.0.0.1",
    "--skip-name-resolve",
    "--disable-log-bin",
    "--innodb-buffer-pool-size=1G",
    "--innodb-flush-log-at-trx-commit=2",
    "--innodb-doublewrite=OFF",
    "--innodb-redo-log-capacity=2147483648",
    "--local-infile=1",
    "--secure-file-priv=",
]


def debian_mirror() -> str:
    """The Debian mirror this machine's apt already uses (never hard-coded)."""
    if env := os.environ.get("DBBENCH_DEBIAN_MIRROR"):
        return env
    sources = Path("/etc/apt/sources.list.d/debian.sources")
    if sources.exists():
        for line in sources.read_text().splitlines():
            if line.startswith("URIs:"):
                return line.split()[1]
    legacy = Path("/etc/apt/sources.list")
    if legacy.exists():
        for line in legacy.read_text().splitlines():
            match = re.match(r"\s*deb\s+(?:\[[^]]*\]\s+)?(\S+)", line)
            if match:
                return match.group(1)
    raise PrerequisiteError("cannot find a Debian mirror in /etc/apt sources; set DBBENCH_DEBIAN_MIRROR")


class MySQLServer(LocalServer):
    kind = Kind(
        "mysql", "MySQL", 53306, "--mysql-port", install_bytes=1200 * 2**20, stop_signal=signal.SIGTERM
    )

    def __init__(self, home: Home):
        super().__init__(home)
        self.root_dir = home.root / "mysql-root"
        self.inner_dir = f"/var/lib/dbbench/{home.instance}"  # as mysqld sees it
        self.outer_dir = self.root_dir / self.inner_dir.lstrip("/")  # as we see it
        self.data_dir = self.outer_dir / "data"
        self.log_file = self.outer_dir / "error.log"

    # -- install -----------------------------------------------------------------------------
    def installed(self) -> bool:
        return (self.root_dir / ".dbbench-complete").exists()

    def require(self) -> None:
        if os.geteuid() != 0:
            raise PrerequisiteError(
                "the local MySQL server lives in a Debian chroot, which needs root; run as root "
                "or point dbbench at your own MySQL 8.0 with --mysql-url / DBBENCH_MYSQL_URL"
            )

    def install(self, say: Say) -> None:
        if self.installed():
            return
        self.require()
        self.home.prepare(self.install_bytes)
        if shutil.which("debootstrap") is None:
            say("installing debootstrap")
            run(
                ["apt-get", "install", "-y", "-q", "debootstrap"],
                what="install debootstrap",
                hint="are Debian's package mirrors reachable?",
                env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"},
            )
        partial = self.root_dir.with_name(self.root_dir.name + ".partial")
        shutil.rmtree(partial, ignore_errors=True)
        say(f"building a Debian {SUITE} minbase chroot for MySQL (about a minute)")
        run(
            ["debootstrap", "--variant=minbase", SUITE, str(partial), debian_mirror()],
            what=f"debootstrap Debian {SUITE}",
            hint="are Debian's package mirrors reachable?",
        )
        env = {"DEBIAN_FRONTEND": "noninteractive", "PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL": "C"}
        say(f"installing {PACKAGE} in the chroot")
        run(
            ["chroot", str(partial), "apt-get", "-q", "-o", "Acquire::Check-Valid-Until=false", "update"],
            what="update apt inside the chroot",
            env=env,
        )
        run(
            ["chroot", str(partial), "apt-get", "install", "-y", "-q", "--no-install-recommends", PACKAGE],
            what=f"install {PACKAGE} inside the chroot",
            env=env,
        )
        run(["chroot", str(partial), "apt-get", "clean"], what="clean apt caches", env=env)
        (partial / ".dbbench-complete").write_text(self._binary_version(partial) + "\n")
        os.replace(partial, self.root_dir)

    def _binary_version(self, root: Path) -> str:
        proc = run(["chroot", str(root), "mysqld", "--version"], what="run mysqld --version")
        match = re.search(r"Ver (\S+)", proc.stdout)
        return match.group(1) if match else proc.stdout.strip()

    # -- lifecycle ---------------------------------------------------------------------------
    def running(self, st: ServerState | None) -> bool:
        return st is not None and pid_alive(st.pid, must_contain=f"--datadir={self.inner_dir}/data")

    def _chroot(self, account) -> list[str]:
        uid, gid = account
        return ["chroot", f"--userspec={uid}:{gid}", str(self.root_dir)]

    def start(self, state: InstanceState, st: Recorded, port: int, account: Account, say: Say) -> ServerState:
        assert account is not None  # root, or require() has refused already
        common = [f"--datadir={self.inner_dir}/data", f"--log-error={self.inner_dir}/error.log"]
        if not (self.data_dir / "mysql").exists():
            say("initializing a MySQL data directory")
            shutil.rmtree(self.outer_dir, ignore_errors=True)
            self.outer_dir.mkdir(parents=True)
            os.chown(self.outer_dir, *account)
            run(
                self._chroot(account) + ["mysqld", "--no-defaults", "--initialize-insecure", *common],
                what="initialize the MySQL data directory",
                hint=f"see {self.log_file}",
            )
        cmd = self._chroot(account) + [
            "mysqld",
            "--no-defaults",
            *common,
            f"--port={port}",
            f"--socket={self.inner_dir}/mysqld.sock",
            f"--pid-file={self.inner_dir}/mysqld.pid",
            *SETTINGS,
        ]
        proc = subprocess.Popen(
            cmd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            cwd="/",
        )
        keep_running(proc)
        st = ServerState(port=port, pid=proc.pid, data_dir=str(self.data_dir))
        try:
            wait_until(
                lambda: self._ready(st, state.password),
                timeout=120,
                alive=lambda: proc.poll() is None,
                what="MySQL",
                log=self.log_file,
            )
        except BaseException:
            stop_pid(proc.pid, signal.SIGTERM, grace=20)  # never leave a half-started server
            raise
        st.version = self.live_version(st, state.password)
        return st

    def _connect(self, st: ServerState, user: str, password: str):
        return pymysql.connect(
            host="127.0.0.1", port=st.port, user=user, password=password, connect_timeout=3, autocommit=True
        )

    def _ready(self, st: ServerState, password: str) -> bool:
        """Ready = our account logs in. On the first start, create it and lock root down."""
        try:
            self._connect(st, DB_USER, password).close()
            return True
        except pymysql.err.OperationalError as exc:
            if exc.args[0] not in (1045, 1130):  # access denied / host not allowed yet
                return False  # not accepting connections yet
        try:  # a fresh data directory has root@localhost without password: reachable by socket
            conn = pymysql.connect(
                unix_socket=str(self.outer_dir / "mysqld.sock"),
                user="root",
                password="",
                connect_timeout=3,
                autocommit=True,
            )
        except pymysql.err.OperationalError:
            return False
        with conn, conn.cursor() as cur:
            for host in ("127.0.0.1", "localhost"):
                cur.execute(f"CREATE USER IF NOT EXISTS '{DB_USER}'@'{host}' IDENTIFIED BY %s", (password,))
                cur.execute(f"GRANT ALL PRIVILEGES ON *.* TO '{DB_USER}'@'{host}' WITH GRANT OPTION")
            cur.execute("ALTER USER 'root'@'localhost' IDENTIFIED BY %s", (password,))
        return False  # check again, through the account we just made

    def live_version(self, st: ServerState, password: str) -> str | None:
        try:
            with self._connect(st, DB_USER, password) as conn, conn.cursor() as cur:
                cur.execute("SELECT VERSION()")
                return cur.fetchone()[0]
        except pymysql.err.Error:
            return None

    def url(self, st: ServerState, password: str) -> str:
        return f"mysql+pymysql://{DB_USER}:{password}@127.0.0.1:{st.port}/"


# -- the client programs -------------------------------------------------------------------------
def _quiet(_: str) -> None:
    pass


def client_tool(name: str, *, home: Home | None = None, say: Say = _quiet) -> list[str]:
    """The command line that runs the MySQL client program ``name`` (``mysqldump``, ``mysql``, …)
    of the local server's own version: Debian's ``mysql-client-core`` in the server's chroot,
    installed there on first use (the chroot itself too, as ``servers up`` would). Needs root."""
    if name not in CLIENT_PROGRAMS:
        raise PrerequisiteError(f"{name!r} is not a MySQL client program ({', '.join(CLIENT_PROGRAMS)})")
    server = MySQLServer(home or Home())
    server.require()
    server.install(say)
    program = server.root_dir / "usr" / "bin" / name
    if not program.exists():
        with open(server.root_dir / "tmp" / "dbbench-client-install.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # one install at a time (instances share the chroot)
            if not program.exists():  # another process installed it while we waited
                _install_client(server, say)
    return ["chroot", str(server.root_dir), name]


def _install_client(server: MySQLServer, say: Say) -> None:
    """Debian's client package in the chroot (the caller holds the install lock)."""
    say(f"installing {CLIENT_PACKAGE} in the chroot")
    env = {"DEBIAN_FRONTEND": "noninteractive", "PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL": "C"}
    apt = ["chroot", str(server.root_dir), "apt-get", "-q", "-o", "DPkg::Lock::Timeout=300"]
    run(
        [*apt, "-o", "Acquire::Check-Valid-Until=false", "update"],
        what="update apt inside the chroot",
        hint="are Debian's package mirrors reachable?",
        env=env,
    )
    run(
        [*apt, "install", "-y", "--no-install-recommends", CLIENT_PACKAGE],
        what=f"install {CLIENT_PACKAGE} inside the chroot",
        env=env,
    )
    run(["chroot", str(server.root_dir), "apt-get", "clean"], what="clean apt caches", env=env)


def client(
    name: str, url: str, args: Sequence[str], *, home: Home | None = None, timeout: float = 600
) -> subprocess.CompletedProcess:
    """Run the client program ``name`` (:func:`client_tool`) against the server of ``url``
        (``mysql+pymysql://user:password@host:port/``) with ``args``; its output as text (bytes that are
    not UTF-8, as mysqldump writes binary columns, kept with ``surrogateescape``). The
        account's password goes through an option file readable by root only, removed afterwards, not
        through the command line."""
    parts = urlsplit(url)
    tool = client_tool(name, home=home)
    root = Path(tool[1])
    options = (
        "[client]\n"
        f"user={unquote(parts.username or '')}\n"
        f"password={unquote(parts.password or '')}\n"
        f"host={parts.hostname or '127.0.0.1'}\n"
        f"port={parts.port or 3306}\n"
        "protocol=TCP\n"
    )
    (root / "tmp").mkdir(exist_ok=True)
    fd, path = tempfile.mkstemp(prefix="dbbench-client-", suffix=".cnf", dir=root / "tmp")
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(options)
        inner = "/" + str(Path(path).relative_to(root))
        return run(
            [*tool, f"--defaults-extra-file={inner}", *args],
            what=f"run {name}",
            timeout=timeout,
            errors="surrogateescape",
        )
    finally:
        os.unlink(path)
