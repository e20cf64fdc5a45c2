"""The solver a user of today would pick: the faster of those a side of a compare test names (issue 45).

A side of a ``compare`` test (:mod:`.primitives.compare`) may list candidates instead of one group:

.. code-block:: yaml

    a: {faster_of: [{output: cascade/table1, group: svc, metric: fit_time_s},
                    {output: cascade/table1_today_cores, group: svc_onedal_2threads, metric: fit_time_s}]}

Each candidate is a side as a compare test takes it (``group``, and ``metric`` and ``output`` where they
are not the test's). The rule, stated in every claims file's legend and applied here alone:

- a **problem** is one value of the test's ``x`` (the whole selection when the test has none);
- on each problem the side is the candidate with the lower **geometric mean of the side's metric over
  the seeds every candidate ran there** (over its own seeds where they share none); a tie goes to the
  candidate listed first;
- the side's runs on that problem are that candidate's, paired with the other side's as any side's are.

Each choice is kept as a :class:`Choice` (the problem, the candidate chosen with its solver and threads as
its runs record them, and how much slower the next candidate was, with the 95 % interval of that ratio
over the shared seeds), so a page and ``claims.csv`` say which solver each reading was judged against.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from svmrepro.errors import SvmReproError
from svmrepro.report.stats import paired

FASTER_OF = "faster_of"
#: the columns a candidate's solver and threads are read from (runs made before the solver tag have the
#: estimator's ``_target_`` only)
SOLVER_COLUMN, THREADS_COLUMN = "tags.solver", "params.algorithm.n_jobs"
TARGETS = {"sklearnex.": "onedal", "sklearn.svm.": "libsvm"}


def is_choice(side) -> bool:
    """Whether a test's side lists candidates (``{faster_of: [...]}``)."""
    return isinstance(side, dict) and side.get(FASTER_OF) is not None


def candidates(side) -> list:
    """The candidates of a ``faster_of`` side, each as a side; the side itself when it is one."""
    return list(side[FASTER_OF]) if is_choice(side) else [side]


def problems_of(side, where: str) -> list[tuple[str, str]]:
    """What is wrong with a ``faster_of`` side: (key, problem) pairs, empty when it is well formed."""
    if not is_choice(side):
        return []
    listed = side[FASTER_OF]
    if {k for k, v in side.items() if v is not None} != {FASTER_OF}:
        return [(f"{where}.{sorted(set(side) - {FASTER_OF})[0]}", f"a {FASTER_OF} side has no other key")]
    if not isinstance(listed, list) or len(listed) < 2:
        return [(f"{where}.{FASTER_OF}", "expected a list of at least two sides ({group: .., metric: .., output: ..})")]
    return [(f"{where}.{FASTER_OF}[{k}]", "expected {group: .., metric: .., output: ..}")
            for k, one in enumerate(listed) if not isinstance(one, dict) or "group" not in one]


def solver_of(runs: pd.DataFrame) -> str:
    """``libsvm, 1 thread`` / ``onedal, 2 threads``: the solver the runs fitted with (their ``solver`` tag,
    else the SVM class their config names) and, for a solver fitted directly rather than inside a method
    (no ``params.algorithm.estimator.*``), its threads (LIBSVM has one)."""
    solver = _one(runs, SOLVER_COLUMN)
    if solver is None:
        targets = [c for c in runs.columns if c.startswith("params.algorithm") and c.endswith("_target_")]
        named = {str(v) for c in targets for v in runs[c][_given(runs[c])]}
        found = sorted({name for value in named for prefix, name in TARGETS.items() if value.startswith(prefix)})
        solver = "+".join(found) if found else None
    if solver is None:
        return "no SVM solver"
    if any(_given(runs[c]).any() for c in runs.columns if c.startswith("params.algorithm.estimator.")):
        return solver  # a method: its workers are its own setting, not the solver's threads
    threads = pd.to_numeric(runs[THREADS_COLUMN], errors="coerce").dropna() if THREADS_COLUMN in runs else None
    count = 1 if solver != "onedal" or threads is None or threads.empty else int(threads.max())
    return f"{solver}, {count} thread{'s' if count != 1 else ''}"


def _given(values: pd.Series) -> pd.Series:
    """Which of ``values`` a run set (a runs table writes an unset value as empty or missing)."""
    return values.notna() & (values.astype(str).str.strip() != "")


def _one(runs: pd.DataFrame, name: str) -> str | None:
    values = runs[name][_given(runs[name])].astype(str).unique() if name in runs else []
    return "+".join(sorted(values)) if len(values) else None


@dataclass(frozen=True)
class Choice:
    """The candidate a ``faster_of`` side took on one problem."""

    side: str
    #: ``all``, or ``<x column> = <value>``
    problem: str
    #: the metric the candidates were compared on
    metric: str
    #: the candidate taken: ``svc (cascade/table1)``
    chosen: str
    #: its solver and threads (:func:`solver_of`)
    solver: str
    #: the fastest of the others, and its geometric mean over the chosen one's on the shared seeds (>= 1)
    next_best: str
    ratio: float
    low: float
    high: float
    seeds: int

    def text(self) -> str:
        """``all: libsvm, 1 thread: svc (cascade/table1); 11.2x [10.5, 11.9] faster than onedal, ...``."""
        spread = f" [{self.low:.3g}, {self.high:.3g}]" if np.isfinite(self.low) and np.isfinite(self.high) else ""
        ratio = f"{self.ratio:.3g}x{spread}" if np.isfinite(self.ratio) else "no shared seed:"
        return f"{self.problem}: {self.solver}: {self.chosen}; {ratio} faster than {self.next_best}"


@dataclass(frozen=True)
class Candidate:
    """One candidate of a side as the test reads it: its label (``group (output)``), its metric's value per
    pairing key (seed, and ``x``), and its runs."""

    label: str
    values: pd.Series
    runs: pd.DataFrame
    metric: str = ""


def pick(side: str, found: list[Candidate], x: str | None, where: str) -> tuple[pd.Series, pd.DataFrame, list[Choice]]:
    """The side's values and runs, problem by problem the faster candidate's (the module's rule), and each choice."""
    if not found:
        raise SvmReproError(f"{where}.{side}.{FASTER_OF}: no candidate")
    level = x if x is not None and x in found[0].values.index.names else None
    problems = sorted({p for c in found for p in (c.values.index.get_level_values(level) if level else ["all"])},
                      key=_order)
    values, runs, choices = [], [], []
    for problem in problems:
        here = [(c, _at(c.values, level, problem)) for c in found]
        here = [(c, v) for c, v in here if not v.empty]
        if not here:  # no candidate has a run there (a quick sweep without today's solvers, say): nothing to take
            continue
        seeds = _seeds(here[0][1])
        for _, v in here[1:]:
            seeds &= _seeds(v)
        means = [_geometric_mean(_on(v, seeds) if seeds else v) for _, v in here]
        best = int(np.nanargmin(means)) if np.isfinite(means).any() else 0
        chosen, chosen_values = here[best]
        values.append(chosen_values)
        runs.append(_runs_at(chosen.runs, level, problem))
        choices.append(_choice(side, problem if level else "all", level, here, best, seeds))
    if not values:  # no candidate has a run: the side is empty, and the test reads it as any side without runs
        return found[0].values.iloc[:0], found[0].runs.iloc[:0], choices
    return pd.concat(values), pd.concat(runs, ignore_index=True), choices


def _choice(side: str, problem, level: str | None, here: list, best: int, seeds: set) -> Choice:
    chosen, chosen_values = here[best]
    others = [(c, v) for k, (c, v) in enumerate(here) if k != best]
    named = f"{level.removeprefix('params.')} = {problem}" if level else "all"
    if not others:
        return Choice(side, named, chosen.metric, chosen.label, solver_of(chosen.runs), "no other candidate", np.nan,
                      np.nan, np.nan, len(seeds))
    runner_up, runner_values = min(others, key=lambda cv: _geometric_mean(_on(cv[1], seeds) if seeds else cv[1]))
    shared = sorted(seeds)
    if shared:
        compared = paired(_on(chosen_values, seeds).to_numpy(), _on(runner_values, seeds).to_numpy(), ratio=True)
        ratio, low, high = compared.value, compared.low, compared.high
    else:
        ratio = low = high = np.nan
    return Choice(side, named, chosen.metric, chosen.label, solver_of(chosen.runs),
                  f"{solver_of(runner_up.runs)}: {runner_up.label}", ratio, low, high, len(shared))


def _order(value):
    try:
        return (0, float(value), "")
    except (TypeError, ValueError):
        return (1, 0.0, str(value))


def _at(values: pd.Series, level: str | None, problem) -> pd.Series:
    return values if level is None else values[values.index.get_level_values(level) == problem]


def _runs_at(runs: pd.DataFrame, level: str | None, problem) -> pd.DataFrame:
    return runs if level is None or level not in runs else runs[runs[level].astype(str) == str(problem)]


def _seeds(values: pd.Series) -> set:
    return set(values.index.get_level_values(0))


def _on(values: pd.Series, seeds: set) -> pd.Series:
    """``values`` of the shared seeds, in seed order (so two candidates' values pair position by position)."""
    kept = values[values.index.get_level_values(0).isin(seeds)]
    return kept.groupby(level=0).mean().sort_index()


def _geometric_mean(values: pd.Series) -> float:
    positive = values[values > 0]
    return float(np.exp(np.log(positive).mean())) if len(positive) else np.nan


def label(group: str, runs: pd.DataFrame, output: str | None) -> str:
    """``svc (cascade/table1)``: a candidate by its group and the experiment whose runs it reads."""
    named = _one(runs, "tags.experiment") or output
    return f"{group} ({named})" if named else str(group)


def named(choices: list[Choice] | tuple[Choice, ...]) -> str:
    """What a side took, in words: ``libsvm, 1 thread: svc (cascade/table1)`` where one candidate won every
    problem, else each problem's (``n_train_per_class = 5000: ...; ...``); empty without a choice."""
    taken = [f"{c.solver}: {c.chosen}" for c in choices]
    if len(set(taken)) <= 1:
        return taken[0] if taken else ""
    return "; ".join(f"{c.problem}: {t}" for c, t in zip(choices, taken))
