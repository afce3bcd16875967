"""Static file servers over one directory, started by the project on loopback ports.

``StaticNginx(root)`` and ``StaticCaddy(root)`` serve the same tree (ETag, Last-Modified, Range,
conditional requests: both servers' stock file handlers), each in the foreground under our control
with its configuration, logs and state in a private temporary directory; stopping removes it. Used
for real A/B runs of a protocol profile (e.g. nginx vs caddy serving the Alpine fixture tree).
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
from httpbench.localnginx import free_port, nginx_binary


def caddy_binary() -> str | None:
    return shutil.which("caddy") or next(
        (p for p in ("/usr/bin/caddy", "/usr/local/bin/caddy") if os.access(p, os.X_OK)), None)


class _Process:
    """A server process in the foreground, its private state directory, and its loopback port."""

    program = "server"
    install_hint = ""

    def __init__(self, root: str | Path):
        self.root = Path(root).resolve()
        self.port = 0
        self.proc: subprocess.Popen | None = None
        self.dir: Path | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _command(self) -> tuple[list[str], dict[str, str]]:
        raise NotImplementedError

    def start(self) -> "_Process":
        if not self.root.is_dir():
            raise HttpbenchError(f"{self.program}: {self.root} is not a directory")
        self.dir = Path(tempfile.mkdtemp(prefix=f"httpbench-{self.program}-"))
        os.chmod(self.dir, 0o755)
        self.port = free_port()
        argv, env = self._command()
        log = open(self.dir / "stderr.log", "wb")
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                     env={**os.environ, **env}, cwd=self.dir)
        log.close()
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                lines = (self.dir / "stderr.log").read_text(errors="replace").strip().splitlines()
                self.stop()
                raise HttpbenchError(f"{self.program} exited at start: {lines[-1] if lines else 'no message'}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                    return self
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise HttpbenchError(f"{self.program} did not start listening within 15 s")

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

    def __exit__(self, *exc) -> None:
        self.stop()


class StaticNginx(_Process):
    """nginx's static handler (sendfile, ETag, Last-Modified, single and multi Range)."""

    program = "nginx"

    def _command(self) -> tuple[list[str], dict[str, str]]:
        binary = nginx_binary()
        if binary is None:
            raise HttpbenchError("nginx not found (Debian: apt-get install -y nginx)")
        d = self.dir
        for sub in ("body", "proxy", "fastcgi", "uwsgi", "scgi"):
            (d / "tmp" / sub).mkdir(parents=True, exist_ok=True)
        user = "user root;\n" if os.geteuid() == 0 else ""
        conf = d / "nginx.conf"
        conf.write_text(
            f"daemon off;\nmaster_process on;\nworker_processes 1;\n{user}pid {d}/nginx.pid;\n"
            f"error_log {d}/error.log warn;\nevents {{ worker_connections 4096; }}\n"
            "http {\n    access_log off;\n    sendfile on;\n    tcp_nodelay on;\n"
            "    keepalive_requests 100000000;\n    keepalive_timeout 75s;\n"
            "    default_type application/octet-stream;\n"
            + "".join(f"    {k}_temp_path {d}/tmp/{v};\n" for k, v in (
                ("client_body", "body"), ("proxy", "proxy"), ("fastcgi", "fastcgi"),
                ("uwsgi", "uwsgi"), ("scgi", "scgi")))
            + f"    server {{ listen 127.0.0.1:{self.port} backlog=4096; server_name localhost;\n"
            f"             root {self.root}; location / {{ }} }}\n}}\n")
        return [binary, "-p", str(d), "-c", str(conf), "-e", str(d / "error.log")], {}


class StaticCaddy(_Process):
    """caddy's ``file_server`` (ETag, Last-Modified, Range via Go's http.ServeContent)."""

    program = "caddy"

    def _command(self) -> tuple[list[str], dict[str, str]]:
        binary = caddy_binary()
        if binary is None:
            raise HttpbenchError("caddy not found (Debian: apt-get install -y caddy)")
        d = self.dir
        conf = d / "Caddyfile"
        conf.write_text(
            "{\n\tadmin off\n\tauto_https off\n"
            f"\tstorage file_system {{\n\t\troot {d}/data\n\t}}\n\tlog {{\n\t\tlevel ERROR\n\t}}\n}}\n"
            f"http://127.0.0.1:{self.port} {{\n\troot * {self.root}\n\tfile_server\n}}\n")
        env = {"HOME": str(d), "XDG_DATA_HOME": str(d / "data"), "XDG_CONFIG_HOME": str(d / "config")}
        return [binary, "run", "--config", str(conf), "--adapter", "caddyfile"], env


PEERS = {"nginx": StaticNginx, "caddy": StaticCaddy}
