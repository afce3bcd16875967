"""``httpbench demo alpine``: the fixture tree served by a real nginx and a real caddy, compared with
the alpine profile and timed with the apk-style client, end to end."""

from __future__ import annotations

import json

import pytest

from tests.httpbench.http_fixtures import ALPINE_SCENARIOS, cli_options, run_httpbench, seeded

pytestmark = pytest.mark.usefixtures("peer_programs")  # nginx and caddy, installed when missing
DEMO = seeded(40, 2, warmups=2, concurrency=4, q=True)  # the timed rounds of both demos


@pytest.mark.servers
def test_demo_alpine_nginx_vs_caddy_end_to_end(tmp_path):
    out = tmp_path / "alpine.json"
    tree = {"dir": tmp_path / "tree", "package_size": 200000, "client_rounds": 2}
    run = run_httpbench("demo", "alpine", *cli_options(**tree, **DEMO, output=out), timeout=120)
    assert run.code == 0, run.output
    assert "running: httpbench compare --target nginx=http://127.0.0.1:" in run.stderr
    doc = json.loads(out.read_text())
    assert [t["name"] for t in doc["config"]["targets"]] == ["nginx", "caddy"]
    assert doc["config"]["profile"] == "alpine"
    assert [s["name"] for s in doc["config"]["scenarios"]] == ALPINE_SCENARIOS
    assert doc["totals"] == {"timed_requests": 6 * 2 * 2 * 40, "ok": 960, "failures": 0}
    manifest = json.loads((tmp_path / "tree" / "manifest.json").read_text())
    pre = doc["profile"]["preflight"]
    assert json.dumps(pre).count(manifest["package"]["identity"]) >= 2  # both targets, same C:
    samples = doc["clients"]["scenarios"]["real client"]["samples"]
    assert len(samples) == 4 and all(s["ok"] for s in samples), samples
    assert [s["target"] for s in samples if s["position"] == 1] == ["nginx", "caddy"]
    # the 304 scenario used the validators of each server's own first response
    cond = {p["target"]: p for p in doc["preflight"] if p["scenario"] == "signed index 304"}
    assert cond["nginx"]["etag"] != cond["caddy"]["etag"]
    for table in ("Summary", "Per-round throughput and RT", "Alpine preflight", "Real client RT"):
        assert table in run.stdout


@pytest.mark.servers
def test_demo_refuses_a_foreign_directory_without_touching_it(tmp_path):
    victim = tmp_path / "mine"
    victim.mkdir()
    (victim / "notes.txt").write_text("keep me")
    run = run_httpbench("demo", "alpine", "--dir", str(victim), "--package-size", "200000")
    assert run.code == 2 and "refusing to write" in run.stderr and "Traceback" not in run.output
    assert [p.name for p in victim.iterdir()] == ["notes.txt"]
    assert (victim / "notes.txt").read_text() == "keep me"


@pytest.mark.servers
def test_demo_alpine_serves_the_repository_tree_only(tmp_path):
    import httpx

    from httpbench.profiles.alpine import demo

    tree = tmp_path / "tree"
    with demo.alpine(tree, 8192, 1, lambda _: None) as args:
        urls = [a.split("=", 1)[1] for a in args[:4] if a.startswith(("nginx=", "caddy="))]
        manifest = json.loads((tree / "manifest.json").read_text())
        assert len(urls) == 2
        for url in urls:
            assert httpx.get(f"{url}/{manifest['index']['path']}").status_code == 200
            for secret in (manifest["key"]["private"], manifest["key"]["public"], "manifest.json"):
                r = httpx.get(f"{url}/{secret}")
                assert r.status_code == 404, (url, secret, r.status_code)
                assert b"PRIVATE KEY" not in r.content
