"""Which shapes ``dbbench advise`` advises, from one explain run (no server): a failed check but a
row count that is the data's, a natural spelling at least 1.5x slower (or timed out), and
``--shape``'s shapes whatever their state."""

from __future__ import annotations

from dbbench.advise.run import Need, needs
from dbbench.measure.expect import PlanCheck
from dbbench.measure.explain import Measurement, ShapeMeasurement


def result(name, ok=True, problems=(), rem_ms=1.0, nat_ms=None, nat_timeout=None):
    rem = Measurement("remediated", "SELECT 1", samples_ms=[rem_ms])
    nat = None
    if nat_ms is not None or nat_timeout:
        nat = Measurement("natural", "SELECT 2", samples_ms=[nat_ms] if nat_ms else [], timeout=nat_timeout)
    check = PlanCheck(ok, "t using ix", "full_scan on t", list(problems))
    return ShapeMeasurement(name, "postgresql", "", None, {}, rem, nat, verdict=check)


def test_the_shapes_in_need_and_why():
    results = [
        result("passes"),
        result("lost its index", ok=False, problems=["expected index ix on t is not used", "forbidden sort"]),
        result("other data", ok=False, problems=["returned 3 rows, expected 100"]),
        result("natural slower", rem_ms=1.0, nat_ms=2.6),
        result("natural alike", rem_ms=1.0, nat_ms=1.4),
        result("natural timed out", nat_timeout="statement timeout (30 s)"),
    ]
    assert needs(results, slower=1.5) == [
        Need("lost its index", "postgresql", "remediated", "expected index ix on t is not used (and 1 more)"),
        Need("natural slower", "postgresql", "natural", "the natural spelling is 2.6x slower"),
        Need(
            "natural timed out",
            "postgresql",
            "natural",
            "the natural spelling timed out (statement timeout (30 s))",
        ),
    ]
    asked = needs([result("passes")], slower=1.5, only=["passes"])
    assert asked == [Need("passes", "postgresql", "remediated", "asked for")]
