"""The ratio panel of a figure: where a claim of the output tests a ratio (``kind: compare``,
``stat: ratio``) or its ``report.ratios`` names one, a panel of that ratio per x, ours as a line
and the paper's as hollow markers.

A ratio is read off the table of means (``b``'s mean / ``a``'s mean at each x), so it needs both
sides' metrics among the output's ``report.metrics`` and the claim's groups among the figure's. The
paper reports one time per fit: where the claim reads our CPU seconds (``fit_cpu_s``), the paper's
side of it is its time (``fit_time_s``), as the claims' regions were fixed from.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pandas as pd
from matplotlib.lines import Line2D

from svmrepro.report.claims.estimate import group_column
from svmrepro.report.claims.primitives.compare import side
from svmrepro.report.claims.schema import Claim
from svmrepro.report.labels import label
from svmrepro.report.spec import ReportSpec
from svmrepro.report.tables import x_label

#: how each ratio of a panel is drawn (the groups' colours stay theirs)
RATIO_STYLES = (("0.1", "o", "-"), ("0.45", "s", "--"), ("0.65", "^", ":"), ("0.3", "D", "-."), ("0.55", "v", "-"))
PAPER_NOTE = "(paper)"


@dataclass(frozen=True)
class Ratio:
    """``b / a``: each side a (group, metric) pair."""

    a: tuple[str, str]
    b: tuple[str, str]

    @property
    def text(self) -> str:
        (group_a, metric_a), (group_b, metric_b) = self.a, self.b
        if metric_a == metric_b:
            return f"{_words(metric_a)}: {group_b} / {group_a}"
        if group_a == group_b:
            return f"{group_a}: {_words(metric_b)} / {_words(metric_a)}"
        return f"{group_b} {_words(metric_b)} / {group_a} {_words(metric_a)}"


def _words(metric: str) -> str:
    """A metric's label without its unit: a ratio has none."""
    return re.sub(r" \([^)]*\)$", "", label(metric))


def claimed_ratios(claims: list[Claim], spec: ReportSpec, table: pd.DataFrame) -> list[Ratio]:
    """The ratios the output's claims test and its ``report.ratios`` lists (each group over the
    reference group) that the table can show, each once, claims first."""
    found = [Ratio(side(claim.test, "a"), side(claim.test, "b")) for claim in claims
             if claim.output == spec.experiment and claim.test.get("kind") == "compare"
             and claim.test.get("stat", "ratio") == "ratio" and group_column(claim.test) == spec.group]
    if spec.ratios:
        metric, reference = spec.ratios
        found += [Ratio((reference, metric), (group, metric)) for group in dict.fromkeys(table["group"].astype(str))
                  if group != reference]
    groups = set(table["group"].astype(str))
    drawable = [r for r in found if all(g in groups and f"{m}_mean" in table for g, m in (r.a, r.b))]
    return list(dict.fromkeys(drawable))


def _ours(table: pd.DataFrame, group: str, metric: str) -> pd.Series:
    rows = table[(table["group"].astype(str) == group) & (table["runs"] > 0)]
    return pd.Series(rows[f"{metric}_mean"].to_numpy(float), index=[x_label(x) for x in rows["x"]])


def _paper(paper: pd.DataFrame | None, group: str, metric: str) -> pd.Series:
    """The paper's single numbers of (group, metric) by x; its time where we read CPU seconds."""
    if paper is None:
        return pd.Series(dtype=float)
    for name in dict.fromkeys((metric, metric.replace("_cpu_s", "_time_s"))):
        rows = paper[(paper["group"].astype(str) == group) & (paper["metric"] == name)
                     & paper["value"].notna() & paper["x"].notna()]
        if not rows.empty:
            return pd.Series(rows["value"].to_numpy(float), index=[x_label(x) for x in rows["x"]])
    return pd.Series(dtype=float)


def ratio_values(table: pd.DataFrame, paper: pd.DataFrame | None, ratio: Ratio) -> tuple[pd.Series, pd.Series]:
    """(ours, the paper's) ``b / a`` by x label, where both sides have a number."""
    ours = (_ours(table, *ratio.b) / _ours(table, *ratio.a)).dropna()
    theirs = (_paper(paper, *ratio.b) / _paper(paper, *ratio.a)).dropna()
    return ours, theirs


def draw_ratios(ax, table: pd.DataFrame, paper: pd.DataFrame | None, ratios: list[Ratio], place,
                handles: dict, dodge: float = 0.0) -> list[float]:
    """Each ratio per x (``place(x label)`` on the panel's axis; ratios ``dodge`` apart side by
    side, for a categorical axis), a line at 1 (no change); the legend entries go to ``handles``.
    Returns every value drawn, for the axis's scale."""
    values: list[float] = []
    for k, ((colour, marker, dashes), ratio) in enumerate(zip(RATIO_STYLES * len(ratios), ratios)):
        def position(x, k=k):
            return place(x) + (k - (len(ratios) - 1) / 2) * dodge

        ours, theirs = ratio_values(table, paper, ratio)
        order = np.argsort([position(x) for x in ours.index], kind="stable")
        xs = np.array([position(x) for x in ours.index])[order]
        handles[f"ratio: {ratio.text}"] = ax.plot(xs, ours.to_numpy()[order], color=colour, marker=marker, ms=5,
                                                  ls=dashes)[0]
        if not theirs.empty:
            ax.plot([position(x) for x in theirs.index], theirs.to_numpy(), ls="none", color=colour, marker=marker,
                    mfc="none", mew=1.5, ms=9)
            handles[f"ratio: {ratio.text} {PAPER_NOTE}"] = Line2D([], [], ls="none", color=colour, marker=marker,
                                                                  mfc="none", mew=1.5, ms=8)
        values += [*ours, *theirs]
    ax.axhline(1.0, color="0.5", lw=0.8)
    ax.set_ylabel("ratio (b / a; 1 = equal)")
    return values
