"""The client flow of ``apk update`` + exact ``apk search`` + ``apk policy`` + ``apk fetch``, for hosts
without apk-tools (a CI runner, a Debian box): the ``httpbench apk-client`` command
(:mod:`httpbench.cli.apk_client`).

It does what apk does with the bytes, over its own HTTP connection (httpx, not the timing engine):

1. **update**: GET ``<repository>/<arch>/APKINDEX.tar.gz``, verify the RSA signature against the
   trusted keys (a directory like ``/etc/apk/keys``: the key is chosen by the name in the
   ``.SIGN.RSA*.<key>`` entry, and an index naming a key that is not there fails, as in apk, even
   when another trusted key would verify it), parse every record;
2. **search** (exact): the records whose ``P:`` is the package name;
3. **policy**: the versions the index offers for it (the newest is the one apk would pick);
4. **fetch**: GET ``<name>-<version>.apk``, check its size against ``S:``, its control-segment
   identity against ``C:`` and its own signature (the first entry naming a trusted key; its
   ``datahash`` must match the data, and without one the signature must cover the data too).

Every failure is a one-line :class:`~httpbench.errors.HttpbenchError` with exit code 1, so the
command is a sound ``--client-command`` for ``httpbench compare --profile alpine``.
"""

from __future__ import annotations

import time
from pathlib import Path

import httpx

from httpbench.errors import HttpbenchError
from httpbench.measure.client_rounds import redact
from httpbench.profiles.alpine import apk


def trusted_keys(directory: Path) -> dict[str, bytes]:
    keys = {p.name: p.read_bytes() for p in sorted(directory.glob("*.pub")) if p.is_file()}
    if not keys:
        raise HttpbenchError(f"apk-client: no *.pub keys in {directory}")
    return keys


def _get(client: httpx.Client, url: str) -> bytes:
    try:
        response = client.get(url)
    except httpx.HTTPError as exc:
        raise HttpbenchError(f"apk-client: GET {redact(url)}: {type(exc).__name__}: {exc}", 1) from None
    if response.status_code != 200:
        raise HttpbenchError(f"apk-client: GET {redact(url)}: HTTP {response.status_code}", 1)
    return response.content


def flow(
    repository: str,
    arch: str,
    keys: dict[str, bytes],
    package: str,
    fetch: bool = True,
    timeout: float = 30.0,
) -> dict:
    """Run update/search/policy(/fetch); returns what was found and the time of each step (ms)."""
    base = repository.rstrip("/") + "/" + arch
    steps: dict[str, float] = {}
    with httpx.Client(
        timeout=timeout,
        follow_redirects=True,
        trust_env=False,
        headers={"User-Agent": "httpbench-apk-client"},
    ) as client:
        t0 = time.perf_counter()
        try:
            index = apk.parse_index(_get(client, f"{base}/APKINDEX.tar.gz"), keys)
        except apk.ApkError as exc:
            raise HttpbenchError(f"apk-client: {redact(base)}/APKINDEX.tar.gz: {exc}", 1) from None
        steps["update_ms"] = (time.perf_counter() - t0) * 1000
        matches = [r for r in index.records if r.name == package]
        if not matches:
            raise HttpbenchError(
                f"apk-client: no package {package!r} in {redact(base)}/APKINDEX.tar.gz "
                f"({len(index.records)} records)",
                1,
            )
        versions = sorted({r.version for r in matches}, key=apk.version_key)
        chosen = max(matches, key=lambda r: apk.version_key(r.version))  # what apk would install
        result = {
            "records": len(index.records),
            "key": index.signature.key_name,
            "package": package,
            "versions": versions,
            "identity": chosen.identity,
        }
        if fetch:
            t1 = time.perf_counter()
            url = f"{base}/{chosen.name}-{chosen.version}.apk"
            data = _get(client, url)
            url = redact(url)  # for the messages below: never the credentials
            if len(data) != chosen.size:
                raise HttpbenchError(f"apk-client: {url}: {len(data)} bytes, index says S:{chosen.size}", 1)
            try:
                parsed = apk.read_package(data)
                apk.verify_package(parsed, keys)
            except apk.ApkError as exc:
                raise HttpbenchError(f"apk-client: {url}: {exc}", 1) from None
            if parsed.identity != chosen.identity:
                raise HttpbenchError(
                    f"apk-client: {url}: identity {parsed.identity} but the index says C:{chosen.identity}", 1
                )
            steps["fetch_ms"] = (time.perf_counter() - t1) * 1000
            result["bytes"] = len(data)
        result["steps"] = steps
        return result
