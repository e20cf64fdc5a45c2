"""One output (its table, figure, runs CSV and page) built only from what its runs logged."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from svmrepro.errors import SvmReproError
from svmrepro.store import commit_column
from svmrepro.locations import user_config_dirs
from svmrepro.report.figures import plot
from svmrepro.report.facts import facts_lines
from svmrepro.report.runs import write_runs
from svmrepro.report.registry import page_sections
from svmrepro.report.sections import Page
from svmrepro.report.spec import ReportSpec
from svmrepro.report.tables import read_paper, summarise, to_markdown, with_paper
from svmrepro.writing import write_file


@dataclass(frozen=True)
class Output:
    table_md: Path
    table_csv: Path
    figure: Path
    runs_csv: Path
    scatter: Path
    points_json: Path
    surface: Path
    surface_json: Path


def output_paths(spec: ReportSpec, out_dir: Path) -> Output:
    stem = out_dir / spec.output_id
    return Output(
        table_md=stem.with_suffix(".md"),
        table_csv=stem.with_suffix(".csv"),
        figure=stem.with_suffix(".png"),
        runs_csv=stem.parent / f"{spec.output_id}.runs.csv",
        scatter=stem.parent / f"{spec.output_id}.scatter.png",
        points_json=stem.parent / f"{spec.output_id}.points.json",
        surface=stem.parent / f"{spec.output_id}.surface.png",
        surface_json=stem.parent / f"{spec.output_id}.surface.json",
    )


def _provenance(runs: pd.DataFrame, mode: str) -> list[str]:
    def values(found: pd.Series | None) -> str:
        return ", ".join(sorted(found.dropna().astype(str).unique())) if found is not None else "unknown"

    commits = commit_column(runs)
    return [
        f"- mode `{mode}`, {len(runs)} runs; code commit(s): {values(commits if commits.notna().any() else None)}",
        f"- machine(s): {values(runs.get('tags.cpu_model'))} ({values(runs.get('tags.cpu_count'))} cores)",
    ]


def _deviations(spec: ReportSpec) -> list[str]:
    if not spec.deviations:
        return []
    return ["", "## Where our setup differs from the paper", *(f"- {d}" for d in spec.deviations)]


def regenerate_command(spec: ReportSpec, mode: str) -> str:
    """The command that rebuilds the output, with the user's config folders it was composed from
    (``--config-dir``, relative to the current folder when below it: the command runs from there)."""
    here = Path.cwd()
    dirs = [str(d.relative_to(here) if d.is_relative_to(here) else d) for d in user_config_dirs()]
    return " ".join(["svmrepro-reproduce", spec.paper_id, *(f"--config-dir {d}" for d in dirs), "--mode", mode])


def build_output(spec: ReportSpec, runs: pd.DataFrame, out_dir: Path, mode: str) -> Output:
    """Write ``<id>.md``, ``<id>.csv``, ``<id>.png`` and the ``<id>.runs.csv`` they came from; the page
    ends with each section (:mod:`svmrepro.report.sections`) in order, which writes what it draws (with
    ``spec.scatter`` ``<id>.scatter.png`` and the ``<id>.points.json`` it is drawn from, with
    ``spec.surface`` ``<id>.surface.png`` and its ``<id>.surface.json``)."""
    if runs.empty:
        raise SvmReproError(f"{spec.experiment}: no runs to build the output from")
    paths = output_paths(spec, out_dir)
    table = summarise(runs, spec)
    paper_path = spec.paper_path()
    paper = read_paper(paper_path) if paper_path else None
    if paper is not None:
        table = with_paper(table, paper, spec)
    out_dir.mkdir(parents=True, exist_ok=True)
    runs_csv_text = write_runs(runs, paths.runs_csv)
    write_file(paths.table_csv, table.to_csv(index=False))
    plot(table, paper, spec, paths.figure)
    lines = [f"# {spec.title}", "", *_provenance(runs, mode), *facts_lines(runs, spec)]
    if paper_path:
        lines.append(f"- paper numbers: `{spec.paper}` (`source` column says where each was read)")
    lines += [
        f"- regenerate: `{regenerate_command(spec, mode)}` (or `--from-csv` from `{paths.runs_csv.name}`)",
        "",
        to_markdown(table, spec),
        "",
        "Each cell of ours is the mean ± the standard deviation over the row's runs (one per seed; no ± "
        "where there is one run); `runs` counts them. The figure's error bars are the same ± one standard deviation.",
        "",
        f"![{spec.output_id}]({paths.figure.name})",
    ]
    page = Page(spec, runs, table, paper, paths, runs_csv_text)
    for section in page_sections():
        lines += section.lines(page)
    lines += _deviations(spec)
    write_file(paths.table_md, "\n".join(lines) + "\n")
    return paths


def write_not_run(spec: ReportSpec, out_dir: Path, reason: str) -> Path:
    """The output's page when its runs could not be made: what is missing, never a blank table."""
    paths = output_paths(spec, out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    lines = [f"# {spec.title}", "", f"**not run**: {reason}"]
    lines += _deviations(spec)
    write_file(paths.table_md, "\n".join(lines) + "\n")
    return paths.table_md
