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

from urllib.parse import urlsplit

from httpbench.errors import HttpbenchError
from httpbench.peers.nginx import NginxProcess
from httpbench.peers.process import free_port

HIDDEN_HEADERS = (
    "X-Xet-Hash",
    "X-Xet-Refresh-Route",
    "X-Xet-Cas-Url",
    "X-Xet-Access-Token",
    "X-Xet-Token-Expiration",
    "Link",
)


def _upstream_address(url: str) -> str:
    """``http://host:port`` -> ``host:port``: the upstream block's server and the Host sent to it."""
    parts = urlsplit(url)
    if parts.scheme != "http" or not parts.hostname:
        raise HttpbenchError(f"hf cache: upstream must be an http:// URL, not {url!r}")
    if parts.path not in ("", "/") or parts.query:
        raise HttpbenchError(f"hf cache: upstream must be a bare origin (no path), not {url!r}")
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    netloc = f"{host}:{parts.port or 80}"
    return netloc


class HfCache(NginxProcess):
    """``with HfCache(fixture.url) as cache: cache.url`` — see the module docstring."""

    def __init__(
        self,
        upstream: str,
        *,
        naive: bool = False,
        workers: int = 1,
        valid: str = "1h",
        resolver: str | None = None,
    ):
        super().__init__()
        self.upstream = _upstream_address(upstream)
        self.naive = naive
        self.workers = workers
        self.valid = valid
        self.resolver = resolver
        self.fill_port = 0

    @property
    def flavour(self) -> str:
        return "naive" if self.naive else "clean"

    # -- configuration ----------------------------------------------------------------------------
    def allocate(self) -> None:
        self.ports = [free_port()] if self.naive else [free_port(), free_port()]
        self.fill_port = 0 if self.naive else self.ports[1]
        (self.workdir / "cache").mkdir(exist_ok=True)

    def http_extra(self) -> str:
        return (
            (f"    resolver {self.resolver};\n" if self.resolver else "")
            + f"    proxy_cache_path {self.dir}/cache levels=1:2 keys_zone=hf:16m max_size=8g "
            "inactive=1d use_temp_path=off;\n"
            + f"    upstream hf_origin {{ server {self.upstream}; keepalive 64; }}\n"
        )

    def servers(self) -> str:
        return self._naive_servers() if self.naive else self._clean_servers()

    def _stats_location(self) -> str:
        return (
            "        location ^~ /__stats { proxy_pass http://hf_origin; proxy_http_version 1.1;\n"
            '            proxy_set_header Connection "";\n'
            f"            proxy_set_header Host {self.upstream}; }}\n"
        )

    def _naive_servers(self) -> str:
        return (
            f"    server {{\n        listen 127.0.0.1:{self.port} backlog=4096;\n"
            + self._stats_location()
            + "        location / {\n"
            f"            proxy_pass http://hf_origin;\n            proxy_http_version 1.1;\n"
            f'            proxy_set_header Connection "";\n'
            f"            proxy_set_header Host {self.upstream};\n"
            f"            proxy_cache hf;\n            proxy_cache_key $request_uri;\n"
            f"            proxy_cache_valid {self.valid};\n"
            "        }\n    }\n"
        )

    def _clean_servers(self) -> str:
        hide = "".join(f"            proxy_hide_header {h};\n" for h in HIDDEN_HEADERS)
        public = (
            f"    server {{\n        listen 127.0.0.1:{self.port} backlog=4096;\n"
            + self._stats_location()
            + "        location / {\n"
            f"            proxy_pass http://hf_fill;\n            proxy_http_version 1.1;\n"
            '            proxy_set_header Connection "";\n'
            "            proxy_cache hf;\n            proxy_cache_key $request_uri;\n"
            f"            proxy_cache_valid 200 {self.valid};\n"
            "            proxy_cache_lock on;\n            proxy_cache_lock_timeout 120s;\n"
            "            proxy_cache_lock_age 120s;\n            proxy_force_ranges on;\n"
            "            proxy_ignore_headers Cache-Control Expires Set-Cookie Vary X-Accel-Expires;\n"
            + hide
            + "        }\n    }\n"
        )
        fill = (
            f"    upstream hf_fill {{ server 127.0.0.1:{self.fill_port}; keepalive 64; }}\n"
            f"    server {{\n        listen 127.0.0.1:{self.fill_port} backlog=4096;\n"
            "        location / {\n"
            "            proxy_pass http://hf_origin;\n            proxy_http_version 1.1;\n"
            '            proxy_set_header Connection "";\n'
            f"            proxy_set_header Host {self.upstream};\n"
            "            proxy_intercept_errors on;\n"
            "            error_page 301 302 303 307 308 = @cdn;\n" + hide + "        }\n"
            "        location @cdn {\n"
            "            set $cdn_location $upstream_http_location;\n"
            "            set $repo_commit $upstream_http_x_repo_commit;\n"
            "            set $linked_etag $upstream_http_x_linked_etag;\n"
            "            set $linked_size $upstream_http_x_linked_size;\n"
            "            proxy_pass $cdn_location;\n"
            "            proxy_hide_header ETag;\n"
            + hide
            + "            add_header X-Repo-Commit $repo_commit;\n"
            "            add_header X-Linked-Etag $linked_etag;\n"
            "            add_header X-Linked-Size $linked_size;\n"
            "            add_header ETag $linked_etag;\n"
            "        }\n    }\n"
        )
        return public + fill
