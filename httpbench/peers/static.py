"""Static file servers over one directory, started by the project on loopback ports.

``StaticNginx(root)`` and ``StaticCaddy(root)`` serve the same tree with their stock file handlers
(ETag, Last-Modified, Range, conditional requests), each in the foreground under our control with
its configuration, logs and state in a private temporary directory that stopping removes. Used for
real A/B runs of a protocol profile (e.g. nginx vs caddy serving the Alpine fixture tree).
"""

from __future__ import annotations

from pathlib import Path

from httpbench.errors import HttpbenchError
from httpbench.peers import programs
from httpbench.peers.nginx import NginxProcess, config_path, static_server
from httpbench.peers.process import ServerProcess, free_port


def caddy_binary() -> str | None:
    return programs.find("caddy")


def _root(root: str | Path) -> Path:
    path = Path(root).resolve()
    if not path.is_dir():
        raise HttpbenchError(f"{path} is not a directory")
    config_path(path)  # refuse a name the configuration would interpret, before starting
    return path


class StaticNginx(NginxProcess):
    """nginx's static handler (sendfile, ETag, Last-Modified, single and multi Range)."""

    def __init__(self, root: str | Path):
        super().__init__()
        self.root = _root(root)

    def servers(self) -> str:
        return static_server(self.port, self.root)


class StaticCaddy(ServerProcess):
    """caddy's ``file_server`` (ETag, Last-Modified, Range via Go's http.ServeContent)."""

    program = "caddy"

    def __init__(self, root: str | Path):
        super().__init__()
        self.root = _root(root)

    def prepare(self) -> list[str]:
        binary = caddy_binary()
        if binary is None:
            raise programs.not_found("caddy")
        self.ports = [free_port()]
        conf = self.workdir / "Caddyfile"
        conf.write_text(
            "{\n\tadmin off\n\tauto_https off\n"
            f"\tstorage file_system {{\n\t\troot {self.dir}/data\n\t}}\n\tlog {{\n\t\tlevel ERROR\n\t}}\n}}\n"
            f"http://127.0.0.1:{self.port} {{\n\tbind 127.0.0.1\n\troot * {config_path(self.root)}\n"
            "\tfile_server\n}\n"
        )
        return [binary, "run", "--config", str(conf), "--adapter", "caddyfile"]

    def environment(self) -> dict[str, str]:
        return {
            "HOME": str(self.dir),
            "XDG_DATA_HOME": str(self.workdir / "data"),
            "XDG_CONFIG_HOME": str(self.workdir / "config"),
        }


PEERS = {"nginx": StaticNginx, "caddy": StaticCaddy}
