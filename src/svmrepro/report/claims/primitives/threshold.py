"""One group's mean of a metric, against a threshold or a band (the claim's ``expect``).

.. code-block:: yaml

    test: {kind: threshold, metric: test_error, group: gated_mixture}

The interval is the t interval of the mean over the selected runs.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from svmrepro.report.claims.estimate import Estimate, group_runs, metric, select
from svmrepro.report.claims.selection import OneGroup
from svmrepro.report.stats import t_interval


@dataclass
class Test(OneGroup):
    """A ``threshold`` test's arguments: ``metric`` and ``group``, and the runs' selection."""


def evaluate(test: dict, runs: pd.DataFrame, where: str) -> Estimate:
    mine = group_runs(select(runs, test, where), test, test.get("group"), where)
    values = metric(mine, test["metric"], where).dropna().to_numpy()
    return Estimate.of(f"mean {test['metric']} ({test.get('group')})", t_interval(values), mine)
