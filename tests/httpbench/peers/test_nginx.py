"""``httpbench compare`` against a real nginx the tests start (:class:`httpbench.peers.nginx.LocalNginx`;
Debian package ``nginx``): every scenario kind."""

from __future__ import annotations

import hashlib
import json

import pytest

from httpbench.peers.nginx import LocalNginx
from tests.httpbench.http_fixtures import body_of, run_compare, seeded

PACKAGE = body_of(300_000, seed=7)
INDEX = body_of(1024, seed=8)

needs_nginx = pytest.mark.usefixtures("peer_programs")  # installed by the session when missing


@pytest.fixture(scope="module")
def nginx(peer_programs):
    with LocalNginx({"repo/index.txt": INDEX, "repo/pkg.bin": PACKAGE}, servers=2) as ng:
        yield ng


@needs_nginx
@pytest.mark.servers
def test_compare_on_nginx_every_scenario_kind(nginx, tmp_path):
    out = tmp_path / "r.json"
    sha = hashlib.sha256(PACKAGE).hexdigest()
    scenarios = (
        "name=index GET,path=/index.txt",
        "name=index HEAD,method=HEAD,path=/index.txt",
        "name=index 304,path=/index.txt,conditional=true",
        f"name=package GET,path=/pkg.bin,class=payload,sha256={sha}",
        "name=package Range,path=/pkg.bin,class=payload,header=Range: bytes=0-65535",
    )
    gates = {"gate": ["metadata:0:1000", "payload:0:1000"], "enforce_gates": True}
    options = seeded(100, 2, warmups=8, concurrency=8, **gates, output=out, q=True)
    run = run_compare({"ref": f"{nginx.url(0)}/repo", "cand": f"{nginx.url(1)}/repo/"}, *scenarios, **options)
    assert run.code == 0, run.output
    doc = json.loads(out.read_text())
    assert doc["totals"] == {"timed_requests": 5 * 2 * 2 * 100, "ok": 2000, "failures": 0}
    s = doc["summaries"]
    assert s["package GET"]["cand"]["mibps"] > 1
    assert s["index HEAD"]["ref"]["mibps"] == 0 and s["index 304"]["cand"]["mibps"] == 0
    rounds = {(r["scenario"], r["target"], r["round"]): r for r in doc["rounds"]}
    r = rounds[("package Range", "cand", 1)]
    assert r["body_bytes"] == 100 * 65536 and r["connections"] == 8 and r["connect_ms"]["count"] == 8
    assert doc["config"]["targets"][1]["url"] == nginx.url(1) + "/repo"
    pre = {(p["scenario"], p["target"]): p for p in doc["preflight"]}
    assert pre[("package Range", "ref")]["content_range"] == f"bytes 0-65535/{len(PACKAGE)}"
    assert pre[("index 304", "cand")]["etag"]
    for table in ("Summary", "Response-time detail", "Per-round throughput and RT"):
        assert table in run.stdout
