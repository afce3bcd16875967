"""Every command the README and the docs show is run by a test, at least in its cheapest form; and
every command of both tools is shown somewhere in the docs.

The commands are read from the Markdown (code blocks and inline code alike) and matched against
the real click command trees, so a command added to the docs, or to a tool, without a run here
fails :func:`test_every_command_shown_in_the_docs_is_run_by_a_test`. A command is run either here
(``RUNS``: its cheapest real form, against the real servers) or by the named test elsewhere
(``ELSEWHERE``: the end-to-end ones that need peers, fixtures or minutes), whose presence is checked.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import click
import pytest

from tests.conftest import run_cli, run_program

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SHOP = str(ROOT / "examples" / "shop")
NS = "dbbench_docs_cmds"


def _tree(tool: str) -> click.Group:
    if tool == "dbbench":
        from dbbench.cli import cli
    else:
        from httpbench.cli import cli
    return cli


def commands(tool: str) -> set[str]:
    """Every leaf command path of ``tool`` (``"servers up"``, ``"seed"``, ...)."""

    def walk(cmd: click.Command, path: tuple[str, ...]):
        if isinstance(cmd, click.Group):
            for name, sub in cmd.commands.items():
                yield from walk(sub, (*path, name))
        else:
            yield " ".join(path)

    return set(walk(_tree(tool), ()))


def shown() -> dict[str, set[str]]:
    """The command paths the docs show: ``tool path`` -> the documents showing it."""
    found: dict[str, set[str]] = {}
    for tool in ("dbbench", "httpbench"):
        known = commands(tool)
        groups = {p.split()[0] for p in known if " " in p}
        pattern = re.compile(
            rf"(?<![\w./-]){tool}(?:\s+--?[\w-]+(?:[ =][^\s`-]\S*)?)*\s+([a-z][\w-]*)(?:\s+([a-z][\w-]*))?"
        )
        for doc in DOCS:
            for m in pattern.finditer(doc.read_text(encoding="utf-8")):
                first, second = m.group(1), m.group(2)
                path = f"{first} {second}" if first in groups and f"{first} {second}" in known else first
                if path in known:
                    found.setdefault(f"{tool} {path}", set()).add(doc.name)
    return found


# The cheapest real form of each command, run here (after the ones before it in this table).
RUNS: dict[str, tuple[str, ...]] = {
    "dbbench servers up": ("servers", "up"),
    "dbbench servers status": ("servers", "status"),
    "dbbench info": ("info",),
    "dbbench validate": ("validate", "--catalog", SHOP),
    "dbbench seed": ("seed", "--catalog", SHOP, "--namespace", NS),
    "dbbench explain": ("explain", "--catalog", SHOP, "--namespace", NS, "--runs", "1", "--warmups", "0"),
    "dbbench check": ("check", "--catalog", SHOP, "--only", "postgresql"),
    "dbbench bench seed": ("bench", "seed", "--dataset", "alpine-ci", "--only", "postgresql"),
}
# Those a test elsewhere runs end to end: command -> "path::test".
ELSEWHERE: dict[str, str] = {
    "dbbench servers down": "tests/dbbench/servers/test_servers.py::test_up_then_down_leaves_no_process",
    "dbbench baseline save": "tests/dbbench/workflow/test_workflow.py::test_baseline_keeps_normalized_plans_and_timings_without_raw_output",
    "dbbench diff": "tests/dbbench/diff/test_diff.py",
    "dbbench report": "tests/dbbench/cli/test_bad_input.py::test_report_output_to_dev_stdout_and_a_fifo_writes_through",
    "dbbench advise": "tests/dbbench/advise/test_command.py::test_advise_finds_the_lost_index_on_both_servers_and_leaves_nothing_behind",
    "dbbench indexes": "tests/dbbench/indexmap/test_command.py::test_markdown_for_a_pull_request_comment",
    "dbbench grow": "tests/dbbench/measure/test_grow.py::test_a_bounded_shape_passes_and_loses_its_bound_when_its_index_is_removed",
    "dbbench init": "tests/dbbench/volume/test_fill.py::test_init_writes_a_spec_that_fills_the_schema_and_the_shapes_hold",
    "dbbench fill": "tests/dbbench/volume/test_fill.py::test_init_writes_a_spec_that_fills_the_schema_and_the_shapes_hold",
    "dbbench capture": "tests/dbbench/capture/test_capture.py::test_capture_after_the_psql_and_mysql_clients_ran_a_script",
    "dbbench catalog propose": "tests/dbbench/capture/test_accept.py::test_propose_then_accept_writes_the_expectation_and_check_passes",
    "dbbench catalog accept": "tests/dbbench/capture/test_accept.py::test_propose_then_accept_writes_the_expectation_and_check_passes",
    "httpbench compare": "tests/httpbench/cli/test_compare.py::test_equal_targets_pass_the_gates",
    "httpbench bench-client": "tests/httpbench/bench/test_wrk.py::test_bench_client_runs_wrk_and_httpbench_on_the_same_nginx",
    "httpbench demo alpine": "tests/httpbench/profiles/alpine/test_demo.py::test_demo_alpine_nginx_vs_caddy_end_to_end",
    "httpbench demo huggingface": "tests/httpbench/profiles/huggingface/test_demo.py",
    "httpbench apk-client": "tests/httpbench/profiles/alpine/test_demo.py::test_demo_alpine_nginx_vs_caddy_end_to_end",
    "httpbench fixture huggingface": "tests/httpbench/cli/test_fixture.py::test_fixture_command_serves_in_the_foreground",
    "httpbench fixture alpine": "tests/test_docs_commands.py::test_fixture_alpine_writes_a_signed_tree",
    "httpbench peers install": "tests/httpbench/peers/test_programs.py::test_peers_install_leaves_every_program_found_and_status_names_its_path",
    "httpbench report": "tests/httpbench/report/test_html.py::test_the_html_report_plots_every_round_with_the_verdict_and_preflight",
    "httpbench peers status": "tests/httpbench/peers/test_programs.py::test_peers_install_leaves_every_program_found_and_status_names_its_path",
}


def _test_exists(ref: str) -> bool:
    path, _, name = ref.partition("::")
    file = ROOT / path
    if not file.is_file():
        return False
    if not name:
        return True
    tree = ast.parse(file.read_text(encoding="utf-8"))
    return any(isinstance(n, ast.FunctionDef) and n.name == name for n in tree.body)


def test_every_command_shown_in_the_docs_is_run_by_a_test():
    docs = shown()
    assert "dbbench bench seed" in docs and "dbbench servers down" in docs  # the reader finds them
    uncovered = {
        cmd: sorted(where) for cmd, where in docs.items() if cmd not in RUNS and cmd not in ELSEWHERE
    }
    assert uncovered == {}, f"commands shown in the docs that no test runs: {uncovered}"
    missing = [ref for ref in ELSEWHERE.values() if not _test_exists(ref)]
    assert missing == [], f"tests named in ELSEWHERE that do not exist: {missing}"


def test_every_command_of_both_tools_has_help_and_is_shown_in_the_docs():
    docs = shown()
    for tool in ("dbbench", "httpbench"):
        for path in sorted(commands(tool)):
            cmd: click.Command = _tree(tool)
            for part in path.split():
                cmd = cmd.commands[part]  # type: ignore[attr-defined]
            assert (cmd.help or "").strip(), f"{tool} {path} has no --help text"
            assert f"{tool} {path}" in docs, f"{tool} {path} is not shown in README.md or docs/"


@pytest.mark.servers
@pytest.mark.parametrize("command", list(RUNS), ids=list(RUNS))
def test_the_command_shown_runs(command, local_servers):
    run = run_cli(*RUNS[command], timeout=900)
    assert run.code == 0, run.output
    assert "Traceback" not in run.output
    if command == "dbbench bench seed":  # its ratio against the servers' bulk-load floor
        assert re.search(r"PostgreSQL\s+[\d,]+\s+[\d.]+ s\s+[\d.]+ s\s+[\d.]+x", run.stdout), run.stdout
    if command == "dbbench explain":
        assert "ok: orders using ix_orders_customer_placed" in run.stdout


def test_fixture_alpine_writes_a_signed_tree(tmp_path):
    run = run_program("httpbench", "fixture", "alpine", str(tmp_path / "tree"), "--package-size", "4096")
    assert run.code == 0, run.output
    manifest = json.loads((tmp_path / "tree" / "manifest.json").read_text())
    assert (tmp_path / "tree" / manifest["package"]["path"].lstrip("/")).stat().st_size == manifest[
        "package"
    ]["size"]


@pytest.mark.servers
def test_the_readme_main_command_runs_as_written(local_servers):
    """The README's first set-up command, its dbbench steps as written (the venv and the install
    are the test run's own): the default dataset seeded and verified, the catalog's plans hold."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = text.split("<!-- main-command -->", 1)[1].split("```bash\n", 1)[1].split("\n```", 1)[0]
    steps = [
        part.strip().split()[1:] for part in block.split("&&") if part.strip().startswith(".venv/bin/dbbench")
    ]
    assert [s[0] for s in steps] == ["servers", "seed", "explain"], block
    for args in steps:
        run = run_cli(*args, timeout=900)
        assert run.code == 0, (args, run.output)
