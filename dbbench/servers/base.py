"""What both local servers share: where they live, their saved state, processes and ports.

Layout under the dbbench home (``DBBENCH_HOME``; default ``/var/cache/dbbench`` for root,
``$XDG_CACHE_HOME/dbbench`` or ``~/.cache/dbbench`` otherwise)::

    downloads/                     fetched archives
    postgresql-<version>/          unpacked PostgreSQL binaries (reused by every instance)
    mysql-root/                    Debian minbase chroot holding mysqld (reused by every instance)
    instances/<name>/state.json    ports, pids, versions and the generated password (mode 0600)
    instances/<name>/pg-data/      PostgreSQL data directory
    mysql-root/var/lib/dbbench/<name>/   MySQL data directory (inside the chroot)

Installs are written under a ``.partial`` name and renamed when complete, so an interrupted install
is redone rather than half-used.
"""

from __future__ import annotations

import errno
import json
import os
import pwd
import secrets
import shutil
import signal
import socket
import stat
import subprocess
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import ClassVar

from dbbench.errors import DbbenchError, PrerequisiteError
from verdict.files import write_atomic

Say = Callable[[str], None]
SERVICE_USER = os.environ.get("DBBENCH_SERVICE_USER", "dbbench")
DB_USER = "dbbench"


def default_home() -> Path:
    if env := os.environ.get("DBBENCH_HOME"):
        return Path(env).expanduser().absolute()
    if os.geteuid() == 0:
        return Path("/var/cache/dbbench")
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
    return Path(cache) / "dbbench"


@dataclass
class ServerState:
    """What `up` recorded about one server of one instance."""

    port: int
    pid: int | None = None
    version: str | None = None
    data_dir: str | None = None


Recorded = ServerState | None  # what the state file says of a server, if anything
Account = tuple[int, int] | None  # (uid, gid) the server runs as; None: as dbbench itself


@dataclass
class InstanceState:
    password: str = field(default_factory=lambda: secrets.token_urlsafe(18))
    servers: dict[str, ServerState] = field(default_factory=dict)


class Home:
    """The dbbench home directory and one named instance of local servers in it."""

    def __init__(self, root: Path | None = None, instance: str | None = None):
        self.root = (root or default_home()).absolute()
        # as the command line's --instance: the environment's DBBENCH_INSTANCE, else "default"
        instance = instance or os.environ.get("DBBENCH_INSTANCE") or "default"
        if not instance.replace("-", "").replace("_", "").isalnum():
            raise PrerequisiteError(f"instance name {instance!r}: use letters, digits, - and _")
        self.instance = instance
        self.instance_dir = self.root / "instances" / instance
        self.state_file = self.instance_dir / "state.json"
        self.downloads = self.root / "downloads"

    # -- state -------------------------------------------------------------------------------
    def load(self) -> InstanceState:
        try:
            raw = json.loads(read_private(self.state_file))
        except FileNotFoundError:
            return InstanceState()
        except (OSError, ValueError) as exc:
            raise PrerequisiteError(f"cannot read {self.state_file}: {exc}") from None
        try:
            servers = {k: ServerState(**v) for k, v in raw.get("servers", {}).items()}
            return InstanceState(password=str(raw["password"]), servers=servers)
        except (AttributeError, KeyError, TypeError):
            raise PrerequisiteError(f"cannot read {self.state_file}: not a dbbench state file") from None

    def save(self, state: InstanceState) -> None:
        self.instance_dir.mkdir(parents=True, exist_ok=True)
        # a fresh exclusive temporary file, then a rename: never written through a planted link
        write_atomic(self.state_file, json.dumps(asdict(state), indent=2), 0o600)

    def exists(self) -> bool:
        return self.state_file.exists()

    # -- preparing ---------------------------------------------------------------------------
    def prepare(self, need_bytes: int) -> None:
        """Create the home (traversable by the service user) and check free space.

        Only directories created here get mode 0755: an existing one (``--home /tmp``, mode 1777)
        keeps its mode, and one owned by another user is refused rather than used."""
        ours = (self.root, self.downloads, self.root / "instances", self.instance_dir)
        created: list[Path] = []
        try:
            for d in ours:
                created += make_dirs(d)
        except OSError as exc:
            raise PrerequisiteError(f"cannot create dbbench home {self.root}: {exc.strerror}") from None
        for d in ours:
            owner = d.stat().st_uid
            if owner not in (os.geteuid(), 0):
                raise PrerequisiteError(
                    f"{d} is owned by another user (uid {owner}); dbbench will not keep "
                    "servers or passwords there: set DBBENCH_HOME elsewhere"
                )
        if os.geteuid() == 0:
            for d in created:
                d.chmod(0o755)
            for parent in [*reversed(ours[2:]), self.root, *self.root.parents]:
                if not parent.stat().st_mode & stat.S_IXOTH:
                    raise PrerequisiteError(
                        f"the servers run as user {SERVICE_USER!r}, which cannot enter {parent} "
                        f"(mode {stat.S_IMODE(parent.stat().st_mode):o}); set DBBENCH_HOME elsewhere"
                    )
        free = shutil.disk_usage(self.root).free
        if free < need_bytes:
            raise PrerequisiteError(
                f"not enough disk space in {self.root}: {free / 2**20:.0f} MiB free, "
                f"{need_bytes / 2**20:.0f} MiB needed"
            )


def make_dirs(path: Path) -> list[Path]:
    """``mkdir -p path``, returning the directories it created (outermost first)."""
    missing = []
    d = path
    while not d.exists():
        missing.append(d)
        d = d.parent
    created = []
    for d in reversed(missing):
        try:
            d.mkdir()
        except FileExistsError:
            continue
        created.append(d)
    return created


def _refuse_foreign(path: Path, info: os.stat_result) -> None:
    if not stat.S_ISREG(info.st_mode):
        raise PrerequisiteError(
            f"{path} is not a regular file; dbbench keeps its state and passwords in "
            "regular files only (remove it)"
        )
    if info.st_uid != os.geteuid():
        raise PrerequisiteError(
            f"{path} is owned by another user (uid {info.st_uid}), so its contents are "
            "not dbbench's; remove it or set DBBENCH_HOME elsewhere"
        )


def read_private(path: Path) -> str:
    """The text of a state file, refusing a symbolic link, a non-regular file or a file owned by
    another user (one line each); FileNotFoundError when absent."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise PrerequisiteError(
                f"{path} is a symbolic link; dbbench does not follow links for its "
                "state and passwords (remove it)"
            ) from None
        raise
    with os.fdopen(fd, "rb") as fh:
        _refuse_foreign(path, os.fstat(fh.fileno()))
        return fh.read().decode("utf-8")


def create_private(path: Path, account: tuple[int, int] | None = None) -> int:
    """A new file descriptor for writing ``path`` afresh, mode 0600 (owned by ``account`` if
    given). Whatever stood at the name (a stale file, a planted symbolic link) is unlinked first
    and the file is created exclusively, so a write can never land elsewhere."""
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    except IsADirectoryError:
        raise PrerequisiteError(f"{path} is a directory; remove it") from None
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    if account is not None:
        os.fchown(fd, *account)
    return fd


# -- the unprivileged account the servers run as -----------------------------------------------
def service_account(say: Say) -> tuple[int, int] | None:
    """(uid, gid) to run servers as, creating the system user when root; None = run as ourselves."""
    if os.geteuid() != 0:
        return None
    try:
        entry = pwd.getpwnam(SERVICE_USER)
    except KeyError:
        say(f"creating system user {SERVICE_USER!r} to run the database servers")
        run(
            ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", SERVICE_USER],
            what=f"create system user {SERVICE_USER!r}",
        )
        entry = pwd.getpwnam(SERVICE_USER)
    return entry.pw_uid, entry.pw_gid


def chown_tree(path: Path, account: tuple[int, int] | None) -> None:
    if account is None:
        return
    os.chown(path, *account)
    for dirpath, dirnames, filenames in os.walk(path):
        for name in dirnames + filenames:
            os.chown(os.path.join(dirpath, name), *account, follow_symlinks=False)


# -- subprocesses ------------------------------------------------------------------------------
def run(
    cmd: list[str], *, what: str, hint: str = "", timeout: float = 1800, **kwargs
) -> subprocess.CompletedProcess:
    """Run a command to completion; on failure raise a one-line PrerequisiteError."""
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, **kwargs)
    except FileNotFoundError:
        raise PrerequisiteError(f"cannot {what}: {cmd[0]} is not installed") from None
    except subprocess.TimeoutExpired:
        raise PrerequisiteError(f"cannot {what}: {cmd[0]} did not finish in {timeout:.0f} s") from None
    if proc.returncode != 0:
        detail = last_line(proc.stderr) or last_line(proc.stdout) or f"exit code {proc.returncode}"
        if "No space left" in (proc.stderr + proc.stdout):
            hint = "disk full"
        raise PrerequisiteError(f"cannot {what}: {detail}" + (f" ({hint})" if hint else ""))
    return proc


def last_line(text: str | None) -> str:
    lines = [ln.strip() for ln in (text or "").splitlines() if ln.strip()]
    return lines[-1] if lines else ""


def pid_alive(pid: int | None, must_contain: str | None = None) -> bool:
    """Whether ``pid`` runs (not a zombie) and, if given, its command line mentions ``must_contain``."""
    if not pid:
        return False
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            if fh.read().rsplit(b")", 1)[1].split()[0] == b"Z":
                return False
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False
    return must_contain is None or must_contain in cmdline


# A server this process started, by pid: it outlives the command that started it, so its handle is
# kept (not collected while the server runs, which Python warns about) until stop_pid reaps it (a
# server stopped by the process that started it would otherwise stay a zombie of that process).
_STARTED: dict[int, subprocess.Popen] = {}


def keep_running(proc: subprocess.Popen) -> None:
    """``proc`` is a server left running when this process ends (:data:`_STARTED`)."""
    _STARTED[proc.pid] = proc


def stop_pid(pid: int, sig: int, *, grace: float = 60.0) -> None:
    """Send ``sig`` to ``pid`` and wait for it to exit; SIGKILL after ``grace`` seconds."""
    try:
        _stop(pid, sig, grace)
    finally:
        if (proc := _STARTED.get(pid)) is not None and proc.poll() is not None:
            del _STARTED[pid]  # reaped


def _stop(pid: int, sig: int, grace: float) -> None:
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        if not pid_alive(pid):
            return
        time.sleep(0.05)
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        return
    while pid_alive(pid):
        time.sleep(0.05)


def port_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError as exc:
            if exc.errno in (errno.EADDRINUSE, errno.EACCES):
                return False
            raise
    return True


def require_port(port: int, label: str, option: str) -> None:
    if not port_free(port):
        raise PrerequisiteError(
            f"port {port} on 127.0.0.1 is in use by another process; "
            f"stop it or start {label} on another port with {option}"
        )


def wait_until(
    check: Callable[[], bool],
    *,
    timeout: float,
    alive: Callable[[], bool],
    what: str,
    log: Path | None = None,
) -> None:
    """Poll ``check`` until it holds; fail early when ``alive`` says the process died."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        if not alive():
            detail = tail_error(log) if log else ""
            raise PrerequisiteError(f"{what} exited during start-up" + (f": {detail}" if detail else ""))
        time.sleep(0.1)
    raise PrerequisiteError(f"{what} did not become ready within {timeout:.0f} s")


def tail_error(log: Path) -> str:
    try:
        lines = log.read_text(errors="replace").splitlines()
    except OSError:
        return ""
    errors = [ln for ln in lines if "ERROR" in ln or "FATAL" in ln]
    return (errors or lines or [""])[-1].strip()[:300]


@dataclass(frozen=True)
class Kind:
    """What sets one kind of local server apart: the facts :class:`LocalServer` works with."""

    key: str  # its dialect
    label: str
    default_port: int
    port_option: str  # the ``dbbench servers up`` option that overrides the port
    install_bytes: int  # what the install needs on disk, about
    stop_signal: int  # the server's own shutdown


# -- what both servers do the same way --------------------------------------------------------------
class LocalServer:
    """One kind of local server in a :class:`Home`. Subclasses say how to install, start and reach
    it; starting (reuse a running one, install, the service account, the port) and stopping (the
    recorded pid, with the server's own shutdown signal) are the same for both."""

    kind: ClassVar[Kind]  # a subclass's; its fields become class attributes of the subclass
    key: ClassVar[str]
    label: ClassVar[str]
    default_port: ClassVar[int]
    port_option: ClassVar[str]
    install_bytes: ClassVar[int]
    stop_signal: ClassVar[int]

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        for f in fields(cls.kind):
            setattr(cls, f.name, getattr(cls.kind, f.name))

    def __init__(self, home: Home):
        self.home = home

    # -- what a kind of server says ----------------------------------------------------------
    def installed(self) -> bool:
        raise NotImplementedError

    def install(self, say: Say) -> None:
        raise NotImplementedError

    def running(self, st: ServerState | None) -> bool:
        raise NotImplementedError

    def start(self, state: InstanceState, st: Recorded, port: int, account: Account, say: Say) -> ServerState:
        """Start on ``port`` (``st``: what was recorded before, if anything) and wait until ready."""
        raise NotImplementedError

    def live_version(self, st: ServerState, password: str) -> str | None:
        raise NotImplementedError

    def url(self, st: ServerState, password: str) -> str:
        raise NotImplementedError

    def require(self) -> None:
        """Raise :class:`PrerequisiteError` when this server cannot run here at all."""

    # -- the same for both -------------------------------------------------------------------
    def up(self, state: InstanceState, port: int | None, say: Say) -> ServerState:
        st = state.servers.get(self.key)
        if st is not None and self.running(st):
            if port is not None and port != st.port:
                raise DbbenchError(
                    f"the local {self.label} is already running on port {st.port}; {self.port_option} "
                    f"{port} applies when it starts (`dbbench servers down {self.key}` first, or use "
                    "another --instance)"
                )
            return st
        self.require()
        self.install(say)
        account = service_account(say)
        port = port or (st.port if st else self.default_port)
        require_port(port, self.label, self.port_option)
        return self.start(state, st, port, account, say)

    def down(self, st: ServerState) -> None:
        if st.pid is not None and self.running(st):
            stop_pid(st.pid, self.stop_signal)
