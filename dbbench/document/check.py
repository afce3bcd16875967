"""The checks of a decoded result document (:mod:`dbbench.document.model`): each names the first bad
field by its path (``results[3].remediated.samples_ms``) in a :class:`DocumentError`.

The values a file holds that dbbench would act on (its ``config``: namespace, warm-ups, runs,
timeout) are held to the bounds the command line puts on the same options
(:mod:`dbbench.defaults`), by one check (:func:`setting_problem`): a baseline cannot make ``diff``
do what no command line could, and no spelling holds more samples than ``--runs`` can take."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields
from typing import Any

from dbbench import defaults
from dbbench.dialects.plan import MAX_DEPTH, PlanNode
from dbbench.errors import DbbenchError

# dbbench.explain/2 records the work of every plan node (PostgreSQL's rows removed by filters and
# shared buffers); a /1 document is still read, its work unknown (``Document.records_work``)
SCHEMA_VERSION = 2
WORK_SINCE = 2
_OTHER_VERSION = 1  # dbbench.seed, dbbench.grow


def schema_version(kind: str) -> int:
    """The schema version of the documents of ``kind`` (explain, seed, grow) this dbbench writes."""
    return SCHEMA_VERSION if kind == "explain" else _OTHER_VERSION


class ResultFileError(DbbenchError):
    """A result or baseline file that cannot be read (exit code 2)."""


class DocumentError(ResultFileError):
    """A decoded document with a bad field: ``where`` names it (the file is prefixed by
    :meth:`Document.from_json`)."""

    def __init__(self, where: str, what: str):
        super().__init__(f"{where}: {what}")
        self.where, self.what = where, what


def known(cls: type) -> set[str]:
    """The JSON keys a model reads: its fields' names (``extra`` holds the others)."""
    return {f.name for f in fields(cls)} - {"extra"}


def number_or_null(value: object) -> bool:
    return value is None or (isinstance(value, (int, float)) and not isinstance(value, bool))


def as_object(value: object, where: str, what: str = "must be an object") -> dict[str, Any]:
    if not isinstance(value, dict):
        raise DocumentError(where, what)
    return value


def text(obj: Mapping[str, Any], key: str, at: str, *, optional: bool = False) -> Any:
    value = obj.get(key)
    if optional and value is None:
        return None
    if not isinstance(value, str):
        raise DocumentError(f"{at}.{key}", "must be text or null" if optional else "must be text")
    return value


def numbers(obj: Mapping[str, Any], keys: tuple[str, ...], at: str) -> None:
    for key in keys:
        if not number_or_null(obj.get(key)):
            raise DocumentError(f"{at}.{key}", "must be a number or null")


def check_plan(root: object, top: str) -> PlanNode:
    """The plan tree of ``root`` (a decoded ``plan``), each node checked (iteratively: any depth
    up to :data:`MAX_DEPTH`)."""
    stack = [(root, top, 1)]
    while stack:
        node, at, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise DocumentError(top, f"plan nested more than {MAX_DEPTH} levels deep")
        node = as_object(node, at, "must be a plan node object")
        for key in ("kind", "label"):
            text(node, key, at)
        for key in ("table", "alias", "index"):
            text(node, key, at, optional=True)
        numbers(node, ("est_rows", "actual_rows", "loops", "actual_ms", "removed_rows", "buffers"), at)
        if not isinstance(node.get("in_subquery", False), bool):
            raise DocumentError(f"{at}.in_subquery", "must be true or false")
        children = node.get("children", [])
        if not isinstance(children, list):
            raise DocumentError(f"{at}.children", "must be a list")
        stack.extend(
            (child, f"{at}.children[{k}]", depth + 1) for k, child in reversed(list(enumerate(children)))
        )
    return PlanNode.from_dict(root)  # type: ignore[arg-type]  # checked above


# -- the bounds of the values dbbench acts on ---------------------------------------------------
# setting -> (lowest, highest, the option that takes it)
SETTING_BOUNDS: dict[str, tuple[float, float, str]] = {
    "warmups": (*defaults.WARMUPS_RANGE, "--warmups"),
    "runs": (*defaults.RUNS_RANGE, "--runs"),
    "timeout_s": (*defaults.TIMEOUT_RANGE_S, "--timeout"),
}
MAX_SAMPLES = defaults.RUNS_RANGE[1]  # the samples one spelling holds: one per run


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def setting_problem(key: str, value: object) -> str | None:
    """What is wrong with the run setting ``key`` (``namespace``, ``warmups``, ``runs`` or
    ``timeout_s``) being ``value``, held to the command line's bounds; None when nothing is."""
    if key == "namespace":
        if defaults.valid_namespace(value):
            return None
        return f"{_shown(value)} is not a namespace name: {defaults.NAMESPACE_RULE}"
    lo, hi, option = SETTING_BOUNDS[key]
    whole = key != "timeout_s"
    if isinstance(value, bool) or not isinstance(value, int if whole else (int, float)):
        return "must be a whole number" if whole else "must be a number"
    if not lo <= value <= hi:  # NaN and infinities too
        return f"{_shown(value)} is out of range ({lo} to {hi}, as {option} takes)"
    return None


def check_config(obj: Mapping[str, Any], at: str = "config") -> None:
    """A result file's ``config`` (:class:`dbbench.document.model.RunConfig`): each field null or of its
    type, and the settings within the command line's bounds (:func:`setting_problem`)."""
    for key in ("command", "catalog", "isolation"):
        text(obj, key, at, optional=True)
    for key in ("namespace", *SETTING_BOUNDS):
        value = obj.get(key)
        if value is not None and (why := setting_problem(key, value)):
            raise DocumentError(f"{at}.{key}", why)
    if obj.get("natural") is not None and not isinstance(obj["natural"], bool):
        raise DocumentError(f"{at}.natural", "must be true, false or null")
    shapes = obj.get("shapes")
    if shapes is not None and not (isinstance(shapes, list) and all(isinstance(x, str) for x in shapes)):
        raise DocumentError(f"{at}.shapes", "must be a list of shape names or null")


def check_samples(samples: object, at: str) -> tuple[float, ...]:
    """A spelling's ``samples_ms``: a list of at most :data:`MAX_SAMPLES` numbers (one per run)."""
    if not isinstance(samples, list):
        raise DocumentError(at, "must be a list of numbers")
    if len(samples) > MAX_SAMPLES:
        raise DocumentError(
            at,
            f"holds {len(samples):,} samples; a dbbench result holds at most {MAX_SAMPLES:,} (one per --runs)",
        )
    if not all(number_or_null(v) and v is not None for v in samples):
        raise DocumentError(at, "must be a list of numbers")
    return tuple(samples)
