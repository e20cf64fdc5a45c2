"""Decision-surface pictures (``report.surface: true``): one panel per group (in the order
they ran), drawn from the ``surface.json`` artifact (svmrepro.surface) of the group's lowest-seed run.

Each panel fills the two sides of the decision boundary, draws the boundary (decision value 0)
and the run's sample of test points, and gives that run's test error beside the group's mean.
The surfaces are kept in ``<id>.surface.json`` so ``--from-csv`` redraws the picture.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from svmrepro.errors import SvmReproError
from svmrepro.report.artifacts import artifact_folder, collect
from svmrepro.report.figure_keys import figure_key, is_current
from svmrepro.report.figures import legend_outside, plt, save_figure  # figures chooses matplotlib's backend
from svmrepro.report.spec import ReportSpec
from svmrepro.report.tables import numeric_or_text
from svmrepro.store import artifact_dict

ERROR = "metrics.test_error"
#: the params of a run that asked for a surface (``surface: {...}``): a FINISHED one logged it
ASKED = "params.surface."


def shown_runs(runs: pd.DataFrame, spec: ReportSpec) -> pd.DataFrame:
    """The run drawn for each group: its lowest seed; groups in the order they ran (the sweep's)."""
    order = [column for column in ("params.seed", "start_time", "run_id") if column in runs]
    shown = runs.sort_values(order, key=numeric_or_text, kind="stable").drop_duplicates(spec.group)
    return shown.sort_values("start_time", kind="stable") if "start_time" in shown else shown


def collect_surfaces(runs: pd.DataFrame, spec: ReportSpec, sidecar: Path) -> dict[str, dict]:
    """``{run_id: surface}`` of each group's shown run (those that logged a surface)."""
    shown = shown_runs(runs, spec)
    found = collect(shown, lambda uri: artifact_dict(uri, "surface.json"), sidecar)
    if not found:
        raise SvmReproError(_none_found(shown))
    return found


def _none_found(shown: pd.DataFrame) -> str:
    """Why no shown run has a surface: none asked for one, or the store's artifact files are gone
    (a FINISHED run that asked logged it; a plain re-run skips such a run)."""
    asked = shown[[c for c in shown if c.startswith(ASKED)]].replace("", np.nan).notna().any(axis=1)
    if "artifact_uri" not in shown or not asked.any():
        return "no run logged surface.json: set `surface: {}` in the experiment config and re-run"
    return (f"surface.json of {int(asked.sum())} FINISHED run(s) that asked for a surface is missing from the "
            f"store's artifact folder {artifact_folder(shown.loc[asked, 'artifact_uri'])}: restore that folder, or "
            "re-run them with force=true (a plain re-run skips FINISHED runs)")


def _title(group: str, run: pd.Series, runs: pd.DataFrame, spec: ReportSpec) -> str:
    if ERROR not in runs:
        return str(group)
    errors = runs.loc[runs[spec.group] == group, ERROR].astype(float)
    seed = run.get("params.seed", "?")
    return f"{group}\ntest error {float(run[ERROR]):.4f} (seed {seed}); mean of {len(errors)} runs {errors.mean():.4f}"


def _panel(ax, surface: dict) -> None:
    gx, gy, values = (np.asarray(surface[key], dtype=float) for key in ("grid_x", "grid_y", "values"))
    ax.contourf(gx, gy, np.sign(values), levels=[-1.5, 0, 1.5], colors=["#f4c7b8", "#bcd3ee"], alpha=0.8)
    if values.min() < 0 < values.max():
        ax.contour(gx, gy, values, levels=[0], colors="k", linewidths=1.2)
    X, y = np.asarray(surface["points_X"], dtype=float).reshape(-1, 2), np.asarray(surface["points_y"])
    for label, colour in ((-1, "#c0392b"), (1, "#1f4e9c")):
        ax.scatter(*X[y == label].T, s=5, color=colour, label=f"y = {label:+d}")
    ax.set_xlim(gx[0], gx[-1])
    ax.set_ylim(gy[0], gy[-1])
    ax.set_aspect("equal")


def plot_surfaces(surfaces: dict[str, dict], runs: pd.DataFrame, spec: ReportSpec, path: Path) -> None:
    key = figure_key("surface", surfaces, runs, spec)
    if is_current(path, key):  # that figure already
        return
    shown = shown_runs(runs, spec)
    shown = shown[shown["run_id"].isin(surfaces)]
    fig, axes = plt.subplots(1, len(shown), figsize=(4.2 * len(shown), 4.6), squeeze=False)
    for ax, (_, run) in zip(axes[0], shown.iterrows()):
        _panel(ax, surfaces[run["run_id"]])
        ax.set_title(_title(run[spec.group], run, runs, spec), fontsize=8)
    legend_outside(axes[0][-1], *axes[0][0].get_legend_handles_labels())
    save_figure(fig, spec.title, path, key)
