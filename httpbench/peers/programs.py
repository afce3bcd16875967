"""The peer programs httpbench starts or drives (nginx, caddy, wrk): found, and installed when missing.

``httpbench peers install`` (and the demos, the bench client and the test session, which call
:func:`ensure`) installs what is missing from the operating system's packages, as ``dbbench
servers up`` installs the databases: a newcomer's machine needs no hand step. Installing needs root
and ``apt-get`` (Debian, Ubuntu); elsewhere the error names the program and what to install.

While installing, Debian's ``policy-rc.d`` hook (exit code 101: "action forbidden") keeps the
package scripts from starting a system-wide nginx or caddy on ports 80/443: httpbench runs its own
instances on loopback ports and never needs the system service. The hook is only written when
none exists, and removed afterwards.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import subprocess
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from httpbench.errors import HttpbenchError


@dataclass(frozen=True)
class Program:
    name: str
    package: str  # the Debian package that provides it
    places: tuple[str, ...]  # where it is looked for when not on PATH (root's sbin is not always there)
    role: str

    def find(self) -> str | None:
        return shutil.which(self.name) or next((p for p in self.places if os.access(p, os.X_OK)), None)


PROGRAMS: dict[str, Program] = {
    p.name: p
    for p in (
        Program(
            "nginx", "nginx", ("/usr/sbin/nginx", "/usr/local/sbin/nginx"), "baseline web server, proxy cache"
        ),
        Program(
            "caddy", "caddy", ("/usr/bin/caddy", "/usr/local/bin/caddy"), "candidate web server (demo alpine)"
        ),
        Program(
            "wrk", "wrk", ("/usr/bin/wrk", "/usr/local/bin/wrk"), "reference load generator (bench-client)"
        ),
    )
}
ALL = tuple(PROGRAMS)

_POLICY = Path("/usr/sbin/policy-rc.d")
_LOCK = Path("/run/lock/httpbench-peers.lock")
_APT_TIMEOUT_S = 900  # a package install on a slow mirror; the run is bounded all the same


def program(name: str) -> Program:
    try:
        return PROGRAMS[name]
    except KeyError:
        raise HttpbenchError(f"unknown program {name!r} (known: {', '.join(ALL)})") from None


def find(name: str) -> str | None:
    """The path of ``name``'s executable, or None."""
    return program(name).find()


def missing(names: Iterable[str] = ALL) -> list[str]:
    return [n for n in names if find(n) is None]


def not_found(name: str) -> HttpbenchError:
    """The error for a program that is needed and absent: it names the command that installs it."""
    p = program(name)
    return HttpbenchError(
        f"{p.name} not found (`httpbench peers install {p.name}` installs Debian's {p.package})"
    )


@contextlib.contextmanager
def _services_held_back() -> Iterator[None]:
    """Debian's policy-rc.d hook forbidding service starts, for the time of an install (if none is set)."""
    if _POLICY.exists() or _POLICY.is_symlink():
        yield
        return
    fd = os.open(_POLICY, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o755)
    with os.fdopen(fd, "w") as fh:
        fh.write(
            "#!/bin/sh\n# written by httpbench peers install while it installs; removed after\nexit 101\n"
        )
    try:
        yield
    finally:
        with contextlib.suppress(OSError):
            _POLICY.unlink()


def _apt(args: list[str]) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    try:
        return subprocess.run(
            ["apt-get", *args], capture_output=True, text=True, env=env, timeout=_APT_TIMEOUT_S, check=False
        )
    except subprocess.TimeoutExpired:
        raise HttpbenchError(f"apt-get {args[0]} took longer than {_APT_TIMEOUT_S} s; stopped") from None


def _last_line(proc: subprocess.CompletedProcess[str]) -> str:
    lines = [ln for ln in (proc.stderr + proc.stdout).splitlines() if ln.strip()]
    return lines[-1].strip() if lines else f"exit code {proc.returncode}"


def install(names: Iterable[str], say: Callable[[str], None] = lambda _line: None) -> list[str]:
    """Install the Debian packages of the programs among ``names`` that are missing; returns the
    names installed. Needs root and apt-get; serialized by a lock, so concurrent callers install once."""
    wanted = [program(n).name for n in names]
    if not missing(wanted):
        return []
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        need = " ".join(PROGRAMS[n].package for n in missing(wanted))
        why = "needs root" if shutil.which("apt-get") else "needs apt-get (Debian or Ubuntu)"
        raise HttpbenchError(f"{', '.join(missing(wanted))} not found; installing them {why}: install {need}")
    _LOCK.parent.mkdir(parents=True, exist_ok=True)
    with open(_LOCK, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        todo = missing(wanted)  # another process may have installed them while we waited
        if not todo:
            return []
        packages = [PROGRAMS[n].package for n in todo]
        say(f"installing {', '.join(packages)} (Debian packages; services not started)")
        args = ["install", "-y", "-q", "--no-install-recommends", *packages]
        with _services_held_back():
            proc = _apt(args)
            if proc.returncode != 0:  # a fresh machine has no package lists yet
                say("updating the package lists")
                update = _apt(["update", "-q"])
                if update.returncode != 0:
                    raise HttpbenchError(f"apt-get update failed: {_last_line(update)}")
                proc = _apt(args)
        if proc.returncode != 0:
            raise HttpbenchError(f"apt-get install {' '.join(packages)} failed: {_last_line(proc)}")
        still = missing(todo)
        if still:
            raise HttpbenchError(f"installed {' '.join(packages)}, yet {', '.join(still)} is still not found")
        return todo


def ensure(names: Iterable[str] = ALL, say: Callable[[str], None] = lambda _line: None) -> dict[str, str]:
    """Every program of ``names`` found, installed first when missing: name -> executable path."""
    wanted = list(names)
    install(wanted, say)
    found = {n: find(n) for n in wanted}
    return {n: path for n, path in found.items() if path is not None}


def status() -> list[dict[str, str]]:
    """One row per program: its name, what it is for, its path or ``missing``, its package."""
    return [
        {"program": p.name, "path": p.find() or "missing", "package": p.package, "for": p.role}
        for p in PROGRAMS.values()
    ]
