"""The import graph of src/, read with ``ast``: no circle between modules, none between the folders they sit
in, and the Hydra plugins import svmrepro, never the reverse.

Every import counts, a function's and a ``TYPE_CHECKING`` one's too: a circle drawn only for the type
checker is still two modules that each need the other to be read. Imports by name (``importlib``) are
how registries find their members (the page's sections, the claim primitives) and are not arrows.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
#: the top-level packages of src/: svmrepro and the Hydra plugins (a namespace shared with other projects)
OURS = ("svmrepro", "hydra_plugins")


def module_name(path: Path, root: Path = SRC) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules(root: Path = SRC) -> dict[str, Path]:
    return {module_name(path, root): path for path in sorted(root.rglob("*.py"))}


def imported(path: Path, name: str, known: Iterable[str]) -> set[str]:
    """The modules of ``known`` that the file ``path`` (module ``name``) imports, wherever the import stands."""
    known = set(known)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()

    def nearest(dotted: str) -> str | None:  # the module itself, or the package holding the imported name
        while dotted and dotted not in known:
            dotted = dotted.rpartition(".")[0]
        return dotted or None

    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            # a submodule taken from its package (``from svmrepro.store import sqlite``) is an arrow to it alone
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in node.names]
        else:
            continue
        found |= {module for module in map(nearest, targets) if module is not None and module != name}
    return found


def graph(root: Path = SRC) -> dict[str, set[str]]:
    found = modules(root)
    return {name: imported(path, name, found) for name, path in found.items() if name.startswith(OURS)}


def room(module: str) -> str:
    """The folder a module is drawn in: a subpackage of svmrepro or a plugin is one room, a module at the top
    of svmrepro another (``svmrepro.report.claims.check`` -> ``svmrepro.report``)."""
    parts = module.split(".")
    return ".".join(parts[:2])


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan's algorithm), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in edges.get(node, ()):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def rooms(edges: dict[str, set[str]]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for source, targets in edges.items():
        out.setdefault(room(source), set()).update(room(t) for t in targets if room(t) != room(source))
    return out


def test_no_module_of_src_is_in_an_import_circle():
    assert circles(graph()) == []


def test_no_folder_of_src_imports_one_that_imports_it_back():
    """One way through at the scale of folders too: svmrepro.report never needs a module that needs report/."""
    assert circles(rooms(graph())) == []


def test_the_plugins_import_svmrepro_and_svmrepro_never_imports_a_plugin():
    edges = graph()
    upward = sorted(f"{source} -> {target}" for source, targets in edges.items() if source.startswith("svmrepro")
                    for target in targets if target.startswith("hydra_plugins"))
    assert upward == []
    assert any(target.startswith("svmrepro") for source, targets in edges.items()
               if source.startswith("hydra_plugins.svmrepro_sweeper") for target in targets)


@pytest.mark.parametrize(("files", "expected"), [
    ({"svmrepro/__init__.py": "", "svmrepro/a.py": "from svmrepro import b\n", "svmrepro/b.py": "import svmrepro.a\n"},
     [["svmrepro.a", "svmrepro.b"]]),
    # relative, inside a function, and under TYPE_CHECKING: each an arrow
    ({"svmrepro/__init__.py": "", "svmrepro/p/__init__.py": "from typing import TYPE_CHECKING\n"
      "if TYPE_CHECKING:\n    from svmrepro.q import x\n", "svmrepro/q.py": "def f():\n    from .p import y\n"},
     [["svmrepro.p", "svmrepro.q"]]),
    ({"svmrepro/__init__.py": "", "svmrepro/a.py": "import importlib\nimportlib.import_module('svmrepro.b')\n",
      "svmrepro/b.py": "from svmrepro.a import f\n"}, []),
])
def test_a_circle_is_found_however_it_is_written(tmp_path, files, expected):
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    assert circles(graph(tmp_path)) == expected
