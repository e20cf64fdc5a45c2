"""Today's baseline is the faster solver on each problem, by the rule of the claims files' legend (issue 45).

The rule is recomputed here from the committed runs CSVs with code of its own (pandas, not
:mod:`svmrepro.report.claims.fastest`), and every ``today_baseline`` / ``today_inside_with`` of
``results/claims.csv`` must name what it gives: a value set by hand, or by a changed rule, fails.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from svmrepro.report.claims.fastest import Candidate, named, pick
from svmrepro.report.claims.schema import load_claims

CHECKOUT = Path(__file__).resolve().parents[1]
RESULTS = CHECKOUT / "results"
PAPERS = ("cascade", "cross_training", "mixture", "potential_sv", "svr_decomposition")


def _runs(output: str) -> pd.DataFrame:
    return pd.read_csv(RESULTS / f"{output}.runs.csv", low_memory=False)


def _same(values: pd.Series, wanted) -> pd.Series:
    numbers = pd.to_numeric(values, errors="coerce")
    try:
        return numbers == float(wanted)
    except (TypeError, ValueError):
        return values.astype(str) == str(wanted)


def _winners(test: dict, side: str, own_output: str) -> dict[str, str]:
    """Problem -> ``group (output)`` of the faster candidate, by the legend's rule, computed from the CSVs."""
    assert set(test) <= {"kind", "metric", "a", "b", "stat", "x", "at", "where", "group_column", "by"}, sorted(test)
    group_column = test.get("group_column", "tags.algorithm")
    x = test.get("x")
    means: dict[str, dict[str, pd.Series]] = {}
    for candidate in test[side]["faster_of"]:
        output = candidate.get("output") or own_output
        runs = _runs(output)
        runs = runs[runs[group_column].astype(str) == str(candidate["group"])]
        for column, wanted in (test.get("where") or {}).items():
            wanted = wanted if isinstance(wanted, list) else [wanted]
            runs = runs[np.logical_or.reduce([_same(runs[column], v) for v in wanted])]
        at = test.get("at")
        if at is not None and at != "all":
            runs = runs[np.logical_or.reduce([_same(runs[x], v) for v in (at if isinstance(at, list) else [at])])]
        metric = f"metrics.{candidate.get('metric', test.get('metric'))}"
        frame = pd.DataFrame({"seed": runs["tags.seed"].astype(str),
                              "problem": runs[x].astype(str) if x else "all",
                              "value": pd.to_numeric(runs[metric], errors="coerce")}).dropna()
        experiment = runs["tags.experiment"].dropna().astype(str).unique()
        label = f"{candidate['group']} ({experiment[0] if len(experiment) == 1 else output})"
        for problem, rows in frame.groupby("problem"):
            means.setdefault(problem, {})[label] = rows.groupby("seed")["value"].mean()
    winners = {}
    for problem, by_label in means.items():
        shared = set.intersection(*(set(series.index) for series in by_label.values()))
        geo = {label: math.exp(np.log(series[sorted(shared)] if shared else series).mean())
               for label, series in by_label.items()}
        best = min(geo.values())
        winners[problem] = next(label for label in by_label if geo[label] == best)  # a tie: the first listed
    return winners


def _readings():
    table = pd.read_csv(RESULTS / "claims.csv")
    for paper in PAPERS:
        for claim in load_claims(paper):
            if claim.today is None or claim.today.test is None:
                continue
            row = table[(table.paper == paper) & (table.id == claim.id)].iloc[0]
            yield claim, row


def _named_groups(cell) -> set[str]:
    """The ``group (output)`` labels a claims.csv cell names (after each ``solver: ``)."""
    if not isinstance(cell, str):
        return set()
    return {part.rsplit(": ", 1)[-1].strip() for part in cell.split("; ")}


@pytest.mark.parametrize("claim,row", list(_readings()), ids=lambda v: getattr(v, "id", ""))
def test_today_baseline_names_the_faster_solver_of_each_problem(claim, row):
    tests = claim.today.tests(claim.test)
    today = tests["today"]
    sides = [side for side in ("a", "b") if isinstance(claim.today.test.get(side), dict)
             and "faster_of" in claim.today.test[side]]
    assert sides, f"{claim.id}: every today reading that replaces a baseline lists its candidates (faster_of)"
    if row.verdict_today == "not run":
        assert pd.isna(row.today_baseline)
        return
    expected = set()
    for side in sides:
        expected |= set(_winners(today, side, claim.output).values())
    assert _named_groups(row.today_baseline) == expected, (claim.id, row.today_baseline)
    inside = tests["inside"]
    if inside is not None and row.verdict_today_inside != "not run":
        method = [s for s in ("a", "b") if s not in sides and "faster_of" in (inside.get(s) or {})]
        wanted = set().union(*(set(_winners(inside, s, claim.output).values()) for s in method)) if method else set()
        assert _named_groups(row.today_inside_with) == wanted, (claim.id, row.today_inside_with)


def _candidate(label: str, seeds_values: dict[tuple[str, str], float], solver: str = "libsvm") -> Candidate:
    index = pd.MultiIndex.from_tuples(list(seeds_values), names=["tags.seed", "params.n"])
    runs = pd.DataFrame({"tags.seed": [s for s, _ in seeds_values], "params.n": [n for _, n in seeds_values],
                         "tags.solver": solver})
    return Candidate(label, pd.Series(list(seeds_values.values()), index=index), runs, "fit_time_s")


def test_the_faster_candidate_is_taken_per_problem_on_the_shared_seeds():
    slow_small = _candidate("a (x)", {("1", "10"): 2.0, ("2", "10"): 2.0, ("1", "20"): 1.0, ("2", "20"): 1.0,
                                      ("3", "20"): 100.0})
    fast_small = _candidate("b (y)", {("1", "10"): 1.0, ("2", "10"): 1.0, ("1", "20"): 4.0, ("2", "20"): 4.0},
                            solver="onedal")
    values, runs, choices = pick("a", [slow_small, fast_small], "params.n", "test")
    assert [(c.problem, c.chosen) for c in choices] == [("n = 10", "b (y)"), ("n = 20", "a (x)")]
    # seed 3 at n = 20 ran for one candidate only: the rule compares the shared seeds, so a slow outlier
    # of a seed the other never ran does not decide; the side keeps all of the winner's runs
    assert choices[1].seeds == 2 and choices[1].ratio == pytest.approx(4.0)
    assert len(values) == 5 and len(runs) == 5
    assert named(choices) == "n = 10: onedal, 1 thread: b (y); n = 20: libsvm, 1 thread: a (x)"


def test_a_tie_goes_to_the_candidate_listed_first():
    first = _candidate("first (x)", {("1", "10"): 1.0, ("2", "10"): 4.0})
    second = _candidate("second (y)", {("1", "10"): 2.0, ("2", "10"): 2.0}, solver="onedal")
    _, _, choices = pick("a", [first, second], "params.n", "test")  # geometric means 2 and 2
    assert choices[0].chosen == "first (x)"
    _, _, choices = pick("a", [second, first], "params.n", "test")
    assert choices[0].chosen == "second (y)"


def test_candidates_without_runs_give_an_empty_side_not_an_error():
    """A quick sweep may make none of a faster_of side's candidates (today's solvers are full-mode only): the
    side is empty, as any side without runs, and the scoreboard goes on (the quick reproduction ended with an
    IndexError here)."""
    empty = _candidate("a (x)", {})
    none_either = _candidate("b (y)", {}, solver="onedal")
    for x in ("params.n", None):
        values, runs, choices = pick("a", [empty, none_either], x, "test")
        assert values.empty and runs.empty and choices == []
