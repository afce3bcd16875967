"""The paired method (the default): intervals of paired-round ratios, three verdicts, exit codes."""

from __future__ import annotations

import json

import pytest

from httpbench.measure.paired import Plan, fitted_look, last_look
from tests.httpbench.http_fixtures import FixtureServer, Route, body_of, cli_options, run_compare

BODY = body_of(2048)
ROUND = {"warmups": 2, "requests": 20, "concurrency": 4}  # the timed rounds of every test here
SMALL = {**ROUND, "min_round_ms": 0, "q": True}


@pytest.fixture()
def pair():
    with (
        FixtureServer({"/f": Route(BODY, delay=0.005)}) as a,
        FixtureServer({"/f": Route(BODY, delay=0.005)}) as b,
    ):
        yield a, b


def base_cand(a, b) -> dict[str, str]:
    return {"base": a.url, "cand": b.url}


def compare(a, b, out, *args):
    return run_compare(base_cand(a, b), "/f", enforce_gates=True, output=out, **SMALL, extra=args)


def judged(a, b, tmp_path, code, *args):
    """``compare`` with these options: the exit code must be ``code``; returns (run, result document)."""
    out = tmp_path / "r.json"
    run = compare(a, b, out, *args)
    assert run.code == code, run.output
    return run, json.loads(out.read_text())


@pytest.mark.servers
def test_equal_targets_pass_with_intervals_inside_the_gates(pair, tmp_path):
    a, b = pair
    run, doc = judged(a, b, tmp_path, 0, "--gate", "metadata:0.5:2.0")
    assert doc["verdict"] == "pass" and doc["config"]["method"] == "paired"
    rec = doc["paired"]["GET /f"]
    assert rec["stopped"] == "decided" and rec["pairs"] in doc["config"]["paired"]["looks"]
    assert len(doc["rounds"]) == 2 * rec["pairs"]
    # every pair is adjacent in time and the order alternates
    firsts = [r["target"] for r in doc["rounds"] if r["position"] == 1]
    assert firsts[:4] == ["base", "cand", "base", "cand"]
    decisions = {d["metric"]: d for d in doc["comparisons"]["GET /f"]["cand"]["decisions"]}
    assert set(decisions) == {"throughput", "p95"}
    for d in decisions.values():
        assert d["verdict"] == "pass" and d["low"] <= d["estimate"] <= d["high"]
        # each end is a one-sided (1 - look_alpha) bound: together a (1 - 2 look_alpha) interval
        assert d["n"] == rec["pairs"] and d["confidence"] >= 1 - 2 * doc["config"]["paired"]["look_alpha"]
    assert decisions["throughput"]["low"] > 0.5 and decisions["p95"]["high"] < 2.0
    assert "Verdict: pass" in run.stdout and "Pairs × requests" in run.stdout
    assert "typical ratio of paired rounds [one-sided 99.2% bounds]" in run.stdout  # each end: 1 - alpha/6


@pytest.mark.servers
def test_a_slower_candidate_fails_with_the_interval_named(pair, tmp_path):
    a, b = pair
    b.routes["/f"].delay = 0.015
    run, doc = judged(a, b, tmp_path, 1)
    assert "verdict fail" in run.stderr
    assert doc["verdict"] == "fail"
    tp = next(g for g in doc["gate_failures"] if "throughput" in g)
    assert "pairs" in tp and "[" in tp and "≥ 0.80x" in tp
    rec, looks = doc["paired"]["GET /f"], doc["config"]["paired"]["looks"]
    assert rec["candidates"]["cand"]["verdict"] == "fail"
    ratios = sorted(rec["candidates"]["cand"]["pair_ratios"]["throughput"])
    assert len(ratios) == rec["pairs"] and ratios[len(ratios) // 2] < 0.6  # a 3x slower candidate
    # a fail counts once the next look confirms it: a state of the machine that lasts a few
    # seconds (one nginx sharing a core with a neighbour) must not fail an A/A on its own
    *_, before, last = rec["looks"]
    assert before["verdicts"] == last["verdicts"] == {"cand": "fail"} and rec["stopped"] == "decided"
    assert before["unconfirmed"] == ["cand"] and "unconfirmed" not in last
    assert rec["pairs"] == last["pairs"] == looks[len(rec["looks"]) - 1]


@pytest.mark.servers
def test_a_fail_the_budget_leaves_unconfirmed_is_inconclusive(pair, tmp_path):
    a, b = pair
    b.routes["/f"].delay = 0.015  # 7 pairs take at least 0.7 s: the next look does not fit in 1 s
    run, doc = judged(a, b, tmp_path, 3, "--budget", "1")
    rec = doc["paired"]["GET /f"]
    assert rec["looks"][0]["unconfirmed"] == ["cand"] and rec["stopped"] == "budget"
    assert doc["gate_failures"] == [] and rec["candidates"]["cand"]["verdict"] == "inconclusive"
    assert any("is past ≥ 0.80x (metadata gate) at one look, not confirmed" in u for u in doc["inconclusive"])
    assert "the --budget ran out after 7 pairs: give a larger --budget" in run.stderr


@pytest.mark.servers
@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["--rounds", "4"], "--rounds 4 cannot decide a gate at --alpha 0.05: 4 pairs all on one side"),
        (["--rounds", "6", "--alpha", "0.01"], "give --rounds 7 or more (or --alpha 0.015625)"),
        (["--client-rounds", "4", "--client-command", "true {url}"], "give --client-rounds 5 or more"),
        (["--budget", "1", "--min-round-ms", "100"], "give --budget 2 or more"),
    ],
)
def test_an_undecidable_run_is_refused_before_any_request(pair, tmp_path, argv, needle):
    # before: --rounds 5 timed every round, then exited 3 "too few pairs" with "give a larger --budget"
    a, b = pair
    run = compare(a, b, tmp_path / "r.json", *argv)
    assert run.code == 2, run.output
    assert run.stderr.count("\n") == 1 and needle in run.stderr, run.stderr
    assert a.routes["/f"].count == b.routes["/f"].count == 0  # not even the preflight ran
    assert not (tmp_path / "r.json").exists()


@pytest.mark.servers
def test_five_pairs_all_far_past_a_gate_fail_exit_1_never_3(pair, tmp_path):
    # one look at alpha 0.05: 5 pairs all past the gate by chance alone is 1/32, so they decide
    a, b = pair
    # 50x slower: far enough that a stall of the busy machine (one pair's base p95 past 100 ms,
    # seen with three test workers on two cores) cannot bring a pair back under the gate
    b.routes["/f"].delay = 0.25
    run, doc = judged(a, b, tmp_path, 1, "--rounds", "5")
    assert doc["verdict"] == "fail" and doc["inconclusive"] == []
    rec = doc["paired"]["GET /f"]
    assert rec["pairs"] == 5 and rec["stopped"] == "decided" and len(rec["looks"]) == 1
    for d in rec["candidates"]["cand"]["decisions"]:
        assert d["verdict"] == "fail" and d["n"] == 5
        assert d["confidence"] == pytest.approx(1 - 2 / 32)  # each end a one-sided 1 - 1/32 bound
    ratios = rec["candidates"]["cand"]["pair_ratios"]
    assert max(ratios["throughput"]) < 0.8 and min(ratios["p95"]) > 1.25
    assert "verdict fail: 2 gate failure(s)" in run.stderr


@pytest.mark.servers
def test_noise_wider_than_the_margin_stops_inconclusive_at_the_first_look(tmp_path):
    # the same server in both slots against gates at exactly 1.0: the true ratio sits on the
    # threshold, so an interval (99.998 % per look) straddles it and the first look is undecided.
    # The run then stops there, inconclusive, for one of two honest reasons, which the noise picks:
    # the next look would overrun the 1 s budget ("budget"), or, when both estimates happen to lie
    # on the good side of 1.0, the last look has too small a chance to decide it ("futile", checked
    # first). Each is checked against the look it was taken at.
    with FixtureServer({"/f": Route(BODY, delay=0.01)}) as srv:
        out = tmp_path / "r.json"
        run = compare(srv, srv, out, "--gate", "metadata:1.0:1.0", "--alpha", "0.0001", "--budget", "1")
    assert run.code == 3, run.output
    doc = json.loads(out.read_text())
    rec, plan = doc["paired"]["GET /f"], doc["config"]["paired"]
    assert rec["looks"][0]["pairs"] == plan["looks"][0]
    assert all(look["verdicts"] == {"cand": "inconclusive"} for look in rec["looks"])
    if rec["last_look_fitted"]:
        # a third way: the second look's pairs did not fit, and the last look was taken at the
        # pairs the budget paid for -- at least 1.2x the first look's, fewer than the second's
        assert rec["stopped"] == "looks exhausted" and len(rec["looks"]) == 2
        assert plan["looks"][0] * 1.2 <= rec["pairs"] < plan["looks"][1]
        assert rec["schedule"] == [plan["looks"][0], rec["pairs"]]
        assert f"GET /f: the --budget ran out after {rec['pairs']} pairs" in run.stderr
        return
    assert rec["pairs"] == plan["looks"][0] and len(rec["looks"]) == 1
    chance = rec["looks"][0]["chance_to_decide"]  # rounded to 4 places
    if rec["stopped"] == "futile":
        assert chance is not None and chance <= Plan().futility
        # the futility rule counts on the looks the budget pays for, and says which
        by = rec["looks"][0]["by_pairs"]
        helps = "a larger --budget may help" if by < plan["looks"][-1] else "a larger --budget would not help"
        assert f"chance that {by} pairs decide it" in run.stderr and helps in run.stderr
    else:
        assert "GET /f: the --budget ran out after" in run.stderr
        assert rec["stopped"] == "budget", rec["stopped"]
        assert chance is None or chance >= Plan().futility
        # at this pace the second look's pairs would overrun the budget (elapsed_s is rounded to ms)
        assert rec["elapsed_s"] * plan["looks"][1] / rec["pairs"] > plan["budget_s"] - 0.001
    assert any("straddles" in u for u in doc["inconclusive"])


@pytest.mark.servers
def test_self_control_reports_the_noise_floor_beside_the_verdict(pair, tmp_path):
    a, b = pair
    run, doc = judged(a, b, tmp_path, 0, "--self-control", "--gate", "metadata:0.5:2.0")
    aa = doc["paired"]["GET /f"]["self_control"]
    assert set(aa["candidates"]) == {"base-self"}
    assert aa["candidates"]["base-self"]["verdict"] == "pass"
    assert {r["target"] for r in aa["rounds"]} == {"base", "base-self"}
    assert all(r["target"] in ("base", "cand") for r in doc["rounds"])  # A/A kept apart
    assert "Self-control (base against itself" in run.stdout


@pytest.mark.servers
def test_rounds_are_sized_by_time_as_well_as_count(pair, tmp_path):
    a, b = pair
    for srv in pair:
        srv.routes["/f"].delay = 0.0
    out = tmp_path / "r.json"
    options = {**ROUND, "min_round_ms": 100, "rounds": 5, "output": out, "q": True}
    run = run_compare(base_cand(a, b), "/f", **options)
    assert run.code == 0, run.output
    doc = json.loads(out.read_text())
    per_round = doc["paired"]["GET /f"]["requests_per_round"]
    assert per_round > 20
    assert all(r["requests"] == per_round for r in doc["rounds"])
    walls = sorted(r["wall_ms"] for r in doc["rounds"])
    assert walls[len(walls) // 2] >= 50  # sized for 100 ms at the measured rate


@pytest.mark.servers
def test_seed_method_keeps_the_seeds_tables_and_point_gates(pair, tmp_path):
    a, b = pair
    out = tmp_path / "r.json"
    gates = {"gate": "metadata:0.5:2.0", "enforce_gates": True}
    run = run_compare(base_cand(a, b), "/f", method="seed", **ROUND, **gates, output=out, q=True)
    assert run.code == 0, run.output
    doc = json.loads(out.read_text())
    assert "paired" not in doc and doc["verdict"] == "pass"
    assert len(doc["rounds"]) == 2 * 3 and all(r["requests"] == 20 for r in doc["rounds"])
    assert "median of 3 rounds" in run.stdout and "Per-round throughput and RT" in run.stdout


@pytest.mark.servers
def test_self_control_needs_the_paired_method(pair, tmp_path):
    a, b = pair
    run = compare(a, b, tmp_path / "r.json", "--method", "seed", "--self-control")
    assert run.code == 2 and "--self-control needs --method paired" in run.stderr


@pytest.mark.servers
def test_real_client_rounds_are_paired_and_decided(pair, tmp_path):
    a, b = pair
    clients = cli_options(gate="metadata:0.01:100", client_command=["base=true", "cand=sleep 0.2"])
    _, doc = judged(a, b, tmp_path, 1, *clients)
    cmp = doc["clients"]["scenarios"]["real client"]["comparisons"]["cand"]
    assert doc["clients"]["rounds"] == 8 and cmp["verdict"] == "fail"
    assert cmp["decision"]["low"] > 1.25 and cmp["decision"]["n"] == 8
    assert any(
        g.startswith("client real client: cand sample time") and "client gate" in g
        for g in doc["gate_failures"]
    )
    assert doc["paired"]["GET /f"]["candidates"]["cand"]["verdict"] == "pass"  # HTTP itself passed


def test_too_few_client_pairs_are_inconclusive():
    from httpbench.measure import client_rounds
    from httpbench.model import Gate

    samples = [
        {"target": t, "round": r, "position": 1, "ms": 100.0 + r, "ok": True}
        for r in (1, 2, 3)
        for t in ("base", "cand")
    ]
    _, comparisons, failures = client_rounds.summarize(
        "real client", ["base", "cand"], samples, Gate(0.0, 1.25), "paired", 0.05
    )
    assert failures == []
    assert comparisons["cand"]["verdict"] == "inconclusive"
    assert "too few sample pairs" in comparisons["cand"]["inconclusive"]
    assert client_rounds.undecided({"scenarios": {"real client": {"comparisons": comparisons}}}) == [
        comparisons["cand"]["inconclusive"]
    ]


def test_paired_client_verdict_ignores_the_raw_p95_ratio_of_a_few_samples():
    """A 1 ms process timed three times has a max that jitters by 2x; that raw p95 ratio is no
    verdict: with too few pairs the paired method says inconclusive (the CI flake of stop 16)."""
    from httpbench.measure import client_rounds
    from httpbench.model import Gate

    ms = {
        ("base", 1): 1.0,
        ("cand", 1): 1.1,
        ("base", 2): 1.2,
        ("cand", 2): 2.6,
        ("base", 3): 1.1,
        ("cand", 3): 1.0,
    }
    samples = [{"target": t, "round": r, "position": 1, "ms": v, "ok": True} for (t, r), v in ms.items()]
    _, comparisons, failures = client_rounds.summarize(
        "real client", ["base", "cand"], samples, Gate(0.0, 1.25), "paired", 0.05
    )
    assert comparisons["cand"]["p95_ratio"] > 2.0  # the seed method would fail this
    assert failures == [] and comparisons["cand"]["verdict"] == "inconclusive"
    _, seeded, seed_failures = client_rounds.summarize(
        "real client", ["base", "cand"], samples, Gate(0.0, 1.25)
    )
    assert seeded["cand"]["verdict"] == "fail" and "client gate" in seed_failures[0]


@pytest.mark.servers
def test_junit_and_github_summary_show_all_three_verdicts(tmp_path):
    body = body_of(1024)
    with (
        FixtureServer({"/ok": Route(body, delay=0.005), "/slow": Route(body, delay=0.005)}) as a,
        FixtureServer({"/ok": Route(body, delay=0.005), "/slow": Route(body, delay=0.05)}) as b,
    ):
        junit, summary = tmp_path / "j.xml", tmp_path / "summary.md"
        summary.write_text("earlier step\n")
        scenarios = ("name=ok,path=/ok", "name=slow,path=/slow")
        # the candidate's client is 3x slower and 4x faster in turn: its interval straddles any gate
        odd = tmp_path / "odd"
        flip = f"if [ -e {odd} ]; then rm {odd}; sleep 0.3; else touch {odd}; sleep 0.025; fi"
        clients = {"client_command": ["base=sleep 0.1", f"cand={flip}"], "client_rounds": 5}
        exports = {"junit": junit, "github_summary": summary}
        run = run_compare(
            base_cand(a, b), *scenarios, gate="metadata:0.25:4.0", **clients, **exports, **SMALL
        )
    assert run.code == 0, run.output  # without --enforce-gates the verdict is printed only
    import xml.etree.ElementTree as ET

    root = ET.parse(junit).getroot()
    cases = {c.get("name"): c for c in root.iter("testcase")}
    assert cases["ok: cand"].find("failure") is None and cases["ok: cand"].find("skipped") is None
    assert "throughput" in cases["slow: cand"].find("failure").get("message")
    skipped = cases["client real client: cand"].find("skipped").get("message")
    assert skipped.startswith("inconclusive: ") and "straddles ≤ 1.25x (client gate)" in skipped
    suite = root.find("testsuite")
    assert (suite.get("tests"), suite.get("failures"), suite.get("skipped")) == ("3", "1", "1")
    text = summary.read_text()
    assert text.startswith("earlier step\n### ❌ httpbench compare: fail (1 pass, 1 fail, 1 inconclusive)")
    assert "| slow " in text and "Verdict: fail" in text


def _undecided_doc(stopped: str, pairs: int, **extra) -> dict:
    """A result document whose one scenario ``s`` is undecided, stopped for ``stopped``."""
    cand = {"verdict": "inconclusive", "decisions": [], **extra}
    rec = {
        "pairs": pairs,
        "stopped": stopped,
        "looks": [{"chance_to_decide": 0.02}],
        "candidates": {"b": cand},
    }
    return {
        "config": {"paired": Plan().to_json()},
        "paired": {"s": rec},
        "inconclusive": ["s: b p95 1.1x a [0.9, 1.3] (9 pairs, 98.3% interval) straddles ≤ 1.15x"],
    }


@pytest.mark.parametrize(
    ("stopped", "pairs", "helps", "never"),
    [
        ("fixed pairs", 5, "give more --rounds", "give a larger --budget"),
        ("budget", 11, "the --budget ran out after 11 pairs: give a larger --budget", "--rounds"),
        ("futile", 24, f"2% chance that {Plan().looks[-1]} pairs (the last look)", "--budget may help"),
        (
            "looks exhausted",
            Plan().looks[-1],
            "--rounds N takes N pairs in one look",
            "give a larger --budget",
        ),
    ],
)
def test_an_undecided_run_names_its_own_cause_and_only_what_helps(stopped, pairs, helps, never):
    # before: every undecided run said "give a larger --budget", also after --rounds (no effect)
    from httpbench.measure.compare import undecided_causes

    (cause,) = undecided_causes(_undecided_doc(stopped, pairs))
    assert cause.startswith("s: ") and helps in cause and never not in cause


def test_a_failed_self_control_is_named_as_the_cause():
    from httpbench.measure.compare import undecided_causes

    doc = _undecided_doc("decided", 7, self_control_note="the A/A self-control failed")
    assert undecided_causes(doc) == ["s: the A/A self-control failed (the set-up is biased; see its table)"]


def test_the_budget_passes_from_a_decided_scenario_to_the_undecided_ones():
    from httpbench.measure.paired import share_budget

    class Run:
        def __init__(self, name: str, steps: int):
            self.name, self.steps = name, steps

        def step(self, share_s: float) -> bool:
            calls.append((self.name, share_s))
            self.steps -= 1
            return self.steps > 0

    calls: list[tuple[str, float]] = []
    share_budget([Run("a", 1), Run("b", 3), Run("c", 2)], 60.0)
    # turns: every scenario's first look first, then the undecided ones, one look each in turn
    assert [n for n, _ in calls] == ["a", "b", "c", "b", "c", "b"]
    shares = [round(s) for _, s in calls]
    assert shares == [20, 30, 60, 30, 60, 60]  # a third each, then a half each, then all of it


def test_a_futile_stop_within_the_budget_says_a_larger_budget_may_help():
    from httpbench.measure.compare import undecided_causes

    doc = _undecided_doc("futile", 13)
    doc["paired"]["s"]["looks"][0]["by_pairs"] = Plan().looks[2]
    (cause,) = undecided_causes(doc)
    assert f"chance that {Plan().looks[2]} pairs decide it" in cause and "a larger --budget may help" in cause


def test_a_look_the_budget_cannot_pay_for_in_full_is_taken_at_the_pairs_it_pays_for():
    # 44 pairs taken, the next look planned at 80: a budget that pays for 70 pairs in all takes
    # the last look at 70 (before, the scenario stopped at 44, inconclusive: "budget")
    assert fitted_look(44, 70.9) == 70
    # too few more to be worth a look (under 1.2x): stop where it is
    assert fitted_look(44, 52.0) is None and fitted_look(7, 8.0) is None and fitted_look(7, 7.5) is None
    assert fitted_look(7, 9.0) == 9
    # the futility rule counts on the last look the budget pays for: planned ones first ...
    assert last_look([13, 24, 44], 7, 50.0) == 44
    # ... then one fitted to the budget, when it is worth a look
    assert last_look([13, 24, 44], 7, 40.0) == 40
    assert last_look([13, 24, 44], 7, 26.0) == 24  # 26 < 1.2 x 24: the planned look at 24
    assert last_look([13, 24, 44], 7, 12.0) == 12  # no planned look fits; a fitted one does
    assert last_look([13, 24, 44], 7, 7.5) == 13  # none fits: the next planned look, as before
