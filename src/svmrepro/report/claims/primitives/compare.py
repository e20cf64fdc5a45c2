"""Two groups compared on a metric, paired run by run: ``b / a`` (``stat: ratio``) or ``b - a``
(``stat: difference``).

.. code-block:: yaml

    test: {kind: compare, metric: fit_cpu_s, a: svc, b: cascade_svc, stat: ratio,
           x: params.dataset.n_train, at: all, by: tags.seed}

Runs pair when they share ``by`` (the seed) and, with ``x``, the value of ``x``. A side may name a
metric of its own: ``b: {group: cascade_svc, metric: critical_path_time_s}``, and the output whose runs it
reads (the claim's own when not given): ``a: {output: cascade/table1_today, group: svc_onedal}`` pairs the
runs of a companion output with the claim's, by seed and ``x``. A side may also list candidates,
``a: {faster_of: [{output: .., group: .., metric: ..}, ...]}``: on each problem it is the faster one, by the
rule of :mod:`..fastest`, which the estimate's ``choices`` record. A ratio is the
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
from svmrepro.report.claims.estimate import SEED_COLUMN, Estimate, column, group_runs, metric, select
from svmrepro.report.claims.fastest import Candidate, candidates, is_choice, label, pick, problems_of
from svmrepro.report.claims.selection import Selection
from svmrepro.report.stats import paired

STATS = ("ratio", "difference")
#: the keys of a side given as a mapping
SIDE_KEYS = ("group", "metric", "output")
#: the column that names a run, so a run both sides read counts once
RUN_ID = "run_id"


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
        """Each side as (its group's key, group, its metric's key, metric): its own metric, else ``metric``;
        a ``faster_of`` side as each of its candidates (keys ``a.faster_of[k].group``, ...)."""
        found = []
        for name, side in self._listed():
            if isinstance(side, dict):
                own = "metric" in side
                found.append((f"{name}.group", side.get("group"), f"{name}.metric" if own else "metric",
                              side.get("metric", self.metric)))
            else:
                found.append((name, side, "metric", self.metric))
        return found

    def _listed(self) -> list[tuple[str, Any]]:
        """(key, side) of each side, a ``faster_of`` side's candidates each on its own."""
        return [(f"{name}.faster_of[{k}]" if is_choice(side) else name, one)
                for name, side in (("a", self.a), ("b", self.b)) for k, one in enumerate(candidates(side))]

    def problems(self) -> list[tuple[str, str]]:
        found = super().problems()
        if self.stat not in STATS:
            found.append(("stat", f"{self.stat!r}; valid: {', '.join(STATS)}"))
        for name, side in (("a", self.a), ("b", self.b)):
            found += problems_of(side, name)
        if found:
            return found
        for name, side in self._listed():
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
        """Per side (a candidate of a ``faster_of`` side each), whether it reads the claim's own output (what
        :mod:`..check` holds the test against)."""
        return [not (isinstance(side, dict) and side.get("output")) for _, side in self._listed()]

    def groups(self) -> list[tuple[str, Any]]:
        return [(key, group) for (key, group, _, _), own in zip(self.sides(), self.own()) if own]

    def metrics(self) -> list[tuple[str, str]]:
        return [(key, measured) for (_, _, key, measured), own in zip(self.sides(), self.own()) if own]


def outputs(test: dict) -> list[str | None]:
    """The outputs whose runs the test reads, ``a``'s then ``b``'s, a ``faster_of`` side's candidates' each
    (None: the claim's own)."""
    found = [_output(one) for name in ("a", "b") for one in candidates(test.get(name))]
    return list(dict.fromkeys(found))


def _output(side) -> str | None:
    return side.get("output") if isinstance(side, dict) else None


def side(test: dict, name: str) -> tuple[str, str]:
    """(group, metric) of side ``name`` (``a`` or ``b``): a group alone takes the test's ``metric``; a
    ``faster_of`` side is named ``faster of <group>, <group>`` with its candidates' metric."""
    given = test.get(name)
    if is_choice(given):
        named = [side({**test, name: one}, name) for one in candidates(given)]
        metrics = {m for _, m in named}
        return "faster of " + " or ".join(g for g, _ in named), " or ".join(sorted(metrics))
    if isinstance(given, dict):
        return str(given["group"]), str(given.get("metric", test.get("metric")))
    return str(given), str(test.get("metric"))


def _values(runs: pd.DataFrame, test: dict, name: str, keys: list[str], where: str) -> pd.Series:
    group, measured = side(test, name)
    mine = group_runs(runs, test, group, where)
    frame = pd.DataFrame({k: column(mine, k, where).astype(str) for k in keys})
    frame["value"] = metric(mine, measured, where).to_numpy()
    return frame.dropna().groupby(keys)["value"].mean()


def _side_values(test: dict, runs: Mapping[str | None, pd.DataFrame], name: str, keys: list[str], where: str):
    """Side ``name``'s values per pairing key, the runs they come from, and (a ``faster_of`` side) its choices."""
    found = []
    for one in candidates(test.get(name)):
        single = {**test, name: one}
        kept = select(runs[_output(one)], single, where)
        group, measured = side(single, name)
        values = _values(kept, single, name, keys, where)
        mine = group_runs(kept, single, group, where)
        found.append(Candidate(label(group, mine, _output(one)), values, mine, measured))
    if not is_choice(test.get(name)):
        return found[0].values, found[0].runs, []
    return pick(name, found, test.get("x"), where)


def evaluate(test: dict, runs: Mapping[str | None, pd.DataFrame], where: str) -> Estimate:
    stat = test.get("stat", "ratio")
    if stat not in STATS:
        raise SvmReproError(f"{where}.stat: {stat!r}; valid: {', '.join(STATS)}")
    keys = [test.get("by", SEED_COLUMN), *([test["x"]] if "x" in test else [])]
    (a, used_a, chose_a), (b, used_b, chose_b) = (_side_values(test, runs, name, keys, where) for name in ("a", "b"))
    pairs = pd.concat([a.rename("a"), b.rename("b")], axis=1, join="inner")
    (group_a, metric_a), (group_b, metric_b) = side(test, "a"), side(test, "b")
    named = metric_b if metric_a == metric_b else f"{metric_b} / {metric_a}"
    symbol = "/" if stat == "ratio" else "-"
    statistic = f"{named}: {group_b} {symbol} {group_a}"
    compared = paired(pairs["a"], pairs["b"], ratio=stat == "ratio")
    used = pd.concat([used_a, used_b], ignore_index=True)
    # one table: a run of both sides (two metrics of the same runs) counts once
    used = used.drop_duplicates(RUN_ID if RUN_ID in used else None, ignore_index=True)
    return Estimate.of(statistic, compared, used, "pairs", p_value=compared.p_value, effect=compared.effect,
                       choices=tuple(chose_a + chose_b))
