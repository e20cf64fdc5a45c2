"""``<results>/bench/README.md``: the self-benchmarks' latest figures, from the runs table written
beside each output; regenerated, never edited."""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

from svmrepro.compose import experiments
from svmrepro.report import output_paths
from svmrepro.report.runs import read_runs
from svmrepro.report.missing import section_text
from svmrepro.report.sections.machines import machines_markdown
from svmrepro.report.sections.ratios import ratios_text
from svmrepro.report.sections.slopes import loglog_slopes, slopes_markdown
from svmrepro.report.spec import ReportSpec
from svmrepro.report.tables import numeric_or_text, summarise, x_label
from svmrepro.writing import write_file

#: the self-benchmarks' paper id
BENCH = "bench"


def key_numbers(runs: pd.DataFrame, spec: ReportSpec) -> list[str]:
    """An output's key numbers: its ratios, log-log slopes and tables per machine when its report
    has them, else the median over runs of its first metric per group and x."""
    table = summarise(runs, spec)
    blocks = [ratios_text(table, spec)] if spec.ratios else []
    if spec.slopes:
        blocks.append(slopes_markdown(loglog_slopes(runs, spec, None)))
    if spec.machines:
        blocks.append(section_text(lambda: machines_markdown(runs, spec)[0]))
    if blocks:
        return blocks
    metric = spec.metrics[0]
    by = [runs[spec.group].astype(str), numeric_or_text(runs[spec.x])]
    found = runs.groupby(by)[f"metrics.{metric}"].agg(["size", "median"])
    group_title = spec.group_label or spec.group.split(".")[-1]
    lines = [f"| {group_title} | {spec.x_label or spec.x} | runs | median {metric} |", "|---|---|---|---|"]
    lines += [f"| {group} | {x_label(x)} | {n} | {m:.4g} |" for (group, x), n, m in found.itertuples()]
    return ["\n".join(lines)]


def write_bench_readme(results_dir: Path, mode: str, overrides: list[str], spec_of) -> Path:
    """``<results_dir>/bench/README.md``: per self-benchmark its title, key numbers (:func:`key_numbers`)
    and machine; ``spec_of(experiment, mode)`` gives each benchmark's report spec."""
    out_dir = (results_dir / BENCH).resolve()
    # the command that makes the runs; --from-csv rebuilds the same page, so it is not part of it
    command = " ".join(["svmrepro-reproduce", BENCH, "--mode", mode, *(f"--override {o}" for o in overrides)])
    protocol = "experiments/bench/README.md"
    beside = out_dir.parent.parent / protocol  # <checkout>/results/bench -> <checkout>/experiments
    if beside.is_file():  # a relative link, never a path of the machine that built it
        protocol = f"[{protocol}]({os.path.relpath(beside, out_dir)})"
    lines = [f"# Self-benchmarks ({mode} mode)", "",
             f"Latest figures, written by `{command}` from each output's runs table; what each benchmark "
             f"measures, its target and how to run it: {protocol}.", ""]
    for experiment in experiments(BENCH):
        spec = spec_of(experiment, mode)
        paths = output_paths(spec, out_dir)
        if not paths.runs_csv.is_file():
            lines += [f"## {spec.title}", "", "not built yet", ""]
            continue
        runs = read_runs(paths.runs_csv)
        load = pd.to_numeric(runs.get("tags.load_avg_1m", pd.Series(dtype=str)), errors="coerce")
        lines += [
            f"## [{spec.title}]({paths.table_md.name})", "",
            f"- runs: {len(runs)}, the latest started {runs['start_time'].max()}; machine: "
            + ", ".join(sorted(set(runs["tags.cpu_model"] + " (" + runs["tags.cpu_count"] + " cores)"))),
            f"- 1-minute load average when the runs started: median {load.median():.2f}, max {load.max():.2f}", "",
            *(block + "\n" for block in key_numbers(runs, spec)),
        ]
    path = out_dir / "README.md"
    out_dir.mkdir(parents=True, exist_ok=True)
    write_file(path, "\n".join(lines))
    return path
