"""The difference of two log-log slopes of a metric against ``x``, ``b - a``: whether a scaling
exponent is the same in two regimes (Laskov's "the SV-scaling factor is about the same whatever
the share of bounded SVs", his Tables 1 and 2), where two one-slope claims each test one regime and
nothing compares them.

.. code-block:: yaml

    test: {kind: slope_difference, metric: fit_cpu_s, x: metrics.n_free_sv,
           a: {output: svr_decomposition/table1_pva97nk_free, group: decomposition_svr},
           b: {output: svr_decomposition/table2_pva97nk_subset, group: decomposition_svr},
           at: [2000, 5000], at_column: params.dataset.n_train}
    expect: {between: [-0.3, 0.3]}

Each side is one group's runs (a value of ``group_column``), of its own ``output`` (the claim's
output when not given), with its own ``metric`` (``metric`` when not given): the claim's page reads
another output's runs table as it stands, and two methods' times may be compared as they scale
(``a: {group: svc, metric: fit_cpu_s}, b: {group: cascade_svc, metric: critical_path_cpu_s}``). ``where``
and ``at`` select the runs of both sides; ``at`` picks values of ``at_column`` (``x`` unless given),
so a slope against a measured ``x`` can still be restricted to the sizes where fixed overhead does
not dominate. A side may list candidates instead of one group, ``a: {faster_of: [{group: svc},
{output: cascade/scaling_today, group: svc_onedal}]}``: at each ``x`` it is the faster one, by the rule of
:mod:`..fastest`. Each slope is least squares of log y on log x; the two fits are independent, and the difference's
interval and p-value are :func:`svmrepro.report.stats.loglog_slope_difference`'s (Student's t on the
Welch-Satterthwaite degrees of freedom).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np
import pandas as pd
from omegaconf import MISSING, OmegaConf
from omegaconf.errors import OmegaConfBaseException

from svmrepro.errors import ConfigError
from svmrepro.report.claims.estimate import SEED_COLUMN, Estimate, column, group_runs, metric, select
from svmrepro.report.claims.fastest import FASTER_OF, Candidate, candidates, label, pick, problems_of
from svmrepro.report.claims.selection import Selection
from svmrepro.report.stats import loglog_slope_difference


@dataclass
class Side:
    group: Optional[str] = None  # one of group and faster_of
    output: Optional[str] = None  # None: the claim's own output
    metric: Optional[str] = None  # None: the test's
    #: instead of group: candidate sides ({group, output, metric}), the faster taken at each x (:mod:`..fastest`)
    faster_of: Optional[list[Any]] = None


@dataclass
class Test(Selection):
    kind: str = "slope_difference"
    metric: Optional[str] = None
    x: str = MISSING
    a: Side = field(default_factory=Side)
    b: Side = field(default_factory=Side)
    at_column: Optional[str] = None

    def problems(self) -> list[tuple[str, str]]:
        found = super().problems()
        for name, side in (("a", self.a), ("b", self.b)):
            if (side.group is None) == (side.faster_of is None):
                found.append((f"{name}.group", "give one of group and faster_of"))
            elif side.faster_of is not None:
                if side.output or side.metric:
                    found.append((f"{name}.faster_of", "a faster_of side names output and metric in each candidate"))
                found += problems_of({FASTER_OF: side.faster_of}, name)
        found += [(f"{name}.metric", "give metric, for the test or for this side") for name, side in self.sides()
                  if (side.metric or self.metric) is None]
        return found

    def sides(self) -> list[tuple[str, Side]]:
        """Each side, a ``faster_of`` side's candidates each on its own."""
        found = []
        for name, side in (("a", self.a), ("b", self.b)):
            if side.faster_of is None:
                found.append((name, side))
                continue
            for k, one in enumerate(side.faster_of):
                one = one if isinstance(one, dict) else {}
                found.append((f"{name}.faster_of[{k}]", Side(one.get("group"), one.get("output"), one.get("metric"))))
        return found

    def groups(self) -> list[tuple[str, Any]]:
        return [(f"{name}.group", side.group) for name, side in self.sides() if side.output is None]

    def metrics(self) -> list[tuple[str, str]]:
        return [(f"{name}.metric" if side.metric else "metric", side.metric or self.metric)
                for name, side in self.sides() if side.output is None and (side.metric or self.metric)]


def outputs(test: dict) -> list[str | None]:
    """The outputs whose runs the test reads, ``a``'s then ``b``'s, a ``faster_of`` side's candidates' each
    (None: the claim's own)."""
    return list(dict.fromkeys(one.get("output") if isinstance(one, dict) else None
                              for name in ("a", "b") for one in candidates(test.get(name))))


def _checked(test: dict, where: str) -> dict:
    """``test`` against :class:`Test`: a missing, unknown or mistyped key is one line naming it."""
    try:
        return OmegaConf.to_container(OmegaConf.merge(OmegaConf.structured(Test), test), throw_on_missing=True)
    except OmegaConfBaseException as exc:
        key = f".{exc.full_key}" if exc.full_key else ""
        raise ConfigError(f"{where}{key}: {str(exc).splitlines()[0]}") from None


def _points(runs: Mapping[str | None, pd.DataFrame], test: dict, side: str,
            where: str) -> tuple[np.ndarray, np.ndarray, pd.DataFrame, list]:
    """(x, metric, runs) of side ``side``, and where it lists candidates, each choice (:mod:`..fastest`)."""
    if test[side].get("faster_of") is None:
        mine = _side_runs(runs[test[side].get("output")], test, side, where)
        xs = pd.to_numeric(column(mine, test["x"], where), errors="coerce").to_numpy(float)
        return xs, metric(mine, _metric(test, side, where), where).to_numpy(float), mine, []
    found = []
    for one in test[side]["faster_of"]:
        single = {**test, side: {"group": None, "output": None, "metric": None, "faster_of": None, **one}}
        mine = _side_runs(runs[one.get("output")], single, side, where)
        keys = [column(mine, SEED_COLUMN, where).astype(str), column(mine, test["x"], where).astype(str)]
        values = pd.Series(metric(mine, _metric(single, side, where), where).to_numpy(float),
                           index=pd.MultiIndex.from_arrays(keys, names=[SEED_COLUMN, test["x"]]))
        found.append(Candidate(label(one["group"], mine, one.get("output")), values, mine,
                               _metric(single, side, where)))
    values, mine, choices = pick(side, found, test["x"], where)
    xs = pd.to_numeric(pd.Series(values.index.get_level_values(test["x"])), errors="coerce").to_numpy(float)
    return xs, values.to_numpy(float), mine, choices


def _side_runs(runs: pd.DataFrame, test: dict, side: str, where: str) -> pd.DataFrame:
    chosen = {"where": test.get("where"), "at": test.get("at"), "x": test.get("at_column", test["x"])}
    return group_runs(select(runs, chosen, where), test, test[side]["group"], where)


def _metric(test: dict, side: str, where: str) -> str:
    measured = test[side].get("metric") or test.get("metric")
    if measured is None:
        raise ConfigError(f"{where}.metric: give metric, for the test or for side {side}")
    return measured


def _name(test: dict, side: str) -> str:
    mine = test[side]
    if mine.get("faster_of") is not None:
        return "faster of " + " or ".join(_name({**test, side: {"output": None, "metric": None, **one}}, side)
                                          for one in mine["faster_of"])
    named = mine["group"] + (f" ({mine['output'].split('/')[-1]})" if mine.get("output") else "")
    return named + (f" {mine['metric']}" if mine.get("metric") else "")


def evaluate(test: dict, runs: Mapping[str | None, pd.DataFrame], where: str) -> Estimate:
    test = _checked(test, where)
    (xa, ya, read_a, chose_a), (xb, yb, read_b, chose_b) = (_points(runs, test, side, where) for side in ("a", "b"))
    measured = test["metric"] or "time"
    statistic = f"log-log slope of {measured} vs {test['x'].split('.')[-1]}: {_name(test, 'b')} - {_name(test, 'a')}"
    read = pd.concat([read_a, read_b], ignore_index=True)
    if "run_id" in read:
        read = read.drop_duplicates("run_id")
    found = loglog_slope_difference(xa, ya, xb, yb)
    return Estimate(statistic, found.value, found.low, found.high, found.n, read, p_value=found.p_value,
                    choices=tuple(chose_a + chose_b))
