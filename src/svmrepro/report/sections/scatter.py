"""Per-run scatter pictures (``report.scatter``, drawn by :mod:`svmrepro.report.scatter`): ``<id>.scatter.png``
and the ``<id>.points.json`` it is drawn from, so ``--from-csv`` redraws it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Optional

from matplotlib.markers import MarkerStyle
from omegaconf import MISSING

from svmrepro.errors import ConfigError
from svmrepro.report.scatter import collect_points, plot_scatter
from svmrepro.report.registry import Option
from svmrepro.report.sections import Page, picture
from svmrepro.report.spec import ScatterSpec

ORDER = 10


@dataclass
class ScatterNode:
    sets: Dict[str, str] = MISSING
    key: str = "points"


OPTION = Option("scatter", Optional[ScatterNode], None, "{key: <diagnostics key>, sets: {<set>: <marker>}}")


def configure(where: str, node) -> ScatterSpec | None:
    """Which diagnostics entry holds a run's points and the marker of each set, each a matplotlib marker."""
    asked = node.scatter
    if asked is None:
        return None
    if not asked.sets:
        raise ConfigError(f"{where}: report.scatter.sets must map each index set to a marker, e.g. {{sv: o}}")
    for name, marker in asked.sets.items():
        if marker not in MarkerStyle.markers:
            raise ConfigError(f"{where}: report.scatter.sets.{name}={marker!r} is not a matplotlib marker")
    return ScatterSpec(sets=tuple(asked.sets.items()), key=asked.key)


def lines(page: Page) -> list[str]:
    spec, runs, paths = page.spec, page.runs, page.paths
    points = collect_points(runs, spec.scatter, paths.points_json) if spec.scatter else {}
    return picture(points, paths.points_json, lambda: plot_scatter(points, runs, spec, paths.scatter), paths.scatter,
                   f"Points of {len(points)} of the {len(runs)} runs (`{paths.points_json.name}`):",
                   f"{spec.output_id} scatter")
