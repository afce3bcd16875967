"""Static file servers over one directory (nginx and caddy, :mod:`httpbench.peers.static`): any plain
directory name is served, and none can inject server configuration."""

from __future__ import annotations

from pathlib import Path

import pytest

pytestmark = pytest.mark.usefixtures("peer_programs")  # nginx and caddy, installed when missing


@pytest.mark.parametrize("name", ["my files; index off", "a # b"])
@pytest.mark.servers
def test_static_servers_take_any_plain_directory_name(tmp_path, name):
    import httpx

    from httpbench.peers.static import StaticCaddy, StaticNginx

    root = tmp_path / name
    root.mkdir()
    (root / "f.txt").write_bytes(b"hello")
    for server in (StaticNginx(root), StaticCaddy(root)):
        with server:
            assert httpx.get(f"{server.url}/f.txt").content == b"hello"


@pytest.mark.parametrize("name", ["x}\n:80 {\nroot * /", "a$b", 'q"uote'])
def test_a_directory_name_cannot_inject_server_configuration(tmp_path, name):
    from httpbench.errors import HttpbenchError
    from httpbench.peers.static import StaticCaddy, StaticNginx

    root = tmp_path / name
    root.mkdir()
    for cls in (StaticNginx, StaticCaddy):
        with pytest.raises(HttpbenchError, match="which a server configuration would interpret"):
            cls(root)


def _listening(port: int) -> set[str]:
    """The local addresses listening on TCP ``port`` (hex, as /proc/net/tcp and tcp6 give them)."""
    out = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            address, hex_port = local.split(":")
            if state == "0A" and int(hex_port, 16) == port:
                out.add(address)
    return out


@pytest.mark.servers
def test_static_servers_listen_on_loopback_only(tmp_path):
    # before: caddy's site address named 127.0.0.1, but it bound the port on every interface
    from httpbench.peers.static import StaticCaddy, StaticNginx

    for server in (StaticNginx(tmp_path), StaticCaddy(tmp_path)):
        with server:
            assert _listening(server.port) == {"0100007F"}, type(server).__name__  # 127.0.0.1
