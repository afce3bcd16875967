"""Bad input on dbbench's command line: one line, exit 2, nothing lost.

Output files go through :func:`verdict.files.write_output`: a device, a FIFO or a symbolic link is
written through and never replaced by a regular file (as root, replacing ``/dev/full`` would break
the machine's ``/dev/full``); a full device is one line naming the file. Number options refuse NaN
and infinities at parse time; port numbers are ports.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from tests.conftest import run_cli

SHOP = str(Path(__file__).resolve().parents[3] / "examples" / "shop")


@pytest.fixture(scope="module")
def result_file(tmp_path_factory, local_servers) -> Path:
    """A real explain result of the shop example (``dbbench check`` on a scratch namespace)."""
    path = tmp_path_factory.mktemp("result") / "shop.json"
    run = run_cli("check", "--catalog", SHOP, "--only", "postgresql", "--output", str(path))
    assert run.code == 0, run.output
    return path


def _one_line_error(run, *words: str) -> None:
    assert run.code == 2, run.output
    assert "Traceback" not in run.output
    lines = [
        ln for ln in run.stderr.splitlines() if ln.startswith("dbbench: error:") or ln.startswith("Error:")
    ]
    assert len(lines) == 1, run.stderr
    for word in words:
        assert word in lines[0], lines[0]


def _still_dev_full() -> None:
    assert stat.S_ISCHR(os.lstat("/dev/full").st_mode), "/dev/full was replaced by a regular file"


@pytest.mark.parametrize("option", ["--output", "--html"])
def test_report_to_a_full_device_is_one_line_and_the_device_stays(result_file, option):
    run = run_cli("report", str(result_file), option, "/dev/full")
    _one_line_error(run, "/dev/full", "No space left on device")
    _still_dev_full()


def test_check_junit_and_output_to_a_full_device_leave_it_a_device(local_servers):
    for option in ("--junit", "--output"):
        run = run_cli("check", "--catalog", SHOP, "--only", "postgresql", option, "/dev/full")
        _one_line_error(run, "/dev/full", "No space left on device")
        _still_dev_full()


def test_baseline_save_to_a_symlink_writes_through_it(result_file, tmp_path):
    real = tmp_path / "real.json"
    real.write_text("old")
    link = tmp_path / "link.json"
    link.symlink_to(real)
    run = run_cli("baseline", "save", "--from", str(result_file), str(link))
    assert run.code == 0, run.output
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert json.loads(real.read_text())["schema"] == "dbbench.explain/2"


def test_report_output_to_dev_stdout_and_a_fifo_writes_through(result_file, tmp_path):
    run = run_cli("report", str(result_file), "--output", "/dev/stdout", process=True)  # its own fd 1
    assert run.code == 0, run.output
    table_line = next(ln for ln in run.stdout.splitlines() if ln.startswith("|"))
    assert run.stdout.count(table_line) == 2  # printed, then written through /dev/stdout
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # a reader, so the writer does not block
    try:
        run = run_cli("report", str(result_file), "--output", str(fifo))
        assert run.code == 0, run.output
        assert table_line in os.read(reader, 1 << 20).decode()
    finally:
        os.close(reader)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


@pytest.mark.parametrize(
    "args",
    [
        ("explain", "--timeout", "nan"),
        ("check", "--timeout", "inf"),
        ("baseline", "save", "x.json", "--timeout", "nan"),
        ("diff", "b.json", "--timeout", "nan"),
        ("diff", "b.json", "--slower", "nan"),
        ("diff", "b.json", "--noise-ms", "inf"),
        ("diff", "b.json", "--rows-factor", "nan"),
    ],
    ids=lambda a: " ".join(a),
)
def test_non_finite_numbers_are_refused_when_parsed(args):
    run = run_cli(*args)
    _one_line_error(run, "is not a finite number")


@pytest.mark.parametrize("port", ["99999", "-5", "0"])
def test_a_port_out_of_range_is_refused(port, tmp_path):
    run = run_cli("--home", str(tmp_path), "servers", "up", "postgresql", "--pg-port", port)
    _one_line_error(run, "--pg-port", "1<=x<=65535")


def test_a_port_for_a_running_server_is_not_silently_ignored(local_servers):
    running = local_servers["postgresql"].port
    run = run_cli("servers", "up", "postgresql", "--pg-port", str(running + 1))
    _one_line_error(run, f"already running on port {running}", f"--pg-port {running + 1}")
    assert run_cli("servers", "up", "postgresql", "--pg-port", str(running)).code == 0


def test_every_float_option_refuses_nan_through_one_type():
    """click's FloatRange lets NaN through every bound; no command line may use it directly."""
    root = Path(__file__).resolve().parents[3]
    users = [
        str(p.relative_to(root))
        for package in ("dbbench", "httpbench", "verdict")
        for p in (root / package).rglob("*.py")
        if "click.FloatRange(" in p.read_text(encoding="utf-8")
    ]
    assert users == [], f"use verdict.cli.Float: {users}"


def test_a_url_query_value_the_driver_cannot_convert_is_one_line_without_the_password(local_urls):
    url = "mysql+pymysql://dbbench:Zq7-secret-9w@127.0.0.1:1/?read_timeout=abc"
    run = run_cli("info", "--only", "mysql", "--mysql-url", url)
    _one_line_error(run, "does not accept a query parameter", "read_timeout")
    assert "Zq7-secret-9w" not in run.output


@pytest.mark.parametrize(
    "args,needle",
    [
        (["fill", "--scale", "1000000000"], "Invalid value for '--scale'"),
        (["seed", "--no-such-option"], "No such option '--no-such-option'"),
        (["no-such-command"], "No such command 'no-such-command'"),
        (["baseline", "save"], "Missing argument 'FILE'"),
    ],
)
def test_a_bad_option_is_one_line_naming_the_help_to_read(args, needle):
    """click printed the usage, a hint and a blank line before its error (issue 31's sweep)."""
    res = run_cli(*args)
    assert res.code == 2 and res.stderr.count("\n") == 1, res.stderr
    assert res.stderr.startswith("dbbench: error: ") and needle in res.stderr and "--help)" in res.stderr
