"""``--profile huggingface`` against real servers: the model-repository fixture (direct and redirect
modes, served for real on loopback ports), real nginx caches in front of it (clean and naive), the
real huggingface_hub client in subprocesses, and one end-to-end ``httpbench compare`` run."""

from __future__ import annotations

import hashlib
import json
import socket
import subprocess

import httpx
import pytest

from httpbench import report
from httpbench.errors import HttpbenchError
from httpbench.model import Target
from httpbench.peers.hfcache import HfCache
from httpbench.profiles import Context, load
from httpbench.profiles.huggingface import HuggingFaceProfile, fixture, leak
from tests.httpbench.http_fixtures import read_head, run_compare, seeded

COMMIT = fixture.COMMIT
FILE = f"/org/model/resolve/{COMMIT}/model.safetensors"
needs_nginx = pytest.mark.usefixtures("peer_programs")  # installed by the session when missing


def targets(**urls: str) -> list[Target]:
    return [Target.parse(name, url)[0] for name, url in urls.items()]


def preflight(profile: HuggingFaceProfile, **urls: str):
    ctx = Context(targets(**urls), 10.0)
    try:
        return profile.preflight(ctx)
    finally:
        ctx.close()


def after_rounds(profile: HuggingFaceProfile, method: str = "seed", **urls: str):
    ctx = Context(targets(**urls), 10.0, method=method)
    try:
        profile.preflight(ctx)
        return profile.after_rounds(ctx)
    finally:
        ctx.close()


@pytest.fixture(scope="module")
def hub():
    with fixture.HubFixture() as server:
        yield server


@pytest.fixture(scope="module")
def cdn_hub():
    """The real Hub's shape: the model file's resolve redirects to a CDN on another port, with Xet headers."""
    with fixture.HubFixture(fixture.HubApp(mode="redirect", xet=True)) as server:
        yield server


@pytest.fixture(scope="module")
def clean(cdn_hub, peer_programs):
    with HfCache(cdn_hub.url) as cache:
        yield cache


# -- the fixture ------------------------------------------------------------------------------------


def test_fixture_serves_any_repository_directly(hub):
    c = httpx.Client(base_url=hub.url)
    info = c.get(f"/api/models/org/model/revision/{COMMIT}")
    doc = info.json()
    assert (info.status_code, doc["id"], doc["sha"]) == (200, "org/model", COMMIT)
    assert [s["rfilename"] for s in doc["siblings"]] == [
        "model.safetensors",
        "config.json",
        "tokenizer.json",
        "tokenizer_config.json",
        "README.md",
    ]
    assert c.get("/api/models/org/model", headers={"If-None-Match": info.headers["etag"]}).status_code == 304
    assert c.get("/api/models/org/model/revision/v9").headers["x-error-code"] == "RevisionNotFound"

    head = c.head(FILE)
    assert head.headers["x-repo-commit"] == COMMIT
    assert head.headers["x-linked-etag"] == head.headers["etag"] == f'"{hub.sha256}"'
    assert head.headers["x-linked-size"] == head.headers["content-length"] == str(4 * 1024 * 1024)
    body = c.get(FILE).content
    assert hashlib.sha256(body).hexdigest() == hub.sha256 == hashlib.sha256(hub.content).hexdigest()
    blocks = {body[i : i + 32] for i in range(0, len(body), 32)}
    assert len(blocks) == len(body) // 32  # no repeating block: an offset bug shows
    part = c.get(FILE, headers={"Range": "bytes=65536-131071"})
    assert (part.status_code, part.headers["content-range"]) == (206, f"bytes 65536-131071/{len(body)}")
    assert part.content == body[65536:131072]
    assert c.get(FILE, headers={"Range": "bytes=-10"}).content == body[-10:]
    assert c.get(FILE, headers={"Range": f"bytes={len(body)}-"}).status_code == 416

    tree = c.get(f"/api/models/org/model/tree/{COMMIT}").json()
    assert tree[0]["lfs"] == {"oid": hub.sha256, "size": len(body), "pointerSize": 132}
    paths = c.post(f"/api/models/org/model/paths-info/{COMMIT}", data={"paths": ["config.json"]}).json()
    assert [p["path"] for p in paths] == ["config.json"]
    stats = c.get("/__stats").json()
    assert stats["files"]["org/model"]["model.safetensors"]["body"] == 1
    assert stats["files"]["org/model"]["model.safetensors"]["range"] == 2  # the 416 is no range


def test_fixture_redirect_mode_sends_the_model_file_to_its_cdn(cdn_hub):
    c = httpx.Client()
    path = "/org/redirected/resolve/main/model.safetensors"
    found = c.get(cdn_hub.url + path)
    assert found.status_code == 302 and found.headers["location"].startswith(cdn_hub.cdn_url + "/cdn/")
    assert found.headers["x-linked-etag"] == f'"{cdn_hub.sha256}"' and "x-xet-hash" in found.headers
    assert 'rel="xet-auth"' in found.headers["link"]
    assert c.get(cdn_hub.url + "/org/redirected/resolve/main/config.json").status_code == 200
    body = c.get(found.headers["location"]).content
    assert hashlib.sha256(body).hexdigest() == cdn_hub.sha256
    part = c.get(found.headers["location"], headers={"Range": "bytes=0-99"})
    assert part.status_code == 206 and part.content == body[:100]
    counts = c.get(cdn_hub.url + "/__stats").json()["files"]["org/redirected"]["model.safetensors"]
    assert (counts["resolve"], counts["cdn"], counts["body"], counts["range"]) == (1, 2, 1, 1)


# -- preflight --------------------------------------------------------------------------------------


@needs_nginx
def test_preflight_passes_fixture_against_the_clean_cache(hub, cdn_hub, clean):
    profile = HuggingFaceProfile(upstream_host=(cdn_hub.url[7:], cdn_hub.cdn_url[7:]))
    section = preflight(profile, fixture=hub.url, cache=clean.url)
    cache = section.records["targets"]["cache"]
    assert cache["info"]["sha"] == COMMIT and "config.json" in cache["info"]["files"]
    assert cache["file"]["sha256"] == hub.sha256 and cache["file"]["etag_is_linked"]
    assert cache["file"]["range"]["content_range"] == f"bytes 0-65535/{hub.size}"
    scenarios = {s.name: s for s in profile.scenarios()}
    assert scenarios["model file Range 64 KiB"].sha256 == hashlib.sha256(hub.content[:65536]).hexdigest()
    assert scenarios["model file GET"].length == hub.size


@needs_nginx
@pytest.mark.parametrize("mode, leaked", [("direct", "X-Xet-Hash"), ("redirect", "Location")])
@pytest.mark.servers
def test_preflight_rejects_a_naive_proxy_that_leaks(mode, leaked):
    with (
        fixture.HubFixture(fixture.HubApp(mode=mode, xet=True)) as upstream,
        HfCache(upstream.url, naive=True) as naive,
        fixture.HubFixture() as ref,
        pytest.raises(HttpbenchError) as err,
    ):
        preflight(HuggingFaceProfile(), fixture=ref.url, naive=naive.url)
    message = str(err.value)
    assert "'naive'" in message and "HEAD /" in message and leaked in message and "\n" not in message


def test_leak_check_finds_upstream_hosts_in_headers_and_json():
    target = targets(t="http://127.0.0.1:8000")[0]
    plain = httpx.Response(200, headers={"X-Repo-Commit": COMMIT})
    assert leak(target, "GET /x", plain, ("hub.internal:9000",)) is None
    header = httpx.Response(200, headers={"X-Origin": "http://hub.internal:9000/x"})
    assert "header X-Origin names upstream host 'hub.internal:9000'" in leak(
        target, "GET /x", header, ("hub.internal:9000",)
    )
    body = httpx.Response(200, json={"siblings": [], "mirror": "http://HUB.internal:9000"})
    assert "JSON body names upstream host" in leak(target, "GET /api", body, ("hub.internal:9000",))
    same_host = httpx.Response(200, headers={"Location": "http://127.0.0.1:8000/elsewhere"})
    assert leak(target, "GET /x", same_host, ()) is None
    link = httpx.Response(200, headers={"Link": '<https://cas/x>; rel="xet-auth"'})
    assert "Link with a Xet relation" in leak(target, "HEAD /f", link, ())
    other_port = httpx.Response(302, headers={"Location": "//127.0.0.1:8001/f"})
    assert "points to another host (127.0.0.1:8001)" in leak(target, "GET /f", other_port, ())
    garbled = httpx.Response(302, headers={"Location": "http://cdn.internal:x8/f"})
    assert "Location header is not a valid URL" in leak(target, "GET /f", garbled, ())


@pytest.mark.parametrize(
    "knob, words",
    [
        ({"corrupt_offset": 3_000_000}, "body SHA-256"),
        ({"corrupt_offset": 100}, "body SHA-256"),
        ({"range_shift": 1}, "not bytes 0-65535"),
    ],
)
def test_preflight_catches_wrong_bytes_and_wrong_ranges(hub, knob, words):
    with fixture.HubFixture(fixture.HubApp(**knob)) as bad, pytest.raises(HttpbenchError, match=words) as err:
        preflight(HuggingFaceProfile(), fixture=hub.url, bad=bad.url)
    assert "target 'bad'" in str(err.value)


@pytest.mark.servers
def test_preflight_checks_commit_and_expected_files(hub):
    with pytest.raises(HttpbenchError, match=r"'fixture' GET /api/models/\S+/revision/f{40}: returned 404"):
        preflight(HuggingFaceProfile(revision="f" * 40), fixture=hub.url)
    with (
        fixture.HubFixture(fixture.HubApp(commit="f" * 40)) as stale,
        pytest.raises(
            HttpbenchError,
            match=f"target 'stale' .*model info sha f{{40}} is not the "
            f"expected commit {COMMIT} \\(--revision main\\)",
        ),
    ):
        preflight(HuggingFaceProfile(revision="main"), fixture=hub.url, stale=stale.url)
    with pytest.raises(HttpbenchError, match=r"missing \['weights.bin'\]"):
        preflight(HuggingFaceProfile(expect_file=("weights.bin",)), fixture=hub.url)
    with pytest.raises(HttpbenchError, match="--cold-target expects NAME=TEMPLATE"):
        preflight(HuggingFaceProfile(cold_target=("nobody=http://x/{i}",)), fixture=hub.url)
    with pytest.raises(HttpbenchError, match="^--cold-target fixture: URL must start with http://"):
        preflight(HuggingFaceProfile(cold_target=("fixture=hub.internal/{i}",)), fixture=hub.url)
    section = preflight(HuggingFaceProfile(revision="main"), fixture=hub.url)
    assert section.records["expected"]["commit"] == COMMIT


# -- cold fill and gates ----------------------------------------------------------------------------


@needs_nginx
@pytest.mark.servers
def test_cold_fill_counts_one_upstream_fetch_per_fresh_repository_through_the_clean_cache(hub, clean):
    section = after_rounds(
        HuggingFaceProfile(cold_samples=2, cold_concurrency=4), fixture=hub.url, cache=clean.url
    )
    cold = section.records["cold_fill"]
    for sample in cold["samples"]["cache"]:
        assert sample["ok"] == 1 and sample["upstream"]["resolve"] == 1 and sample["upstream"]["body"] == 1
    conc = cold["concurrent"]["cache"]
    assert conc["ok"] == 4 and conc["upstream"]["body"] == 1 and conc["upstream"]["resolve"] == 1
    assert cold["concurrent"]["fixture"]["upstream"]["body"] == 4  # the origin itself: no cache
    assert cold["summary"]["cache"]["upstream_body_per_repo"] == 1
    assert cold["summary"]["cache"]["median_mibps"] > 0
    assert not [f for f in section.gate_failures if "singleflight" in f]
    assert any("baseline fixture: 4 upstream body fetches" in n for n in section.notes)
    rows = report.huggingface_tables({"phases": section.records})[0][2]
    assert rows[1][0] == "cache" and rows[1][6] == "1/1"


@pytest.fixture()
def fast_and_slow(peer_programs):
    """The URLs of two clean caches, over a redirect-mode hub and over one 60 ms slower."""
    with (
        fixture.HubFixture(fixture.HubApp(mode="redirect")) as fast,
        fixture.HubFixture(fixture.HubApp(mode="redirect", delay=0.06)) as slow,
        HfCache(fast.url) as fast_cache,
        HfCache(slow.url) as slow_cache,
    ):
        yield fast_cache.url, slow_cache.url


@needs_nginx
@pytest.mark.servers
def test_cold_gate_passes_and_fails_by_upstream_speed(fast_and_slow):
    fast, slow = fast_and_slow
    opts = {"cold_samples": 2, "cold_concurrency": 0}
    passed = after_rounds(HuggingFaceProfile(**opts), slow=slow, fast=fast)
    failed = after_rounds(HuggingFaceProfile(**opts), fast=fast, slow=slow)
    assert passed.gate_failures == []
    assert passed.records["cold_fill"]["comparisons"]["fast"]["throughput_ratio"] > 1.5
    assert len(failed.gate_failures) == 1
    assert (
        failed.gate_failures[0].startswith("cold fill: slow median throughput")
        and "< 0.90x" in failed.gate_failures[0]
    )


@needs_nginx
@pytest.mark.servers
def test_cold_gate_under_the_paired_method_decides_on_an_interval(fast_and_slow):
    fast, slow = fast_and_slow
    urls = {"fast": fast, "slow": slow}  # fast first: the baseline
    failed = after_rounds(HuggingFaceProfile(cold_samples=8, cold_concurrency=0), "paired", **urls)
    few = after_rounds(HuggingFaceProfile(cold_samples=3, cold_concurrency=0), "paired", **urls)
    cmp = failed.records["cold_fill"]["comparisons"]["slow"]
    assert cmp["verdict"] == "fail" and cmp["decision"]["high"] < 0.90 and cmp["decision"]["n"] == 8
    assert len(failed.gate_failures) == 1 and "cold throughput" in failed.gate_failures[0]
    assert few.gate_failures == []
    assert few.records["cold_fill"]["comparisons"]["slow"]["verdict"] == "inconclusive"
    assert any("too few sample pairs" in u for u in few.inconclusive)


@needs_nginx
@pytest.mark.servers
def test_a_cache_without_singleflight_fails_the_cold_fill(hub, cdn_hub):
    """Two naive caches in front of the same direct fixture: every concurrent miss goes upstream."""
    with fixture.HubFixture() as upstream, HfCache(upstream.url, naive=True) as naive:
        section = after_rounds(
            HuggingFaceProfile(cold_samples=1, cold_concurrency=3), fixture=hub.url, naive=naive.url
        )
    assert any(
        f.startswith("cold fill: naive: 3 upstream body fetches") and "singleflight" in f
        for f in section.gate_failures
    )


# -- the real client ---------------------------------------------------------------------------------


@needs_nginx
@pytest.mark.servers
def test_real_huggingface_hub_client_downloads_from_fixture_and_clean_cache(hub, clean):
    section = after_rounds(
        HuggingFaceProfile(cold_samples=0, hf_client=True, hf_client_rounds=1),
        fixture=hub.url,
        cache=clean.url,
    )
    clients = section.records["clients"]["clients"]
    assert set(clients) == {"hf_hub_download", "snapshot_download", "hf download"}
    for name, data in clients.items():
        for sample in data["samples"]:
            assert sample["ok"], (name, sample)
    assert {s["files"] for s in clients["snapshot_download"]["samples"]} == {5}
    assert not [n for n in section.notes if "client" in n]


# -- end to end ------------------------------------------------------------------------------------


@needs_nginx
@pytest.mark.servers
def test_compare_profile_huggingface_end_to_end(hub, clean, tmp_path):
    assert load("huggingface") is HuggingFaceProfile
    out = tmp_path / "result.json"
    cold = {"cold_samples": 1, "cold_concurrency": 2}
    options = seeded(40, warmups=4, concurrency=4, **cold, output=out, q=True)
    run = run_compare({"fixture": hub.url, "cache": clean.url}, profile="huggingface", **options)
    assert run.code == 0, run.output
    doc = json.loads(out.read_text())
    assert doc["totals"] == {"timed_requests": 5 * 2 * 40, "ok": 400, "failures": 0}
    section = doc["profile"]
    assert section["name"] == "huggingface" and section["preflight"]["expected"]["commit"] == COMMIT
    assert section["phases"]["cold_fill"]["summary"]["cache"]["upstream_body_per_repo"] == 1
    assert "Cold fill" in run.stdout and "model file Range 64 KiB" in run.stdout


@needs_nginx
@pytest.mark.servers
def test_a_xet_enabled_client_stays_on_the_clean_cache_but_follows_a_leak(tmp_path):
    """With Xet on in the client, the clean cache keeps every download on itself (the upstream sees
    no Xet token request); the Xet headers of a leaking upstream send the client to Xet instead."""
    from httpbench.profiles.huggingface import client_argv, client_env

    with (
        fixture.HubFixture(fixture.HubApp(mode="redirect", xet=True)) as upstream,
        HfCache(upstream.url) as cache,
    ):
        for name, url, repo in (("cache", cache.url, "org/via-cache"), ("leaky", upstream.url, "org/direct")):
            target = targets(**{name: url})[0]
            proc = subprocess.run(
                client_argv("hf_hub_download", repo, "main", "model.safetensors"),
                env=client_env(target, str(tmp_path / name), xet=True),
                capture_output=True,
                text=True,
                timeout=120,
            )
            counts = upstream.stats()["repos"][repo]
            if name == "cache":
                assert proc.returncode == 0, proc.stderr[-500:]
                assert json.loads(proc.stdout.splitlines()[-1])["sha256"] == upstream.sha256
                assert "xet_token" not in counts and counts["body"] == 1
            else:
                assert counts.get("xet_token") == 1


@pytest.mark.servers
def test_model_info_is_compared_by_content_not_by_bytes(hub):
    """Two endpoints serving the same commit need not serialize model info alike (a proxy's cached
    copy of the Hub's info has other download counts, another field order): the profile's preflight
    compares commit, id and file list, so the timed info scenarios take each target's own body."""
    from httpbench.measure import compare

    with fixture.HubFixture() as other:
        plain = other.app._info_document

        def reformatted(repo, blobs):
            body, etag = plain(repo, blobs)
            doc = json.loads(body)
            doc["downloads"] = 12345
            return json.dumps(doc, indent=1).encode(), etag.replace('"', '"x', 1)

        other.app._info_document = reformatted
        profile = HuggingFaceProfile(cold_samples=0)
        cfg = compare.Config(
            targets=targets(hub=hub.url, other=other.url),
            scenarios=profile.scenarios(),
            warmups=0,
            requests=8,
            concurrency=2,
            rounds=1,
            profile=profile,
            method="seed",
        )
        doc = compare.run(cfg)
    assert doc["totals"] == {"timed_requests": 80, "ok": 80, "failures": 0}
    info = {p["target"]: p for p in doc["preflight"] if p["scenario"] == "model info GET"}
    assert info["hub"]["sha256"] != info["other"]["sha256"]


# -- hostile requests to the fixture (issue 13, item 5) --------------------------------------------


def raw_head(url: str, target: str) -> list[str]:
    """The response head lines for a request line sent byte for byte (no client re-encoding)."""
    host, port = url.removeprefix("http://").rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(f"GET {target} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode())
        data = read_head(sock)
    return data.split(b"\r\n\r\n", 1)[0].decode("latin-1").split("\r\n")


@pytest.mark.parametrize(
    "target",
    [
        "/evil/model/resolve/main/x%0d%0aSet-Cookie:%20evil=1",
        "/evil/model/resolve/main/x%0d%0a%0d%0aSet-Cookie:%20evil=1",
        "/evil/model/resolve/main/x%0aSet-Cookie:%20evil=1",
        "/api/models/evil/model/revision/x%0d%0aSet-Cookie:%20evil=1",
        "/api/models/evil/model/tree/main/x%0d%0aSet-Cookie:%20evil=1",
    ],
)
def test_a_crlf_in_a_requested_name_cannot_add_a_response_header(hub, target):
    lines = raw_head(hub.url, target)
    assert lines[0] == "HTTP/1.1 404 Not Found"
    names = [line.split(":", 1)[0].lower() for line in lines[1:]]
    assert "set-cookie" not in names and len(names) == len(set(names))
    message = next(line for line in lines if line.lower().startswith("x-error-message:"))
    assert "%0A" in message and "Set-Cookie" in message  # the name is echoed, encoded, on one line


def test_a_non_ascii_name_is_a_404_not_a_fixture_error(hub):
    lines = raw_head(hub.url, "/evil/model/resolve/main/%E2%82%AC.bin")
    assert lines[0] == "HTTP/1.1 404 Not Found"
    assert "X-Error-Message: %E2%82%AC.bin does not exist" in lines


@pytest.mark.servers
def test_fixture_counters_stay_bounded_under_many_names():
    """Per-file counts exist only for the repository's files; repositories are counted one by one up
    to a cap (the oldest dropped past it), while the totals count every request."""
    with fixture.HubFixture() as server, httpx.Client(base_url=server.url) as c:
        for i in range(300):
            assert c.get(f"/evil/model/resolve/main/missing-{i}.bin").status_code == 404
        assert c.get("/evil/model/resolve/main/config.json").status_code == 200
        stats = c.get("/__stats").json()
        assert stats["files"] == {"evil/model": {"config.json": {"body": 1, "resolve": 1}}}
        assert stats["repos"]["evil/model"] == {"body": 1, "resolve": 301}
        server.app.stats.max_repos = 50
        for i in range(120):
            assert c.head(f"/evil/repo-{i}/resolve/main/config.json").status_code == 200
        stats = c.get("/__stats").json()
    assert len(stats["repos"]) == len(stats["files"]) == 50 and stats["dropped_repos"] == 71
    assert "evil/repo-119" in stats["repos"] and "evil/model" not in stats["repos"]
    assert stats["totals"] == {"body": 1, "head": 120, "resolve": 300 + 1 + 120}
