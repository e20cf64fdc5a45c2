"""The Python of a user's config folder (``my_conf/my_loaders.py``): found and read, never run, until a run needs it.

A config folder may hold the module of a data set's ``loader:`` or ``_target_``. Listing the data sets
(``svmrepro-data list``) and the checks before a sweep (``svmrepro-reproduce --check``, the preflight of
``svmrepro-reproduce`` and ``svmrepro-run -m``) only read configs, inside :func:`configs_only`: there such a
module is looked up as the import system would find it (:func:`folder_module`) and its source parsed
(:func:`declared`) to check that the function or class exists and takes the arguments given, without
importing it, so none of its code runs. A run imports it when it builds its data set.
"""

from __future__ import annotations

import ast
import importlib.util
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from importlib.machinery import PathFinder
from pathlib import Path

from svmrepro.locations import user_config_dirs

_READING: ContextVar[bool] = ContextVar("configs_only", default=False)


@contextmanager
def configs_only() -> Iterator[None]:
    """Inside it, a config folder's module is looked up and read, never imported (a listing, a check)."""
    token = _READING.set(True)
    try:
        yield
    finally:
        _READING.reset(token)


def reading_configs() -> bool:
    return _READING.get()


def folder_module(module: str) -> Path | None:
    """The file of ``module`` when the import system would load it from a user's config folder (the Python path
    first, then the folders, as :func:`svmrepro.data.function.locate` appends them); None when it would load the
    environment's module of that name, or none. Nothing is imported: a package's ``__init__`` does not run."""
    top, *rest = module.split(".")
    folders = [str(folder) for folder in user_config_dirs()]
    try:
        spec = importlib.util.find_spec(top)  # a top-level name: looked up, not imported
    except (ImportError, ValueError):
        spec = None
    if spec is None:
        spec = PathFinder.find_spec(top, folders)
    for depth in range(1, len(rest) + 1):
        if spec is None or not spec.submodule_search_locations:
            return None
        spec = PathFinder.find_spec(".".join([top, *rest[:depth]]), list(spec.submodule_search_locations))
    if spec is None or not spec.has_location or not spec.origin:
        return None
    origin = Path(spec.origin).resolve()
    return origin if any(origin.is_relative_to(folder) for folder in folders) else None


def declared(path: Path, name: str) -> tuple[bool, set[str] | None]:
    """Whether the module in ``path`` binds ``name`` at its top level, read from its source (SyntaxError if it
    has none), and the keyword arguments of the plain function it defines under that name (None: any, or not
    known before the module runs: a class, a decorated function, a name imported or assigned)."""
    found, arguments = False, None
    for node in _top_level(ast.parse(path.read_bytes(), str(path)).body):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if node.name == "__getattr__":  # a module's own lookup: any name may exist
                found = True
            elif node.name == name:
                plain = isinstance(node, ast.FunctionDef) and not node.decorator_list and not found
                found, arguments = True, _arguments(node.args) if plain else None
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                if alias.name == "*" or (alias.asname or alias.name.partition(".")[0]) == name:
                    found, arguments = True, None
        elif any(isinstance(bound, ast.Name) and bound.id == name
                 for target in _targets(node) for bound in ast.walk(target)):
            found, arguments = True, None
    return found, arguments


def _targets(node: ast.AST) -> list[ast.expr]:
    """The names a statement binds, as the expressions it assigns to."""
    if isinstance(node, ast.Assign):
        return node.targets
    if isinstance(node, (ast.AnnAssign, ast.AugAssign, ast.For, ast.AsyncFor)):
        return [node.target]
    if isinstance(node, (ast.With, ast.AsyncWith)):
        return [item.optional_vars for item in node.items if item.optional_vars is not None]
    return []


def _top_level(nodes: Iterable[ast.AST]) -> Iterator[ast.AST]:
    """The statements run when a module is imported: its body and the blocks in it (``if``, ``try``, ``with``),
    not the bodies of its functions and classes."""
    for node in nodes:
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            yield from _top_level(child for child in ast.iter_child_nodes(node)
                                  if isinstance(child, (ast.stmt, ast.excepthandler)))


def _arguments(arguments: ast.arguments) -> set[str] | None:
    """The names a function takes by keyword; None when it takes any (``**kwargs``)."""
    if arguments.kwarg is not None:
        return None
    return {argument.arg for argument in (*arguments.args, *arguments.kwonlyargs)}
