"""httpbench's exceptions form the one tree drawn in :mod:`httpbench.errors`' docstring: every
exception class of the package is a line of it, under its base class, with the module that defines it."""

from __future__ import annotations

import importlib
import pkgutil
import re

import httpbench
from httpbench import errors

LINE = re.compile(r"^( *)(\w+) \((httpbench[\w.]*)\): ")


def drawn() -> dict[str, tuple[str, str | None]]:
    """Each class of the docstring's trees: its module and the class it is drawn under."""
    out: dict[str, tuple[str, str | None]] = {}
    stack: list[tuple[int, str]] = []
    for text in (errors.__doc__ or "").splitlines():
        m = LINE.match(text)
        if not m:
            continue
        indent, name, module = len(m.group(1)), m.group(2), m.group(3)
        while stack and stack[-1][0] >= indent:
            stack.pop()
        out[name] = (module, stack[-1][1] if stack else None)
        stack.append((indent, name))
    return out


def defined() -> dict[str, type[BaseException]]:
    """Every exception class an httpbench module defines (``__main__`` is not imported: it runs)."""
    found: dict[str, type[BaseException]] = {}
    for info in pkgutil.walk_packages(httpbench.__path__, "httpbench."):
        if info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            if isinstance(value, type) and issubclass(value, BaseException) and value.__module__ == info.name:
                found[value.__name__] = value
    return found


def test_every_exception_class_is_drawn_under_its_base_in_the_errors_docstring():
    tree, classes = drawn(), defined()
    assert set(classes) == set(tree)
    for name, cls in classes.items():
        module, parent = tree[name]
        assert module == cls.__module__, name
        base = cls.__bases__[0]
        assert parent == (base.__name__ if issubclass(base, errors.HttpbenchError) else None), name


def test_only_the_preflight_byte_bound_is_not_an_httpbench_error():
    outside = {n for n, c in defined().items() if not issubclass(c, errors.HttpbenchError)}
    assert outside == {"BodyTooLarge"}
