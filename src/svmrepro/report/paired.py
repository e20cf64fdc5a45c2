"""Paired comparison of two groups over runs that share x and a pairing key (e.g. the seed).

``report.paired: {metric: test_error, a: svc, b: cross_training_cv, by: params.seed}`` gives, per x,
the mean of b - a over the pairs and the p-value of a two-sided paired t-test (scipy), so a table
says whether a difference between two methods on the same splits is larger than the split noise.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.stats import ttest_rel

from svmrepro.report.missing import require_runs
from svmrepro.report.spec import ReportSpec
from svmrepro.report.tables import numeric_or_text


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
        diff = (pairs[b] - pairs[a]).to_numpy()
        p_value = ttest_rel(pairs[b], pairs[a]).pvalue if len(pairs) >= 2 and np.any(diff != diff[0]) else np.nan
        rows.append({"x": x, "pairs": len(pairs), "mean_diff": diff.mean() if len(diff) else np.nan,
                     "std_diff": diff.std(ddof=1) if len(diff) >= 2 else np.nan, "p_value": p_value})
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
