"""The real ``httpbench compare`` process against fixture servers: gates, order, secrets, errors."""

from __future__ import annotations

import base64
import json
import time

import pytest

from httpbench.peers.process import free_port
from tests.httpbench.http_fixtures import (
    FixtureServer,
    Route,
    body_of,
    compare_args,
    run_compare,
    run_httpbench,
    seeded,
)

BODY = body_of(2048)
PASSWORD = "Sw0rdfish-7f3c91"
FAST = seeded(40, 3, warmups=4, concurrency=4, q=True)


def strict_json(path) -> dict:
    return json.loads(path.read_text(), parse_constant=lambda c: pytest.fail(f"non-standard {c} in JSON"))


@pytest.fixture()
def pair():
    with FixtureServer({"/f": Route(BODY)}) as a, FixtureServer({"/f": Route(BODY)}) as b:
        yield a, b


def one_line_error(run, *needles):
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1, run.stderr
    assert lines[0].startswith("httpbench: error: "), run.stderr
    assert "Traceback" not in run.output
    for needle in needles:
        assert needle in lines[0], lines[0]


@pytest.mark.servers
def test_equal_targets_pass_the_gates(pair, tmp_path):
    a, b = pair
    for srv in pair:  # latency dominated by a fixed 5 ms: a stable ratio of ~1
        srv.routes["/f"].delay = 0.005
    out = tmp_path / "r.json"
    # wide bounds: equal targets must pass even on a busy host (noise, not a bug)
    gates = {"enforce_gates": True, "gate": "payload:0.5:2.0"}
    targets = {"base": a.url, "cand": b.url}
    run = run_compare(targets, "name=file,path=/f,class=payload", **gates, output=out, **FAST)
    assert run.code == 0, run.output
    doc = strict_json(out)
    assert doc["gate_failures"] == []
    assert doc["comparisons"]["file"]["cand"]["passed"] is True
    assert 0.5 < doc["comparisons"]["file"]["cand"]["ratios"]["throughput"] < 2.0
    assert "Throughput ratio" in run.stdout and "gate_failures: none" in run.stdout


@pytest.mark.servers
def test_a_slowed_candidate_fails_the_gates_with_exit_1(pair, tmp_path):
    a, b = pair
    a.routes["/f"].delay = 0.005
    b.routes["/f"].delay = 0.015
    out = tmp_path / "r.json"
    targets = {"base": a.url, "cand": b.url}
    run = run_compare(targets, "/f", enforce_gates=True, output=out, **FAST)
    assert run.code == 1, run.output
    one_line_error(run, "gate failure")
    doc = strict_json(out)
    assert any("throughput" in g for g in doc["gate_failures"])
    assert any("p95" in g for g in doc["gate_failures"])
    assert doc["comparisons"]["GET /f"]["cand"]["ratios"]["throughput"] < 0.5
    # without --enforce-gates the same result is reported but does not fail the run. One round of
    # 12 requests without warm-ups is mostly connection set-up: a 10x slower candidate keeps the
    # verdict clear of that noise on a loaded machine (3x once passed the gates in CI-like load).
    b.routes["/f"].delay = 0.05
    run = run_compare(targets, "/f", **seeded(12), q=True)
    assert run.code == 0, run.output
    assert "Gate failures:" in run.stdout


@pytest.mark.servers
def test_rounds_alternate_and_every_measurement_is_in_the_json(pair, tmp_path):
    a, b = pair
    out = tmp_path / "r.json"
    scenarios = ("/f", "name=head,method=HEAD,path=/f")
    options = seeded(10, 4, concurrency=2, output=out, q=True, markdown=True)
    run = run_compare({"x": a.url, "y": b.url}, *scenarios, **options)
    assert run.code == 0, run.output
    doc = strict_json(out)
    rounds = doc["rounds"]
    assert len(rounds) == 2 * 4 * 2
    firsts = {(r["scenario"], r["round"]): r["target"] for r in rounds if r["position"] == 1}
    assert [firsts[("GET /f", n)] for n in (1, 2, 3, 4)] == ["x", "y", "x", "y"]
    assert [firsts[("head", n)] for n in (1, 2, 3, 4)] == ["y", "x", "y", "x"]
    # the executed sequence in the file follows that order
    seq = [r["target"] for r in rounds if r["scenario"] == "GET /f"]
    assert seq == ["x", "y", "y", "x", "x", "y", "y", "x"]
    assert doc["config"]["warmups"] == 0 and all(r["warmups"] == 0 for r in rounds)
    assert set(doc["summaries"]["head"]) == {"x", "y"}
    assert doc["summaries"]["head"]["x"]["mibps"] == 0.0
    for key in ("environment", "config", "preflight", "comparisons", "gate_failures", "totals"):
        assert key in doc
    assert "| Scenario" in run.stdout and "Per-round throughput and RT" in run.stdout


def faulty_run(pair, tmp_path, fault: str, every: int, *, requests: int, concurrency: int, rounds: int):
    """A seed-method compare of a against b whose ``/f`` has ``fault`` on every ``every``-th answer
    (after the first); the run must exit 1. Returns (run, result path, b's route)."""
    a, b = pair
    route = b.routes["/f"]
    route.fault, route.fault_every, route.fault_after = fault, every, 1
    out = tmp_path / "r.json"
    options = seeded(requests, rounds, concurrency=concurrency, output=out, q=True)
    run = run_compare({"a": a.url, "b": b.url}, "/f", **options)
    assert run.code == 1
    return run, out, route


@pytest.mark.servers
def test_failures_are_counted_reported_and_fail_the_run(pair, tmp_path):
    run, out, route = faulty_run(pair, tmp_path, "wrong_length", 4, requests=20, concurrency=2, rounds=2)
    one_line_error(run, "10 timed request(s) failed")
    doc = strict_json(out)
    assert doc["summaries"]["GET /f"]["b"]["failures"] == route.faults == 10
    assert doc["summaries"]["GET /f"]["b"]["failure_kinds"] == {"length": 10}
    assert doc["totals"] == {"timed_requests": 80, "ok": 70, "failures": 10}
    assert any("b had 10 failed of 40" in g for g in doc["gate_failures"])


@pytest.mark.servers
def test_a_zero_baseline_gives_null_ratios_not_infinity(pair, tmp_path):
    a, b = pair
    route = a.routes["/f"]
    route.fault, route.fault_after = "status_500", 1  # preflight passes, then every answer fails
    out = tmp_path / "r.json"
    run = run_compare({"a": a.url, "b": b.url}, "/f", **seeded(8, 2, concurrency=2), output=out, q=True)
    assert run.code == 1
    doc = strict_json(out)  # strict: no Infinity / NaN
    ratios = doc["comparisons"]["GET /f"]["b"]["ratios"]
    assert ratios["throughput"] is None and ratios["p95"] is None
    assert doc["summaries"]["GET /f"]["a"]["rps"] == 0.0
    assert doc["summaries"]["GET /f"]["a"]["p95_ms"] is None
    assert "Infinity" not in run.stdout and "—" in run.stdout


@pytest.mark.servers
def test_credentials_never_appear_and_urls_lose_userinfo(tmp_path):
    secret_file = tmp_path / "cred"
    secret_file.write_text(f"bob:{PASSWORD}\n")
    token = base64.b64encode(f"alice:{PASSWORD}".encode()).decode()
    with FixtureServer({"/f": Route(BODY)}) as a, FixtureServer({"/f": Route(BODY)}) as b:
        out = tmp_path / "r.json"
        auth = ["a=env:HB_TEST_CRED", f"b=file:{secret_file}"]
        options = seeded(8, 2, warmups=2, auth=auth, output=out)
        run = run_compare(
            {"a": a.url, "b": b.url}, "/f", **options, env={"HB_TEST_CRED": f"alice:{PASSWORD}"}
        )
        assert run.code == 0, run.output
        text = out.read_text()
        for blob in (text, run.stdout, run.stderr):
            assert PASSWORD not in blob and token not in blob and "alice" not in blob
        assert [t["authenticated"] for t in json.loads(text)["config"]["targets"]] == [True, True]
        # userinfo in a URL is used, warned about without echoing it, and never written
        port = a.port
        targets = {"a": f"http://carol:{PASSWORD}@127.0.0.1:{port}", "b": b.url}
        run = run_compare(targets, "/f", **seeded(4), output=out)
        assert run.code == 0, run.output
        text = out.read_text()
        assert PASSWORD not in text + run.output and "carol" not in text + run.output
        assert json.loads(text)["config"]["targets"][0]["url"] == f"http://127.0.0.1:{port}"
        assert "warning" in run.stderr
    # a literal secret on the command line is refused without being echoed
    targets = {"a": "http://127.0.0.1:1", "b": "http://127.0.0.1:2"}
    run = run_compare(targets, "/f", auth=f"a=alice:{PASSWORD}")
    assert run.code == 2
    one_line_error(run, "env:")
    assert PASSWORD not in run.output


@pytest.mark.servers
def test_one_line_errors_and_exit_2(pair, tmp_path):
    a, b = pair
    down = f"http://127.0.0.1:{free_port()}"
    ab = {"a": a.url, "b": b.url}
    cases = [
        (compare_args({"a": a.url, "b": down}, "/f"), "connection refused"),
        (compare_args(ab, "/missing"), "returned 404"),
        (compare_args({"a": a.url, "b": "ftp://127.0.0.1/"}, "/f"), "http://"),
        (compare_args({"a": a.url, "b": "http://127.0.0.1:99999"}, "/f"), "bad URL"),
        (compare_args({"a": a.url}, "/f"), "at least two"),
        (compare_args(ab), "no scenarios"),
        (compare_args(ab, "name=x,method=PUT,path=/f"), "method"),
        (compare_args(ab, "/f", requests=-3), "--requests"),
        (compare_args(ab, scenarios=tmp_path / "none.toml"), "cannot read"),
        (compare_args(ab, "/f", bogus=True), "bogus"),
        (compare_args(ab, "/f", output=tmp_path), "is a directory"),
    ]
    for args, needle in cases:
        run = run_httpbench(*args, "-q")
        assert run.code == 2, (args, run.output)
        one_line_error(run, needle)
    assert b.routes["/f"].count == 0  # every usage error is found before any request


@pytest.mark.servers
def test_a_slow_target_beyond_the_timeout_is_a_one_line_error(pair):
    a, b = pair
    b.routes["/f"].delay = 2.0
    # --timeout 0.3 is httpbench's own; the process may take up to 20 s
    run = run_httpbench(*compare_args({"a": a.url, "b": b.url}, "/f", timeout=0.3, q=True), timeout=20)
    assert run.code == 2
    one_line_error(run, "timeout")


@pytest.mark.servers
def test_a_reset_mid_body_during_timing_is_counted_not_a_crash(pair, tmp_path):
    run, out, _ = faulty_run(pair, tmp_path, "reset", 3, requests=30, concurrency=3, rounds=1)
    one_line_error(run, "failed their checks")
    doc = strict_json(out)
    assert doc["summaries"]["GET /f"]["b"]["failure_kinds"] == {"reset": 10}


@pytest.mark.servers
def test_scenarios_file_with_gates(pair, tmp_path):
    a, b = pair
    f = tmp_path / "s.toml"
    f.write_text("""
[[scenario]]
name = "range"
path = "/f"
class = "payload"
headers = { Range = "bytes=10-1033" }

[[scenario]]
name = "not modified"
path = "/f"
conditional = true

[gates.payload]
min_throughput_ratio = 0.01
max_p95_ratio = 100
""")
    out = tmp_path / "r.json"
    run = run_compare({"a": a.url, "b": b.url}, scenarios=f, **seeded(10), output=out, q=True)
    assert run.code == 0, run.output
    doc = strict_json(out)
    assert doc["config"]["gates"]["payload"] == {"min_throughput_ratio": 0.01, "max_p95_ratio": 100.0}
    pre = {(p["scenario"], p["target"]): p for p in doc["preflight"]}
    assert pre[("range", "a")]["status"] == 206 and pre[("range", "a")]["body_bytes"] == 1024
    assert pre[("range", "b")]["content_range"] == "bytes 10-1033/2048"
    assert pre[("not modified", "a")]["status"] == 304
    assert doc["summaries"]["range"]["b"]["mibps"] > 0


@pytest.mark.parametrize("every", [None, "1"])
@pytest.mark.servers
def test_large_bodies_are_digest_checked_by_sampling(tmp_path, every):
    """Bodies of 1 MiB and more: SHA-256 of the first body on each connection and every 8th after
    (hashing every 4 MiB body binds the client); --digest-every 1 checks them all. A changed byte
    with the right length is only visible to a digest check."""
    big = body_of(1 << 20, seed=5)
    sha = __import__("hashlib").sha256(big).hexdigest()
    with FixtureServer({"/f": Route(big)}) as a, FixtureServer({"/f": Route(big)}) as b:
        route = b.routes["/f"]
        route.fault, route.fault_after = "wrong_bytes", 1  # every timed response is corrupted
        out = tmp_path / "r.json"
        scenario = f"name=big,path=/f,class=payload,sha256={sha}"
        options = seeded(16, concurrency=2, output=out, q=True, digest_every=every)
        run = run_compare({"a": a.url, "b": b.url}, scenario, **options)
        assert run.code == 1
        doc = strict_json(out)
        rounds = {r["target"]: r for r in doc["rounds"]}
        checked = rounds["b"]["digests_checked"]
        assert rounds["b"]["failure_kinds"] == {"sha256": checked}  # every check caught it
        if every is None:  # 2 connections sharing 16 requests: their 1st, 8th and 16th bodies
            assert 2 <= checked <= 5
        else:
            assert checked == 16
        assert rounds["a"]["failures"] == 0 and rounds["a"]["digests_checked"] >= 2


@pytest.mark.servers
def test_a_trickling_target_is_bounded_by_the_timeout_in_preflight(pair):
    """Every read arrives well within the timeout, but the whole answer never does: the preflight
    must still end instead of reading one byte every 0.2 s for minutes."""
    from httpbench.config.scenarios import parse_option
    from httpbench.errors import HttpbenchError
    from httpbench.measure import preflight
    from httpbench.model import Target

    a, b = pair
    b.routes["/f"].fault = "trickle"
    targets = [Target.parse("a", a.url)[0], Target.parse("b", b.url)[0]]
    start = time.monotonic()
    with pytest.raises(HttpbenchError, match="target 'b' GET /f: no complete response within the timeout"):
        preflight.check(targets, [parse_option("/f")], 0.5)
    assert time.monotonic() - start < 5


def test_preflight_sees_the_bytes_the_timing_client_sees():
    """The engine reads bodies as sent (no decompression, no Accept-Encoding unless the scenario
    sets one): the preflight must learn the same bytes, or every timed answer fails its length."""
    from httpbench.config.scenarios import parse_option
    from httpbench.measure import compare
    from httpbench.model import Target

    with (
        FixtureServer({"/j": Route(BODY * 4, gzip=True)}) as a,
        FixtureServer({"/j": Route(BODY * 4, gzip=True)}) as b,
    ):
        scenarios = [
            parse_option("name=plain,path=/j"),
            parse_option("name=gzip,path=/j,header=Accept-Encoding: gzip"),
        ]
        cfg = compare.Config(
            targets=[Target.parse("a", a.url)[0], Target.parse("b", b.url)[0]],
            scenarios=scenarios,
            warmups=0,
            requests=10,
            concurrency=2,
            rounds=1,
            method="seed",
        )
        doc = compare.run(cfg)
    pre = {(p["scenario"], p["target"]): p for p in doc["preflight"]}
    assert pre[("plain", "a")]["body_bytes"] == len(BODY * 4)
    assert pre[("gzip", "a")]["body_bytes"] < len(BODY * 4)  # the encoded bytes
    assert doc["totals"] == {"timed_requests": 40, "ok": 40, "failures": 0}


@pytest.mark.servers
def test_credentials_that_cannot_be_a_header_are_refused_without_echo(pair):
    from httpbench.errors import HttpbenchError
    from httpbench.model import Target

    a, b = pair
    env = {"HB_TEST_CRED": f"Bearer {PASSWORD}\nX-Injected: 1"}
    run = run_compare({"a": a.url, "b": b.url}, "/f", auth="b=env:HB_TEST_CRED", q=True, env=env)
    assert run.code == 2, run.output
    one_line_error(run, "--auth b")
    assert PASSWORD not in run.output
    assert a.routes["/f"].count == 0 and b.routes["/f"].count == 0
    target = Target.parse("b", b.url)[0]
    for value in (f"Bearer {PASSWORD}\u20ac", f"alice:{PASSWORD}\x07", f"alice:{PASSWORD}\r\nX: 1"):
        with pytest.raises(HttpbenchError) as err:
            target.with_credentials(value)
        assert PASSWORD not in str(err.value)
    assert target.with_credentials(f"Bearer  {PASSWORD} ").auth_header == f"Bearer {PASSWORD}"


def test_url_userinfo_is_percent_decoded_and_never_echoed():
    from httpbench.errors import HttpbenchError
    from httpbench.model import Target

    target, userinfo = Target.parse("a", "http://bob%40corp:p%3Aw%2Fd@127.0.0.1:8080/repo")
    assert userinfo == "bob@corp:p:w/d" and target.url == "http://127.0.0.1:8080/repo"
    with pytest.raises(HttpbenchError) as err:  # an unencoded '/' in the password
        Target.parse("a", f"http://bob:{PASSWORD[:6]}/{PASSWORD[7:]}@127.0.0.1/")
    assert PASSWORD[:6] not in str(err.value)


@pytest.mark.servers
def test_conditional_scenario_with_last_modified_only(tmp_path):
    """A server without ETags still answers 304 to If-Modified-Since: the 304 scenario uses it."""
    stamp = "Thu, 03 Dec 2026 02:00:00 GMT"
    conditional = "name=f 304,path=/f,conditional=true"
    routes = lambda: {"/f": Route(BODY, last_modified=stamp, no_etag=True)}
    with FixtureServer(routes()) as a, FixtureServer(routes()) as b:
        out = tmp_path / "r.json"
        run = run_compare({"a": a.url, "b": b.url}, conditional, **seeded(20), output=out, q=True)
        assert run.code == 0, run.output
        doc = strict_json(out)
        assert doc["totals"]["ok"] == 40 and doc["summaries"]["f 304"]["b"]["mibps"] == 0
    with FixtureServer({"/f": Route(BODY, no_etag=True)}) as a, FixtureServer({"/f": Route(BODY)}) as b:
        run = run_compare({"a": a.url, "b": b.url}, conditional, q=True)
        one_line_error(run, "needs a 200 GET with an ETag or Last-Modified", "with neither")


@pytest.mark.servers
def test_a_bare_command_group_prints_its_help_as_written():
    run = run_httpbench("fixture")
    assert run.code == 2 and run.stderr.startswith("Usage: httpbench fixture")
    assert "\n  alpine" in run.stderr and "huggingface" in run.stderr and "Traceback" not in run.output
