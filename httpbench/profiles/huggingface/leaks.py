"""Leak checks on every answer of a Hugging Face target: a ``Location`` to another host, any
``X-Xet-*`` header, a ``Link`` with a Xet relation, or an upstream host in a header or JSON body.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

import httpx

from httpbench.model import Target


def leak(target: Target, request: str, resp: httpx.Response, upstream_hosts: tuple[str, ...]) -> str | None:
    """The first client-visible leak in one answer, as a one-line reason; None when clean."""
    where = f"target {target.name!r} {request}"
    location = resp.headers.get("location")
    if location:
        parts = urlsplit(location)
        try:
            port = parts.port or (443 if parts.scheme == "https" else 80)
        except ValueError:
            return f"{where}: Location header is not a valid URL ({location[:120]})"
        if parts.netloc and ((parts.hostname or "").lower(), port) != (target.host.lower(), target.port):
            return f"{where}: Location header points to another host ({parts.netloc})"
    for name, value in resp.headers.items():
        if name.lower().startswith("x-xet-"):
            return f"{where}: leaked header {_title(name)} (Xet storage must not be visible to clients)"
        if name.lower() == "link" and re.search(r"rel\s*=\s*\"?[^\";,]*xet", value, re.IGNORECASE):
            return f"{where}: leaked header Link with a Xet relation ({value[:120]})"
        for host in upstream_hosts:
            if host.lower() in value.lower():
                return f"{where}: header {_title(name)} names upstream host {host!r}"
    if upstream_hosts and "json" in resp.headers.get("content-type", "") and resp.content:
        text = resp.content.decode("utf-8", "replace").lower()
        for host in upstream_hosts:
            if host.lower() in text:
                return f"{where}: JSON body names upstream host {host!r}"
    return None


def _title(name: str) -> str:
    return "-".join(p.capitalize() for p in name.split("-"))
