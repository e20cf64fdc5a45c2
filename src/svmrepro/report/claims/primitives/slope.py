"""The log-log slope of a metric against ``x`` over one group's runs: the scaling exponent of
Laskov's "scaling factors" (least squares of log y on log x, Table 1).

.. code-block:: yaml

    test: {kind: slope, metric: fit_cpu_s, x: params.dataset.n_train, group: decomposition_svr}

Its interval is the slope's t interval (``n - 2`` degrees of freedom) from ``scipy.stats.linregress``.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
from omegaconf import MISSING

from svmrepro.report.claims.estimate import Estimate, column, group_runs, metric, select
from svmrepro.report.claims.selection import OneGroup
from svmrepro.report.stats import loglog_fit


@dataclass
class Test(OneGroup):
    """A ``slope`` test's arguments: ``metric``, ``x`` and ``group``, and the runs' selection."""

    x: str = MISSING


def evaluate(test: dict, runs: pd.DataFrame, where: str) -> Estimate:
    mine = group_runs(select(runs, test, where), test, test.get("group"), where)
    xs = pd.to_numeric(column(mine, test["x"], where), errors="coerce").to_numpy(float)
    ys = metric(mine, test["metric"], where).to_numpy(float)
    statistic = f"log-log slope of {test['metric']} vs {test['x'].split('.')[-1]} ({test.get('group')})"
    return Estimate.of(statistic, loglog_fit(xs, ys), mine)
