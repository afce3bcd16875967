"""Unbounded inputs are refused with one line, or bounded (issue 19): the settings and samples a
result file or baseline holds (the command line's bounds), a dataset's row counts, the half-written
load files of an interrupted seed, the HTML page of a result with many samples, `grow --timeout 0`."""

from __future__ import annotations

import copy
import glob
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from dbbench import defaults
from dbbench.dataset import definition, loadfiles
from dbbench.document import store
from dbbench.document.model import Document, ShapeResult, Spelling
from dbbench.document.store import ResultFileError
from dbbench.errors import DbbenchError
from dbbench.measure import grow
from dbbench.output import html
from dbbench.servers import default_home
from dbbench.workflow import Run
from tests.conftest import default_sigint, run_cli
from tests.dbbench.diff.test_diff import doc, entry, indexed
from tests.dbbench.measure.test_grow import _catalog

ROOT = Path(__file__).resolve().parents[2]


def one_error_line(output: str) -> str:
    lines = [ln for ln in output.splitlines() if ln.startswith("dbbench: error:")]
    assert len(lines) == 1 and "Traceback" not in output, output
    return lines[0]


# -- 1. the settings a result file or baseline holds --------------------------------------------
@pytest.mark.servers
def test_a_baseline_asking_for_100000_runs_is_refused_before_diff_runs_anything(local_servers, tmp_path):
    result, base = tmp_path / "result.json", tmp_path / "base.json"
    made = run_cli("check", "--namespace", "dbbench_t_bounds", "--output", str(result))
    assert made.code == 0, made.output
    assert run_cli("baseline", "save", str(base), "--from", str(result)).code == 0
    cfg = json.loads(base.read_text())["config"]
    assert cfg["namespace"] == "dbbench_t_bounds" and cfg["runs"] == 1
    for key, value, why in (
        ("runs", 100_000, "100000 is out of range (1 to 1000, as --runs takes)"),
        (
            "namespace",
            "Bad-NS; x",
            "'Bad-NS; x' is not a namespace name: use lower-case letters, digits and _ (max 63)",
        ),
    ):
        bad = tmp_path / f"bad-{key}.json"
        doc_ = json.loads(base.read_text())
        doc_["config"][key] = value
        bad.write_text(json.dumps(doc_))
        start = time.monotonic()
        run = run_cli("diff", str(bad), timeout=120)  # before: minutes of measuring, silently
        assert run.code == 2 and time.monotonic() - start < 60, run.output
        assert one_error_line(run.stderr) == f"dbbench: error: {bad}: config.{key}: {why}"


BAD_CONFIG = [
    ("runs", 0, "config.runs: 0 is out of range (1 to 1000, as --runs takes)"),
    ("runs", 1001, "config.runs: 1001 is out of range"),
    ("runs", 7.5, "config.runs: must be a whole number"),
    ("runs", True, "config.runs: must be a whole number"),
    ("warmups", 5000, "config.warmups: 5000 is out of range (0 to 1000, as --warmups takes)"),
    ("warmups", -1, "config.warmups: -1 is out of range"),
    ("timeout_s", 0, "config.timeout_s: 0 is out of range (0.1 to 3600, as --timeout takes)"),
    ("timeout_s", 1e300, "config.timeout_s: 1e+300 is out of range"),
    ("timeout_s", "30", "config.timeout_s: must be a number"),
    ("namespace", "Public", "config.namespace: 'Public' is not a namespace name"),
    ("namespace", "a" * 64, "config.namespace: 'aaaa"),
    ("namespace", 5, "config.namespace: 5 is not a namespace name"),
    ("shapes", "abc", "config.shapes: must be a list of shape names or null"),
    ("natural", "yes", "config.natural: must be true, false or null"),
    ("catalog", 1, "config.catalog: must be text or null"),
]


@pytest.mark.parametrize("key, value, message", BAD_CONFIG, ids=[f"{k}={v!r:.12}" for k, v, _ in BAD_CONFIG])
def test_config_values_outside_the_command_lines_bounds_are_refused_naming_file_and_field(
    tmp_path, key, value, message
):
    good = doc(entry("a", "postgresql", indexed(), 0.02))
    good["config"] = {"namespace": "dbbench", "warmups": 1000, "runs": 1000, "timeout_s": 3600, "shapes": []}
    f = tmp_path / "base.json"
    f.write_text(json.dumps(good))
    assert store.load_document(f).config.runs == 1000  # type: ignore[union-attr]  # the bounds are inclusive
    bad = copy.deepcopy(good)
    bad["config"][key] = value
    f.write_text(json.dumps(bad))
    with pytest.raises(ResultFileError) as info:
        store.load(f)
    assert str(info.value).startswith(f"{f}: {message}") and "\n" not in str(info.value)


def test_a_run_is_held_to_the_same_bounds():
    assert Run(runs=1000, warmups=0, timeout_s=0.1).runs == 1000
    for bad in ({"runs": 0}, {"warmups": 1001}, {"timeout_s": float("nan")}, {"namespace": "x-y"}):
        with pytest.raises(DbbenchError, match=f"{next(iter(bad))}: "):
            Run(**bad)  # type: ignore[arg-type]


def test_the_command_line_takes_its_bounds_from_the_same_place():
    for args, bad in (
        (["explain", "--runs"], str(defaults.RUNS_RANGE[1] + 1)),
        (["baseline", "save", "x.json", "--warmups"], str(defaults.WARMUPS_RANGE[1] + 1)),
        (["diff", "b.json", "--timeout"], str(defaults.TIMEOUT_RANGE_S[0] / 2)),
    ):
        run = run_cli(*args, bad)
        assert run.code == 2 and "is not in the range" in run.stderr, run.output


# -- 3. samples per spelling, and the HTML page ---------------------------------------------------
def _samples_file(tmp_path: Path, n: int, rows: int = 1) -> Path:
    d = doc(*(entry(f"s{i}", "postgresql", indexed(), 1.0) for i in range(rows)))
    for r in d["results"]:
        r["remediated"]["samples_ms"] = [1.0 + (k % 97) / 100 for k in range(n)]
    d["config"] = {"runs": min(n, 1000)}
    f = tmp_path / f"samples-{n}.json"
    f.write_text(json.dumps(d))
    return f


def test_a_result_with_more_samples_than_runs_allow_is_refused(tmp_path):
    store.load(_samples_file(tmp_path, 1000))
    f = _samples_file(tmp_path, 1001)
    with pytest.raises(ResultFileError, match=r"results\[0\]\.remediated\.samples_ms: holds 1,001 samples; "):
        store.load(f)
    run = run_cli("report", str(f), "--html", str(tmp_path / "page.html"))
    assert run.code == 2 and not (tmp_path / "page.html").exists(), run.output
    assert "holds 1,001 samples; a dbbench result holds at most 1,000 (one per --runs)" in one_error_line(
        run.stderr
    )


def test_the_page_of_the_largest_result_stays_small(tmp_path):
    f = _samples_file(tmp_path, 1000, rows=20)
    page = tmp_path / "page.html"
    run = run_cli("report", str(f), "--html", str(page))
    assert run.code == 0, run.output
    text = page.read_text()
    assert len(text) < 1_000_000  # before: 3 MB, a dot per sample
    assert text.count("<circle") == 20 * html.MAX_PLOTTED == 4_000
    assert "each plots 200 of them, evenly spaced by rank" in text


def test_the_page_of_5_million_samples_is_bounded_and_says_so():
    samples = tuple(float(1 + (k * 7919) % 10_007) / 1000 for k in range(5_000_000))
    spelling = Spelling(samples_ms=samples, p50_ms=5.0, p95_ms=9.5)
    big = Document(results=(ShapeResult(shape="s", dialect="mysql", ok=True, remediated=spelling),))
    page = html.html(big)  # before: an 849 MB page
    assert len(page) < 200_000 and page.count("<circle") == html.MAX_PLOTTED
    assert "1 of 1 rows hold more than 200 samples (up to 5,000,000)" in page
    assert "p50 5 ms" in page and "p95 9.5 ms" in page  # the document's, of all samples
    points = html.plotted(samples)
    assert points == html.plotted(samples) and len(points) == html.MAX_PLOTTED
    assert {v for _, v in points} >= {min(samples), max(samples)}
    assert [k for k, _ in points] == sorted(k for k, _ in points)
    assert all(samples[k - 1] == v for k, v in points)
    assert html.plotted((3.0, 1.0)) == [(1, 3.0), (2, 1.0)]


# -- 2. dataset row counts, and the load files of an interrupted seed -----------------------------
def _definition(tmp_path: Path, body: str, name: str = "bounded") -> Path:
    f = tmp_path / f"{name}.toml"
    f.write_text(f'extends = "alpine-1m"\nname = "{name}"\n{body}')
    return f


@pytest.mark.parametrize(
    "body, message",
    [
        (
            "[packages]\nrows = 1_000_000_000_000\n",
            "[packages] rows = 1,000,000,000,000: too many rows for table package",
        ),
        (
            "[groups]\nbindings = 2_000_001\n",
            "[groups] bindings = 2,000,001: too many rows for table group_binding",
        ),
        ("[relations]\nrows = -1\n", "[relations] rows = -1: must be a whole number of rows"),
        ('[suites]\nrows = "many"\n', "[suites] rows = 'many': must be a whole number of rows"),
        ("[snapshots]\nrows = 1.5e6\n", "[snapshots] rows = 1500000.0: must be a whole number of rows"),
    ],
)
def test_a_dataset_with_too_many_rows_is_refused_when_read(tmp_path, body, message):
    f = _definition(tmp_path, body)
    start = time.monotonic()
    with pytest.raises(DbbenchError) as info:
        definition.load(str(f))  # before: memory grew ~110 MB/s
    assert time.monotonic() - start < 5
    assert str(info.value).startswith(f"{f}: {message}") and "\n" not in str(info.value)
    if "too many" in message:
        assert "at most 2,000,000 rows per table" in str(info.value)


def test_the_largest_dataset_is_within_the_bound():
    counts = definition.load("alpine-1m").expected_counts
    assert max(counts.values()) == 1_000_001 <= definition.MAX_TABLE_ROWS


@pytest.mark.parametrize("stop", [KeyboardInterrupt, OSError])
def test_an_interrupted_preparation_leaves_no_partial_folder(tmp_path, monkeypatch, stop):
    from dbbench.dataset import generate

    def interrupted(ds):
        assert glob.glob(str(tmp_path / f"alpine-ci-*.partial-{os.getpid()}"))
        raise stop()

    monkeypatch.setattr(generate, "generate", interrupted)
    with pytest.raises(stop):
        loadfiles.prepare(definition.load("alpine-ci"), ["postgresql"], tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_a_partial_folder_of_a_killed_process_is_removed_and_a_live_ones_kept(tmp_path):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    abandoned = tmp_path / f"alpine-ci-0123456789abcdef.partial-{dead.pid}"
    live = tmp_path / f"alpine-ci-0123456789abcdef.partial-{os.getppid()}"
    for folder in (abandoned, live):
        folder.mkdir()
        (folder / "package.postgresql.tsv").write_text("half a row")
    ds = definition.load("alpine-ci")
    tables, _, cached = loadfiles.prepare(ds, ["postgresql"], tmp_path)
    assert not cached and {t.name for t in tables} >= {"package", "snapshot"}
    assert not abandoned.exists() and live.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [f"alpine-ci-{loadfiles.cache_key(ds)}", live.name]
    )


@pytest.mark.servers
def test_ctrl_c_while_a_large_dataset_is_prepared_removes_its_partial_folder(local_servers, tmp_path):
    name = f"bounds-sigint-{uuid.uuid4().hex[:8]}"  # never prepared before: no cache entry to reuse
    f = _definition(tmp_path, "", name)
    cache = default_home() / "datasets"
    proc = subprocess.Popen(
        [sys.executable, "-m", "dbbench", "seed", "--dataset", str(f), "--namespace", "dbbench_t_sigint"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=default_sigint,
    )
    try:
        pattern = str(cache / f"{name}-*.partial-{proc.pid}")
        deadline = time.monotonic() + 60
        while not glob.glob(pattern) and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert glob.glob(pattern), "the seed never started preparing its load files"
        time.sleep(1.0)  # well into generating 1,000,000 rows per table (about 15 s)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, err
    assert "dbbench: interrupted" in err and "Traceback" not in err
    assert glob.glob(str(cache / f"{name}-*")) == []  # before: NAME-KEY.partial-PID stayed


# -- 4. grow's timeout ------------------------------------------------------------------------------
@pytest.mark.servers
def test_grow_refuses_a_timeout_of_0_which_would_mean_no_timeout(local_servers, tmp_path):
    args = ["grow", "--sizes", "1k,2k", "--runs", "1", "--warmups", "0", "--namespace", "dbbench_t_grow"]
    catalog = str(_catalog(tmp_path, True))
    for bad in ("0", "0.05", "nan", "inf", "3601"):
        run = run_cli(
            *args, "--catalog", catalog, "--timeout", bad, timeout=300
        )  # before, 0: ran, no timeout
        assert run.code == 2 and "Invalid value for '--timeout'" in run.stderr, (bad, run.output)
    with pytest.raises(grow.GrowError, match="a statement timeout must be a positive number of milliseconds"):
        grow.LadderOptions(timeout_ms=0)
