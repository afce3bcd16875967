"""What a plan is expected to be: the index a shape must use, and the features it must not have
(a full scan, a sort, a temporary table), checked on the normalized tree of
:mod:`dbbench.dialects.plan`."""

from __future__ import annotations

from dataclasses import dataclass

from dbbench.catalog.features import normalize_forbid
from dbbench.dialects.plan import PlanNode, accesses, describe_access


@dataclass
class PlanCheck:
    """A plan held against its expectation: ``ok``, what was expected and found, each problem."""

    ok: bool
    expected: str
    actual: str
    problems: list[str]


def check(root: PlanNode, table: str, index: str, forbid: list[str]) -> PlanCheck:
    """Whether ``index`` is used on ``table`` and no forbidden feature appears.

    ``forbid`` entries: ``full_scan`` (of any table), ``full_scan:TABLE``, ``sort``, ``temp_table``
    (or the servers' names, see :func:`normalize_forbid`).
    ``sort`` and ``temp_table`` concern the statement's own path; a bounded correlated probe that
    orders its few rows (``ORDER BY … LIMIT 1 OFFSET n`` per candidate) is not a filesort of the
    result.
    """
    forbid = normalize_forbid(forbid)
    found = accesses(root)
    expected = f"{table} using {index}"
    actual = "; ".join(describe_access(n) for n in found) or "no table access"
    problems = []
    if not any(n.table == table and n.index == index for n in found):
        problems.append(f"expected index {index} on {table} is not used")
    for item in forbid:
        feature, _, only = item.partition(":")
        for n in root.walk():
            if feature == "full_scan" and n.kind == "full_scan" and (not only or n.table == only):
                problems.append(f"forbidden full scan of {n.table}")
            elif feature in ("sort", "temp_table") and n.kind == feature and not n.in_subquery:
                problems.append(f"forbidden {feature.replace('_', ' ')}: {n.label}")
    return PlanCheck(not problems, expected, actual, list(dict.fromkeys(problems)))
