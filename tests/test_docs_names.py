"""No doc or docstring names a module that does not exist.

Every dotted name of ours (``dbbench.measure.explain.run``, ``httpbench.peers.programs``,
``verdict.files.write_output``) and every source path (``dbbench/setup/split.py``) written in
README.md, docs/*.md, examples/**/*.md, or the text of our Python files (docstrings and comments
included) must name a module that exists -- and, where it goes on past the module, a name defined
at the top of that module. Names that are not modules are listed in ``NOT_MODULES``: the result
schemas (``dbbench.explain/1``), JUnit suite and class names (``dbbench.explain``,
``dbbench.explain.postgresql``), the pytest plugin's entry point name.
"""

from __future__ import annotations

import ast
import re
import tokenize
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("dbbench", "httpbench", "verdict")
# Written like module names, meaning something else: JUnit suites/classes, schema names.
NOT_MODULES = re.compile(
    r"^(dbbench|httpbench)\.(explain|check|diff|grow|seed|compare)(\.(postgresql|mysql|[a-z_]+))?$"
    r"|^dbbench\.pytest_plugin$"
    r"|^dbbench\.isolate$"  # a click context key
    r"|^verdict\.(expected|actual|problems|ok)$"  # a result document's fields (results[].verdict)
    r"|^httpbench\.x(\.y)?$"  # a docstring's placeholder
)
_DOTTED = re.compile(r"(?<![\w./-])((?:dbbench|httpbench|verdict)(?:\.[A-Za-z_]\w*)+)(?![\w/-])")
_PATH = re.compile(r"(?<![\w./-])((?:dbbench|httpbench|verdict)(?:/[\w-]+)*/[\w-]+\.py)\b")


def texts():
    for path in [ROOT / "README.md", *(ROOT / "docs").glob("*.md"), *(ROOT / "examples").rglob("*.md")]:
        yield path, path.read_text(encoding="utf-8")
    for package in (*PACKAGES, "tests", "benchmarks", "examples"):
        for path in (ROOT / package).rglob("*.py"):
            if path.name != "test_docs_names.py":
                yield path, prose(path)


def prose(path: Path) -> str:
    """The strings (docstrings included) and comments of a Python file: what it says, not its code
    (where ``verdict.ok`` is a variable's attribute)."""
    with tokenize.open(path) as fh:
        tokens = list(tokenize.generate_tokens(fh.readline))
    keep = (tokenize.STRING, tokenize.COMMENT, getattr(tokenize, "FSTRING_MIDDLE", -1))
    return "\n".join(t.string for t in tokens if t.type in keep)


def module_file(dotted: str) -> Path | None:
    base = ROOT.joinpath(*dotted.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


@cache
def top_level_names(path: Path) -> frozenset[str]:
    names: set[str] = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(t.id for t in targets if isinstance(t, ast.Name))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.If):  # TYPE_CHECKING imports, and __getattr__ exports
            for sub in ast.walk(node):
                if isinstance(sub, (ast.Import, ast.ImportFrom)):
                    names.update((a.asname or a.name).split(".")[0] for a in sub.names)
    if "_EXPORTS" in names:  # a package's lazily exported names
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:
            if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "_EXPORTS" for t in node.targets):
                names.update(ast.literal_eval(node.value))
    return frozenset(names)


def resolves(dotted: str) -> bool:
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        path = module_file(".".join(parts[:cut]))
        if path is not None:
            rest = parts[cut:]
            return not rest or rest[0] in top_level_names(path)
    return False


def unresolved() -> list[str]:
    bad = []
    for path, text in texts():
        where = path.relative_to(ROOT)
        for m in _DOTTED.finditer(text):
            name = m.group(1).rstrip(".")
            after = text[m.end() : m.end() + 1]
            # a schema name (dbbench.explain/1), or a call in an f-string's code ({verdict.upper()})
            if after == "/" or (after == "(" and path.suffix == ".py") or NOT_MODULES.match(name):
                continue
            if not resolves(name):
                bad.append(f"{where}: {name}")
        for m in _PATH.finditer(text):
            if not (ROOT / m.group(1)).is_file():
                bad.append(f"{where}: {m.group(1)}")
    return sorted(set(bad))


def test_every_module_named_in_docs_and_docstrings_exists():
    assert unresolved() == []


def test_the_check_finds_a_module_that_does_not_exist():
    assert resolves("dbbench.measure.explain.run") and resolves("verdict.files.write_output")
    assert not resolves("dbbench.results.load_document")  # moved to dbbench.document.store
    assert not resolves("dbbench.setup.loader.no_such_function")
    assert (ROOT / "dbbench" / "setup" / "split.py").is_file() and not (
        ROOT / "dbbench" / "sqlsplit.py"
    ).exists()
