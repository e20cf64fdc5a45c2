"""The sections of an output's page below its table and figure, one module each.

A section module owns its key of the experiment's ``report:`` node, its computation and its
Markdown, and declares

- ``ORDER``: its place on the page (sections follow in ascending order);
- ``OPTION``: its :class:`Option` (the key, its typed node, default and what it expects in words), or
  None for a section no key asks for (the claims, asked for by the paper's claims file);
- ``configure(where, node)``: the value its key has in the :class:`~svmrepro.report.spec.ReportSpec`,
  from the whole merged ``report:`` node (so it checks the rules that span keys: a compared metric is
  reported), raising one :class:`~svmrepro.errors.ConfigError` line naming ``where`` and the key;
- ``lines(page)``: its lines of the :class:`Page` (none when the output does not ask for it),
  writing any file it draws.

Adding a section is adding a module here, as adding a claim primitive is
(:mod:`svmrepro.report.claims.primitives`).
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, Callable

from svmrepro.report.artifacts import write_sidecar

if TYPE_CHECKING:  # the page's parts; importing them here would import the sections from spec.py
    import pandas as pd

    from svmrepro.report import Output
    from svmrepro.report.spec import ReportSpec


@dataclass(frozen=True)
class Option:
    """A section's key of the ``report:`` node: its OmegaConf type and default as written in YAML,
    what it holds in words (the error lines quote it), and the spec's value when no YAML set it."""

    key: str
    kind: Any
    default: Any
    expects: str
    unset: Any = None


@dataclass(frozen=True)
class Page:
    """What an output's sections are built from: the runs it shows (and the text of the runs CSV
    written from them), the summary table, the paper's numbers (None without) and its files."""

    spec: ReportSpec
    runs: pd.DataFrame
    table: pd.DataFrame
    paper: pd.DataFrame | None
    paths: Output
    runs_csv_text: str


def picture(drawn: dict, sidecar: Path, draw: Callable[[], None], figure: Path, caption: str, alt: str) -> list[str]:
    """The lines of a section showing a picture of ``drawn`` (none when empty), which is kept in
    ``sidecar`` so ``--from-csv`` redraws it; ``draw()`` writes ``figure``."""
    if not drawn:
        return []
    write_sidecar(drawn, sidecar)
    draw()
    return ["", caption, "", f"![{alt}]({figure.name})"]


@cache
def page_sections() -> tuple[ModuleType, ...]:
    """Every section module, in page order."""
    found = [importlib.import_module(f"{__name__}.{m.name}") for m in pkgutil.iter_modules(__path__)]
    return tuple(sorted(found, key=lambda module: module.ORDER))


@cache
def section_options() -> dict[str, tuple[ModuleType, Option]]:
    """Each section's ``report:`` key: its module and :class:`Option`, in page order."""
    return {module.OPTION.key: (module, module.OPTION) for module in page_sections() if module.OPTION is not None}
