"""The heavy real clients (``hf_models``: both client lines installed): the tiny models generated
here are the pinned bytes, and ``httpbench demo huggingface`` runs Transformers and Diffusers of the
old and the current line against the fixture and the nginx proxy cache, with exact fixture request
counts per sample."""

from __future__ import annotations

import json
import subprocess

import pytest

from httpbench.profiles.huggingface import fixture
from httpbench.profiles.huggingface.models import repos
from httpbench.profiles.huggingface.models.prepare import GENERATE, models_dir
from tests.httpbench.http_fixtures import cli_options, run_httpbench, seeded

pytestmark = [pytest.mark.hf_models, pytest.mark.servers, pytest.mark.usefixtures("peer_programs")]


def test_the_tiny_models_generated_here_are_the_pinned_bytes(client_lines, tmp_path):
    proc = subprocess.run(
        [str(client_lines["current"].python), str(GENERATE), str(tmp_path / "models")],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    made = json.loads(proc.stdout.splitlines()[-1])
    assert made == repos.load_manifest()  # every file's SHA-256 and size, and the versions that made them
    assert set(repos.read_models(tmp_path / "models", made)) == {"tiny-bert", "tiny-sd"}


def test_demo_runs_transformers_and_diffusers_of_both_lines_through_the_cache(client_lines, tmp_path):
    out = tmp_path / "hf.json"
    options = cli_options(
        no_hf_client=True, **seeded(40, 1, warmups=2), concurrency=4, cold_samples=2, output=out
    )
    run = run_httpbench("demo", "huggingface", *options, timeout=1200)
    assert "Traceback" not in run.stderr, run.stderr[-3000:]
    doc = json.loads(out.read_text())
    section = doc["profile"]["phases"]["model_clients"]
    assert section["rounds"] == 5 and list(section["lines"]) == ["current", "old"]
    versions = {line: data["versions"] for line, data in section["lines"].items()}
    assert versions["old"]["huggingface_hub"].startswith("0.") and versions["old"]["transformers"].startswith(
        "4."
    )
    assert versions["current"]["transformers"].startswith("5.")
    counts = {}
    for line, data in section["lines"].items():
        assert list(data["clients"]) == ["transformers", "diffusers"]
        # each client's imports made once per target (the samples are forked after them)
        imports = data["imports_ms"]
        assert set(imports) == {"transformers", "diffusers"}, imports
        assert all(set(t) == {"fixture", "nginx-cache"} and min(t.values()) > 0 for t in imports.values())
        # and each loaded this machine's copy of the pinned model once, before its first sample
        # (no request: the exact counts below would show one)
        primed = data["primed_ms"]
        assert all(set(t) == {"fixture", "nginx-cache"} and min(t.values()) > 0 for t in primed.values())
        for client, per in data["clients"].items():
            for target in ("fixture", "nginx-cache"):
                mine = [s for s in per["samples"] if s["target"] == target]
                assert len(mine) == 5 and all(s["ok"] for s in mine), mine
                shape = mine[0]["output_shape"]
                assert shape == ([1, 32, 32, 3] if client == "diffusers" else [1, shape[1], 32])
                # the same client asks the same requests every time: the counts are exact (through the
                # cache the first sample may also fill what the preflight did not ask, e.g. the old
                # line's /api/models/{repo} without a revision)
                seen = per["summary"][target]["fixture_requests"]
                assert len(seen) == 5 and len(set(seen[1:])) == 1 and seen[0] >= seen[1], (
                    line,
                    client,
                    target,
                )
                assert target != "fixture" or seen[0] == seen[1], seen
                counts[line, client, target] = seen[-1]
            assert per["comparisons"]["nginx-cache"]["verdict"] in ("pass", "fail", "inconclusive")
    for line in ("current", "old"):
        for client in ("transformers", "diffusers"):
            # direct: the fixture answers every request; the warm cache forwards only its misses (404 probes)
            assert counts[line, client, "fixture"] > counts[line, client, "nginx-cache"] >= 0
    assert counts["current", "diffusers", "nginx-cache"] == 0
    assert "Model clients" in run.stdout and "current" in run.stdout and "old" in run.stdout
    assert run.code in (0, 1), run.output[-3000:]  # a verdict, not an error


def test_prepare_finds_both_lines_and_the_pinned_models_without_installing_again(client_lines):
    run = run_httpbench("demo", "huggingface", "--prepare", timeout=300)
    assert run.code == 0 and run.stdout == "", run.output
    for line, env in client_lines.items():
        assert f"{line} client line: {env.python} (installed in {env.ready()['install_s']} s" in run.stderr
    assert "creating" not in run.stderr and "tiny models: " in run.stderr


def test_a_target_without_the_tree_endpoint_is_reported_per_client_line(client_lines, tmp_path):
    """The seed's proxy served only the old flow: with --model-preflight report the clients run, and
    only the current line's Diffusers fails against that target (the others load from siblings)."""
    served = repos.read_models(models_dir(), repos.load_manifest())
    out = tmp_path / "lines.json"
    with (
        fixture.HubFixture(fixture.HubApp(models=served)) as good,
        fixture.HubFixture(fixture.HubApp(models=served, faults=("no-tree",))) as old_only,
    ):
        run = run_httpbench(
            "compare", "--target", f"fixture={good.url}", "--target", f"proxy={old_only.url}",
            "--profile", "huggingface", "--model-preflight", "report", "--cold-samples", "0",
            *(arg for line, env in client_lines.items() for arg in ("--model-client", f"{line}={env.python}")),
            "--model-client-rounds", "1", *cli_options(**seeded(20, 1)), "--output", str(out),
            timeout=600,
        )  # fmt: skip
    assert run.code == 0, run.output[-3000:]
    doc = json.loads(out.read_text())
    assert "the tree endpoint returned 404" in doc["profile"]["preflight"]["models"]["problems"]["proxy"]
    lines = doc["profile"]["phases"]["model_clients"]["lines"]
    ok = {
        (line, client, s["target"]): s["ok"]
        for line, data in lines.items()
        for client, per in data["clients"].items()
        for s in per["samples"]
    }
    assert ok == {key: key != ("current", "diffusers", "proxy") for key in ok} and len(ok) == 8
    failed = lines["current"]["clients"]["diffusers"]["summary"]["proxy"]["errors"][0]
    assert "no file named" in failed
    assert any(
        "client diffusers (current line): proxy had 1 failed sample" in f for f in doc["gate_failures"]
    )
