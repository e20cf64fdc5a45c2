"""One block per machine: timings read only beside the machine that made them.

A benchmark run on several machines (``bench/parallel_hardware``: every method serial and on every
core) has runs of each in its runs table; averaging their timings would mean nothing. ``report.machines``
gives each machine, named by its runs' ``cpu_count`` and ``cpu_model`` tags
(:mod:`svmrepro.environment`), a table of its own, fewest cores first: per group and x the mean ± std of
``metrics``, and ``relative.metric`` divided by that of each ``relative.to`` group on the same machine at
the same x (:func:`svmrepro.report.sections.ratios.ratio_to`). With ``figure`` set, ``<id>.machines.png``
draws that metric against x per group, one panel per machine. The runs table holds every machine's runs
side by side because a fit on every core is a configuration of its own on each machine
(:mod:`svmrepro.identity`).

    machines:
      metrics: [fit_s_serial, fit_s_parallel, speedup, test_error]
      relative: {metric: fit_s_parallel, to: [bench_hardware_svc_onedal, bench_hardware_svc]}
      figure: fit_s_parallel
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import List, Optional

import numpy as np
import pandas as pd
from omegaconf import MISSING

from svmrepro.environment import CPU_COUNT_TAG, CPU_MODEL_TAG
from svmrepro.errors import ConfigError
from svmrepro.report.figure_keys import figure_key, is_current
from svmrepro.report.figures import PANEL_HEIGHT, PANEL_WIDTH, legend_outside, plt, save_figure
from svmrepro.report.labels import label
from svmrepro.report.missing import NotComputed
from svmrepro.report.registry import Option
from svmrepro.report.sections import Page
from svmrepro.report.sections.ratios import ratio_to
from svmrepro.report.spec import ReportSpec
from svmrepro.report.tables import summarise, to_markdown
from svmrepro.report.ticks import log_ticks, spans_decades

ORDER = 45
#: the runs-table columns naming a run's machine
MACHINE_COLUMNS = (f"tags.{CPU_COUNT_TAG}", f"tags.{CPU_MODEL_TAG}")


@dataclass
class RelativeNode:
    metric: str = MISSING
    to: List[str] = MISSING


@dataclass
class MachinesNode:
    metrics: List[str] = MISSING
    relative: Optional[RelativeNode] = None
    figure: Optional[str] = None


OPTION = Option("machines", Optional[MachinesNode], None,
                "{metrics: [<metric>, ...], relative: {metric: <metric>, to: [<group>, ...]}, figure: <metric>}")


@dataclass(frozen=True)
class MachinesSpec:
    """The metrics of each machine's table, the metric divided by each reference group's, and the
    metric drawn per machine (None: no figure)."""

    metrics: tuple[str, ...]
    relative_metric: str | None = None
    relative_to: tuple[str, ...] = ()
    figure: str | None = None


def configure(where: str, node) -> MachinesSpec | None:
    asked = node.machines
    if asked is None:
        return None
    if not asked.metrics:
        raise ConfigError(f"{where}: report.machines.metrics must list the metrics of each machine's table")
    relative = asked.relative
    for key, metric in (("relative.metric", relative and relative.metric), ("figure", asked.figure)):
        if metric is not None and metric not in asked.metrics:
            raise ConfigError(f"{where}: report.machines.{key} is {metric!r}, which is not in report.machines.metrics")
    if relative is not None and not relative.to:
        raise ConfigError(f"{where}: report.machines.relative.to must list the groups {relative.metric} is divided by")
    return MachinesSpec(tuple(asked.metrics), relative and relative.metric, tuple(relative.to) if relative else (),
                        asked.figure)


def machine_blocks(runs: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    """(title, runs) of each machine, fewest cores first; a table without the machine tags raises
    :class:`~svmrepro.report.missing.NotComputed`."""
    missing = [column for column in MACHINE_COLUMNS if column not in runs]
    if missing:
        raise NotComputed(f"no run recorded {', '.join(missing)}: no table per machine")
    count, model = MACHINE_COLUMNS
    named = runs.assign(_cores=pd.to_numeric(runs[count], errors="coerce"))
    blocks = named.groupby([count, model], sort=False, dropna=False)
    ordered = sorted(blocks, key=lambda item: (np.nan_to_num(item[1]["_cores"].iloc[0], nan=np.inf), str(item[0][1])))
    return [(f"{cores} cores: {cpu}", members.drop(columns="_cores")) for (cores, cpu), members in ordered]


def machine_table(runs: pd.DataFrame, spec: ReportSpec) -> tuple[pd.DataFrame, list[str]]:
    """The summary of one machine's runs (:func:`~svmrepro.report.tables.summarise` of the section's
    metrics) with a column ``<metric> / <group>`` per reference group, and the lines saying which
    reference has no runs there."""
    asked = spec.machines
    table = summarise(runs, replace(spec, metrics=asked.metrics))
    notes = []
    for reference in asked.relative_to:
        name = f"{asked.relative_metric} / {reference}"
        try:
            wide = ratio_to(table, asked.relative_metric, reference, "ratio")
            table[f"{name}_mean"] = [wide.at[x, group] for group, x in zip(table["group"], table["x"])]
        except NotComputed as exc:
            table[f"{name}_mean"] = np.nan
            notes.append(str(exc))
        table[f"{name}_std"] = np.nan
    return table, notes


def shown_metrics(spec: ReportSpec) -> tuple[str, ...]:
    asked = spec.machines
    return (*asked.metrics, *(f"{asked.relative_metric} / {reference}" for reference in asked.relative_to))


def machines_markdown(runs: pd.DataFrame, spec: ReportSpec) -> tuple[str, list[tuple[str, pd.DataFrame]]]:
    """The blocks' Markdown and (title, summary table) of each machine."""
    shown = replace(spec, metrics=shown_metrics(spec))
    parts, tables = [], []
    for title, members in machine_blocks(runs):
        table, notes = machine_table(members, spec)
        tables.append((title, table))
        parts += [f"### {title}", "", to_markdown(table, shown),
                  *(["", *notes] if notes else []), ""]
    return "\n".join(parts).rstrip(), tables


def draw_machines(tables: list[tuple[str, pd.DataFrame]], spec: ReportSpec, path: Path) -> None:
    """``spec.machines.figure`` against x, a line per group, one panel per machine (unless ``path`` is that
    figure already)."""
    key = figure_key("machines", tables, spec)
    if is_current(path, key):
        return
    metric = spec.machines.figure
    groups = sorted({str(g) for _, table in tables for g in table["group"]})
    colours = dict(zip(groups, plt.get_cmap("tab10").colors))
    fig, axes = plt.subplots(1, len(tables), figsize=(PANEL_WIDTH * len(tables) + 2.5, PANEL_HEIGHT), squeeze=False,
                             sharey=True)  # machines side by side on one scale
    for ax, (title, table) in zip(axes.flat, tables):
        for group, rows in table[table["runs"] > 0].groupby("group", sort=True):
            rows = rows.sort_values("x")
            std = rows[f"{metric}_std"].to_numpy(float)
            ax.errorbar(rows["x"].astype(float), rows[f"{metric}_mean"].astype(float), color=colours[str(group)],
                        yerr=np.nan_to_num(std) if np.isfinite(std).any() else None, marker="o", ms=5, capsize=3,
                        label=str(group))
        values = table[f"{metric}_mean"].to_numpy(float)
        if spec.logx:
            ax.set_xscale("log")
            log_ticks(ax.xaxis, ax.get_xlim(), data=np.unique(table["x"].to_numpy(float)))
        if spans_decades(values):
            ax.set_yscale("log")
            log_ticks(ax.yaxis, ax.get_ylim())
        ax.set(title=title, xlabel=spec.x_label or label(spec.x), ylabel=label(metric))
        ax.title.set_fontsize(8)
        ax.grid(alpha=0.3)
    legend_outside(axes[0][-1], *axes[0][0].get_legend_handles_labels(),
                   title=spec.group_label or label(spec.group))
    save_figure(fig, f"{label(metric)} per machine", path, key)


def figure_path(page: Page) -> Path:
    return page.paths.figure.with_name(f"{page.spec.output_id}.machines.png")


def lines(page: Page) -> list[str]:
    asked = page.spec.machines
    if not asked:
        return []
    head = ["", "## Per machine", "",
            "Each machine's runs apart (its `cpu_count` and `cpu_model` tags): mean ± std over the runs of each row"]
    if asked.relative_to:
        head[-1] += (f"; `{asked.relative_metric} / <group>` divides the row's mean {asked.relative_metric} by that "
                     f"group's on the same machine at the same x")
    head[-1] += "."
    try:
        text, tables = machines_markdown(page.runs, page.spec)
    except NotComputed as exc:
        return [*head, "", str(exc)]
    picture = []
    if asked.figure:
        path = figure_path(page)
        draw_machines(tables, page.spec, path)
        picture = ["", f"![{page.spec.output_id} per machine]({path.name})"]
    return [*head, "", text, *picture]
