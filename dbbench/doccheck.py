"""The checks of a decoded result document (:mod:`dbbench.document`): each names the first bad
field by its path (``results[3].remediated.samples_ms``) in a :class:`DocumentError`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields
from typing import Any

from dbbench.errors import DbbenchError
from dbbench.plan import MAX_DEPTH, PlanNode

SCHEMA_VERSION = 1
DIALECTS = ("postgresql", "mysql")


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
        numbers(node, ("est_rows", "actual_rows", "loops", "actual_ms"), at)
        if not isinstance(node.get("in_subquery", False), bool):
            raise DocumentError(f"{at}.in_subquery", "must be true or false")
        children = node.get("children", [])
        if not isinstance(children, list):
            raise DocumentError(f"{at}.children", "must be a list")
        stack.extend(
            (child, f"{at}.children[{k}]", depth + 1) for k, child in reversed(list(enumerate(children)))
        )
    return PlanNode.from_dict(root)  # type: ignore[arg-type]  # checked above
