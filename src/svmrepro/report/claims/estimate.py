"""What a claim primitive computes: a statistic of the runs with its 95 % interval, and the runs it read.

Every primitive selects its runs the same way (:func:`select`): ``where: {column: value}`` keeps the
runs whose column has that value (or one of a list of values), ``at`` (one x value or a list) the runs
at those values of the column ``x``; groups are values of the column ``group`` (``tags.algorithm`` unless set).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from svmrepro.errors import SvmReproError
from svmrepro.report.stats import Interval

GROUP_COLUMN = "tags.algorithm"
SEED_COLUMN = "tags.seed"


@dataclass
class Estimate:
    """``value`` with its interval ``[low, high]`` (NaN when too few runs give one) over ``n``
    observations (pairs of runs, or runs) of ``runs``; a p-value and an effect size where the
    primitive has them."""

    statistic: str
    value: float
    low: float
    high: float
    n: int
    runs: pd.DataFrame = field(repr=False)
    unit: str = "runs"
    p_value: float = float("nan")
    effect: float = float("nan")
    #: where a side took the faster of several solvers, what it took on each problem (:mod:`.fastest`)
    choices: tuple = field(default=(), repr=False)

    @property
    def has_interval(self) -> bool:
        return bool(np.isfinite(self.low) and np.isfinite(self.high))

    def text(self) -> str:
        if not np.isfinite(self.value):
            return f"{self.statistic}: no value ({self.n} {self.unit})"
        out = f"{self.statistic} = {self.value:.3g}"
        if self.has_interval:
            out += f" [{self.low:.3g}, {self.high:.3g}]"
        out += f" ({self.n} {self.unit}"
        if np.isfinite(self.p_value):
            out += f", p = {self.p_value:.2g}"
        if np.isfinite(self.effect):
            out += f", d = {self.effect:.2g}"
        return out + ")"

    @classmethod
    def of(cls, statistic: str, interval: Interval, runs: pd.DataFrame, unit: str = "runs", **tested) -> Estimate:
        """The estimate a primitive reports from an interval of :mod:`svmrepro.report.stats`."""
        return cls(statistic, interval.value, interval.low, interval.high, interval.n, runs, unit, **tested)


def column(runs: pd.DataFrame, name: str, where: str) -> pd.Series:
    if name not in runs.columns:
        raise SvmReproError(f"{where}: the runs have no column {name!r}")
    return runs[name]


def metric(runs: pd.DataFrame, name: str, where: str) -> pd.Series:
    """``metrics.<name>`` as numbers."""
    return pd.to_numeric(column(runs, f"metrics.{name}", where), errors="coerce")


def _same(values: pd.Series, wanted) -> pd.Series:
    as_numbers = pd.to_numeric(values, errors="coerce")
    try:
        number = float(wanted)
    except (TypeError, ValueError):
        return values.astype(str) == str(wanted)
    return np.isclose(as_numbers, number) | (values.astype(str) == str(wanted))


def select(runs: pd.DataFrame, test: dict, where: str) -> pd.DataFrame:
    """The runs ``test``'s ``where`` and ``at`` keep."""
    kept = runs
    for name, wanted in (test.get("where") or {}).items():
        values = column(kept, name, where)
        kept = kept[np.logical_or.reduce([_same(values, v) for v in (wanted if isinstance(wanted, list) else [wanted])])]
    at = test.get("at")
    if at is not None and at != "all":
        x = column(kept, test["x"], where) if "x" in test else None
        if x is None:
            raise SvmReproError(f"{where}: 'at' needs the column 'x'")
        values = at if isinstance(at, list) else [at]
        kept = kept[np.logical_or.reduce([_same(x, v) for v in values])]
    return kept


def group_column(test: dict) -> str:
    """The runs column whose values name a claim's groups: ``group_column`` or the default."""
    return test.get("group_column", GROUP_COLUMN)


def group_runs(runs: pd.DataFrame, test: dict, group: str, where: str) -> pd.DataFrame:
    return runs[column(runs, group_column(test), where).astype(str) == str(group)]
