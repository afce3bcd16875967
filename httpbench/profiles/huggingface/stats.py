"""The upstream fixture's request counts (``GET /__stats``), as the cold fill and the model clients
read them before and after each sample."""

from __future__ import annotations

from typing import Any

import httpx

from httpbench.measure.preflight import request_within
from httpbench.profiles.huggingface.fixture.app import STATS_SCHEMA

STATS_MAX_BYTES = 16 << 20  # an upstream /__stats document larger than this is not read


def read_stats(client: httpx.Client, url: str) -> dict[str, Any] | None:
    """The fixture's counts at ``url``, or None when it does not answer with them."""
    try:
        resp = request_within(
            client,
            "GET",
            url,
            {"Accept": "application/json", "Accept-Encoding": "identity"},
            max_bytes=STATS_MAX_BYTES,
        )
        doc = resp.json() if resp.status_code == 200 else None
    except (httpx.HTTPError, ValueError):
        doc = None
    return doc if isinstance(doc, dict) and doc.get("schema") == STATS_SCHEMA else None
