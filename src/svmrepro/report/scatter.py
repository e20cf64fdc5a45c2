"""Per-run scatter pictures (``report.scatter``): a run's 2-d points and the index sets it recorded.

The points come from each run's ``diagnostics.json`` artifact, kept in the ``<id>.points.json``
sidecar for ``--from-csv`` (svmrepro.report.artifacts).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.markers import MarkerStyle

from svmrepro.errors import SvmReproError
from svmrepro.report.artifacts import collect
from svmrepro.report.figure_keys import figure_key, is_current
from svmrepro.report.figures import legend_outside, plt, save_figure  # figures chooses matplotlib's backend
from svmrepro.report.spec import ReportSpec, ScatterSpec
from svmrepro.report.tables import numeric_or_text, x_label
from svmrepro.store import artifact_dict

#: significant digits kept of each coordinate in the sidecar (a picture needs no more)
DIGITS = 6


def _trim(points: dict, scatter: ScatterSpec) -> dict:
    """X (rounded), y and the named sets only: what the picture needs."""
    missing = {"X", "y", *(name for name, _ in scatter.sets)} - set(points)
    if missing:
        raise SvmReproError(f"diagnostics[{scatter.key!r}] has no {sorted(missing)}; it holds {sorted(points)}")
    X = np.asarray(points["X"], dtype=float)
    if X.ndim != 2 or X.shape[1] != 2:
        raise SvmReproError(f"diagnostics[{scatter.key!r}].X has shape {X.shape}; a scatter needs 2-d points")
    return {
        "X": [[float(f"{v:.{DIGITS}g}") for v in row] for row in X],
        "y": list(points["y"]),
        **{name: [int(i) for i in points[name]] for name, _ in scatter.sets},
    }


def collect_points(runs: pd.DataFrame, scatter: ScatterSpec, sidecar: Path) -> dict[str, dict]:
    """``{run_id: points}`` of the runs that recorded points, in the order of ``runs``."""
    def read(uri: str) -> dict | None:
        points = (artifact_dict(uri, "diagnostics.json") or {}).get(scatter.key)
        return None if points is None else _trim(points, scatter)

    found = collect(runs, read, sidecar)
    if not found:
        raise SvmReproError(f"no run recorded diagnostics[{scatter.key!r}], so there is no scatter to draw")
    return found


def _title(run: pd.Series, spec: ReportSpec, points: dict) -> str:
    label = f"{run.get(spec.group, '')}, {spec.x_label or spec.x} {x_label(run.get(spec.x, ''))}"
    sizes = ", ".join(f"{name} {len(points[name])}" for name, _ in spec.scatter.sets)
    return f"{label}\n{len(points['y'])} points; {sizes}"


def _panel(ax, points: dict, scatter: ScatterSpec) -> None:
    X, y = np.asarray(points["X"]), np.asarray(points["y"])
    classes = np.unique(y)
    colours = dict(zip(classes, plt.get_cmap("coolwarm")(np.linspace(0, 1, max(2, len(classes))))))
    in_sets = np.zeros(len(y), bool)
    for name, _ in scatter.sets:
        in_sets[points[name]] = True
    for label in classes:  # faint: in no set; solid: in some set
        ax.scatter(*X[~in_sets & (y == label)].T, s=8, color=colours[label], alpha=0.25)
        ax.scatter(*X[in_sets & (y == label)].T, s=10, color=colours[label], label=f"y = {x_label(label)}")
    for rank, (name, marker) in enumerate(scatter.sets):
        chosen = np.asarray(points[name], int)
        size = 110 / (1 + rank)  # the first set's markers are largest, so later ones sit inside them
        edge = [colours[label] for label in y[chosen]]
        hollow = MarkerStyle(marker).is_filled()  # a filled marker would hide the point it marks
        style = {"facecolors": "none", "edgecolors": edge} if hollow else {"color": edge}
        ax.scatter(*X[chosen].T, s=size, marker=marker, lw=1.2, **style)
        ax.scatter([], [], s=size, marker=marker, lw=1.2, label=name,  # legend entry in black
                   **({"facecolors": "none", "edgecolors": "k"} if hollow else {"color": "k"}))
    ax.set_aspect("equal", adjustable="datalim")
    ax.grid(alpha=0.3)


def plot_scatter(points: dict[str, dict], runs: pd.DataFrame, spec: ReportSpec, path: Path) -> None:
    """One panel per run of ``points`` (in group, x order), titled with its group, x and set sizes;
    points in none of the sets are drawn faint, in their class's colour (unless ``path`` is that figure already)."""
    key = figure_key("scatter", points, runs, spec)
    if is_current(path, key):
        return
    by_id = runs.set_index("run_id")
    order = [c for c in (spec.group, spec.x) if c in runs]
    ranked = runs.sort_values(order, key=numeric_or_text)["run_id"] if order else runs["run_id"]
    points = {run: points[run] for run in ranked if run in points}
    n_cols = min(len(points), 4)
    n_rows = -(-len(points) // n_cols)
    fig, axes = plt.subplots(n_rows, n_cols, figsize=(4 * n_cols, 4 * n_rows), squeeze=False)
    for ax, (run, run_points) in zip(axes.flat, points.items()):
        _panel(ax, run_points, spec.scatter)
        ax.set_title(_title(by_id.loc[run], spec, run_points), fontsize=8)
    for ax in axes.flat[len(points):]:
        ax.set_visible(False)
    legend_outside(axes[0][-1], *axes.flat[0].get_legend_handles_labels())
    save_figure(fig, spec.title, path, key)
