"""An output never replaces an input, nor another output of the same command (issue 31, item 3).

Each case ran with exit 0 and destroyed the input before the fix: the baseline of a diff, the
result being rendered, a catalog's setup SQL, a credentials file; three outputs named alike kept
only the last. Now the command refuses in one line before any work, and the input is byte-identical.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import click
import pytest

from dbbench.cli import cli as dbbench_cli
from httpbench.cli import cli as httpbench_cli
from tests.conftest import run_cli, run_program
from verdict.cli import InputFile, InputTree, OutputFile

ROOT = Path(__file__).resolve().parents[1]
BASELINE = ROOT / "examples" / "shop" / "baseline.json"
COMPARE_RESULT = ROOT / "docs" / "results" / "alpine-nginx-caddy.json"
TARGETS = ("--target", "a=http://127.0.0.1:9", "--target", "b=http://127.0.0.1:9")  # nobody on port 9


@pytest.fixture()
def files(tmp_path: Path) -> Path:
    shutil.copy(BASELINE, tmp_path / "b.json")
    shutil.copy(BASELINE, tmp_path / "r.json")
    shutil.copy(COMPARE_RESULT, tmp_path / "compare.json")
    shutil.copytree(ROOT / "examples" / "shop", tmp_path / "C")
    (tmp_path / "C" / "data").mkdir()
    (tmp_path / "C" / "data" / "spec.toml").write_text("scale = 10\n")
    (tmp_path / "token").write_text("s3cret-token\n")
    return tmp_path


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


DBBENCH_CASES = [
    # (arguments, what the one line names)
    (["diff", "b.json", "r.json", "--output", "b.json"], "--output b.json is BASELINE"),
    (["diff", "b.json", "r.json", "--markdown", "r.json"], "--markdown r.json is [RESULT]"),
    (["report", "b.json", "--output", "b.json"], "--output b.json is RESULT.json"),
    (["report", "b.json", "--html", "link.json"], "--html link.json is RESULT.json"),  # a link to the input
    (["report", "b.json", "--html", "hard.json"], "--html hard.json is RESULT.json"),  # a hard link
    (["seed", "--catalog", "C", "--output", "C/setup.postgresql.sql"], "is a file of --catalog C"),
    (["explain", "--catalog", "C", "--output", "C/01-customer-by-email.toml"], "is a file of --catalog C"),
    (["explain", "--catalog", "C", "--junit", "C/data/spec.toml"], "is a file of --catalog C"),
    (
        ["check", "--catalog", "C", "--baseline", "b.json", "--output", "b.json"],
        "--output b.json is --baseline",
    ),
    (["baseline", "save", "b.json", "--from", "b.json"], "b.json is --from"),
    (
        ["diff", "b.json", "r.json", "--markdown", "x.out", "--junit", "x.out", "--output", "x.out"],
        "name the same file x.out",
    ),
]


@pytest.mark.parametrize("args,needle", DBBENCH_CASES, ids=[" ".join(a) for a, _ in DBBENCH_CASES])
def test_dbbench_refuses_an_output_that_is_an_input(files: Path, args, needle):
    (files / "link.json").symlink_to("b.json")
    (files / "hard.json").hardlink_to(files / "b.json")
    before = snapshot(files)
    res = run_cli(*args, cwd=files)
    assert res.code == 2, res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("dbbench: error: ") and needle in lines[0], res.stderr
    assert "Traceback" not in res.stderr
    assert snapshot(files) == before  # every input as it was; no output written


HTTPBENCH_CASES = [
    (["report", "compare.json", "--html", "compare.json"], "--html compare.json is RESULT"),
    ([*TARGETS, "--auth", "a=file:token", "--output", "token"], "--output token is --auth"),
    (
        [*TARGETS, "--scenarios", "compare.json", "--junit", "compare.json"],
        "--junit compare.json is --scenarios",
    ),
    ([*TARGETS, "--output", "x.out", "--junit", "x.out"], "name the same file x.out"),
]


@pytest.mark.parametrize("args,needle", HTTPBENCH_CASES, ids=[" ".join(a) for a, _ in HTTPBENCH_CASES])
def test_httpbench_refuses_an_output_that_is_an_input(files: Path, args, needle):
    before = snapshot(files)
    argv = args if args[0] == "report" else ["compare", *args]
    res = run_program("httpbench", *argv, cwd=files, timeout=60)
    assert res.code == 2, res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0], res.stderr
    assert snapshot(files) == before


def test_outputs_that_destroy_nothing_are_still_written(files: Path):
    """Not every shared name is a clash: a baseline beside the catalog's files, a device named twice."""
    res = run_cli("report", "b.json", "--output", "/dev/null", "--html", "/dev/null", cwd=files)
    assert res.code == 0, res.stderr
    res = run_cli("report", "b.json", "--output", "C/report.md", cwd=files)  # beside the catalog's files
    assert res.code == 0, res.stderr
    assert (files / "C" / "report.md").read_text().startswith("Servers: PostgreSQL")
    res = run_program("httpbench", "report", "compare.json", "--html", "C/page.html", cwd=files)
    assert res.code == 0, res.stderr


def _commands(group: click.Group, prefix: str = ""):
    for name, command in sorted(group.commands.items()):
        if isinstance(command, click.Group):
            yield from _commands(command, f"{prefix}{name} ")
        else:
            yield f"{prefix}{name}", command


# Paths that are neither an input a command reads as a file nor an output file: where servers live,
# where a fixture or a demo puts its own files (directories the tool owns).
NOT_FILES = {
    ("fixture alpine", "directory"),  # a tree the fixture writes, its own
    ("demo alpine", "directory"),  # likewise, kept for the user
    ("fixture huggingface", "models"),  # models the fixture serves, checked against their pins
    ("apk-client", "keys_dir"),  # trusted keys read, in a command that writes no file
    ("advise", "write_dir"),  # new migration files only: one already there is refused before any work
}


@pytest.mark.parametrize("tool", [dbbench_cli, httpbench_cli], ids=["dbbench", "httpbench"])
def test_every_file_option_says_whether_it_is_read_or_written(tool):
    """A new option naming a file cannot bypass the check: each one is an input, a tree of inputs
    or an output (what :func:`verdict.cli.path_clash` reads)."""
    untyped = []
    for name, command in _commands(tool):
        assert getattr(command.callback, "_paths_guarded", False), f"{name} is not guarded"
        for param in command.params:
            fileish = isinstance(param.type, click.Path) or param.name in {
                "catalog",
                "output",
                "junit",
                "html",
            }
            typed = isinstance(param.type, (InputFile, InputTree, OutputFile))
            if fileish and not typed and (name, param.name) not in NOT_FILES:
                untyped.append(f"{name} {param.opts[0]}")
    assert not untyped, f"file options with no read/write role: {untyped}"
