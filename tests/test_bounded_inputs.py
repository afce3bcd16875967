"""Every file a command reads is bounded before it is parsed (issue 31, item 6): a device, a FIFO
with no writer, a file past the documented limit, a document nested 100k deep or holding one
50-million-character string is one line and exit 2, quickly and in bounded memory; a message quotes
at most a short excerpt of what it was given."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from dbbench.document.store import RESULT_LIMIT
from tests.conftest import run_program
from verdict.files import MESSAGE_WIDTH, clip_lines, excerpt, read_bounded, read_text_bounded

ROOT = Path(__file__).resolve().parents[1]
BASELINE = ROOT / "examples" / "shop" / "baseline.json"
TARGETS = ("--target", "a=http://127.0.0.1:9", "--target", "b=http://127.0.0.1:9")  # nobody on port 9


@pytest.fixture()
def hostile(tmp_path: Path) -> Path:
    os.mkfifo(tmp_path / "fifo")  # nobody ever writes to it: a reader that blocks hangs for ever
    with open(tmp_path / "huge.json", "wb") as fh:  # sparse: past the limit, costs no disk
        fh.truncate(RESULT_LIMIT + 1)
    (tmp_path / "nested.json").write_text("[" * 100_000 + "]" * 100_000)
    shutil.copy(BASELINE, tmp_path / "b.json")
    return tmp_path


CASES = [
    # (program, arguments, what the one line says)
    ("dbbench", ["report", "/dev/zero"], "not a regular file (a character device)"),
    ("dbbench", ["report", "fifo"], "not a regular file (a FIFO)"),
    ("dbbench", ["report", "huge.json"], "at most 64 MiB is read"),
    ("dbbench", ["diff", "fifo", "b.json"], "not a regular file (a FIFO)"),
    ("dbbench", ["diff", "b.json", "/dev/zero"], "not a regular file (a character device)"),
    ("dbbench", ["report", "nested.json"], "nested more than"),
    ("httpbench", ["report", "/dev/zero"], "not a regular file (a character device)"),
    ("httpbench", ["report", "fifo"], "not a regular file (a FIFO)"),
    ("httpbench", ["report", "nested.json"], "nested more than 64 levels"),
    (
        "httpbench",
        ["compare", *TARGETS, "--scenarios", "/dev/zero"],
        "not a regular file (a character device)",
    ),
    ("httpbench", ["compare", *TARGETS, "--scenarios", "fifo"], "not a regular file (a FIFO)"),
    ("httpbench", ["compare", *TARGETS, "--scenarios", "huge.json"], "at most 4 MiB is read"),
    ("httpbench", ["compare", *TARGETS, "--auth", "a=file:fifo", "--scenario", "/"], "not a regular file"),
]


@pytest.mark.parametrize("program,args,needle", CASES, ids=[f"{p} {' '.join(a)}" for p, a, _ in CASES])
def test_a_hostile_input_file_is_one_line_and_quick(hostile: Path, program, args, needle):
    res = run_program(program, *args, cwd=hostile, timeout=30)  # a hang fails here, not in CI's budget
    assert res.code == 2, res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0], res.stderr
    assert "Traceback" not in res.stderr


def _peak_rss_mib(program: str, *args: str, cwd: Path) -> tuple[int, str]:
    """Run the program in a fresh child of a fresh Python: its peak resident memory, and stderr."""
    probe = (
        "import resource, subprocess, sys\n"
        "p = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
        "sys.stdout.write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024) + '\\n' + p.stderr)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe, sys.executable, "-m", program, *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=120,
        check=True,
    ).stdout
    peak, _, stderr = out.partition("\n")
    return int(peak), stderr


def test_a_result_holding_one_50_million_character_string_is_read_in_bounded_memory(tmp_path: Path):
    """It peaked at 6 GB (the nesting scan's regular expression kept state per character)."""
    doc = json.loads(BASELINE.read_text())
    doc["results"][0]["shape"] = "x" * 50_000_000
    (tmp_path / "big.json").write_text(json.dumps(doc))
    peak, stderr = _peak_rss_mib("dbbench", "report", "big.json", "--output", "out.md", cwd=tmp_path)
    assert peak < 1024, f"peak {peak} MiB"
    assert len(stderr) < 2 * MESSAGE_WIDTH  # whatever it says, it does not echo the string


def test_names_and_messages_quote_only_an_excerpt(tmp_path: Path):
    long_name = "n" * 100_000  # an argument can hold at most 128 KiB
    res = run_program("httpbench", "compare", "--target", f"{long_name}=http://127.0.0.1:9", *TARGETS[2:])
    assert res.code == 2 and len(res.stderr) < 200, res.stderr[:300]
    assert "at most 64" in res.stderr
    (tmp_path / "s.toml").write_text(f'[[scenario]]\nname = "{"s" * 1_000_000}"\npath = "/"\n')
    res = run_program("httpbench", "compare", *TARGETS, "--scenarios", "s.toml", cwd=tmp_path)
    assert res.code == 2 and len(res.stderr) < 300 and "name of 1,000,000 characters" in res.stderr, (
        res.stderr[:300]
    )


def test_the_readers_and_the_message_guards():
    with pytest.raises(OSError) as info:
        read_bounded("/dev/zero")
    assert info.value.filename == "/dev/zero" and "character device" in info.value.strerror
    with pytest.raises(OSError) as info:
        read_bounded(BASELINE, limit=100)
    assert info.value.strerror.endswith("; at most 100 bytes is read"), info.value.strerror
    assert read_text_bounded(BASELINE).startswith("{")
    assert excerpt("a" * 500, 20) == "a" * 19 + "…"
    assert excerpt("two\nlines") == "two lines"
    clipped = clip_lines("x" * 5000 + "\nshort", 100)
    assert (
        clipped.splitlines()[0].endswith("… (4,900 more characters)") and clipped.splitlines()[1] == "short"
    )


def test_invalid_utf8_is_named_by_byte_line_and_column(tmp_path: Path):
    (tmp_path / "bad.json").write_bytes(b'{\n  "a": "\xff"\n}\n')
    with pytest.raises(OSError) as info:
        read_text_bounded(tmp_path / "bad.json")
    assert info.value.strerror == "not UTF-8 text (byte 0xff at line 2, column 9)"
    res = run_program("dbbench", "report", "bad.json", cwd=tmp_path)
    assert res.code == 2 and "byte 0xff at line 2, column 9" in res.stderr, res.stderr


def test_a_path_scenario_with_a_credential_in_its_query_never_echoes_it():
    """``--scenario /x?token=…`` was read as key=value pairs, and the error quoted the token."""
    res = run_program("httpbench", "compare", *TARGETS, "--scenario", "/x?token=s3cret-query-value&page=2")
    assert res.code == 2 and "s3cret-query-value" not in res.stderr, res.stderr
    assert "/x?token=***&page=***" in res.stderr and "carries credentials (token)" in res.stderr


def test_a_directory_given_as_an_output_is_one_line(tmp_path: Path):
    res = run_program("dbbench", "report", str(BASELINE), "--output", str(tmp_path))
    assert res.code == 2 and res.stderr.count("\n") == 1, res.stderr
    assert res.stderr.startswith(f"dbbench: error: --output {tmp_path}: cannot be written")


def test_an_output_fifo_no_process_reads_is_one_line_not_a_hang(tmp_path: Path, monkeypatch):
    """Opening a FIFO for writing blocks until a reader comes: it waited for ever."""
    import verdict.files

    os.mkfifo(tmp_path / "out")
    monkeypatch.setattr(verdict.files, "FIFO_READER_WAIT_S", 0.5)
    with pytest.raises(OSError) as info:
        verdict.files.write_output(tmp_path / "out", "x")
    assert info.value.filename == str(tmp_path / "out") and "no process read" in info.value.strerror
    res = run_program(  # a process: the wait it has unpatched, and a hang cut by the timeout
        "dbbench", "report", str(BASELINE), "--output", str(tmp_path / "out"), timeout=60, process=True
    )
    assert res.code == 2 and "a FIFO no process read within 10 s" in res.stderr, res.stderr


def test_an_output_fifo_waits_for_a_reader_that_comes(tmp_path: Path):
    os.mkfifo(tmp_path / "out")
    reader = subprocess.Popen(["sh", "-c", f"sleep 1; cat {tmp_path / 'out'}"], stdout=subprocess.PIPE)
    res = run_program("dbbench", "report", str(BASELINE), "--output", str(tmp_path / "out"), timeout=60)
    written, _ = reader.communicate(timeout=30)
    assert res.code == 0, res.stderr
    assert written.decode().startswith("Servers: PostgreSQL")
