"""Aggregate runs into the table of one output, with the paper's numbers beside ours.

A paper file (``experiments/<paper>/*.csv``) has the columns ``group, x, metric, value, low,
high, source``: a single value or a range read off a plot; a blank ``x`` applies to every x.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd

from svmrepro.errors import SvmReproError
from svmrepro.report.spec import ReportSpec

PAPER_COLUMNS = ("group", "x", "metric", "value", "low", "high", "source")


def numeric_or_text(series: pd.Series) -> pd.Series:
    converted = pd.to_numeric(series, errors="coerce")
    return converted if converted.notna().all() else series.astype(str)


def _order(column: pd.Series) -> pd.Series:
    """Sort key of table rows: groups by number when all are numbers (d = 2, 5, 10, 20), else as text."""
    return numeric_or_text(column) if column.name == "group" else column


def x_label(value) -> str:
    """How an x value is written in tables and matched with the paper's: ``1.0`` -> ``1``."""
    if isinstance(value, (int, float, np.number)) and not isinstance(value, (bool, np.bool_)):
        return f"{value:g}"
    return str(value)


def check_columns(runs: pd.DataFrame, spec: ReportSpec) -> None:
    """Every column the spec names exists in the runs, or one line says which does not."""
    for column in (spec.x, spec.group, *(f"metrics.{m}" for m in spec.metrics)):
        if column not in runs.columns:
            logged = sorted(c.removeprefix("metrics.") for c in runs.columns if c.startswith("metrics."))
            raise SvmReproError(
                f"{spec.experiment}: the report asks for {column!r}, which no run logged; "
                f"logged metrics: {', '.join(logged) or 'none'}"
            )


def rows_from_metrics(runs: pd.DataFrame, pattern: str) -> pd.DataFrame:
    """One row per (run, ``row`` of ``pattern``): matching metrics renamed ``metrics.<metric>``.

    Rows are in the order their first metric appears; a run without any metric of a row has no
    such row. The run's params, tags and other columns repeat on each of its rows.
    """
    regex = re.compile(pattern)
    found = {c: regex.fullmatch(c.removeprefix("metrics.")) for c in runs.columns if c.startswith("metrics.")}
    found = {c: match for c, match in found.items() if match}
    if not found:
        raise SvmReproError(f"no logged metric matches rows_from_metrics {pattern!r}")
    others = [c for c in runs.columns if not c.startswith("metrics.")]
    pieces = []
    for row in dict.fromkeys(match["row"] for match in found.values()):
        columns = {f"metrics.{m['metric']}": runs[c] for c, m in found.items() if m["row"] == row}
        piece = pd.concat([runs[others], pd.DataFrame(columns)], axis=1).assign(row=row)
        pieces.append(piece.dropna(how="all", subset=list(columns)))
    return pd.concat(pieces, ignore_index=True)


def add_summary_rows(table: pd.DataFrame, spec: ReportSpec) -> pd.DataFrame:
    """A row ``x = spec.summary_row`` per group: the mean over its x of each metric's mean, the
    standard deviation of those means across x, and the group's run count; x becomes text."""
    table = table.assign(x=table["x"].map(x_label))
    grouped = table.groupby("group", sort=False)
    summary = grouped["runs"].sum().to_frame().assign(x=spec.summary_row)
    for metric in spec.metrics:
        summary[f"{metric}_mean"] = grouped[f"{metric}_mean"].mean()
        summary[f"{metric}_std"] = grouped[f"{metric}_mean"].std(ddof=1)
    out = pd.concat([table, summary.reset_index()[table.columns]], ignore_index=True)
    return out.sort_values("group", kind="stable", key=_order).reset_index(drop=True)


def summarise(runs: pd.DataFrame, spec: ReportSpec) -> pd.DataFrame:
    """Mean, standard deviation and count of each metric per (group, x); with
    ``rows_from_metrics`` the runs are first unfolded, with ``summary_row`` a row per group added."""
    if spec.rows_from_metrics:
        runs = rows_from_metrics(runs, spec.rows_from_metrics)
    check_columns(runs, spec)
    frame = runs.assign(group=runs[spec.group].astype(str), x=numeric_or_text(runs[spec.x]))
    grouped = frame.groupby(["group", "x"], sort=True)
    table = grouped.size().rename("runs").to_frame()
    for metric in spec.metrics:
        values = grouped[f"metrics.{metric}"]
        table[f"{metric}_mean"] = values.mean()
        table[f"{metric}_std"] = values.std(ddof=1)
    table = table.reset_index().sort_values(["group", "x"], key=_order, ignore_index=True)
    return add_summary_rows(table, spec) if spec.summary_row else table


def read_paper(path: Path) -> pd.DataFrame:
    paper = pd.read_csv(path, dtype={"group": str})
    missing = set(PAPER_COLUMNS) - set(paper.columns)
    if missing:
        raise SvmReproError(f"{path}: missing columns {sorted(missing)}; expected {list(PAPER_COLUMNS)}")
    return paper


def paper_text(row: pd.Series) -> str:
    if pd.notna(row["value"]):
        return f"{row['value']:g}"
    return f"{row['low']:g}–{row['high']:g}"


def with_paper(table: pd.DataFrame, paper: pd.DataFrame, spec: ReportSpec) -> pd.DataFrame:
    """Add ``<metric>_paper`` columns; paper points with no run of ours get rows of their own."""
    paper = paper[paper["metric"].isin(spec.metrics)]
    pointwise = paper[paper["x"].notna()].assign(x=lambda p: numeric_or_text(p["x"]))
    if not pd.api.types.is_numeric_dtype(table["x"]):
        pointwise = pointwise.assign(x=pointwise["x"].map(x_label))
    keys = pointwise[["group", "x"]].drop_duplicates()
    if not keys.empty and table["x"].dtype != keys["x"].dtype:
        keys = keys.astype({"x": table["x"].dtype})
        pointwise = pointwise.astype({"x": table["x"].dtype})
    out = table.merge(keys, on=["group", "x"], how="outer").sort_values(["group", "x"], key=_order)
    out["runs"] = out["runs"].fillna(0).astype(int)
    for metric in spec.metrics:
        column = pd.Series("", index=out.index, dtype=object)
        for _, row in paper[paper["metric"] == metric].iterrows():
            at = out["group"] == row["group"]
            if pd.notna(row["x"]):
                at &= out["x"] == pointwise.loc[row.name, "x"]
            column[at] = paper_text(row)
        out[f"{metric}_paper"] = column
    return out.reset_index(drop=True)


def _cell(mean: float, std: float) -> str:
    if pd.isna(mean):
        return "—"
    text = f"{mean:.4g}"
    return text if pd.isna(std) else f"{text} ± {std:.2g}"


def to_markdown(table: pd.DataFrame, spec: ReportSpec) -> str:
    has_paper = any(f"{m}_paper" in table for m in spec.metrics)
    header = [spec.group_label or spec.group.split(".")[-1], spec.x_label or spec.x, "runs"]
    for metric in spec.metrics:
        header.append(f"{metric} (ours)")
        if has_paper:
            header.append(f"{metric} (paper)")
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for _, row in table.iterrows():
        cells = [str(row["group"]), x_label(row["x"]), str(row["runs"])]
        for metric in spec.metrics:
            cells.append(_cell(row[f"{metric}_mean"], row[f"{metric}_std"]))
            if has_paper:
                cells.append(row.get(f"{metric}_paper", "") or "")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)
