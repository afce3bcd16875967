"""The README's test command runs every test: the heavy model-client tests are collected even on a
machine where the client lines are not installed yet (their fixture prepares them), never left out."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[4]


def test_the_heavy_model_client_tests_are_collected_where_the_client_lines_are_missing(tmp_path):
    environ = {k: v for k, v in os.environ.items() if k != "CI"}
    environ["HTTPBENCH_HOME"] = str(tmp_path / "empty-home")  # no client line, no models here
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "--collect-only",
            "-n",
            "0",
            "-q",
            "-m",
            "hf_models",
            "-p",
            "no:cacheprovider",
            "tests/httpbench/profiles/huggingface/",
        ],
        cwd=ROOT,
        env=environ,
        capture_output=True,
        text=True,
        timeout=300,
    )
    collected = [line for line in proc.stdout.splitlines() if "::" in line]
    assert len(collected) == 4, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert not (
        tmp_path / "empty-home"
    ).exists()  # collecting prepares nothing: the fixture does, when a test runs
