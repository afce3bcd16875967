"""Static file servers over one directory (nginx and caddy, :mod:`httpbench.peers.static`): any plain
directory name is served, and none can inject server configuration."""

from __future__ import annotations

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
