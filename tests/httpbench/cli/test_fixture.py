"""``httpbench fixture``: ``alpine`` writes a signed tree and prints the compare options,
``huggingface`` serves the Hub fixture in the foreground."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys

import httpx
import pytest

from httpbench.cli.fixture import alpine
from httpbench.profiles.huggingface.fixture import model_bytes


def test_fixture_command_prints_the_compare_options(tmp_path, capsys):
    alpine.main(
        args=[str(tmp_path / "t"), "--package-size", "20000", "--seed", "5"],
        prog_name="httpbench fixture alpine",
        standalone_mode=False,
    )
    manifest = json.loads((tmp_path / "t" / "manifest.json").read_text())
    out = capsys.readouterr().out
    assert manifest["package"]["sha256"] in out and manifest["compare_command"] in out
    assert (tmp_path / "t" / manifest["package"]["path"]).stat().st_size == manifest["package"]["size"]


@pytest.mark.servers
def test_fixture_command_serves_in_the_foreground():
    code = "from httpbench.cli.fixture import huggingface; huggingface()"
    proc = subprocess.Popen([sys.executable, "-c", code, "--size", "1000"], stdout=subprocess.PIPE, text=True)
    try:
        first = proc.stdout.readline()
        url = first.split(" at ")[1].split()[0]
        sha = hashlib.sha256(model_bytes(1000)).hexdigest()
        assert sha in proc.stdout.readline() + proc.stdout.readline()
        body = httpx.get(f"{url}/a/b/resolve/main/model.safetensors").content
        assert hashlib.sha256(body).hexdigest() == sha
    finally:
        proc.terminate()
        proc.wait(10)
