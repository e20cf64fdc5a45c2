"""``<results>/bench/cost.md`` (+ ``cost.csv``): where the time of a reproduction goes, per output and
per paper, from the runs tables beside the outputs; so a user can plan a re-run. Regenerated, never edited.

Each run counts once, under its own experiment (``tags.experiment``), also when another output's
table shows it (``report.include``). Its CPU is what it logged of its fit and of predicting the test
split (:data:`CPU_COLUMNS`), its wall what it logged of those, of predicting the training split and
of the framework's own work (:data:`WALL_COLUMNS`); the page says what neither holds. The wall a
re-run takes is estimated from the runs' summed wall and how many jobs of the sweep run at once
(:func:`svmrepro.exclusive.jobs_at_once`: one for a timed experiment).
"""

from __future__ import annotations

import logging
from pathlib import Path

import pandas as pd

from svmrepro.compose import compose_config, experiments
from svmrepro.errors import SvmReproError
from svmrepro.exclusive import EXCLUSIVE, SHARED, is_exclusive, jobs_at_once
from svmrepro.report.runs import read_runs
from svmrepro.store import commit_column
from svmrepro.sweep.progress import clock
from svmrepro.writing import write_file

log = logging.getLogger(__name__)
#: the page's folder below the results folder
COST_DIR = "bench"
#: a run's CPU seconds: its fit, and predicting the test split
CPU_COLUMNS = ("metrics.fit_cpu_s", "metrics.predict_cpu_s")
#: a run's wall seconds: its fit, predicting the test and the training splits, the framework's own work
WALL_COLUMNS = ("metrics.fit_time_s", "metrics.predict_time_s", "metrics.predict_train_time_s",
                "metrics.run_overhead_s")
#: what a re-run spends that neither holds
LEFT_OUT = ("loading or generating the data sets, the analyses and decision surfaces some experiments compute, "
            "predicting a validation split, the CPU of predicting the training split, starting each sweep "
            "(its processes, Hydra's composition), building the pages, and earlier runs of a configuration "
            "made again (a runs table holds the latest)")
#: cost.csv's columns, one row per output
COST_COLUMNS = ("paper", "output", "runs", "cpu_s", "wall_s", "runs_without_predict_cpu", "runs_without_overhead",
                "timing", "jobs_at_once", "rerun_wall_s", "first_commit", "last_commit", "commits", "first_run",
                "last_run", "command")


def committed_runs(results_dir: Path) -> tuple[pd.DataFrame, list[str]]:
    """Every run of the runs tables ``<results_dir>/<paper>/<output>.runs.csv``, each once, and why
    each table that cannot be read was left out (one line each: its output is not built either)."""
    tables, unreadable = [], []
    for path in sorted(results_dir.glob("*/*.runs.csv")):
        try:
            tables.append(read_runs(path))
        except SvmReproError as exc:
            log.warning("cost page: left out %s", exc)
            unreadable.append(str(exc))
    if not tables:
        return pd.DataFrame(columns=["run_id", "start_time", "tags.experiment"]), unreadable
    return pd.concat(tables, ignore_index=True).drop_duplicates("run_id").reset_index(drop=True), unreadable


def summed(runs: pd.DataFrame, columns: tuple[str, ...]) -> pd.Series:
    """Per run, the sum of ``columns`` it logged (a column it has not counts 0)."""
    return runs.reindex(columns=list(columns)).astype(float).fillna(0).sum(axis=1)


def command(target: str, mode: str) -> str:
    option = f"--experiment {target}" if "/" in target else target
    return " ".join(["svmrepro-reproduce", *([option] if target else []), "--mode", mode])


def output_cost(experiment: str, runs: pd.DataFrame, mode: str, n_jobs: int) -> dict:
    """One output's row: its runs, their CPU and wall, how it is timed and the wall a re-run takes;
    blank but for its command when it has no runs (it is not composed then: a reproduction of a few
    outputs writes the page at the cost of composing those)."""
    if runs.empty:
        return {"paper": experiment.split("/")[0], "output": experiment, "runs": 0, "command": command(experiment, mode)}
    cfg = compose_config([f"experiment={experiment}", f"mode={mode}"])
    at_once = jobs_at_once(cfg, n_jobs)
    wall = summed(runs, WALL_COLUMNS).sum()
    logged = runs.reindex(columns=[*CPU_COLUMNS, *WALL_COLUMNS]).notna()  # a self-benchmark predicts nothing
    commits = commit_column(runs.sort_values("start_time")).dropna()
    return {
        "paper": experiment.split("/")[0], "output": experiment, "runs": len(runs),
        "cpu_s": round(summed(runs, CPU_COLUMNS).sum(), 1), "wall_s": round(wall, 1),
        "runs_without_predict_cpu": int((logged["metrics.predict_time_s"] & ~logged["metrics.predict_cpu_s"]).sum()),
        "runs_without_overhead": int((~logged["metrics.run_overhead_s"]).sum()),
        "timing": EXCLUSIVE if is_exclusive(cfg) else SHARED, "jobs_at_once": at_once,
        "rerun_wall_s": round(wall / at_once, 1),
        "first_commit": commits.iloc[0][:7] if len(commits) else "", "last_commit": commits.iloc[-1][:7] if len(commits) else "",
        "commits": commits.nunique(), "first_run": runs["start_time"].min(), "last_run": runs["start_time"].max(),
        "command": command(experiment, mode),
    }


def in_scope(papers: list[str] | None) -> list[str]:
    """The experiments of ``papers`` (all of the config tree's when None)."""
    return [name for name in experiments() if papers is None or name.split("/")[0] in papers]


def cost_table(runs: pd.DataFrame, mode: str, n_jobs: int, papers: list[str] | None = None) -> pd.DataFrame:
    """:func:`output_cost` of every experiment of ``papers`` (of the config tree when None), those with no
    runs included."""
    rows = [output_cost(name, runs[runs["tags.experiment"] == name], mode, n_jobs) for name in in_scope(papers)]
    counts = {column: "Int64" for column in ("runs_without_predict_cpu", "runs_without_overhead", "jobs_at_once", "commits")}
    return pd.DataFrame(rows, columns=COST_COLUMNS).astype(counts)


def duration(seconds: float) -> str:
    return "" if pd.isna(seconds) else clock(seconds)


def totals(costs: pd.DataFrame, label: str, target: str, mode: str, total_cpu: float) -> str:
    return (f"| {label} | {len(costs)} | {costs['runs'].sum()} | {duration(costs['cpu_s'].sum())} | "
            f"{share(costs['cpu_s'].sum(), total_cpu)} | {duration(costs['wall_s'].sum())} | "
            f"{duration(costs['rerun_wall_s'].sum())} | `{command(target, mode)}` |")


def cell(value) -> str:
    return "" if pd.isna(value) else str(value)


def share(part: float, whole: float) -> str:
    return f"{100 * part / whole:.0f} %" if whole and not pd.isna(part) else ""


def span(row: pd.Series) -> str:
    if not row["runs"]:
        return "no runs yet"
    commits = row["first_commit"] if row["first_commit"] == row["last_commit"] else f"{row['first_commit']}..{row['last_commit']}"
    days = sorted({row["first_run"][:10], row["last_run"][:10]})
    return f"{'..'.join(days)}, {commits} ({row['commits']} commit{'s' * (row['commits'] != 1)})"


def cost_markdown(costs: pd.DataFrame, runs: pd.DataFrame, mode: str, n_jobs: int, left_out: list[str]) -> str:
    """The page: what is summed, then the totals per paper, then one table per paper of its outputs."""
    total_cpu = costs["cpu_s"].sum()
    machines = ", ".join(sorted(set(runs["tags.cpu_model"].astype(str) + " (" + runs["tags.cpu_count"].astype(str)
                                    + " cores)"))) if len(runs) else "none"
    lines = [
        f"# Where the time of the reproduction goes ({mode} mode)", "",
        f"Written by `svmrepro-reproduce --mode {mode}` (also with `--from-csv`) from the runs tables of the outputs "
        "(`<paper>/<output>.runs.csv`), so a user can plan a re-run: per output its runs, their CPU and wall time, "
        "and the command that re-runs it. Each run counts once, under its own experiment, also where another "
        f"output shows it. Measured on: {machines}.", "",
        f"- **CPU** sums each run's {', '.join(f'`{c[8:]}`' for c in CPU_COLUMNS)} (its fit, and predicting the "
        f"test split); {costs['runs_without_predict_cpu'].sum()} runs, made before it was measured, have a "
        "`predict_time_s` but no `predict_cpu_s`.",
        f"- **wall** sums each run's {', '.join(f'`{c[8:]}`' for c in WALL_COLUMNS)} (its fit, predicting the test "
        f"and the training splits, the framework's own work); {costs['runs_without_overhead'].sum()} runs, made "
        "before it was measured, have no `run_overhead_s`.",
        f"- Neither holds {LEFT_OUT}.",
        f"- **re-run wall** estimates the wall time of re-running the output with this mode's plan (`n_jobs` "
        f"{n_jobs}): a timed output (`timing: {EXCLUSIVE}`) runs one job at a time, so its summed wall; any other "
        "its summed wall divided by the jobs it runs at once (at most its `sweep_jobs`).",
    ]
    lines += [f"- Left out: {reason}." for reason in left_out]
    lines += ["", "## Per paper", "",
              "| paper | outputs | runs | CPU | share of CPU | wall (summed) | re-run wall | command |",
              "|---|---|---|---|---|---|---|---|"]
    lines += [totals(group, paper, paper, mode, total_cpu) for paper, group in costs.groupby("paper")]
    lines += [totals(costs, "**all**", "", mode, total_cpu), ""]
    for paper, group in costs.groupby("paper"):
        lines += [f"## {paper}", "",
                  "| output | runs | CPU | share of CPU | wall (summed) | timing | jobs at once | re-run wall "
                  "| runs made (dates, commits) | command |",
                  "|---|---|---|---|---|---|---|---|---|---|"]
        lines += [f"| {row['output']} | {row['runs']} | {duration(row['cpu_s'])} | {share(row['cpu_s'], total_cpu)} | "
                  f"{duration(row['wall_s'])} | {cell(row['timing'])} | {cell(row['jobs_at_once'])} | "
                  f"{duration(row['rerun_wall_s'])} | {span(row)} | `{row['command']}` |" for _, row in group.iterrows()]
        lines.append("")
    return "\n".join(lines)


def cost_page(results_dir: Path, mode: str, n_jobs: int, papers: list[str] | None = None) -> tuple[pd.DataFrame, str]:
    """``cost.csv``'s table and ``cost.md``'s text from the runs tables in ``results_dir``, for ``papers`` (the
    reproduction's: a study's own when it has its config folder; all when None)."""
    runs, unreadable = committed_runs(results_dir)
    outside = ~runs["tags.experiment"].isin(experiments())
    runs = runs[runs["tags.experiment"].isin(in_scope(papers)) | outside]
    known = ~outside.loc[runs.index]
    left_out = [f"{int((~known).sum())} runs of experiments no longer in the configs"] if not known.all() else []
    costs = cost_table(runs[known], mode, n_jobs, papers)
    return costs, cost_markdown(costs, runs[known], mode, n_jobs, [*left_out, *unreadable])


def write_cost(results_dir: Path, mode: str, n_jobs: int, papers: list[str] | None = None) -> Path:
    """Write ``<results_dir>/bench/cost.md`` and ``cost.csv`` (:func:`cost_page`) of ``papers``."""
    costs, page = cost_page(results_dir, mode, n_jobs, papers)
    out_dir = results_dir / COST_DIR
    out_dir.mkdir(parents=True, exist_ok=True)
    write_file(out_dir / "cost.csv", costs.to_csv(index=False))
    path = out_dir / "cost.md"
    write_file(path, page)
    return path
