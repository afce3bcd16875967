"""``httpbench report RESULT.json --html``: a real compare result rendered as one HTML page whose
plots carry every round's numbers, the verdict with its interval and the preflight; bad input is
one line, exit 2."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser

import pytest

from tests.httpbench.http_fixtures import FixtureServer, Route, body_of, run_compare, run_httpbench, seeded

BODY = body_of(4096)
VOID = {"meta", "br", "hr", "img", "input", "link"}


class Tags(HTMLParser):
    """Counts start tags and checks every element is closed in order (void elements aside)."""

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.count: dict[str, int] = {}
        self.errors: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.count[tag] = self.count.get(tag, 0) + 1
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.count[tag] = self.count.get(tag, 0) + 1

    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.stack[-1:] or 'nothing'}")
        else:
            self.stack.pop()


def parse(page: str) -> Tags:
    tags = Tags()
    tags.feed(page)
    assert tags.errors == [] and tags.stack == [], (tags.errors, tags.stack)
    return tags


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    """A seed-method and a paired result of two real servers (the candidate 3 ms slower per answer)."""
    out = tmp_path_factory.mktemp("results")
    with FixtureServer({"/f": Route(BODY)}) as a, FixtureServer({"/f": Route(BODY, delay=0.003)}) as b:
        targets = {"base": a.url, "cand": b.url}
        for method, options in (
            ("seed", seeded(30, 3, warmups=2, concurrency=2)),
            ("paired", {"rounds": 5, "requests": 20, "concurrency": 2, "min_round_ms": 10}),
        ):
            run = run_compare(
                targets,
                "name=file GET,path=/f,class=payload",
                "name=file HEAD,path=/f,method=HEAD",
                output=out / f"{method}.json",
                **options,
                timeout=120,
            )
            assert run.code in (0, 1), run.output
    return out


@pytest.mark.servers
@pytest.mark.parametrize("method", ["seed", "paired"])
def test_the_html_report_plots_every_round_with_the_verdict_and_preflight(results, method, tmp_path):
    page_path = tmp_path / "r.html"
    run = run_httpbench("report", str(results / f"{method}.json"), "--html", str(page_path))
    assert run.code == 0 and run.stdout == "", run.output
    doc = json.loads((results / f"{method}.json").read_text())
    page = page_path.read_text()
    tags = parse(page)
    assert not re.search(r"<script|<link|<img|\s(src|href)=", page)  # self-contained: nothing to fetch
    scenarios = [s["name"] for s in doc["config"]["scenarios"]]
    assert tags.count["svg"] == 2 * len(scenarios)  # response time and throughput per scenario
    # per scenario: p50, p95 and p99 lines of each target, and a throughput line of each target
    assert tags.count["polyline"] == len(scenarios) * (3 * 2 + 2)
    for r in doc["rounds"]:  # every round's numbers are on the page, as hover titles of its dots
        for key, label, unit in (("p50_ms", "p50", "ms"), ("p95_ms", "p95", "ms"), ("p99_ms", "p99", "ms")):
            assert f"{r['target']} {label} round {r['round']}: {r[key]:,.3f} {unit}" in page
        assert f"{r['target']} round {r['round']}: {r['rps']:,.3f} req/s" in page
    for name in scenarios:
        cmp = doc["comparisons"][name]["cand"]
        block = page[page.index(f"<h3>{name} ") :]
        assert re.search(rf'<b>cand</b> <span class="badge"[^>]*>{cmp["verdict"]}</span>', block)
        if method == "paired":  # the interval of each gate, with its pairs
            for d in cmp["decisions"]:
                assert f"{d['estimate']:.3f}x [{d['low']:.3f}, {d['high']:.3f}] ({d['n']} pairs" in block
        else:
            assert f"throughput {cmp['ratios']['throughput']:.3f}x" in block
    for p in doc["preflight"]:
        assert (
            f'<td>{p["scenario"]}</td><td>{p["target"]}</td><td style="text-align:right">{p["status"]}</td>'
            in page
        )
    assert f">{doc['verdict']}</span>" in page


@pytest.mark.parametrize(
    ("content", "says"),
    [
        ("{not json", "not JSON"),
        ('{"schema": "dbbench.explain/1"}', "not an httpbench compare result (schema 'dbbench.explain/1'"),
        ('{"schema": "httpbench.compare/1"}', "an incomplete compare result"),
    ],
)
def test_a_file_that_is_not_a_result_is_one_line(tmp_path, content, says):
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    run = run_httpbench("report", str(bad), "--html", str(tmp_path / "r.html"))
    assert run.code == 2 and run.stderr.startswith("httpbench: error: ") and says in run.stderr, run.output
    assert len(run.stderr.strip().splitlines()) == 1 and not (tmp_path / "r.html").exists()
    missing = run_httpbench("report", str(tmp_path / "none.json"))
    assert missing.code == 2 and "none.json: No such file or directory" in missing.stderr
