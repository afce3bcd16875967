"""The JUnit XML writer both tools share: one test suite of test cases, each passed, failed or
skipped."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterable
from dataclasses import dataclass


@dataclass
class Case:
    """One JUnit test case: at most one of ``failure`` (with ``failure_type`` and ``detail``),
    ``skipped`` or ``system_out``."""

    classname: str
    name: str
    time: str = "0"
    failure: str | None = None
    failure_type: str = "Failure"
    detail: str | None = None
    skipped: str | None = None
    system_out: str | None = None


def junit(suite: str, cases: Iterable[Case]) -> str:
    """The JUnit XML document of one test suite (every ``--junit`` file of both tools)."""
    cases = list(cases)
    root = ET.Element("testsuites")
    ts = ET.SubElement(
        root,
        "testsuite",
        name=suite,
        tests=str(len(cases)),
        failures=str(sum(c.failure is not None for c in cases)),
        errors="0",
        skipped=str(sum(c.skipped is not None for c in cases)),
    )
    for c in cases:
        case = ET.SubElement(ts, "testcase", classname=c.classname, name=c.name, time=c.time)
        if c.failure is not None:
            ET.SubElement(case, "failure", message=c.failure, type=c.failure_type).text = c.detail
        elif c.skipped is not None:
            ET.SubElement(case, "skipped", message=c.skipped)
        elif c.system_out is not None:
            ET.SubElement(case, "system-out").text = c.system_out
    return ET.tostring(root, encoding="unicode", xml_declaration=True)
