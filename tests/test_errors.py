"""Each tool's exceptions form the one tree drawn in its ``errors`` module's docstring
(:mod:`dbbench.errors`, :mod:`httpbench.errors`): every exception class of the package is a line of
it, under its base class, with the module that defines it; the few that are not the tool's own
error type are named here, each for a reason its docstring gives."""

from __future__ import annotations

import importlib
import pkgutil
import re

import pytest

# package -> (its error base class, the classes deliberately outside it)
TOOLS = {
    "dbbench": ("DbbenchError", {"PlanAssertionError"}),  # an AssertionError, so pytest shows the plan
    "httpbench": ("HttpbenchError", {"BodyTooLarge"}),  # an httpx error that never leaves the preflight
}


def drawn(package: str) -> dict[str, tuple[str, str | None]]:
    """Each class of the docstring's trees: its module and the class it is drawn under."""
    line = re.compile(rf"^( *)(\w+) \(({package}[\w.]*)\): ")
    out: dict[str, tuple[str, str | None]] = {}
    stack: list[tuple[int, str]] = []
    for text in (importlib.import_module(f"{package}.errors").__doc__ or "").splitlines():
        m = line.match(text)
        if not m:
            continue
        indent, name, module = len(m.group(1)), m.group(2), m.group(3)
        while stack and stack[-1][0] >= indent:
            stack.pop()
        out[name] = (module, stack[-1][1] if stack else None)
        stack.append((indent, name))
    return out


def defined(package: str) -> dict[str, type[BaseException]]:
    """Every exception class the package's modules define (``__main__`` modules are not imported: they run)."""
    found: dict[str, type[BaseException]] = {}
    root = importlib.import_module(package)
    for info in pkgutil.walk_packages(root.__path__, f"{package}."):
        if info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            if (
                isinstance(value, type)
                and issubclass(value, BaseException)
                and value.__module__ == info.name
                and not value.__name__.startswith("_")  # a module's private control flow, caught there
            ):
                found[value.__name__] = value
    return found


@pytest.mark.parametrize("package", list(TOOLS))
def test_every_exception_class_is_drawn_under_its_base_in_the_errors_docstring(package):
    base_name, _ = TOOLS[package]
    base_class = getattr(importlib.import_module(f"{package}.errors"), base_name)
    tree, classes = drawn(package), defined(package)
    assert len(tree) >= 3 and set(classes) == set(tree)
    for name, cls in classes.items():
        module, parent = tree[name]
        assert module == cls.__module__, name
        base = cls.__bases__[0]
        assert parent == (base.__name__ if issubclass(base, base_class) else None), name


@pytest.mark.parametrize("package", list(TOOLS))
def test_only_the_named_exceptions_are_outside_the_tools_error_type(package):
    base_name, outside_expected = TOOLS[package]
    base_class = getattr(importlib.import_module(f"{package}.errors"), base_name)
    outside = {n for n, c in defined(package).items() if not issubclass(c, base_class)}
    assert outside == outside_expected
