"""Two groups compared on a metric, paired run by run: ``b / a`` (``stat: ratio``) or ``b - a``
(``stat: difference``).

.. code-block:: yaml

    test: {kind: compare, metric: fit_cpu_s, a: svc, b: cascade_svc, stat: ratio,
           x: params.dataset.n_train, at: all, by: tags.seed}

Runs pair when they share ``by`` (the seed) and, with ``x``, the value of ``x``. A side may name a
metric of its own: ``b: {group: cascade_svc, metric: critical_path_time_s}``. A ratio is the
geometric mean of the pairs' ratios, its interval the t interval of their logarithms; a difference
is the mean of the pairs' differences. The p-value is a two-sided one-sample t test of those
(log) differences against 0 (a paired t test), the effect size their mean over their standard
deviation (Cohen's d_z).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from svmrepro.errors import SvmReproError
from svmrepro.report.claims.estimate import (
    SEED_COLUMN, Estimate, column, group_column, group_runs, metric, select, t_interval,
)

STATS = ("ratio", "difference")


def side(test: dict, name: str) -> tuple[str, str]:
    """(group, metric) of side ``name`` (``a`` or ``b``): a group alone takes the test's ``metric``."""
    given = test.get(name)
    if isinstance(given, dict):
        return str(given["group"]), str(given.get("metric", test.get("metric")))
    return str(given), str(test.get("metric"))


def _values(runs: pd.DataFrame, test: dict, name: str, keys: list[str], where: str) -> pd.Series:
    group, measured = side(test, name)
    mine = group_runs(runs, test, group, where)
    frame = pd.DataFrame({k: column(mine, k, where).astype(str) for k in keys})
    frame["value"] = metric(mine, measured, where).to_numpy()
    return frame.dropna().groupby(keys)["value"].mean()


def evaluate(test: dict, runs: pd.DataFrame, where: str) -> Estimate:
    stat = test.get("stat", "ratio")
    if stat not in STATS:
        raise SvmReproError(f"{where}.stat: {stat!r}; valid: {', '.join(STATS)}")
    kept = select(runs, test, where)
    keys = [test.get("by", SEED_COLUMN), *([test["x"]] if "x" in test else [])]
    a, b = (_values(kept, test, name, keys, where) for name in ("a", "b"))
    pairs = pd.concat([a.rename("a"), b.rename("b")], axis=1, join="inner")
    (group_a, metric_a), (group_b, metric_b) = side(test, "a"), side(test, "b")
    named = metric_b if metric_a == metric_b else f"{metric_b} / {metric_a}"
    symbol = "/" if stat == "ratio" else "-"
    statistic = f"{named}: {group_b} {symbol} {group_a}"
    if stat == "ratio":
        usable = pairs[(pairs["a"] > 0) & (pairs["b"] > 0)]
        diffs = np.log(usable["b"] / usable["a"]).to_numpy()
    else:
        diffs = (pairs["b"] - pairs["a"]).to_numpy()
    mean, low, high = t_interval(diffs)
    spread = diffs.std(ddof=1) if diffs.size >= 2 else np.nan
    p_value = stats.ttest_1samp(diffs, 0.0).pvalue if diffs.size >= 2 and spread > 0 else np.nan
    effect = mean / spread if diffs.size >= 2 and spread > 0 else np.nan
    if stat == "ratio":
        mean, low, high = np.exp([mean, low, high])
    used = kept[kept[group_column(test)].astype(str).isin([group_a, group_b])]
    return Estimate(statistic, float(mean), float(low), float(high), int(diffs.size), used, "pairs",
                    float(p_value), float(effect))
