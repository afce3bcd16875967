"""The import structure is the architecture, checked.

* No import cycle in dbbench, httpbench or verdict. Every import counts: module level, inside a
  function (an import made there to dodge a cycle is still a cycle) and under ``if
  TYPE_CHECKING:`` (an annotation names a dependency as surely as a call). ``from pkg import sub``
  depends on the submodule, not on the package's ``__init__``.
* dbbench's layers, each importing only from the layers below it (or its own):
  ``cli`` (and the pytest plugin, the package's public facade) → ``output`` → ``workflow`` (and the
  ``bench`` commands) → the stages, each a layer of its own in the order data flows through them:
  ``indexmap`` → ``diff`` → ``document`` → ``capture`` → ``advise`` → ``measure`` → ``volume`` → ``dataset`` → ``setup`` →
  ``catalog`` → ``access`` → ``servers`` → ``dialects`` → the base (``errors``, ``defaults``,
  ``units``). Two stages that import each other (a "tie") cannot pass: one of them imports upward.
* ``workflow`` is the only door: the command line, the renderers and the pytest plugin import
  ``workflow``, the documents (``document``), each other and the base, and of the dialects only
  the plan tree and timing marks a document holds; never a stage itself.
* click and rich, the command line's libraries, are imported only by command-line modules: a
  ``cli`` package or module.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

from tests.httpbench.test_httpbench_imports import cycles

ROOT = Path(__file__).resolve().parents[1]

BASE = {"dbbench.errors", "dbbench.defaults", "dbbench.units", "dbbench.entry", "dbbench.__main__"}
# the stages in data-flow order, lowest first: a stage imports only the stages before it
STAGES = (
    "servers",
    "access",
    "catalog",
    "setup",
    "dataset",
    "volume",
    "measure",
    "advise",
    "capture",
    "document",
    "diff",
    "indexmap",
)
LAYERS = ("base", "dialects", *STAGES, "workflow", "output", "cli")


def modules(package: str) -> dict[str, Path]:
    found = {}
    for p in (ROOT / package).rglob("*.py"):
        parts = p.relative_to(ROOT).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = p
    return found


@functools.cache
def _import_nodes(path: Path) -> tuple[ast.Import | ast.ImportFrom, ...]:
    """Every import node of the module at ``path``, wherever it is (parsed once per session: the
    package does not change while the tests run)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return tuple(n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom)))


def import_graph(package: str) -> dict[str, set[str]]:
    known = modules(package)
    graph: dict[str, set[str]] = {}
    for name, path in known.items():
        deps: set[str] = set()
        for node in _import_nodes(path):
            if isinstance(node, ast.Import):
                deps.update(a.name for a in node.names if a.name in known)
            elif node.module and node.level == 0:
                subs = [f"{node.module}.{a.name}" for a in node.names]
                found = [s for s in subs if s in known]
                deps.update(found)
                if len(found) < len(subs) and node.module in known:
                    deps.add(node.module)
        deps.discard(name)
        graph[name] = deps
    return graph


def layer(module: str) -> str:
    """The layer of a dbbench module."""
    if module in BASE:
        return "base"
    if module in ("dbbench", "dbbench.pytest_plugin"):
        return "cli"  # the public facade and the pytest front end sit where the command line does
    stage = module.split(".")[1]
    if stage == "dialects":
        return "dialects"
    if stage in STAGES:
        return stage
    if stage in ("workflow", "bench"):
        return "workflow"
    if stage in ("output", "cli"):
        return stage
    raise AssertionError(f"{module} belongs to no layer: add its folder to tests/test_imports.py")


@pytest.mark.parametrize("package", ["dbbench", "httpbench", "verdict"])
def test_no_import_cycle_counting_every_import(package):
    graph = import_graph(package)
    assert len(graph) > 1
    assert cycles(graph) == []


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    """Every import of ``graph`` (dbbench's) that goes up the layers."""
    upward = []
    for module, deps in graph.items():
        for dep in deps:
            if LAYERS.index(layer(dep)) > LAYERS.index(layer(module)):
                upward.append(f"{module} ({layer(module)}) imports {dep} ({layer(dep)})")
    return sorted(upward)


def test_dbbench_imports_only_downward_through_its_layers():
    assert upward_imports(import_graph("dbbench")) == []


def test_the_layer_check_sees_an_upward_import():
    assert LAYERS.index(layer("dbbench.output.diff")) > LAYERS.index(layer("dbbench.diff.judge"))
    assert layer("dbbench.dialects.postgresql") == "dialects" and layer("dbbench.units") == "base"


@pytest.mark.parametrize(
    "module, dep",
    [  # the six ties issue 33 undid, each reintroduced in one direction
        ("dbbench.servers", "dbbench.access.urls"),
        ("dbbench.catalog.entries", "dbbench.dataset.definition"),
        ("dbbench.catalog.entries", "dbbench.measure.expect"),
        ("dbbench.catalog.entries", "dbbench.setup.guard"),
        ("dbbench.setup.loader", "dbbench.dataset.seed"),
        ("dbbench.measure.grow", "dbbench.document.store"),
    ],
)
def test_a_reintroduced_tie_fails(module, dep):
    graph = import_graph("dbbench")
    assert upward_imports(graph) == []
    graph[module] = graph[module] | {dep}
    assert upward_imports(graph) == [f"{module} ({layer(module)}) imports {dep} ({layer(dep)})"]


FRONT = ("dbbench.cli", "dbbench.output", "dbbench.pytest_plugin")
DOOR = (
    "dbbench.workflow",
    "dbbench.document",
    "dbbench.output",
    "dbbench.cli",
    "dbbench.dialects.plan",
    "dbbench.dialects.timing",
)


def bypasses(graph: dict[str, set[str]]) -> list[str]:
    """Every import by the command line, a renderer or the pytest plugin that passes the door."""
    return sorted(
        f"{module} imports {dep}"
        for module, deps in graph.items()
        if module.startswith(FRONT)
        for dep in deps
        if not dep.startswith(DOOR) and layer(dep) != "base" and dep != "dbbench"
    )


def test_the_command_line_renderers_and_plugin_reach_the_stages_only_through_workflow():
    assert bypasses(import_graph("dbbench")) == []


@pytest.mark.parametrize(
    "module, dep",
    [  # what the commands imported before issue 33 made workflow the only door
        ("dbbench.cli.volume", "dbbench.volume.starter"),
        ("dbbench.cli.capture", "dbbench.capture.check"),
        ("dbbench.output.volume", "dbbench.volume.load"),
        ("dbbench.pytest_plugin", "dbbench.access.targets"),
        ("dbbench.cli.app", "dbbench.servers"),
    ],
)
def test_a_command_that_bypasses_workflow_fails(module, dep):
    graph = import_graph("dbbench")
    graph[module] = graph[module] | {dep}
    assert bypasses(graph) == [f"{module} imports {dep}"]


def test_click_and_rich_only_in_command_line_modules():
    offenders = []
    for package in ("dbbench", "httpbench", "verdict"):
        for name, path in modules(package).items():
            if "cli" in name.split("."):
                continue
            for node in _import_nodes(path):
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
                if any(n.split(".")[0] in ("click", "rich") for n in names):
                    offenders.append(name)
    assert sorted(set(offenders)) == []


def module_aliases(package: str) -> list[str]:
    """``import a.b as c`` / ``from a import b as c`` of a dbbench, httpbench or verdict module
    under another name: the reader meets ``c`` and must look up what it is."""
    known = {m for p in ("dbbench", "httpbench", "verdict") for m in modules(p)}
    found = []
    for name, path in modules(package).items():
        for node in _import_nodes(path):
            for a in node.names:
                full = a.name if isinstance(node, ast.Import) else f"{node.module}.{a.name}"
                if a.asname and a.asname != a.name.rsplit(".", 1)[-1] and full in known:
                    found.append(f"{name}: {full} as {a.asname}")
    return sorted(found)


@pytest.mark.parametrize("package", ["dbbench", "httpbench", "verdict", "tests"])
def test_no_module_is_imported_under_another_name(package):
    assert module_aliases(package) == []
