"""Decision surfaces (``report.surface: true``, drawn by :mod:`svmrepro.report.surface`):
``<id>.surface.png`` and the ``<id>.surface.json`` it is drawn from, so ``--from-csv`` redraws it."""

from __future__ import annotations

from svmrepro.report.registry import Option
from svmrepro.report.sections import Page, picture
from svmrepro.report.surface import collect_surfaces, plot_surfaces

ORDER = 20
OPTION = Option("surface", bool, False, "true or false", unset=False)


def configure(where: str, node) -> bool:
    """Whether to draw each group's decision surface from its runs' ``surface.json`` artifacts."""
    return node.surface


def lines(page: Page) -> list[str]:
    spec, runs, paths = page.spec, page.runs, page.paths
    surfaces = collect_surfaces(runs, spec, paths.surface_json) if spec.surface else {}
    return picture(surfaces, paths.surface_json, lambda: plot_surfaces(surfaces, runs, spec, paths.surface),
                   paths.surface, f"Decision surfaces of each group's lowest-seed run (`{paths.surface_json.name}`):",
                   f"{spec.output_id} surfaces")
