"""Each of our numbers beside the paper's number at the same (group, x, metric): the relative
distance, and whether it is within the paper's range or within 10 % of its value.

This is the number-by-number view of ``svmrepro-reproduce --check``; whether a claim holds is the
claims' business (:mod:`svmrepro.report.claims`), which weighs the runs' spread as well.
"""

from __future__ import annotations

import math

import pandas as pd

from svmrepro.errors import SvmReproError
from svmrepro.report.sections.slopes import loglog_slopes
from svmrepro.report.spec import ReportSpec
from svmrepro.report.tables import paper_text, read_paper, summarise, x_label

#: how close to a paper's single value (or to the nearer end of its range) counts as agreeing
TOLERANCE = 0.10
WITHIN_RANGE, WITHIN_TOLERANCE, DIFFERS, NO_RUNS = "within range", "within 10 %", "differs", "no runs"
#: the x of a log-log slope, which is fitted over all of a group's runs
SLOPE_X = "(fit)"
DISTANCE_COLUMNS = ("group", "x", "metric", "ours", "runs", "paper", "rel", "verdict")


def verdict(ours: float, value: float, low: float, high: float) -> tuple[str, float]:
    """Our mean against the paper's ``value``, or its range [``low``, ``high``] (a blank end is open).

    Returns ``within range``, ``within 10 %`` or ``differs``, and the signed distance from the
    paper's value (or the range's nearer end) relative to it, 0 inside the range.
    """
    ranged = pd.isna(value)
    low, high = (low, high) if ranged else (value, value)
    nearest = min(max(ours, -math.inf if pd.isna(low) else low), math.inf if pd.isna(high) else high)
    if ranged and nearest == ours:
        return WITHIN_RANGE, 0.0
    if nearest == 0:
        rel = 0.0 if ours == 0 else math.copysign(math.inf, ours)
    else:
        rel = (ours - nearest) / abs(nearest)
    return (WITHIN_TOLERANCE if abs(rel) <= TOLERANCE else DIFFERS), rel


def our_numbers(runs: pd.DataFrame, spec: ReportSpec, paper: pd.DataFrame) -> pd.DataFrame:
    """Our mean and run count per (group, x, metric) as the output's table has them, and each
    group's log-log slopes (x = ``(fit)``); x written as in tables (:func:`x_label`)."""
    table = summarise(runs, spec)
    parts = [table[["group", "x", "runs"]].assign(metric=m, ours=table[f"{m}_mean"]) for m in spec.metrics]
    if spec.slopes:
        slopes = loglog_slopes(runs, spec, paper).rename(columns={"slope": "metric"})
        parts.append(slopes[["group", "metric", "ours", "runs"]].assign(x=SLOPE_X))
    numbers = pd.concat(parts, ignore_index=True)
    return numbers.assign(x=numbers["x"].map(x_label))


def distances(ours: pd.DataFrame, paper: pd.DataFrame) -> pd.DataFrame:
    """Every paper number beside our mean at its (group, x, metric), with :func:`verdict`; a number
    with a blank x beside our mean at each x. A number we have no runs for gets one row ``no runs``."""
    rows = []
    for _, number in paper.iterrows():
        at = (ours["group"] == str(number["group"])) & (ours["metric"] == number["metric"]) & ours["ours"].notna()
        if pd.notna(number["x"]):
            at &= ours["x"] == x_label(number["x"])
        said = {"metric": number["metric"], "paper": paper_text(number)}
        if not at.any():
            rows.append({**said, "group": number["group"], "x": x_label(number["x"]) if pd.notna(number["x"]) else "",
                         "runs": 0, "verdict": NO_RUNS})
        for _, mine in ours[at].iterrows():
            word, rel = verdict(mine["ours"], number["value"], number["low"], number["high"])
            rows.append({**said, "group": mine["group"], "x": mine["x"], "ours": mine["ours"], "runs": mine["runs"],
                         "rel": rel, "verdict": word})
    return pd.DataFrame(rows, columns=DISTANCE_COLUMNS)


def distance_lines(spec: ReportSpec, runs: pd.DataFrame) -> list[str]:
    """The numbers part of a check: counts per word, then the compared numbers as a table."""
    paper_path = spec.paper_path()
    if paper_path is None:
        return ["numbers: the report names no paper numbers"]
    if runs.empty:
        return [f"numbers: no runs to set beside {spec.paper}"]
    paper = read_paper(paper_path)
    try:
        found = distances(our_numbers(runs, spec, paper), paper)
    except SvmReproError as exc:
        return [f"numbers: cannot compare: {exc}"]
    compared = found[found["verdict"] != NO_RUNS]
    counts = ", ".join(f"{n} {word}" for word, n in compared["verdict"].value_counts().items())
    head = f"numbers vs {spec.paper}: {counts or 'none compared'}; without runs of ours: {len(found) - len(compared)}"
    if compared.empty:
        return [head]
    shown = pd.DataFrame({
        "group": compared["group"], "x": compared["x"], "metric": compared["metric"],
        "ours (runs)": [f"{m:.4g} ({n})" for m, n in zip(compared["ours"], compared["runs"])],
        "paper": compared["paper"], "rel": [f"{r:+.0%}" if r else "" for r in compared["rel"]], "verdict": compared["verdict"],
    })
    return [head, *("  " + line for line in shown.to_string(index=False).splitlines())]
