"""The registry of an output page's sections: each module of :mod:`svmrepro.report.sections`, found there.

A section registers itself by being a module of that package with ``ORDER``, ``OPTION``, ``configure`` and
``lines`` (:mod:`svmrepro.report.sections` says what each is); the registry imports the package's modules
by name when first asked, so the spec (:mod:`svmrepro.report.spec`), which reads each section's ``report:``
key here, and the sections, which build on the spec, never import each other's module for their own
definition.
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass
from functools import cache
from types import ModuleType
from typing import Any

#: the package whose modules are the page's sections
SECTIONS_PACKAGE = "svmrepro.report.sections"


@dataclass(frozen=True)
class Option:
    """A section's key of the ``report:`` node: its OmegaConf type and default as written in YAML,
    what it holds in words (the error lines quote it), and the spec's value when no YAML set it."""

    key: str
    kind: Any
    default: Any
    expects: str
    unset: Any = None


@cache
def page_sections() -> tuple[ModuleType, ...]:
    """Every section module, in page order."""
    package = importlib.import_module(SECTIONS_PACKAGE)
    found = [importlib.import_module(f"{SECTIONS_PACKAGE}.{m.name}") for m in pkgutil.iter_modules(package.__path__)]
    return tuple(sorted(found, key=lambda module: module.ORDER))


@cache
def section_options() -> dict[str, tuple[ModuleType, Option]]:
    """Each section's ``report:`` key: its module and :class:`Option`, in page order."""
    return {module.OPTION.key: (module, module.OPTION) for module in page_sections() if module.OPTION is not None}
