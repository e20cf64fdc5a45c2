"""Whether a metric is flat or grows across ``x`` for one group: the least-squares line of the
metric on ``x``, its rise over the range of ``x`` relative to the metric's mean.

.. code-block:: yaml

    test: {kind: trend, metric: n_sv, x: params.dataset.n_train, group: cross_training}
    expect: {below: 0.5}    # "nearly flat": rises by less than half its mean over the range

A value of 0 is flat, 1 a rise by the mean over the range; the interval is the slope's t interval
scaled the same way.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
from omegaconf import MISSING

from svmrepro.report.claims.estimate import Estimate, column, group_runs, metric, select
from svmrepro.report.claims.selection import OneGroup
from svmrepro.report.stats import rise


@dataclass
class Test(OneGroup):
    """A ``trend`` test's arguments: ``metric``, ``x`` and ``group``, and the runs' selection."""

    x: str = MISSING


def evaluate(test: dict, runs: pd.DataFrame, where: str) -> Estimate:
    mine = group_runs(select(runs, test, where), test, test.get("group"), where)
    xs = pd.to_numeric(column(mine, test["x"], where), errors="coerce").to_numpy(float)
    ys = metric(mine, test["metric"], where).to_numpy(float)
    statistic = f"rise of {test['metric']} over {test['x'].split('.')[-1]} / its mean ({test.get('group')})"
    return Estimate.of(statistic, rise(xs, ys), mine)
