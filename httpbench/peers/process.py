"""One server process the project starts on loopback ports and owns until it stops it.

:class:`ServerProcess` keeps the configuration, logs and state of a server in a private temporary
directory, runs the server in the foreground (never daemonized, so it cannot outlive us), waits until
every port it announced accepts connections, and on stop terminates it (then kills it after 5 s)
and removes the directory. A server that exits at start or does not listen within the deadline is
one :class:`HttpbenchError` line carrying the last line the server printed.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from httpbench.errors import HttpbenchError


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


class ServerProcess:
    """Subclasses set ``program`` and implement :meth:`prepare` (write the configuration into
    ``self.dir``, fill ``self.ports``, return the argv); :meth:`environment` adds variables."""

    program = "server"
    start_timeout = 15.0

    def __init__(self) -> None:
        self.ports: list[int] = []
        self.proc: subprocess.Popen | None = None
        self.dir: Path | None = None

    @property
    def workdir(self) -> Path:
        """The working directory (exists from ``allocate`` until ``stop``)."""
        if self.dir is None:
            raise HttpbenchError(f"{self.program}: no working directory (not started)")
        return self.dir

    @property
    def port(self) -> int:
        return self.ports[0]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def prepare(self) -> list[str]:
        raise NotImplementedError

    def environment(self) -> dict[str, str]:
        return {}

    def start(self) -> ServerProcess:
        self.dir = Path(tempfile.mkdtemp(prefix=f"httpbench-{self.program}-"))
        os.chmod(self.dir, 0o755)
        try:
            argv = self.prepare()
        except BaseException:
            self.stop()
            raise
        with open(self.workdir / "stderr.log", "wb") as log:
            self.proc = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                env={**os.environ, **self.environment()},
                cwd=self.dir,
            )
        self._wait_listening()
        return self

    def _last_words(self) -> str:
        try:
            lines = (self.workdir / "stderr.log").read_text(errors="replace").strip().splitlines()
        except OSError:
            lines = []
        return lines[-1] if lines else "no message"

    def _wait_listening(self) -> None:
        pending = list(self.ports)
        deadline = time.monotonic() + self.start_timeout
        while pending and time.monotonic() < deadline:
            if self.proc is None or self.proc.poll() is not None:
                message = self._last_words()
                self.stop()
                raise HttpbenchError(f"{self.program} exited at start: {message}")
            try:
                with socket.create_connection(("127.0.0.1", pending[0]), timeout=0.2):
                    pending.pop(0)
            except OSError:
                time.sleep(0.05)
        if pending:
            self.stop()
            raise HttpbenchError(f"{self.program} did not start listening within {self.start_timeout:g} s")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self.proc = None
        if self.dir is not None:
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
