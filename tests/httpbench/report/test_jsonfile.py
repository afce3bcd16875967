"""The JSON result is strict JSON: non-finite numbers are written as null."""

from __future__ import annotations

import json
import math

import pytest

from httpbench import report


def test_json_never_contains_infinity_or_nan():
    text = report.dumps({"a": math.inf, "b": [math.nan, 1.5], "c": {"d": -math.inf}})
    assert json.loads(text, parse_constant=pytest.fail) == {"a": None, "b": [None, 1.5], "c": {"d": None}}
