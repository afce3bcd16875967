"""Bad input to the real ``httpbench`` process (issue 19): non-finite numbers, output paths that are
not ordinary files, and rounds of no requests are one line and exit 2, never a traceback, a
silently accepted value or a replaced device node."""

from __future__ import annotations

import json
import os
import stat
import threading

import pytest

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
FAST = seeded(10, 1, warmups=2, concurrency=2, q=True)
DOWN = {"a": "http://127.0.0.1:9", "b": "http://127.0.0.1:9"}  # never reached: refused at parse


def one_line_error(run, *needles: str) -> str:
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1, run.stderr
    assert lines[0].startswith("httpbench: error: "), run.stderr
    assert "Traceback" not in run.output
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


@pytest.fixture()
def pair():
    with FixtureServer({"/f": Route(BODY)}) as a, FixtureServer({"/f": Route(BODY)}) as b:
        yield a, b


# -- non-finite numbers ---------------------------------------------------------------------------

COMPARE_FLOATS = ["--timeout", "--alpha", "--budget", "--rate", "--min-round-ms", "--client-timeout"]


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "NaN"])
@pytest.mark.parametrize("option", COMPARE_FLOATS)
def test_compare_refuses_non_finite_numbers_at_parse_time(option, value):
    # before: --timeout nan was a traceback; --alpha/--budget/--rate nan were taken and the run went on
    run = run_httpbench(*compare_args(DOWN, "/f"), option, value, "-q")
    assert run.code == 2, run.output
    one_line_error(run, option)


@pytest.mark.parametrize(
    "argv",
    [
        ["bench-client", "--duration", "nan"],
        ["apk-client", "http://127.0.0.1:9/main", "--keys-dir", ".", "--package", "p", "--timeout", "nan"],
        ["fixture", "huggingface", "--delay", "nan"],  # before: served for ever
    ],
    ids=["bench-client --duration", "apk-client --timeout", "fixture huggingface --delay"],
)
def test_every_other_float_option_refuses_nan(argv):
    run = run_httpbench(*argv, timeout=30)
    assert run.code == 2, run.output
    one_line_error(run, argv[-2], "not a finite number")


# -- output files ---------------------------------------------------------------------------------

OUTPUTS = ["--output", "--junit", "--github-summary"]


@pytest.mark.servers
@pytest.mark.parametrize("option", OUTPUTS)
def test_an_output_through_a_symlink_keeps_the_link(pair, tmp_path, option):
    a, b = pair
    real = tmp_path / "real.out"
    real.write_text("")
    link = tmp_path / "link.out"
    link.symlink_to(real)
    run = run_compare({"a": a.url, "b": b.url}, "/f", **FAST, extra=[option, str(link)])
    assert run.code == 0, run.output
    assert link.is_symlink() and os.readlink(link) == str(real)  # before: --output replaced it
    assert real.read_text().strip(), "nothing written through the link"
    assert [p.name for p in tmp_path.iterdir() if p.name not in ("real.out", "link.out")] == []


@pytest.mark.servers
def test_an_output_symlink_to_proc_self_fd_1_writes_to_stdout(pair, tmp_path):
    a, b = pair
    link = tmp_path / "stdout.json"
    link.symlink_to("/proc/self/fd/1")
    run = run_compare({"a": a.url, "b": b.url}, "/f", **FAST, output=link, process=True)  # its own fd 1
    assert run.code == 0, run.output
    assert link.is_symlink()  # before: replaced by a regular file holding the result
    doc, end = json.JSONDecoder().raw_decode(run.stdout)
    assert doc["totals"]["timed_requests"] == 20 and "Throughput ratio" in run.stdout[end:]


@pytest.mark.servers
def test_output_to_dev_stdout_is_written_through(pair):
    a, b = pair
    run = run_compare({"a": a.url, "b": b.url}, "/f", **FAST, output="/dev/stdout", process=True)
    assert run.code == 0, run.output
    assert os.path.islink("/dev/stdout")
    doc, end = json.JSONDecoder().raw_decode(run.stdout)  # the result, then the tables
    assert doc["totals"]["timed_requests"] == 20 and "Throughput ratio" in run.stdout[end:]


@pytest.mark.servers
def test_output_to_a_fifo_is_written_through(pair, tmp_path):
    a, b = pair
    fifo = tmp_path / "result.fifo"
    os.mkfifo(fifo)
    read_fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # a reader, so the writer's open returns
    hold_fd = os.open(fifo, os.O_WRONLY)  # our own writer: the reader's EOF waits for its close
    os.set_blocking(read_fd, True)
    chunks: list[bytes] = []

    def drain() -> None:
        while chunk := os.read(read_fd, 65536):
            chunks.append(chunk)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    try:
        run = run_compare({"a": a.url, "b": b.url}, "/f", **FAST, output=fifo)
    finally:
        os.close(hold_fd)
        reader.join(10)
        os.close(read_fd)
    assert run.code == 0, run.output
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)  # before: replaced by a regular file
    doc = json.loads(b"".join(chunks))
    assert doc["totals"]["timed_requests"] == 20


@pytest.mark.servers
@pytest.mark.parametrize("option", OUTPUTS)
def test_output_to_dev_full_is_one_line_and_dev_full_stays_a_device(pair, option):
    a, b = pair
    run = run_compare({"a": a.url, "b": b.url}, "/f", **FAST, extra=[option, "/dev/full"])
    assert run.code == 2, run.output
    one_line_error(run, option, "/dev/full", "No space left on device")
    info = os.lstat("/dev/full")  # before (as root): --output renamed a regular file over it
    assert stat.S_ISCHR(info.st_mode) and (os.major(info.st_rdev), os.minor(info.st_rdev)) == (1, 7)


# -- rounds of no requests ------------------------------------------------------------------------


@pytest.mark.servers
def test_seed_rounds_of_zero_requests_are_refused_before_any_request(pair):
    # before: 0 req/s measured for both targets, and --enforce-gates failed the candidate
    a, b = pair
    run = run_compare({"a": a.url, "b": b.url}, "/f", **{**FAST, "requests": 0}, enforce_gates=True)
    assert run.code == 2, run.output
    one_line_error(run, "--requests 0", "--method seed", "at least 1")
    assert a.routes["/f"].count == b.routes["/f"].count == 0


@pytest.mark.servers
def test_paired_rounds_sized_by_neither_count_nor_time_are_refused(pair):
    a, b = pair
    options = {"requests": 0, "min_round_ms": 0, "rounds": 1, "q": True}
    run = run_compare({"a": a.url, "b": b.url}, "/f", **options)
    assert run.code == 2, run.output
    one_line_error(run, "--requests 0", "--min-round-ms 0")
    assert a.routes["/f"].count == b.routes["/f"].count == 0


@pytest.mark.servers
def test_paired_requests_0_sizes_rounds_by_time(pair, tmp_path):
    a, b = pair
    out = tmp_path / "r.json"
    options = {"requests": 0, "min_round_ms": 20, "rounds": 5, "concurrency": 2, "q": True}
    run = run_compare({"a": a.url, "b": b.url}, "/f", **options, output=out)
    assert run.code == 0, run.output
    doc = json.loads(out.read_text())
    per_round = doc["paired"]["GET /f"]["requests_per_round"]
    assert per_round >= 1 and all(r["requests"] == per_round and r["ok"] > 0 for r in doc["rounds"])
