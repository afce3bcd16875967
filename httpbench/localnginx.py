"""A throw-away nginx on loopback ports (config in a temp dir, ``daemon off`` under our control)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from httpbench.errors import HttpbenchError


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def nginx_binary() -> str | None:
    return shutil.which("nginx") or next(
        (p for p in ("/usr/sbin/nginx", "/usr/local/sbin/nginx") if os.access(p, os.X_OK)), None)


class LocalNginx:
    """``with LocalNginx({"f.bin": data}, servers=2) as ng: ng.url(0)`` — one server block per port,
    all serving the same files. Stopped (and the temp dir removed) on exit."""

    def __init__(self, files: dict[str, bytes], servers: int = 1, workers: int = 1):
        self.files = files
        self.servers = servers
        self.workers = workers
        self.ports: list[int] = []
        self.proc: subprocess.Popen | None = None
        self.dir: Path | None = None

    def url(self, index: int = 0) -> str:
        return f"http://127.0.0.1:{self.ports[index]}"

    def _config(self) -> str:
        d = self.dir
        servers = "\n".join(
            f"    server {{ listen 127.0.0.1:{p} backlog=4096; server_name localhost; root {d}/www;"
            f" location / {{ }} }}" for p in self.ports)
        user = "user root;\n" if os.geteuid() == 0 else ""
        return (f"daemon off;\nmaster_process on;\nworker_processes {self.workers};\n{user}"
                f"pid {d}/nginx.pid;\nerror_log {d}/error.log warn;\n"
                "events { worker_connections 4096; }\n"
                "http {\n    access_log off;\n    sendfile on;\n    tcp_nodelay on;\n"
                "    keepalive_requests 100000000;\n    keepalive_timeout 75s;\n"
                "    default_type application/octet-stream;\n"
                f"    client_body_temp_path {d}/tmp/body;\n    proxy_temp_path {d}/tmp/proxy;\n"
                f"    fastcgi_temp_path {d}/tmp/fastcgi;\n    uwsgi_temp_path {d}/tmp/uwsgi;\n"
                f"    scgi_temp_path {d}/tmp/scgi;\n{servers}\n}}\n")

    def start(self) -> "LocalNginx":
        binary = nginx_binary()
        if binary is None:
            raise HttpbenchError("nginx not found (Debian: apt-get install -y nginx)")
        self.dir = Path(tempfile.mkdtemp(prefix="httpbench-nginx-"))
        os.chmod(self.dir, 0o755)
        (self.dir / "www").mkdir()
        (self.dir / "tmp").mkdir()
        for name, data in self.files.items():
            path = self.dir / "www" / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        self.ports = [free_port() for _ in range(self.servers)]
        conf = self.dir / "nginx.conf"
        conf.write_text(self._config())
        self.proc = subprocess.Popen([binary, "-p", str(self.dir), "-c", str(conf), "-e",
                                      str(self.dir / "error.log")],
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE)
        deadline = time.monotonic() + 10
        pending = list(self.ports)
        while pending and time.monotonic() < deadline:
            if self.proc.poll() is not None:
                err = (self.proc.stderr.read() or b"").decode(errors="replace").strip().splitlines()
                self.stop()
                raise HttpbenchError(f"nginx exited at start: {err[-1] if err else 'no message'}")
            try:
                with socket.create_connection(("127.0.0.1", pending[0]), timeout=0.2):
                    pending.pop(0)
            except OSError:
                time.sleep(0.05)
        if pending:
            self.stop()
            raise HttpbenchError("nginx did not start listening within 10 s")
        return self

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        if self.proc is not None and self.proc.stderr:
            self.proc.stderr.close()
        self.proc = None
        if self.dir is not None:
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None

    def __enter__(self) -> "LocalNginx":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
