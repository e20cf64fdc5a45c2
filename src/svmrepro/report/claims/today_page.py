"""``<results>/today.md``: which claims about time still hold on a CPU against today's solver (issues 31, 45).

First, one short table per paper answers on one screen: each claim about time with a reading against today's
solver, its verdict against the paper's own baseline, against the faster of today's solvers on the cores the
method uses (:mod:`.fastest`), and with the faster solver inside the method, each naming the solver taken.
Then which solver was faster on each problem, with the ratio and its interval, and the detail: one row
per claim about time (``timing: true``) of every paper: its verdict against the paper's own
baseline and against today's solver (:mod:`.today`), each with its estimate and 95 % interval, and
with today's solver inside the method where the claim has that reading. Every number and the
solver's name and version are read from the runs tables (:class:`.scoreboard.RunsTables`), so
``svmrepro-reproduce`` and ``--from-csv`` write it beside the scoreboard and ``claims.csv``.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np

from svmrepro.exclusive import LOAD_MARGIN
from svmrepro.report.claims.estimate import Estimate
from svmrepro.report.claims.schema import Claim
from svmrepro.report.claims.scoreboard import SCOREBOARD, TODAY_PAGE, Judged, cell, claims_file, judge_papers
from svmrepro.report.claims.today import UNCHANGED, TodayVerdict
from svmrepro.report.claims.verdict import VERDICTS, Verdict
from svmrepro.solver import SOLVER_TAG, SOLVER_VERSION_TAG
from svmrepro.writing import write_file

SOLVER_COLUMNS = (f"tags.{SOLVER_TAG}", f"tags.{SOLVER_VERSION_TAG}")


def solvers(verdicts: list[Verdict | None]) -> set[tuple[str, str]]:
    """(solver, version) of every solver the runs ``verdicts`` read were fitted with (a run tagged
    ``libsvm+onedal`` names two)."""
    found = set()
    for verdict in verdicts:
        runs = verdict.estimate.runs if verdict is not None and verdict.estimate is not None else None
        if runs is None or not all(column in runs for column in SOLVER_COLUMNS):
            continue
        for names, versions in runs[list(SOLVER_COLUMNS)].dropna().astype(str).itertuples(index=False):
            found |= set(zip(names.split("+"), versions.split("+")))
    return found


def reading(verdict: Verdict | None) -> str:
    """``**supported**: 0.42 [0.38, 0.47]``: the verdict word and the estimate with its interval."""
    if verdict is None:
        return ""
    estimate: Estimate | None = verdict.estimate
    text = f"**{verdict.verdict}**"
    if estimate is not None and np.isfinite(estimate.value):
        text += f": {estimate.value:.3g}"
        if estimate.has_interval:
            text += f" [{estimate.low:.3g}, {estimate.high:.3g}]"
    return text


def _link(claim: Claim, results_dir: Path) -> str:
    """The claim's id, linked to its output's page as the scoreboard links it (its claims file named
    while the page is not built)."""
    paper, _, output_id = (claim.output or "").partition("/")
    page = Path(paper) / f"{output_id}.md"
    if claim.output and (results_dir / page).is_file():
        return f"[{claim.id}]({page.as_posix()})"
    return f"{claim.id} (`{claims_file(claim.paper)}`)"


def _basis(claim: Claim, today: TodayVerdict | None) -> str:
    if today is None:
        return claim.not_run or ""
    return "; ".join(text for text in (today.note, claim.today.conditions.text()) if text)


def _row(verdict: Verdict, today: TodayVerdict | None, results_dir: Path) -> str:
    claim = verdict.claim
    cells = [claim.paper, _link(claim, results_dir), f"{claim.source}: {claim.claim}", reading(verdict),
             reading(today.today) if today else "", reading(today.inside) if today else "", _basis(claim, today)]
    return "| " + " | ".join(cell(c) for c in cells) + " |"


def _short(verdict: Verdict | None, solver: str) -> str:
    """``**supported** 0.42 [0.38, 0.47] (libsvm, 1 thread)``: a summary cell."""
    if verdict is None:
        return ""
    text = reading(verdict).replace(":", "", 1)
    return text + (f" ({solver.split(':')[0]})" if solver and ";" not in solver else (f" ({solver})" if solver else ""))


def summary(judged: list[tuple[Verdict, TodayVerdict | None]], results_dir: Path) -> list[str]:
    """The one-screen answer: per paper, each claim with a reading against today's solver, judged three ways."""
    lines = []
    for paper in dict.fromkeys(v.claim.paper for v, _ in judged):
        rows = [(v, t) for v, t in judged if v.claim.paper == paper and t is not None and t.today.verdict != UNCHANGED]
        if not rows:
            continue
        lines += [f"**{paper}**", "", "| claim | against the paper's baseline "
                  "| against the faster 2026 solver, same cores | with the faster solver inside |", "|---|---|---|---|"]
        lines += ["| " + " | ".join(cell(c) for c in (_link(v.claim, results_dir), _short(v, ""),
                                                      _short(t.today, t.baseline), _short(t.inside, t.inside_with)))
                  + " |" for v, t in rows]
        lines.append("")
    return lines


def solver_table(todays: list[TodayVerdict]) -> list[str]:
    """Which solver was faster on each problem a today reading compared them on (the baseline side's
    choices, once per problem, metric and candidates), with how much slower the next one was."""
    seen, rows = set(), []
    for today in todays:
        baseline_sides = {c.side for c in (today.today.estimate.choices if today.today.estimate else ())}
        readings = [today.today, *([today.inside] if today.inside is not None else [])]
        for verdict in readings:
            for choice in (verdict.estimate.choices if verdict.estimate is not None else ()):
                role = "baseline" if choice.side in baseline_sides else "inside the method"
                key = (choice.chosen, choice.next_best, choice.problem, choice.metric)
                if key in seen:
                    continue
                seen.add(key)
                spread = (f" [{choice.low:.3g}, {choice.high:.3g}]"
                          if np.isfinite(choice.low) and np.isfinite(choice.high) else "")
                ratio = f"{choice.ratio:.3g}{spread}" if np.isfinite(choice.ratio) else "no shared seed"
                rows.append((role, choice.chosen.rsplit("(", 1)[-1].rstrip(")"), choice.problem, choice.metric,
                             f"**{choice.solver}**: {choice.chosen}", choice.next_best, ratio, str(choice.seeds)))
    if not rows:
        return ["No reading has run both solvers yet.", ""]
    lines = ["| as | output | problem | metric | faster | than | slower by (geometric mean ratio, 95 % interval) "
             "| seeds |", "|---|---|---|---|---|---|---|---|"]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in sorted(rows, key=lambda r: (r[0], r[1], r[3]))]
    return lines + [""]


def today_solver(verdicts: list[Verdict], todays: list[TodayVerdict]) -> str:
    """Today's solver as its runs name it: the solvers the readings against today's solver fitted
    with that the papers' own baselines did not (``onedal 2026.2.0``)."""
    new = solvers([r for t in todays for r in (t.today, t.inside)]) - solvers(verdicts)
    return ", ".join(f"`{name}` {version}" for name, version in sorted(new)) or "no run of it yet"


def write_today_page(papers: list[str], results_dir: Path, mode: str, judged: Judged | None = None) -> Path:
    """``<results_dir>/today.md`` of every claim about time of ``papers``, judged on the runs tables
    under ``results_dir`` (``judged``: :func:`~svmrepro.report.claims.scoreboard.judge_papers` of them, when
    the caller has it already, as the scoreboard's)."""
    judged = judge_papers(papers, results_dir) if judged is None else judged
    timed = [(v, t) for v, t in judged if v.claim.timing]
    verdicts, todays = [v for v, _ in timed], [t for _, t in timed]
    readings = [t for t in todays if t is not None]
    counts = Counter(t.today.verdict for t in readings)
    lines = [f"# Which claims about time still hold on a CPU against today's solver? ({mode} mode)", "",
             f"Today's solver, as the runs' `{SOLVER_TAG}` and `{SOLVER_VERSION_TAG}` tags name it: "
             f"{today_solver(verdicts, readings)}. Each of the {len(timed)} claims about time of {len(papers)} papers "
             f"is judged twice in the regions it states (whether written before its runs: the scoreboard's *registered*): against the paper's own "
             "baseline, as on the [scoreboard](" + SCOREBOARD + "), and against today's solver (its `today` block in "
             "the paper's `claims.yaml`); where the method can run today's solver inside, a third time with it "
             "inside. *unchanged*: the claim compares no solver we could replace. Each cell is the verdict and the "
             "statistic with its 95 % interval, read from the runs committed beside the outputs.", "",
             f"{len(readings)} judged against today's solver: "
             + " · ".join(f"**{word}**: {counts.get(word, 0)}" for word in (*VERDICTS, UNCHANGED)), "",
             "## The answer on one screen", "",
             "Today's solver is the faster of LIBSVM and oneDAL on each problem, by the rule each claims file's legend "
             "states (lower geometric mean of the reading's metric over the seeds both ran), on the cores the method "
             "uses: a method's wall time on 2 cores against oneDAL on the same 2 threads and LIBSVM (one thread); a "
             "CPU-time or critical-path reading is one core's. The solver taken is named in brackets.", "",
             *summary(timed, results_dir),
             "## Which solver is faster, problem by problem", "",
             "Each problem a reading compared the solvers on: the faster one, and how much slower the next was "
             "(its geometric mean over the faster one's, with the 95 % interval of the paired log ratios over the "
             "shared seeds). LIBSVM winning is a result about today's solvers, not a footnote.", "",
             *solver_table(readings),
             "## Every claim about time", "",
             "Timing protocol: a timed experiment runs its jobs alone on the machine, and a claim about time that "
             f"reads a run timed at a 1-minute load above the cores + {LOAD_MARGIN} is inconclusive. Regenerate "
             f"with `svmrepro-reproduce --mode {mode}` (or `--from-csv` from the committed runs tables).", "",
             "| paper | claim | in words | against the paper's baseline | against today's solver "
             "| with today's solver inside | basis, conditions |", "|---|---|---|---|---|---|---|"]
    lines += [_row(v, t, results_dir) for v, t in zip(verdicts, todays)]
    path = results_dir / TODAY_PAGE
    results_dir.mkdir(parents=True, exist_ok=True)
    write_file(path, "\n".join(lines) + "\n")
    return path
