"""Ratios of one metric between groups at each x, e.g. fit time against LIBSVM's at the same n.

``report.ratios: {metric: fit_time_s, to: svr}`` divides each group's mean by the reference
group's mean at the same x; both means come from the same sweep, on the same machine.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import pandas as pd
from omegaconf import MISSING

from svmrepro.errors import ConfigError
from svmrepro.report.missing import require_runs, section_text
from svmrepro.report.registry import Option
from svmrepro.report.sections import Page
from svmrepro.report.spec import ReportSpec

ORDER = 40


@dataclass
class RatiosNode:
    metric: str = MISSING
    to: str = MISSING


OPTION = Option("ratios", Optional[RatiosNode], None, "{metric: <metric>, to: <group>}")


def configure(where: str, node) -> tuple[str, str] | None:
    """(metric, reference group) for a table of ratios to that group at each x."""
    asked = node.ratios
    if asked is None:
        return None
    if asked.metric not in node.metrics:  # a summarised metric, so check_columns covers it
        raise ConfigError(f"{where}: report.ratios compares {asked.metric!r}, which is not in report.metrics")
    return asked.metric, asked.to


def ratio_to(table: pd.DataFrame, metric: str, reference: str, section: str = "ratios") -> pd.DataFrame:
    """Rows of x, columns of groups (the reference's own, 1, included): mean ``metric`` of the group
    / mean of the ``reference`` group at the same x.

    A reference group without runs (the paper's rows of it have none) raises
    :class:`~svmrepro.report.missing.NotComputed`, naming ``section``."""
    wide = table[table["runs"] > 0].pivot(index="x", columns="group", values=f"{metric}_mean")
    require_runs(wide.columns, [reference], section)
    return wide.div(wide[reference], axis=0)


def ratios_to(table: pd.DataFrame, spec: ReportSpec) -> pd.DataFrame:
    """:func:`ratio_to` the output's reference group, without the reference's own column."""
    metric, reference = spec.ratios
    return ratio_to(table, metric, reference).drop(columns=reference)


def ratios_markdown(ratios: pd.DataFrame, spec: ReportSpec) -> str:
    metric, reference = spec.ratios
    groups = list(ratios.columns)
    lines = [f"| {spec.x_label or spec.x} | " + " | ".join(f"{g} / {reference}" for g in groups) + " |",
             "|" + "---|" * (len(groups) + 1)]
    for x, row in ratios.iterrows():
        lines.append(f"| {x:g} | " + " | ".join("—" if pd.isna(v) else f"{v:.3g}" for v in row) + " |")
    return f"{metric}, mean over seeds, as a ratio to {reference}:\n\n" + "\n".join(lines)


def ratios_text(table: pd.DataFrame, spec: ReportSpec) -> str:
    """The ratios as Markdown, or the line saying why there are none."""
    return section_text(lambda: ratios_markdown(ratios_to(table, spec), spec))


def lines(page: Page) -> list[str]:
    if not page.spec.ratios:
        return []
    return ["", "## Ratios", "", ratios_text(page.table, page.spec)]
