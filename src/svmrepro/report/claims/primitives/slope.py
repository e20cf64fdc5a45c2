"""The log-log slope of a metric against ``x`` over one group's runs: the scaling exponent of
Laskov's "scaling factors" (least squares of log y on log x, Table 1).

.. code-block:: yaml

    test: {kind: slope, metric: fit_cpu_s, x: params.dataset.n_train, group: decomposition_svr}

Its interval is the slope's t interval (``n - 2`` degrees of freedom) from ``scipy.stats.linregress``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from omegaconf import MISSING
import pandas as pd
from scipy import stats

from svmrepro.report.claims.estimate import LEVEL, Estimate, column, group_runs, metric, select
from svmrepro.report.claims.selection import OneGroup


@dataclass
class Test(OneGroup):
    """A ``slope`` test's arguments: ``metric``, ``x`` and ``group``, and the runs' selection."""

    x: str = MISSING


def evaluate(test: dict, runs: pd.DataFrame, where: str) -> Estimate:
    mine = group_runs(select(runs, test, where), test, test.get("group"), where)
    xs = pd.to_numeric(column(mine, test["x"], where), errors="coerce").to_numpy(float)
    ys = metric(mine, test["metric"], where).to_numpy(float)
    usable = (xs > 0) & (ys > 0)
    xs, ys = np.log(xs[usable]), np.log(ys[usable])
    statistic = f"log-log slope of {test['metric']} vs {test['x'].split('.')[-1]} ({test.get('group')})"
    if np.unique(xs).size < 2:
        return Estimate(statistic, float("nan"), float("nan"), float("nan"), int(xs.size), mine)
    fit = stats.linregress(xs, ys)
    if xs.size < 3:
        return Estimate(statistic, float(fit.slope), float("nan"), float("nan"), int(xs.size), mine)
    half = stats.t.ppf(0.5 + LEVEL / 2, xs.size - 2) * fit.stderr
    return Estimate(statistic, float(fit.slope), float(fit.slope - half), float(fit.slope + half), int(xs.size), mine)
