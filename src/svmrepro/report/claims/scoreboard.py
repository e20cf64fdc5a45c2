"""The verdicts as pages: ``<results>/README.md``, one row per claim of every paper with counts per
verdict at the top (:func:`write_scoreboard`), and each output page's claims section
(:func:`claims_section`). Both read the runs table written beside each output, so the page and the
scoreboard show the same numbers, and ``--from-csv`` rebuilds both."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pandas as pd

from svmrepro.report.claims.schema import Claim, claims_path, load_claims
from svmrepro.report.claims.verdict import VERDICTS, Verdict, judge
from svmrepro.report.runs import read_runs

SCOREBOARD = "README.md"
THUMB_WIDTH = 140


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _runs_csv(results_dir: Path, output: str) -> Path:
    paper, output_id = output.split("/", 1)
    return results_dir / paper / f"{output_id}.runs.csv"


def judge_all(claims: list[Claim], results_dir: Path) -> list[Verdict]:
    """Each claim judged on the runs table of its output under ``results_dir``."""
    tables: dict[str, pd.DataFrame | None] = {}
    verdicts = []
    for claim in claims:
        if claim.output and claim.output not in tables:
            path = _runs_csv(results_dir, claim.output)
            tables[claim.output] = read_runs(path) if path.is_file() else None
        verdicts.append(judge(claim, tables.get(claim.output)))
    return verdicts


def claims_section(verdicts: list[Verdict]) -> list[str]:
    """The claims section of an output page (no lines when the output tests no claim)."""
    if not verdicts:
        return []
    lines = ["", "## Claims", "",
             "Each claim's statistic with its 95 % interval, computed from the runs above, and the verdict "
             "its stated region gives ([all claims](../README.md)):", "",
             "| claim | the paper | ours | verdict |", "|---|---|---|---|"]
    lines += [f"| {_cell(v.claim.source)}: {_cell(v.claim.claim)} | {_cell(v.claim.paper_says)} | {_cell(v.ours())} "
              f"| **{v.verdict}**: {_cell(v.reason)} |" for v in verdicts]
    return lines


def _row(verdict: Verdict, results_dir: Path) -> str:
    claim = verdict.claim
    link = thumb = ""
    if claim.output:
        paper, output_id = claim.output.split("/", 1)
        page, figure = Path(paper) / f"{output_id}.md", Path(paper) / f"{output_id}.png"
        if (results_dir / page).is_file():
            link = f"[{output_id}]({page.as_posix()})"
        if (results_dir / figure).is_file():
            thumb = f'<img src="{figure.as_posix()}" width="{THUMB_WIDTH}">'
    runs = ""
    if verdict.estimate is not None:
        runs = f"{len(verdict.estimate.runs)} runs, {verdict.seeds} seeds; {', '.join(verdict.commits)}"
    cells = [claim.paper, f"{claim.source}: {claim.claim}", verdict.ours(), claim.paper_says,
             f"**{verdict.verdict}**: {verdict.reason}", runs, link, thumb]
    return "| " + " | ".join(_cell(c) for c in cells) + " |"


def write_scoreboard(papers: list[str], results_dir: Path, mode: str) -> tuple[Path, Counter]:
    """``<results_dir>/README.md``: every claim of ``papers`` with its verdict; the counts per verdict."""
    verdicts = [v for paper in papers for v in judge_all(load_claims(paper), results_dir)]
    counts = Counter(v.verdict for v in verdicts)
    lines = [f"# Does each claim hold? ({mode} mode)", "",
             f"{len(verdicts)} claims of {len(papers)} papers, each checked by code against the runs committed beside "
             "its output (`svmrepro-reproduce --mode " + mode + "` writes this page; `--from-csv` rebuilds it).", "",
             " · ".join(f"**{verdict}**: {counts.get(verdict, 0)}" for verdict in VERDICTS), "",
             "How a verdict is reached: the claim's statistic (a paired ratio or difference of two methods, a log-log "
             "slope, a mean, a trend across sizes) with its 95 % interval, against the region the claim stated before "
             "our numbers were read: **supported** when the whole interval lies in it, **partly supported** when it "
             "lies in the looser region, **not supported** when it lies outside, **inconclusive** when it straddles "
             "an edge, when too few runs give an interval, or when a timing was taken on a loaded machine. "
             "In the statistics, `a / b` is a ratio (geometric mean over pairs of runs with the same seed), "
             "p a paired t test, d Cohen's effect size. Each paper's claims: "
             + ", ".join(f"`{claims_path(p).relative_to(claims_path(p).parents[2]).as_posix()}`" for p in papers) + ".",
             "", "| paper | claim | ours | the paper | verdict | runs, seeds; commits | output | figure |",
             "|---|---|---|---|---|---|---|---|"]
    lines += [_row(v, results_dir) for v in verdicts]
    path = results_dir / SCOREBOARD
    results_dir.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return path, counts
