"""The facts about an output's runs that prose would otherwise retype: its seeds, its x values
(the sizes) and whether its timings were taken alone on the machine.

They are written into the page's provenance lines from the runs table, so they cannot go stale
the way a hand-typed "one seed per size" or "the machine was shared" does when the runs change.
Whether a run had the machine to itself is the slot it held (its ``timing`` tag) and the timing protocol's load rule
(:func:`svmrepro.report.claims.verdict.loaded_runs`: the 1-minute load at its start and end at most
the cores + :data:`svmrepro.exclusive.LOAD_MARGIN`), the rule that makes a timing claim inconclusive.
"""

from __future__ import annotations

import pandas as pd

from svmrepro.exclusive import LOAD_MARGIN
from svmrepro.report.claims.estimate import SEED_COLUMN
from svmrepro.report.claims.verdict import LOAD_TAGS, loaded_runs, shared_runs
from svmrepro.report.spec import ReportSpec
from svmrepro.report.tables import numeric_or_text

#: columns whose value is the run's seed: an x among them makes the x line the seeds line
SEED_COLUMNS = (SEED_COLUMN, "params.seed")


def shown_value(value) -> str:
    """A seed or an x value as prose writes it: ``1000000``, not ``1e+06``."""
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() else f"{value:g}"
    return str(value)


def seeds_text(seeds) -> str:
    """``seed 0``, ``seeds 1, 2``, or a run of three or more whole numbers as ``seeds 0..9``."""
    ordered = sorted(numeric_or_text(pd.Series(sorted(set(map(str, seeds))))).tolist())
    if len(ordered) == 1:
        return f"seed {shown_value(ordered[0])}"
    whole = [int(s) for s in ordered if isinstance(s, (int, float)) and float(s).is_integer()]
    if len(whole) == len(ordered) >= 3 and whole == list(range(whole[0], whole[0] + len(whole))):
        return f"seeds {whole[0]}..{whole[-1]}"
    return "seeds " + ", ".join(shown_value(s) for s in ordered)


def seeds_line(runs: pd.DataFrame, spec: ReportSpec) -> list[str]:
    """The seeds, and the x values with the seeds each has (grouped when they differ)."""
    if SEED_COLUMN not in runs:
        return []
    seeds = runs[SEED_COLUMN].dropna()
    if spec.x in SEED_COLUMNS or spec.x not in runs:
        return [f"- {seeds_text(seeds)}"]
    name = spec.x_label or spec.x
    runs = runs.assign(_x=numeric_or_text(runs[spec.x]))
    by_x = {x: frozenset(group[SEED_COLUMN].dropna()) for x, group in runs.groupby("_x", sort=True)}
    by_seeds: dict[frozenset, list] = {}
    for x, seed_set in by_x.items():
        by_seeds.setdefault(seed_set, []).append(shown_value(x))
    if len(by_seeds) == 1:
        return [f"- {name}: {', '.join(by_seeds.popitem()[1])}; {seeds_text(seeds)} at each"]
    parts = [f"{', '.join(xs)} with {seeds_text(seed_set)}" for seed_set, xs in by_seeds.items()]
    return [f"- {name}: {'; '.join(parts)}"]


def timing_line(runs: pd.DataFrame) -> list[str]:
    """How many runs were timed on a loaded machine, by the load rule, and the highest load; a run
    that recorded no load at its end (runs made before the timing protocol) is not said to be alone."""
    shared = shared_runs(runs)
    if shared:
        return [f"- timings: {shared} of {len(runs)} runs were timed beside other runs (timing: shared): "
                "their times are not evidence"]
    if not any(tag in runs for tag in LOAD_TAGS) or "tags.cpu_count" not in runs:
        return ["- timings: the runs recorded no load, so whether they had the machine alone is unknown"]
    loaded, highest = loaded_runs(runs)
    cores = "/".join(sorted(runs["tags.cpu_count"].dropna().astype(str).unique()))
    above = f"1-minute load above the cores + {LOAD_MARGIN}"
    worst = f"(highest {highest:.2f}, {cores} cores)"
    unended = int(runs["tags.load_avg_1m_end"].isna().sum()) if "tags.load_avg_1m_end" in runs else len(runs)
    if loaded:
        line = (f"- timings: {loaded} of {len(runs)} runs shared the machine, a {above} at their start or end "
                f"{worst}: their times are not evidence")
    elif not unended:
        return [f"- timings: every run had the machine alone, no {above} at its start or end {worst}"]
    else:
        line = f"- timings: no run started at a {above} {worst}"
    if unended:
        line += f"; {unended} of {len(runs)} runs recorded no load at their end"
    return [line]


def facts_lines(runs: pd.DataFrame, spec: ReportSpec) -> list[str]:
    """The provenance lines that state the runs' seeds, x values and timing conditions."""
    return [*seeds_line(runs, spec), *timing_line(runs)]
