"""Paired comparison of two groups over runs that share x and a pairing key (e.g. the seed).

``report.paired: {metric: test_error, a: svc, b: cross_training_cv, by: params.seed}`` gives, per x,
the mean of b - a over the pairs and the p-value of a two-sided paired t-test
(:func:`svmrepro.report.stats.paired`), so a table says whether a difference between two methods on
the same splits is larger than the split noise.
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
from svmrepro.report.stats import paired
from svmrepro.report.tables import numeric_or_text

ORDER = 30


@dataclass
class PairedNode:
    metric: str = MISSING
    a: str = MISSING
    b: str = MISSING
    by: str = MISSING


OPTION = Option("paired", Optional[PairedNode], None, "{metric: <metric>, a: <group>, b: <group>, by: <column>}")


def configure(where: str, node) -> tuple[str, str, str, str] | None:
    """(metric, group a, group b, pairing column) for a paired comparison of b against a per x."""
    asked = node.paired
    if asked is None:
        return None
    if asked.metric not in node.metrics:  # a summarised metric, so check_columns covers it
        raise ConfigError(f"{where}: report.paired compares {asked.metric!r}, which is not in report.metrics")
    return asked.metric, asked.a, asked.b, asked.by


def paired_differences(runs: pd.DataFrame, spec: ReportSpec) -> pd.DataFrame:
    """Rows per x: number of pairs, mean and std of b - a, paired t-test p-value (NaN below 2 pairs).

    Without runs of ``a`` or of ``b`` it raises :class:`~svmrepro.report.missing.NotComputed`."""
    metric, a, b, by = spec.paired
    require_runs(set(runs[spec.group].astype(str)), [a, b], "paired comparison")
    frame = runs.assign(group=runs[spec.group].astype(str), x=numeric_or_text(runs[spec.x]))
    values = frame.pivot_table(index=["x", by], columns="group", values=f"metrics.{metric}", aggfunc="mean")
    rows = []
    for x, block in values.groupby(level="x", sort=True):
        if a not in block or b not in block:
            continue
        pairs = block[[a, b]].dropna()
        compared = paired(pairs[a], pairs[b])
        rows.append({"x": x, "pairs": compared.n, "mean_diff": compared.value, "std_diff": compared.std,
                     "p_value": compared.p_value})
    return pd.DataFrame(rows, columns=["x", "pairs", "mean_diff", "std_diff", "p_value"])


def paired_markdown(table: pd.DataFrame, spec: ReportSpec) -> str:
    metric, a, b, by = spec.paired

    def cell(value, fmt):
        return "—" if pd.isna(value) else format(value, fmt)

    lines = [f"{metric} of {b} minus {a}, paired by {by} (two-sided paired t-test):", "",
             f"| {spec.x_label or spec.x} | pairs | mean difference | std | p-value |", "|---|---|---|---|---|"]
    lines += [
        f"| {r.x} | {r.pairs} | {cell(r.mean_diff, '.4g')} | {cell(r.std_diff, '.2g')} | {cell(r.p_value, '.3g')} |"
        for r in table.itertuples()
    ]
    return "\n".join(lines)


def lines(page: Page) -> list[str]:
    if not page.spec.paired:
        return []
    return ["", "## Paired comparison", "",
            section_text(lambda: paired_markdown(paired_differences(page.runs, page.spec), page.spec))]
