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

import pandas as pd

from svmrepro.errors import SvmReproError
from svmrepro.report.claims.estimate import SEED_COLUMN, Estimate, column, group_column, group_runs, metric, select
from svmrepro.report.stats import paired

STATS = ("ratio", "difference")


def _side(test: dict, name: str) -> tuple[str, str]:
    side = test.get(name)
    if isinstance(side, dict):
        return str(side["group"]), str(side.get("metric", test.get("metric")))
    return str(side), str(test.get("metric"))


def _values(runs: pd.DataFrame, test: dict, name: str, keys: list[str], where: str) -> pd.Series:
    group, measured = _side(test, name)
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
    a, b = (_values(kept, test, side, keys, where) for side in ("a", "b"))
    pairs = pd.concat([a.rename("a"), b.rename("b")], axis=1, join="inner")
    (group_a, metric_a), (group_b, metric_b) = _side(test, "a"), _side(test, "b")
    named = metric_b if metric_a == metric_b else f"{metric_b} / {metric_a}"
    symbol = "/" if stat == "ratio" else "-"
    statistic = f"{named}: {group_b} {symbol} {group_a}"
    compared = paired(pairs["a"], pairs["b"], ratio=stat == "ratio")
    used = kept[kept[group_column(test)].astype(str).isin([group_a, group_b])]
    return Estimate.of(statistic, compared, used, "pairs", p_value=compared.p_value, effect=compared.effect)
