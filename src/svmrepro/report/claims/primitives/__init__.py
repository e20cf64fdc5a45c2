"""The claim primitives, one module each: ``evaluate(test, runs, where) -> Estimate``.

A claim's ``test.kind`` names the module; adding a primitive is adding a module here. Each module
declares its test's arguments as a dataclass ``Test``. A primitive reads its claim's own output's runs
table (or that of the output its test's ``output`` key names), unless it declares ``outputs(test)``: the
outputs whose runs it reads (None: the claim's own); its ``evaluate`` then gets a mapping from each of them
to its runs table.
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


def reads_outputs(module: ModuleType) -> bool:
    """Whether the primitive reads outputs other than its claim's own (it declares ``outputs``)."""
    return hasattr(module, "outputs")


def outputs_read(module: ModuleType, test: dict) -> list[str | None]:
    """The outputs whose runs ``module``'s evaluation of ``test`` reads (None: the claim's own)."""
    return module.outputs(test) if reads_outputs(module) else [test.get("output")]
