"""Every third-party package imported under ``src/`` is a declared dependency of svmrepro.

An import at a module's top runs whenever svmrepro does, so its distribution must be a required
dependency; an import inside a function (ray, dask's ``distributed``) runs only on the path that needs
it, so an optional extra may provide it. The distribution of a module is found as Python finds it,
through :func:`importlib.metadata.packages_distributions`; ``hydra_plugins`` is a namespace that many
distributions share, so its sub-package names the distribution. The platform declared (POSIX) is
checked when svmrepro is imported.
"""

import ast
import subprocess
import sys
import tomllib
from importlib.metadata import PackageNotFoundError, distribution, distributions, packages_distributions
from pathlib import Path

import pytest
from packaging.requirements import Requirement

CHECKOUT = Path(__file__).resolve().parents[1]
SRC = CHECKOUT / "src"
OWN = {path.name for path in SRC.iterdir() if path.is_dir()}
NAMESPACE = "hydra_plugins"


def imports(tree: ast.Module) -> list[tuple[str, bool]]:
    """Each absolute import of ``tree``: the module's name, and whether it runs when the module is imported
    (at its top level, an ``if`` or ``try`` there included), rather than inside a function."""
    found = []

    def visit(node: ast.AST, on_import: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Import):
                found.extend((alias.name, on_import) for alias in child.names)
            elif isinstance(child, ast.ImportFrom) and child.level == 0:
                found.append((child.module, on_import))
            visit(child, on_import and not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)))

    visit(tree, True)
    return found


def third_party(name: str) -> str | None:
    """The importable name whose distribution provides ``name`` (``sklearn``, ``hydra_plugins.x``), None for
    the standard library and svmrepro's own packages."""
    parts = name.split(".")
    if parts[0] in sys.stdlib_module_names:
        return None
    if parts[0] == NAMESPACE:
        return None if len(parts) < 2 or parts[1] in {p.name for p in (SRC / NAMESPACE).iterdir()} \
            else ".".join(parts[:2])
    return None if parts[0] in OWN else parts[0]


def providers(module: str) -> set[str]:
    """The normalized names of the installed distributions that provide ``module``."""
    if module.startswith(f"{NAMESPACE}."):
        folder = module.replace(".", "/") + "/"
        return {normalized(dist.metadata["Name"]) for dist in distributions()
                if any(str(file).startswith(folder) for file in dist.files or [])}
    return {normalized(name) for name in packages_distributions().get(module, [])}


def declared() -> tuple[set[str], set[str]]:
    """The distributions pyproject.toml requires, and those of its extras (names normalized); read from the
    file, not from the installed metadata, which is as old as the last install."""
    project = tomllib.loads((CHECKOUT / "pyproject.toml").read_text())["project"]

    def names(lines: list[str]) -> set[str]:
        return set().union(*(with_extras(Requirement(line)) for line in lines))

    extras = project.get("optional-dependencies", {}).values()
    return names(project["dependencies"]), set().union(*(names(lines) for lines in extras))


def normalized(name: str) -> str:
    return name.lower().replace("_", "-")


def with_extras(requirement: Requirement) -> set[str]:
    """The requirement's distribution and those its extras add (``dask[distributed]``: ``distributed``), as
    the installed distribution declares them."""
    added = set()
    if requirement.extras:
        try:
            lines = distribution(requirement.name).requires or []
        except PackageNotFoundError:
            lines = []
        for line in map(Requirement, lines):
            if line.marker and any(line.marker.evaluate({"extra": extra}) for extra in requirement.extras):
                added.add(normalized(line.name))
    return {normalized(requirement.name), *added}


def imported() -> dict[str, tuple[bool, str]]:
    """Each third-party module imported under ``src/``: whether an import of it runs on import, and the
    first file where one does (else the first file that imports it)."""
    found: dict[str, list[tuple[bool, str]]] = {}
    for path in sorted(SRC.rglob("*.py")):
        for name, on_import in imports(ast.parse(path.read_text(), str(path))):
            if module := third_party(name):
                found.setdefault(module, []).append((on_import, path.relative_to(SRC).as_posix()))
    return {module: max(places, key=lambda place: place[0]) for module, places in found.items()}


def test_every_imported_package_is_declared():
    required, optional = declared()
    missing = []
    for module, (on_import, where) in sorted(imported().items()):
        allowed = required if on_import else required | optional
        if not providers(module) & allowed:
            kind = "a required dependency" if on_import else "a dependency or an extra"
            missing.append(f"{module} (imported by {where}; installed from {sorted(providers(module))}) "
                           f"is not {kind} in pyproject.toml")
    assert not missing, "\n".join(missing)


def test_the_walk_finds_the_imports_that_must_be_declared():
    """What the test above relies on: the packages found include those once undeclared (issue 34)."""
    found = imported()
    assert {"yaml", "threadpoolctl", "alembic", "sklearn", "hydra"} <= found.keys()
    assert found["yaml"][0] and not found["alembic"][0]  # alembic is imported inside a function
    assert "ray" in found and not found["ray"][0]  # an extra's, imported where it is used


@pytest.mark.parametrize("source, expected", [
    ("import yaml\ndef f():\n    import ray\n", [("yaml", True), ("ray", False)]),
    ("try:\n    from alembic.script import X\nexcept ImportError:\n    pass\n", [("alembic.script", True)]),
    ("from . import sibling\nfrom hydra_plugins.hydra_joblib_launcher import x\n",
     [("hydra_plugins.hydra_joblib_launcher", True)]),
])
def test_imports_are_read_with_where_they_run(source, expected):
    assert imports(ast.parse(source)) == expected


def test_a_platform_other_than_posix_is_refused_at_import_in_one_line():
    script = "import os; os.name = 'nt'; import svmrepro"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines()[-1].startswith("ImportError: svmrepro runs on POSIX systems only")
