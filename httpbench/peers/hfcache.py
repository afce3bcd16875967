"""An nginx ``proxy_cache`` in front of a Hugging Face upstream: a real model proxy to benchmark.

``HfCache(upstream_url)`` writes its configuration into a private temporary directory and runs
nginx in the foreground (``daemon off``) on a loopback port under our control; stopping removes
the directory (cache included). Two flavours:

* **clean** (default): what a correct model proxy does. The public server caches (key = request
  URI, 200 answers, Range served from the cached file, ``proxy_cache_lock`` so concurrent misses
  make one upstream fetch). It fills from an internal server on a second loopback port, which
  follows the upstream's redirect to its CDN itself (``proxy_intercept_errors`` +
  ``error_page 30x = @cdn`` + ``proxy_pass`` to the saved ``Location``) and puts the Hub headers of
  the redirect (``X-Repo-Commit``, ``X-Linked-Etag``/``ETag``, ``X-Linked-Size``) on the CDN's
  answer, so the cached answer is complete. Xet headers and ``Link`` are hidden, so clients never
  see the CDN, Xet, or the upstream host.
* **naive** (``naive=True``): plain ``proxy_pass`` + ``proxy_cache``. Upstream headers pass through
  unchanged (``Location`` to the CDN, ``X-Xet-Hash``, ``Link: ...; rel="xet-auth"``): the leak checks
  of ``--profile huggingface`` must reject it.

``/__stats`` (the fixture's request counts) is passed to the upstream uncached in both flavours.
A CDN named by host name (not an IP literal) needs ``resolver=`` (a DNS server address).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit

from httpbench.errors import HttpbenchError
from httpbench.localnginx import free_port, nginx_binary

HIDDEN_HEADERS = ("X-Xet-Hash", "X-Xet-Refresh-Route", "X-Xet-Cas-Url", "X-Xet-Access-Token",
                  "X-Xet-Token-Expiration", "Link")
_TEMP_KINDS = (("client_body", "body"), ("proxy", "proxy"), ("fastcgi", "fastcgi"),
               ("uwsgi", "uwsgi"), ("scgi", "scgi"))


def _upstream_address(url: str) -> tuple[str, str]:
    """``http://host:port`` -> (``host:port`` for an upstream block, ``host:port`` for Host)."""
    parts = urlsplit(url)
    if parts.scheme != "http" or not parts.hostname:
        raise HttpbenchError(f"hf cache: upstream must be an http:// URL, not {url!r}")
    if parts.path not in ("", "/") or parts.query:
        raise HttpbenchError(f"hf cache: upstream must be a bare origin (no path), not {url!r}")
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    netloc = f"{host}:{parts.port or 80}"
    return netloc, netloc


class HfCache:
    """``with HfCache(fixture.url) as cache: cache.url`` — see the module docstring."""

    def __init__(self, upstream: str, *, naive: bool = False, workers: int = 1, valid: str = "1h",
                 resolver: str | None = None):
        self.upstream, self.upstream_host = _upstream_address(upstream)
        self.naive = naive
        self.workers = workers
        self.valid = valid
        self.resolver = resolver
        self.port = 0
        self.fill_port = 0
        self.proc: subprocess.Popen | None = None
        self.dir: Path | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def flavour(self) -> str:
        return "naive" if self.naive else "clean"

    # -- configuration ----------------------------------------------------------------------------
    def config(self) -> str:
        d = self.dir
        user = "user root;\n" if os.geteuid() == 0 else ""
        temps = "".join(f"    {k}_temp_path {d}/tmp/{v};\n" for k, v in _TEMP_KINDS)
        servers = self._naive_servers() if self.naive else self._clean_servers()
        return (f"daemon off;\nmaster_process on;\nworker_processes {self.workers};\n{user}"
                f"pid {d}/nginx.pid;\nerror_log {d}/error.log warn;\n"
                "events { worker_connections 4096; }\n"
                "http {\n    access_log off;\n    sendfile on;\n    tcp_nodelay on;\n"
                "    keepalive_requests 100000000;\n    keepalive_timeout 75s;\n"
                "    default_type application/octet-stream;\n" + temps
                + (f"    resolver {self.resolver};\n" if self.resolver else "")
                + f"    proxy_cache_path {d}/cache levels=1:2 keys_zone=hf:16m max_size=8g "
                  "inactive=1d use_temp_path=off;\n"
                + f"    upstream hf_origin {{ server {self.upstream}; keepalive 64; }}\n"
                + servers + "}\n")

    def _stats_location(self) -> str:
        return ("        location ^~ /__stats { proxy_pass http://hf_origin; proxy_http_version 1.1;\n"
                "            proxy_set_header Connection \"\";\n"
                f"            proxy_set_header Host {self.upstream_host}; }}\n")

    def _naive_servers(self) -> str:
        return (f"    server {{\n        listen 127.0.0.1:{self.port} backlog=4096;\n"
                + self._stats_location()
                + "        location / {\n"
                f"            proxy_pass http://hf_origin;\n            proxy_http_version 1.1;\n"
                f"            proxy_set_header Connection \"\";\n"
                f"            proxy_set_header Host {self.upstream_host};\n"
                f"            proxy_cache hf;\n            proxy_cache_key $request_uri;\n"
                f"            proxy_cache_valid {self.valid};\n"
                "        }\n    }\n")

    def _clean_servers(self) -> str:
        hide = "".join(f"            proxy_hide_header {h};\n" for h in HIDDEN_HEADERS)
        public = (f"    server {{\n        listen 127.0.0.1:{self.port} backlog=4096;\n"
                  + self._stats_location()
                  + "        location / {\n"
                  f"            proxy_pass http://hf_fill;\n            proxy_http_version 1.1;\n"
                  "            proxy_set_header Connection \"\";\n"
                  "            proxy_cache hf;\n            proxy_cache_key $request_uri;\n"
                  f"            proxy_cache_valid 200 {self.valid};\n"
                  "            proxy_cache_lock on;\n            proxy_cache_lock_timeout 120s;\n"
                  "            proxy_cache_lock_age 120s;\n            proxy_force_ranges on;\n"
                  "            proxy_ignore_headers Cache-Control Expires Set-Cookie Vary X-Accel-Expires;\n"
                  + hide + "        }\n    }\n")
        fill = (f"    upstream hf_fill {{ server 127.0.0.1:{self.fill_port}; keepalive 64; }}\n"
                f"    server {{\n        listen 127.0.0.1:{self.fill_port} backlog=4096;\n"
                "        location / {\n"
                "            proxy_pass http://hf_origin;\n            proxy_http_version 1.1;\n"
                "            proxy_set_header Connection \"\";\n"
                f"            proxy_set_header Host {self.upstream_host};\n"
                "            proxy_intercept_errors on;\n"
                "            error_page 301 302 303 307 308 = @cdn;\n" + hide
                + "        }\n"
                "        location @cdn {\n"
                "            set $cdn_location $upstream_http_location;\n"
                "            set $repo_commit $upstream_http_x_repo_commit;\n"
                "            set $linked_etag $upstream_http_x_linked_etag;\n"
                "            set $linked_size $upstream_http_x_linked_size;\n"
                "            proxy_pass $cdn_location;\n"
                "            proxy_hide_header ETag;\n" + hide
                + "            add_header X-Repo-Commit $repo_commit;\n"
                "            add_header X-Linked-Etag $linked_etag;\n"
                "            add_header X-Linked-Size $linked_size;\n"
                "            add_header ETag $linked_etag;\n"
                "        }\n    }\n")
        return public + fill

    # -- lifecycle --------------------------------------------------------------------------------
    def start(self) -> "HfCache":
        binary = nginx_binary()
        if binary is None:
            raise HttpbenchError("nginx not found (Debian: apt-get install -y nginx)")
        self.dir = Path(tempfile.mkdtemp(prefix=f"httpbench-hfcache-{self.flavour}-"))
        os.chmod(self.dir, 0o755)
        for _, sub in _TEMP_KINDS:
            (self.dir / "tmp" / sub).mkdir(parents=True, exist_ok=True)
        (self.dir / "cache").mkdir()
        self.port = free_port()
        self.fill_port = 0 if self.naive else free_port()
        conf = self.dir / "nginx.conf"
        conf.write_text(self.config())
        self.proc = subprocess.Popen([binary, "-p", str(self.dir), "-c", str(conf), "-e",
                                      str(self.dir / "error.log")],
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE)
        self._wait_listening([p for p in (self.port, self.fill_port) if p])
        return self

    def _wait_listening(self, ports: list[int]) -> None:
        deadline = time.monotonic() + 10
        while ports and time.monotonic() < deadline:
            if self.proc is not None and self.proc.poll() is not None:
                raw = self.proc.stderr.read() if self.proc.stderr else b""
                err = (raw or b"").decode(errors="replace").strip().splitlines()
                self.stop()
                raise HttpbenchError(f"hf cache: nginx exited at start: {err[-1] if err else 'no message'}")
            try:
                with socket.create_connection(("127.0.0.1", ports[0]), timeout=0.2):
                    ports.pop(0)
            except OSError:
                time.sleep(0.05)
        if ports:
            self.stop()
            raise HttpbenchError("hf cache: nginx did not start listening within 10 s")

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

    def __enter__(self) -> "HfCache":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
