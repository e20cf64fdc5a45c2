"""Scaling factors: the slope of log y on log x over the runs of each group.

Laskov (1999) reports how training time scales as "the slope of a log-log fit" against the number
of examples and of unbounded SVs; ``report.slopes`` asks for the same fit
(:func:`svmrepro.report.stats.loglog_fit`), e.g.
``slopes: [{y: fit_time_s, x: params.dataset.n_train}, {y: fit_time_s, x: metrics.n_free_sv}]``.
A paper value sits in the paper file as metric ``<y>_loglog_slope_vs_<last part of x>`` with a blank x.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import List

import numpy as np
import pandas as pd
from omegaconf import MISSING

from svmrepro.errors import SvmReproError
from svmrepro.report.registry import Option
from svmrepro.report.sections import Page
from svmrepro.report.spec import ReportSpec
from svmrepro.report.stats import loglog_fit

ORDER = 50


@dataclass
class SlopeNode:
    y: str = MISSING
    x: str = MISSING


OPTION = Option("slopes", List[SlopeNode], [], "a list of {y: <metric>, x: <column>}", unset=())


def configure(where: str, node) -> tuple[tuple[str, str], ...]:
    """(y metric, x column) pairs whose log-log slope per group the output reports."""
    return tuple((fit.y, fit.x) for fit in node.slopes)


def slope_name(y: str, x: str) -> str:
    return f"{y}_loglog_slope_vs_{x.split('.')[-1]}"


def loglog_slopes(runs: pd.DataFrame, spec: ReportSpec, paper: pd.DataFrame | None) -> pd.DataFrame:
    """One row per (group, fit): our slope over the runs with positive x and y, and the paper's; a
    group the paper gives a slope for and we have no runs of gets a row with 0 runs."""
    rows = []
    for y, x in spec.slopes:
        for column in (f"metrics.{y}", x):
            if column not in runs.columns:
                raise SvmReproError(f"{spec.experiment}: report.slopes asks for {column!r}, which no run logged")
        name = slope_name(y, x)
        groups = runs.groupby(runs[spec.group].astype(str), sort=True)
        for group, members in groups:
            fit = loglog_fit(pd.to_numeric(members[x], errors="coerce"),
                             pd.to_numeric(members[f"metrics.{y}"], errors="coerce"))
            rows.append({"group": group, "slope": name, "ours": fit.value, "runs": fit.n,
                         "paper": _paper(paper, group, name)})
        without_runs = [] if paper is None else paper.loc[paper["metric"] == name, "group"].astype(str)
        rows += [{"group": group, "slope": name, "ours": np.nan, "runs": 0, "paper": _paper(paper, group, name)}
                 for group in dict.fromkeys(without_runs) if group not in groups.groups]
    return pd.DataFrame(rows, columns=["group", "slope", "ours", "runs", "paper"])


def _paper(paper: pd.DataFrame | None, group: str, name: str) -> float:
    if paper is None:
        return np.nan
    match = paper[(paper["group"] == group) & (paper["metric"] == name)]
    return float(match["value"].iloc[0]) if not match.empty else np.nan


def slopes_markdown(slopes: pd.DataFrame) -> str:
    def cell(value: float) -> str:
        return "—" if pd.isna(value) else f"{value:.2f}"

    lines = ["| group | fit | runs | ours | paper |", "|---|---|---|---|---|"]
    lines += [
        f"| {r.group} | {r.slope} | {r.runs} | {cell(r.ours)} | {cell(r.paper)} |" for r in slopes.itertuples()
    ]
    return "\n".join(lines)


def lines(page: Page) -> list[str]:
    if not page.spec.slopes:
        return []
    return ["", "## Log-log slopes (least squares of log y on log x over each group's runs)", "",
            slopes_markdown(loglog_slopes(page.runs, page.spec, page.paper))]
