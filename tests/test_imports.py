"""No import cycle in dbbench, httpbench or verdict: module-level and function-level imports count
(an import made inside a function to dodge a cycle is still a cycle); ``from pkg import sub``
depends on the submodule, not on the package's ``__init__``; ``if TYPE_CHECKING:`` blocks
(annotations only) do not count."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.httpbench.test_httpbench_imports import cycles

ROOT = Path(__file__).resolve().parents[1]


def _is_type_checking(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def _imports(tree: ast.AST):
    """Import nodes of ``tree``, outside ``if TYPE_CHECKING:`` blocks."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if _is_type_checking(node):
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        stack.extend(ast.iter_child_nodes(node))


def import_graph(package: str) -> dict[str, set[str]]:
    base = ROOT / package
    modules = {}
    for p in base.rglob("*.py"):
        parts = p.relative_to(ROOT).with_suffix("").parts
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = p
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        deps: set[str] = set()
        for node in _imports(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                deps.update(a.name for a in node.names if a.name in modules)
            elif node.module and node.level == 0:
                subs = [f"{node.module}.{a.name}" for a in node.names]
                found = [s for s in subs if s in modules]
                if found:
                    deps.update(found)
                if len(found) < len(subs) and node.module in modules:
                    deps.add(node.module)
        deps.discard(name)
        graph[name] = deps
    return graph


@pytest.mark.parametrize("package", ["dbbench", "httpbench", "verdict"])
def test_no_import_cycle(package):
    graph = import_graph(package)
    assert len(graph) > 1
    assert cycles(graph) == []
