"""Numbers of a data spec that may depend on the scale: ``rows = ":scale * 10"``.

An expression is a TOML integer, or text made of numbers, ``:scale``, ``:name`` of the spec's
``[params]``, ``+ - * / //``, ``min(…)``, ``max(…)`` and parentheses. It is parsed once (a syntax
error names the field) and evaluated with the scale of the run; the result is rounded to an
integer (``/`` divides exactly, then rounds half to even).
"""

from __future__ import annotations

import ast
import math
import operator
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from dbbench.errors import DbbenchError
from dbbench.volume.limits import MAX_EXPR
from verdict.files import excerpt

_NAME = re.compile(r":([A-Za-z_]\w*)")
_OPS: dict[type, Callable[[float, float], float]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
}
_CALLS: dict[str, Callable[..., float]] = {"min": min, "max": max}


class ExprError(DbbenchError, ValueError):
    """An expression that is not one (the message says why, without the field: the caller adds it)."""


@dataclass(frozen=True)
class Expr:
    """A parsed number of the spec; :meth:`value` evaluates it."""

    text: str
    tree: ast.expr
    names: frozenset[str]

    def value(self, scale: float, params: Mapping[str, float] | None = None) -> int:
        env = {"scale": scale, **(params or {})}
        missing = sorted(self.names - env.keys())
        shown = excerpt(repr(self.text))
        if missing:
            raise ExprError(f"{shown}: :{excerpt(missing[0], 60)} is not :scale or a number in [params]")
        try:
            result = _eval(self.tree, env)
        except ZeroDivisionError:
            raise ExprError(f"{shown}: division by zero (at :scale {scale:,})") from None
        except OverflowError:
            result = math.inf
        if isinstance(result, float) and not math.isfinite(result):
            raise ExprError(f"{shown}: not a finite number (at :scale {scale:,})")
        return round(result)


def parse(value: object) -> Expr:
    """An expression from a TOML value (an integer, or text as described above)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ExprError(f"{excerpt(repr(value))} is not a number or an expression of :scale")
    if isinstance(value, float) and not math.isfinite(value):
        raise ExprError(f"{value!r} is not a finite number")
    text = str(value)
    if len(text) > MAX_EXPR:
        raise ExprError(f"{excerpt(repr(text))}: longer than {MAX_EXPR} characters")
    try:
        tree = ast.parse(_NAME.sub(r"\1", text), mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        raise ExprError(f"{excerpt(repr(text))} is not an expression of numbers and :scale") from None
    names = frozenset(_NAME.findall(text))
    _check(tree, text, names)
    return Expr(text, tree, names)


def _check(node: ast.expr, text: str, names: frozenset[str]) -> None:
    if (
        isinstance(node, ast.Constant)
        and isinstance(node.value, (int, float))
        and not isinstance(node.value, bool)
    ):
        return
    if isinstance(node, ast.Name) and node.id in names:
        return
    if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
        _check(node.left, text, names)
        _check(node.right, text, names)
        return
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        _check(node.operand, text, names)
        return
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in _CALLS
        and node.args
        and not node.keywords
    ):
        for arg in node.args:
            _check(arg, text, names)
        return
    raise ExprError(
        f"{excerpt(repr(text))}: only numbers, :scale, :params, + - * / //, min() and max() are allowed"
    )


def _eval(node: ast.expr, env: Mapping[str, float]) -> float:
    if isinstance(node, ast.Constant):
        assert isinstance(node.value, (int, float))  # checked by _check
        return node.value
    if isinstance(node, ast.Name):
        return env[node.id]
    if isinstance(node, ast.BinOp):
        return _OPS[type(node.op)](_eval(node.left, env), _eval(node.right, env))
    if isinstance(node, ast.UnaryOp):
        return -_eval(node.operand, env)
    assert isinstance(node, ast.Call) and isinstance(node.func, ast.Name)  # checked by _check
    return _CALLS[node.func.id](*(_eval(a, env) for a in node.args))
