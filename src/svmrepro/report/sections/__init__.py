"""The sections of an output's page below its table and figure, one module each.

A section module owns its key of the experiment's ``report:`` node, its computation and its
Markdown, and declares

- ``ORDER``: its place on the page (sections follow in ascending order);
- ``OPTION``: its :class:`~svmrepro.report.registry.Option` (the key, its typed node, default and what it
  expects in words), or None for a section no key asks for (the claims, asked for by the paper's claims file);
- ``configure(where, node)``: the value its key has in the :class:`~svmrepro.report.spec.ReportSpec`,
  from the whole merged ``report:`` node (so it checks the rules that span keys: a compared metric is
  reported), raising one :class:`~svmrepro.errors.ConfigError` line naming ``where`` and the key;
- ``lines(page)``: its lines of the :class:`Page` (none when the output does not ask for it),
  writing any file it draws.

Adding a section is adding a module here, as adding a claim primitive is
(:mod:`svmrepro.report.claims.primitives`). The registry (:mod:`svmrepro.report.registry`) finds the
modules of this package; the spec reads their keys there, so neither this package nor the spec imports
the other for its own definition.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from svmrepro.report.artifacts import write_sidecar
from svmrepro.report.spec import ReportSpec

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class Page:
    """What an output's sections are built from: the runs it shows (and the text of the runs CSV
    written from them), the summary table, the paper's numbers (None without) and its files
    (an :class:`svmrepro.report.Output`)."""

    spec: ReportSpec
    runs: pd.DataFrame
    table: pd.DataFrame
    paper: pd.DataFrame | None
    paths: Output  # noqa: F821  (svmrepro.report.Output, which builds pages from these sections)
    runs_csv_text: str


def picture(drawn: dict, sidecar: Path, draw: Callable[[], None], figure: Path, caption: str, alt: str) -> list[str]:
    """The lines of a section showing a picture of ``drawn`` (none when empty), which is kept in
    ``sidecar`` so ``--from-csv`` redraws it; ``draw()`` writes ``figure``."""
    if not drawn:
        return []
    write_sidecar(drawn, sidecar)
    draw()
    return ["", caption, "", f"![{alt}]({figure.name})"]
