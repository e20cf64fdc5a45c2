"""Two groups compared on a metric, paired run by run: ``b / a`` (``stat: ratio``) or ``b - a``
(``stat: difference``).

.. code-block:: yaml

    test: {kind: compare, metric: fit_cpu_s, a: svc, b: cascade_svc, stat: ratio,
           x: params.dataset.n_train, at: all, by: tags.seed}

Runs pair when they share ``by`` (the seed) and, with ``x``, the value of ``x``. A side may name a
metric of its own: ``b: {group: cascade_svc, metric: critical_path_time_s}``, and the output whose runs it
reads (the claim's own when not given): ``a: {output: cascade/table1_today, group: svc_onedal}`` pairs the
runs of a companion output with the claim's, by seed and ``x``. A ratio is the
geometric mean of the pairs' ratios, its interval the t interval of their logarithms; a difference
is the mean of the pairs' differences. The p-value is a two-sided one-sample t test of those
(log) differences against 0 (a paired t test), the effect size their mean over their standard
deviation (Cohen's d_z).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Optional

import pandas as pd
from omegaconf import MISSING

from svmrepro.errors import SvmReproError
from svmrepro.report.claims.estimate import SEED_COLUMN, Estimate, column, group_column, group_runs, metric, select
from svmrepro.report.claims.selection import Selection
from svmrepro.report.stats import paired

STATS = ("ratio", "difference")
#: the keys of a side given as a mapping
SIDE_KEYS = ("group", "metric", "output")


@dataclass
class Test(Selection):
    """A ``compare`` test's arguments; a side (``a``, ``b``) is a group or ``{group, metric, output}``."""

    #: the metric of both sides (a side may name its own)
    metric: Optional[str] = None
    #: the reference side: a group, or ``{group: .., metric: ..}``
    a: Any = MISSING
    #: the side compared with it
    b: Any = MISSING
    #: ``ratio``: ``b / a``; ``difference``: ``b - a``
    stat: str = "ratio"
    #: the column whose equal values pair a run of ``a`` with one of ``b`` (the seed)
    by: str = SEED_COLUMN

    def sides(self) -> list[tuple[str, Any, str, Any]]:
        """Each side as (its group's key, group, its metric's key, metric): its own metric, else ``metric``."""
        found = []
        for name, side in (("a", self.a), ("b", self.b)):
            if isinstance(side, dict):
                own = "metric" in side
                found.append((f"{name}.group", side.get("group"), f"{name}.metric" if own else "metric",
                              side.get("metric", self.metric)))
            else:
                found.append((name, side, "metric", self.metric))
        return found

    def problems(self) -> list[tuple[str, str]]:
        found = super().problems()
        if self.stat not in STATS:
            found.append(("stat", f"{self.stat!r}; valid: {', '.join(STATS)}"))
        for name, side in (("a", self.a), ("b", self.b)):
            extra = sorted(set(side) - set(SIDE_KEYS)) if isinstance(side, dict) else []
            if extra:
                found.append((f"{name}.{extra[0]}", f"not a key of a side; valid: {', '.join(SIDE_KEYS)}"))
        for group_key, group, metric_key, measured in self.sides():
            if group is None or isinstance(group, (list, dict)):
                found.append((group_key, "expected a group (a value of group_column) or {group: .., metric: ..}"))
            elif not isinstance(measured, str):
                found.append((metric_key, "expected a metric name (metric, or the side's {group: .., metric: ..})"))
        return found

    def reads(self) -> list[tuple[str, str, list]]:
        return [*super().reads(), ("by", self.by, [])]

    def own(self) -> list[bool]:
        """Per side, whether it reads the claim's own output (what :mod:`..check` holds the test against)."""
        return [not (isinstance(side, dict) and side.get("output")) for side in (self.a, self.b)]

    def groups(self) -> list[tuple[str, Any]]:
        return [(key, group) for (key, group, _, _), own in zip(self.sides(), self.own()) if own]

    def metrics(self) -> list[tuple[str, str]]:
        return [(key, measured) for (_, _, key, measured), own in zip(self.sides(), self.own()) if own]


def outputs(test: dict) -> list[str | None]:
    """The outputs whose runs the test reads, ``a``'s then ``b``'s (None: the claim's own)."""
    return [side.get("output") if isinstance(side, dict) else None for side in (test.get("a"), test.get("b"))]

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


def evaluate(test: dict, runs: Mapping[str | None, pd.DataFrame], where: str) -> Estimate:
    stat = test.get("stat", "ratio")
    if stat not in STATS:
        raise SvmReproError(f"{where}.stat: {stat!r}; valid: {', '.join(STATS)}")
    keys = [test.get("by", SEED_COLUMN), *([test["x"]] if "x" in test else [])]
    kept = {name: select(runs[output], test, where) for name, output in zip(("a", "b"), outputs(test))}
    a, b = (_values(kept[name], test, name, keys, where) for name in ("a", "b"))
    pairs = pd.concat([a.rename("a"), b.rename("b")], axis=1, join="inner")
    (group_a, metric_a), (group_b, metric_b) = side(test, "a"), side(test, "b")
    named = metric_b if metric_a == metric_b else f"{metric_b} / {metric_a}"
    symbol = "/" if stat == "ratio" else "-"
    statistic = f"{named}: {group_b} {symbol} {group_a}"
    compared = paired(pairs["a"], pairs["b"], ratio=stat == "ratio")
    output_a, output_b = outputs(test)
    if output_a == output_b:  # one table: a run of both sides (two metrics of the same runs) counts once
        used = kept["a"][kept["a"][group_column(test)].astype(str).isin([group_a, group_b])]
    else:
        used = pd.concat([group_runs(kept["a"], test, group_a, where), group_runs(kept["b"], test, group_b, where)],
                         ignore_index=True)
    return Estimate.of(statistic, compared, used, "pairs", p_value=compared.p_value, effect=compared.effect)
