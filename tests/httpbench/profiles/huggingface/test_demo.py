"""``httpbench demo huggingface``: the Hub fixture served directly against a real nginx cache in
front of a Hub-like upstream, end to end; the naive cache refused by the preflight."""

from __future__ import annotations

import json

import pytest

from tests.httpbench.http_fixtures import cli_options, run_httpbench, seeded

pytestmark = pytest.mark.usefixtures("peer_programs")  # nginx, installed when missing
DEMO = seeded(40, 2, warmups=2, concurrency=4, q=True)  # the timed rounds


@pytest.mark.servers
def test_demo_huggingface_fixture_vs_clean_nginx_cache(tmp_path):
    out = tmp_path / "hf.json"
    options = cli_options(no_hf_client=True, no_model_clients=True, **DEMO, cold_samples=2, output=out)
    run = run_httpbench("demo", "huggingface", *options, timeout=120)
    assert run.code == 0, run.output
    doc = json.loads(out.read_text())
    assert [t["name"] for t in doc["config"]["targets"]] == ["fixture", "nginx-cache"]
    assert doc["totals"]["failures"] == 0 and doc["totals"]["timed_requests"] == 5 * 2 * 2 * 40
    cold = doc["profile"]["phases"]["cold_fill"]
    assert "Cold fill" in run.stdout
    # the candidate is a cache over a Hub-like upstream: each fresh repository costs the upstream one
    # resolve and one CDN body fetch, also when 4 clients miss at once (proxy_cache_lock)
    for sample in cold["samples"]["nginx-cache"]:
        assert sample["ok"] == 1 and sample["upstream"]["body"] == 1 and sample["upstream"]["cdn"] == 1
    crowd = cold["concurrent"]["nginx-cache"]
    assert crowd["ok"] == crowd["requests"] == 4 and crowd["upstream"]["body"] == 1
    # the bare fixture is its own origin: every one of the simultaneous misses is a body fetch
    assert cold["concurrent"]["fixture"]["upstream"]["body"] == 4


@pytest.mark.servers
def test_demo_huggingface_naive_cache_is_rejected_before_timing():
    run = run_httpbench(
        "demo",
        "huggingface",
        "--naive",
        "--no-hf-client",
        "--no-model-clients",
        "--requests",
        "40",
        timeout=60,
    )
    assert run.code == 2
    errors = [line for line in run.stderr.splitlines() if line.startswith("httpbench: error:")]
    assert len(errors) == 1 and "target 'nginx-cache'" in errors[0], run.stderr
    assert "Location header points to another host" in errors[0] or "X-Xet" in errors[0]
    assert "round 1" not in run.stderr  # nothing was timed
