"""The claim primitives, one module each: ``evaluate(test, runs, where) -> Estimate``.

A claim's ``test.kind`` names the module; adding a primitive is adding a module here.
"""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType

from svmrepro.errors import ConfigError


def kinds() -> list[str]:
    return sorted(m.name for m in pkgutil.iter_modules(__path__))


def primitive(kind, where: str) -> ModuleType:
    if kind not in kinds():
        raise ConfigError(f"{where}: {kind!r} is not a claim primitive; valid: {', '.join(kinds())}")
    return importlib.import_module(f"{__name__}.{kind}")
