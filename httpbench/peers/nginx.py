"""nginx on loopback ports, configured by the project: the one place its configuration is written.

:func:`config` writes the common frame (foreground master, private pid/log/temp paths, keep-alive
without limits, sendfile, no access log) around the ``server`` blocks a peer supplies:
:class:`LocalNginx` (a files dict served from a private root, one server per port; the
``bench-client`` and test target), :class:`httpbench.peers.static.StaticNginx` and
:class:`httpbench.peers.hfcache.HfCache`.
"""

from __future__ import annotations

import os
from pathlib import Path

from httpbench.errors import HttpbenchError
from httpbench.peers import programs
from httpbench.peers.process import ServerProcess, free_port

_TEMP_KINDS = (
    ("client_body", "body"),
    ("proxy", "proxy"),
    ("fastcgi", "fastcgi"),
    ("uwsgi", "uwsgi"),
    ("scgi", "scgi"),
)


def nginx_binary() -> str | None:
    return programs.find("nginx")


def config(directory: Path, servers: str, *, workers: int = 1, http_extra: str = "") -> str:
    """A complete nginx.conf whose state lives under ``directory`` (temp dirs are created)."""
    for _, sub in _TEMP_KINDS:
        (directory / "tmp" / sub).mkdir(parents=True, exist_ok=True)
    user = "user root;\n" if os.geteuid() == 0 else ""
    temps = "".join(f"    {kind}_temp_path {directory}/tmp/{sub};\n" for kind, sub in _TEMP_KINDS)
    return (
        f"daemon off;\nmaster_process on;\nworker_processes {workers};\n{user}"
        f"pid {directory}/nginx.pid;\nerror_log {directory}/error.log warn;\n"
        "events { worker_connections 4096; }\n"
        "http {\n    access_log off;\n    sendfile on;\n    tcp_nodelay on;\n"
        "    keepalive_requests 100000000;\n    keepalive_timeout 75s;\n"
        "    default_type application/octet-stream;\n" + temps + http_extra + servers + "}\n"
    )


_UNQUOTABLE = set('"\\{}$')


def config_path(path: Path) -> str:
    """``path`` as one double-quoted configuration token (nginx and Caddyfile alike). Spaces,
    ``;`` and ``#`` are safe inside the quotes; characters the servers would still interpret there
    (``$`` nginx variables, ``{}`` Caddy placeholders, quotes, backslashes, control characters)
    are refused, so a directory name can never inject a directive."""
    text = str(path)
    bad = sorted({c for c in text if c in _UNQUOTABLE or ord(c) < 0x20 or ord(c) == 0x7F})
    if bad:
        raise HttpbenchError(
            f"cannot serve {text!r}: its path contains {' '.join(repr(c) for c in bad)}, "
            "which a server configuration would interpret; use another directory"
        )
    return f'"{text}"'


def static_server(port: int, root: Path) -> str:
    """A server block serving ``root`` with nginx's static handler (ETag, Last-Modified, Range)."""
    return (
        f"    server {{ listen 127.0.0.1:{port} backlog=4096; server_name localhost; "
        f"root {config_path(root)}; location / {{ }} }}\n"
    )


class NginxProcess(ServerProcess):
    """nginx with the configuration :meth:`servers` returns (ports already allocated)."""

    program = "nginx"
    workers = 1

    def allocate(self) -> None:
        self.ports = [free_port()]

    def servers(self) -> str:
        raise NotImplementedError

    def http_extra(self) -> str:
        return ""

    def prepare(self) -> list[str]:
        binary = nginx_binary()
        if binary is None:
            raise programs.not_found("nginx")
        self.allocate()
        conf = self.workdir / "nginx.conf"
        conf.write_text(
            config(self.workdir, self.servers(), workers=self.workers, http_extra=self.http_extra())
        )
        return [binary, "-p", str(self.dir), "-c", str(conf), "-e", str(self.workdir / "error.log")]


class LocalNginx(NginxProcess):
    """``with LocalNginx({"f.bin": data}, servers=2) as ng: ng.url(0)`` — one server block per port,
    all serving the same files from a private root."""

    def __init__(self, files: dict[str, bytes], servers: int = 1, workers: int = 1):
        super().__init__()
        self.files = files
        self.count = servers
        self.workers = workers

    def url(self, index: int = 0) -> str:  # type: ignore[override]
        return f"http://127.0.0.1:{self.ports[index]}"

    def allocate(self) -> None:
        self.ports = [free_port() for _ in range(self.count)]

    def servers(self) -> str:
        www = self.workdir / "www"
        for name, data in self.files.items():
            path = www / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        www.mkdir(exist_ok=True)
        return "".join(static_server(port, www) for port in self.ports)
