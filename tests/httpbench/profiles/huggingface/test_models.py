"""The tiny model repositories without the heavy clients: the Hub fixture serving them (subfolders,
tree listings, LFS identities), their pins refusing other bytes, the client lines read from the
project's extras, and the models preflight naming what a real client would break on when a target
drops X-Repo-Commit, serves a wrong ETag or has no tree endpoint -- before any timing."""

from __future__ import annotations

import hashlib
import json
import re
import tomllib
from pathlib import Path

import httpx
import pytest

from httpbench.errors import HttpbenchError
from httpbench.profiles.huggingface import fixture
from httpbench.profiles.huggingface.models import lines, repos
from httpbench.profiles.huggingface.models.preflight import git_blob_id
from tests.httpbench.http_fixtures import body_of, run_httpbench

ROOT = Path(__file__).resolve().parents[4]
COMMIT = fixture.COMMIT
FILES = {
    "tiny-bert": {"config.json": b'{"model_type": "bert"}\n', "model.safetensors": body_of(3000, 1)},
    "tiny-sd": {
        "model_index.json": b'{"_class_name": "StableDiffusionPipeline"}\n',
        "unet/config.json": b'{"sample_size": 16}\n',
        "unet/diffusion_pytorch_model.safetensors": body_of(5000, 2),
        "tokenizer/vocab.json": b'{"a": 0}\n',
    },
}


@pytest.fixture(scope="module")
def models(tmp_path_factory) -> tuple[Path, Path]:
    """A models directory and its manifest (as ``generate.py`` prints it)."""
    root = tmp_path_factory.mktemp("models")
    pins: dict[str, dict] = {}
    for name, files in FILES.items():
        for rel, data in files.items():
            (root / name / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / name / rel).write_bytes(data)
            pins.setdefault(name, {})[rel] = {"sha256": hashlib.sha256(data).hexdigest(), "size": len(data)}
    manifest = root.parent / f"{root.name}-manifest.json"
    manifest.write_text(json.dumps({"versions": {"transformers": "5.25.0"}, "repos": pins}))
    return root, manifest


def hub_app(models: tuple[Path, Path], *faults: str, **kw) -> fixture.HubApp:
    served = repos.read_models(models[0], repos.load_manifest(models[1]))
    return fixture.HubApp(models=served, faults=faults, **kw)


def test_the_fixture_serves_each_model_repository_with_folders_and_lfs_identities(models):
    with fixture.HubFixture(hub_app(models)) as hub, httpx.Client(base_url=hub.url) as c:
        info = c.get(f"/api/models/httpbench/tiny-sd/revision/{COMMIT}").json()
        assert (info["sha"], info["library_name"]) == (COMMIT, "diffusers")
        assert sorted(s["rfilename"] for s in info["siblings"]) == sorted(FILES["tiny-sd"])
        deep = c.get(f"/api/models/httpbench/tiny-sd/tree/{COMMIT}", params={"recursive": "true"}).json()
        assert {e["path"]: e["type"] for e in deep} == {
            **dict.fromkeys(FILES["tiny-sd"], "file"),
            "unet": "directory",
            "tokenizer": "directory",
        }
        top = c.get(f"/api/models/httpbench/tiny-sd/tree/{COMMIT}").json()
        assert sorted(e["path"] for e in top) == ["model_index.json", "tokenizer", "unet"]
        unet = c.get(f"/api/models/httpbench/tiny-sd/tree/{COMMIT}/unet").json()
        weights = FILES["tiny-sd"]["unet/diffusion_pytorch_model.safetensors"]
        lfs = next(e for e in unet if e["path"].endswith(".safetensors"))["lfs"]
        assert lfs["oid"] == hashlib.sha256(weights).hexdigest() and len(unet) == 2
        path = f"/httpbench/tiny-sd/resolve/{COMMIT}/unet/diffusion_pytorch_model.safetensors"
        head = c.head(path)
        assert (
            head.headers["etag"]
            == head.headers["x-linked-etag"]
            == f'"{hashlib.sha256(weights).hexdigest()}"'
        )
        assert c.get(path).content == weights
        small = c.head(f"/httpbench/tiny-bert/resolve/{COMMIT}/config.json")
        assert small.headers["etag"] == f'"{git_blob_id(FILES["tiny-bert"]["config.json"])}"'
        assert "x-linked-etag" not in small.headers
        # a fresh repository of a model (cold samples) holds that model; other names the default file
        fresh = c.get(f"/other/tiny-bert-7/resolve/{COMMIT}/model.safetensors").content
        assert fresh == FILES["tiny-bert"]["model.safetensors"]
        assert c.get(f"/other/model/resolve/{COMMIT}/model.safetensors").content == hub.content
        assert c.get(f"/api/models/httpbench/tiny-sd/tree/{COMMIT}/vae").status_code == 404
        counts = c.get("/__stats").json()["repos"]["httpbench/tiny-sd"]
        assert counts == {"info": 5, "resolve": 2, "head": 1, "body": 1}  # info: model info and 4 trees


def test_the_fixture_breaks_what_it_is_told_to(models):
    with (
        fixture.HubFixture(hub_app(models, "no-commit", "wrong-etag", "no-tree")) as hub,
        httpx.Client(base_url=hub.url) as c,
    ):
        head = c.head(f"/httpbench/tiny-bert/resolve/{COMMIT}/config.json")
        assert "x-repo-commit" not in head.headers
        assert head.headers["etag"] != f'"{git_blob_id(FILES["tiny-bert"]["config.json"])}"'
        assert c.get(f"/api/models/httpbench/tiny-bert/tree/{COMMIT}").status_code == 404
    with pytest.raises(HttpbenchError, match="fixture faults"):
        fixture.HubApp(faults=("no-etag-at-all",))


def test_a_model_file_that_is_not_the_pinned_bytes_is_refused(models, tmp_path):
    manifest = models[1]
    changed = tmp_path / "models"
    for name, files in FILES.items():
        for rel, data in files.items():
            (changed / name / rel).parent.mkdir(parents=True, exist_ok=True)
            (changed / name / rel).write_bytes(data)
    (changed / "tiny-sd" / "unet" / "config.json").write_bytes(b'{"sample_size": 32}\n')
    with pytest.raises(
        HttpbenchError, match=r"tiny-sd: unet/config\.json is not the pinned bytes .*transformers 5\.25\.0"
    ):
        repos.read_models(changed, repos.load_manifest(manifest))
    (changed / "tiny-sd" / "unet" / "config.json").write_bytes(FILES["tiny-sd"]["unet/config.json"])
    (changed / "tiny-bert" / "extra.bin").write_bytes(b"x")
    with pytest.raises(HttpbenchError, match=r"missing \[\], extra \['extra\.bin'\]"):
        repos.read_models(changed, repos.load_manifest(manifest))


def test_the_projects_pins_cover_both_models_with_their_versions():
    pinned = repos.load_manifest()
    assert set(pinned["repos"]) == {"tiny-bert", "tiny-sd"}
    assert {"config.json", "model.safetensors", "tokenizer.json", "vocab.txt"} <= set(
        pinned["repos"]["tiny-bert"]
    )
    sd = pinned["repos"]["tiny-sd"]
    for folder in ("unet", "vae", "text_encoder", "tokenizer", "scheduler"):
        assert any(p.startswith(folder + "/") for p in sd), folder
    assert {"tokenizer/vocab.json", "tokenizer/merges.txt", "model_index.json"} <= set(sd)
    assert all(
        re.fullmatch(r"[0-9a-f]{64}", f["sha256"]) for r in pinned["repos"].values() for f in r.values()
    )
    current = dict(r.split("==") for r in lines.requirements("current"))
    assert pinned["versions"]["transformers"] == current["transformers"]
    assert pinned["versions"]["diffusers"] == current["diffusers"]


def test_the_client_lines_are_the_projects_extras_and_differ_by_a_major_line():
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert lines.requirements("current") == extras["hf-models"]
    assert lines.requirements("old") == extras["hf-models-old"]
    old = dict(r.split("==") for r in lines.requirements("old"))
    current = dict(r.split("==") for r in lines.requirements("current"))
    assert old["huggingface_hub"].startswith("0.") and not current["huggingface_hub"].startswith("0.")
    assert old["transformers"].startswith("4.") and current["transformers"].startswith("5.")
    assert (
        tuple(int(x) for x in old["diffusers"].split(".")[:2])
        < (0, 36)
        <= tuple(int(x) for x in current["diffusers"].split(".")[:2])
    )
    assert old["torch"] == current["torch"]  # the CPU-only build both lines share
    first, second = lines.env("current", Path("/h")), lines.env("old", Path("/h"))
    assert first.directory.parent == second.directory.parent == Path("/h/hf-lines")
    assert first.directory != second.directory and first.ready() is None
    with pytest.raises(HttpbenchError, match="unknown client line 'new'"):
        lines.requirements("new")


@pytest.mark.servers
@pytest.mark.parametrize(
    ("fault", "says"),
    [
        ("no-commit", r"no X-Repo-Commit: Transformers cannot load the files .* Diffusers stops"),
        (
            "wrong-etag",
            r"ETag '[0-9a-f]{40}' is not the file's git blob id [0-9a-f]{40}: huggingface_hub stores",
        ),
        (
            "no-tree",
            r"the tree endpoint returned 404: huggingface_hub >= 1\.0 lists a snapshot with it: Diffusers.* old client line",
        ),
    ],
)
def test_a_target_missing_what_real_clients_need_fails_the_preflight_before_any_timing(models, fault, says):
    with fixture.HubFixture(hub_app(models)) as good, fixture.HubFixture(hub_app(models, fault)) as bad:
        run = run_httpbench(
            "compare",
            "--target",
            f"fixture={good.url}",
            "--target",
            f"proxy={bad.url}",
            "--profile",
            "huggingface",
            "--models",
            "--model-manifest",
            str(models[1]),
            "--method",
            "seed",
            "--requests",
            "20",
        )
    assert run.code == 2, run.output
    errors = [line for line in run.stderr.splitlines() if line.startswith("httpbench: error:")]
    assert len(errors) == 1 and "preflight: target 'proxy'" in errors[0], run.stderr
    assert re.search(says, errors[0]), errors[0]
    assert "Traceback" not in run.stderr and "round 1" not in run.stderr  # nothing was timed


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("current", "--model-client expects LINE=PYTHON, not 'current'"),
        (
            "current=/nonexistent/python",
            "--model-client current: /nonexistent/python is not an executable Python",
        ),
    ],
)
def test_a_bad_model_client_is_one_line_before_any_request(value, says):
    run = run_httpbench(
        "compare", "--target", "a=http://127.0.0.1:9", "--target", "b=http://127.0.0.1:9",
        "--profile", "huggingface", "--model-client", value,
    )  # fmt: skip
    assert run.code == 2 and run.stderr.strip() == f"httpbench: error: {says}", run.stderr
