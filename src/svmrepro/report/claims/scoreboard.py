"""The verdicts as pages: ``<results>/README.md``, the counts per verdict of every paper, how a verdict is
reached and a row per paper linking its own page, ``<results>/<paper>/claims.md``: the paper's forest plot on
top, one row per claim, its amendments at the end (a page a laptop shows whole, :func:`write_paper_board`);
``<results>/claims.csv`` beside them (:func:`write_scoreboard`), and each output page's claims section
(:func:`claims_section`). All read the runs tables written beside the outputs (:class:`RunsTables`), so the
pages and the scoreboard show the same numbers, and ``--from-csv`` rebuilds them all."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator, Mapping
from pathlib import Path

import pandas as pd

from svmrepro.report.claims.forest import FIGURE as FOREST
from svmrepro.report.claims.forest import markers_text, shown, write_forest
from svmrepro.report.claims.lock import COMMAND, LockEntry, lock_path, read_lock
from svmrepro.report.claims.schema import (
    FINDING,
    KINDS,
    Claim,
    claims_path,
    load_claims,
)
from svmrepro.report.claims.scoreboard_csv import write_claims_csv
from svmrepro.report.claims.today import TodayVerdict, judge_today
from svmrepro.report.claims.verdict import VERDICTS, Verdict, judge
from svmrepro.report.runs import csv_text, runs_table
from svmrepro.writing import write_file

SCOREBOARD = "README.md"
#: each paper's page of its claims, in its results folder (``<results>/<paper>/claims.md``)
PAPER_BOARD = "claims.md"
#: the page of the claims about time against today's solver (:mod:`svmrepro.report.claims.today_page`)
TODAY_PAGE = "today.md"
THUMB_WIDTH = 140
RUNS_SUFFIX = ".runs.csv"
#: where the confirmatory phase's outputs are, below the full mode's results (``reproduce/confirm.yaml``)
CONFIRM_DIR = "confirm"


def cell(text: str) -> str:
    """``text`` as one Markdown table cell: its pipes escaped, on one line."""
    return str(text).replace("|", "\\|").replace("\n", " ")


class RunsTables(Mapping):
    """The runs table of each output ``<paper>/<id>`` under ``results_dir`` (``<paper>/<id>.runs.csv``),
    read when first asked for; ``given`` tables (an output's runs read from MLflow) come first, with the CSV text
    each was read from where ``texts`` gives it (:meth:`text`)."""

    def __init__(self, results_dir: Path, given: Mapping[str, pd.DataFrame] | None = None,
                 texts: Mapping[str, str] | None = None):
        self.results_dir = Path(results_dir)
        self._tables = dict(given or {})
        self._texts = {name: texts[name] for name in self._tables if texts and name in texts}

    def text(self, output: str) -> str | None:
        """The CSV text ``output``'s table was read from (None when it was given without one, or is not read yet):
        what a verdict on it depends on (:func:`svmrepro.report.claims.verdict.judge` keeps its verdicts by it)."""
        return self._texts.get(output)

    def _path(self, output: str) -> Path:
        paper, _, output_id = output.partition("/")
        return self.results_dir / paper / f"{output_id}{RUNS_SUFFIX}"

    def __getitem__(self, output: str) -> pd.DataFrame:
        if output not in self._tables:
            if not output or not self._path(output).is_file():
                raise KeyError(output)
            text = csv_text(self._path(output))
            self._tables[output], self._texts[output] = runs_table(self._path(output), text), text
        return self._tables[output]

    def __iter__(self) -> Iterator[str]:
        on_disk = (f"{p.parent.name}/{p.name.removesuffix(RUNS_SUFFIX)}" for p in self.results_dir.glob(f"*/*{RUNS_SUFFIX}"))
        return iter(dict.fromkeys([*self._tables, *sorted(on_disk)]))

    def __len__(self) -> int:
        return sum(1 for _ in self)


def judge_all(claims: list[Claim], results_dir: Path) -> list[Verdict]:
    """Each claim judged on the runs tables under ``results_dir``."""
    tables = RunsTables(results_dir)
    return [judge(claim, tables) for claim in claims]


Judged = list[tuple[Verdict, TodayVerdict | None]]


def judge_papers(papers: list[str], results_dir: Path) -> Judged:
    """Every claim of ``papers``, in file order, judged against the paper's baseline and against today's
    solver on the runs tables under ``results_dir``: what the scoreboard and the today page both show,
    judged once (:func:`write_scoreboard`, :func:`svmrepro.report.claims.today_page.write_today_page`)."""
    tables = RunsTables(results_dir)
    claims = [claim for paper in papers for claim in load_claims(paper)]
    return [(judge(claim, tables), judge_today(claim, tables)) for claim in claims]


def judge_confirm(verdicts: list[Verdict], results_dir: Path) -> list[Verdict]:
    """Each claim of ``verdicts`` judged again, as locked, on the confirmatory phase's runs alone
    (``<results_dir>/confirm/<paper>/<id>.runs.csv``, runs made after the claims' lock on fresh seeds); a
    claim whose output has no confirm runs yet is *not run*."""
    tables = RunsTables(results_dir / CONFIRM_DIR)
    return [judge(v.claim, tables) for v in verdicts]


def confirm_cell(confirm: Verdict | None) -> str:
    """The scoreboard's "confirmed" cell: the confirmatory verdict and its statistic (blank when not run)."""
    if confirm is None or confirm.estimate is None:
        return ""
    return f"**{confirm.verdict}**: {confirm.ours()} ({len(confirm.estimate.runs)} runs, {confirm.seeds} seeds)"


def forest_lines(paper: str, verdicts: list[Verdict], confirms: list[Verdict | None], results_dir: Path,
                 mode: str) -> list[str]:
    """The paper's forest plot (:mod:`.forest`) of a ``mode`` page, written to ``<results_dir>/<paper>/claims.png``,
    and the lines that show it on top of the paper's page (none when it has no finding with an estimate)."""
    if write_forest(paper, verdicts, confirms, results_dir / paper, mode) is None:
        return []
    markers = markers_text(mode, any(shown(c) for c in confirms))
    return [f"The findings at a glance: each finding's estimate and 95 % interval ({markers}) against its `expect` "
            "(dark band) and `partly` (light band) regions, coloured by verdict.", "",
            f"![{paper}: each finding against its regions]({FOREST})", ""]


def board_link(from_paper: str | None, paper: str) -> str:
    """The link to ``paper``'s page of claims from a page in ``<results>/<from_paper>/`` (None: ``<results>/``)."""
    if from_paper == paper:
        return PAPER_BOARD
    return f"{'../' if from_paper else ''}{paper}/{PAPER_BOARD}"


def _output_link(from_paper: str, output: str) -> str:
    """An output's path (``<paper>/<id>``, without suffix) from a page in ``<results>/<from_paper>/``."""
    paper, output_id = output.split("/", 1)
    return output_id if paper == from_paper else f"../{paper}/{output_id}"


def amendment_anchor(claim: Claim) -> str:
    """The in-page anchor of the claim's amendments on the scoreboard (GitHub's heading slug)."""
    return re.sub(r"[^\w\- ]", "", f"{claim.paper}: {claim.id}".lower()).replace(" ", "-")


def registered(claim: Claim, entry: LockEntry | None, scoreboard: str = "") -> str:
    """The commit that registered the claim and, if amended, a link to its amendments."""
    text = entry.registered[:7] if entry else "not locked"
    if entry is not None and entry.blind is not None:
        text += "; blind" if entry.blind else f"; written after its data (defined {(entry.defined or '?')[:7]})"
    if claim.amendments:
        text += f", [amended {len(claim.amendments)}x]({scoreboard}#{amendment_anchor(claim)})"
    return text


def _locks(verdicts: list[Verdict]) -> dict[str, dict[str, LockEntry]]:
    return {paper: read_lock(paper) for paper in dict.fromkeys(v.claim.paper for v in verdicts)}


def claims_section(verdicts: list[Verdict]) -> list[str]:
    """The claims section of an output page (no lines when the output tests no claim)."""
    if not verdicts:
        return []
    locks = _locks(verdicts)
    lines = ["", "## Claims", "",
             "Each claim's statistic with its 95 % interval, computed from the runs above, the verdict its stated "
             "region gives, the conditions ours differ from the paper's in, and the commit that registered the "
             "claim (each paper's claims and their amendments: its `claims.md`; every paper: "
             f"[the scoreboard](../{SCOREBOARD})):", "",
             "| claim | the paper | ours | verdict | conditions | registered |", "|---|---|---|---|---|---|"]
    lines += [f"| {cell(v.claim.source)}: {cell(v.claim.claim)} | {cell(v.claim.paper_says)} | {cell(v.ours())} "
              f"| **{v.verdict}**: {cell(v.reason)} | {cell(v.claim.conditions.text())} "
              f"| {cell(registered(v.claim, locks[v.claim.paper].get(v.claim.id), _board_from_output(v)))} |"
              for v in verdicts]
    return lines


def _board_from_output(verdict: Verdict) -> str:
    """The claim's paper page from the page of the output it reads."""
    return board_link(verdict.claim.output.split("/", 1)[0] if verdict.claim.output else None, verdict.claim.paper)


def today_cell(today: TodayVerdict | None) -> str:
    """The scoreboard's "against today's solver" of a claim: its verdict word and, where the method
    runs today's solver inside, that verdict (blank for a claim without a ``today`` block)."""
    if today is None:
        return ""
    return f"**{today.today.verdict}**" + (f"; inside: **{today.inside.verdict}**" if today.inside else "")


def _row(verdict: Verdict, today: TodayVerdict | None, entry: LockEntry | None, results_dir: Path,
         confirm: Verdict | None = None) -> str:
    """The claim's row on its paper's page (``<results_dir>/<paper>/claims.md``)."""
    claim = verdict.claim
    link = thumb = ""
    if claim.output:
        output_id = claim.output.split("/", 1)[1]
        shown = _output_link(claim.paper, claim.output)
        if (results_dir / f"{claim.output}.md").is_file():
            link = f"[{output_id}]({shown}.md)"
        if (results_dir / f"{claim.output}.png").is_file():
            thumb = f'<img src="{shown}.png" width="{THUMB_WIDTH}">'
    runs = ""
    if verdict.estimate is not None:
        runs = f"{len(verdict.estimate.runs)} runs, {verdict.seeds} seeds; {', '.join(verdict.commits)}"
    kind = "" if claim.kind == FINDING else f" ({claim.kind.replace('_', ' ')}, not a finding)"
    cells = [f"{claim.source}: {claim.claim}", claim.conditions.text(), verdict.ours(), claim.paper_says,
             f"**{verdict.verdict}**{kind}: {verdict.reason}", confirm_cell(confirm), today_cell(today), runs,
             registered(claim, entry), link, thumb]
    return "| " + " | ".join(cell(c) for c in cells) + " |"


def amendment_lines(verdicts: list[Verdict]) -> list[str]:
    """A paper page's list of every amendment of ``verdicts``' claims, under a heading per amended claim (its anchor)."""
    lines = ["", "## Amendments", "",
             "A change to a claim made after its verdict could be seen is an amendment, recorded in the claim "
             "(`amendments` in its claims file) with the commit that made it, what it changed, why, and the verdict "
             f"before. Each paper's `claims.lock.yaml` holds a hash of every claim (written by `{COMMAND}`), so a "
             "change without an amendment fails the tests."]
    amended = [v.claim for v in verdicts if v.claim.amendments]
    if not amended:
        return [*lines, "", "No claim has been amended."]
    for claim in amended:
        lines += ["", f"### {claim.paper}: {claim.id}", "", f"{cell(claim.source)}: {cell(claim.claim)}", "",
                  "| commit | date | changed | why | verdict before |", "|---|---|---|---|---|"]
        lines += [f"| {a.commit[:7]} | {a.date} | {', '.join(a.changed)} | {cell(a.why)} | {cell(a.verdict_before)} |"
                  for a in claim.amendments]
    return lines


def _relative(path: Path) -> str:
    return path.relative_to(path.parents[2]).as_posix()


def claims_file(paper: str) -> str:
    """``experiments/<paper>/claims.yaml``, as a page names it."""
    return _relative(claims_path(paper))


KIND_WORDS = {FINDING: "findings (what the paper reports about the world)",
              "sanity": "sanity checks (true by construction of the code we run: they check our code, not the paper)",
              "open_question": "open questions (the paper's future work, not its claim)"}


def kind_lines(verdicts: list[Verdict], confirms: list[Verdict] | None = None) -> list[str]:
    """The headline: the findings' verdicts counted, then the sanity checks' and open questions' on lines of
    their own (issue 48, item 3). With ``confirms`` (the same claims judged on the confirmatory phase's runs),
    the findings are counted first by their confirmatory verdict where one exists, the exploratory beside."""
    lines = []
    if confirms is not None:
        lines += confirm_lines(verdicts, confirms)
    for kind in KINDS:
        mine = Counter(v.verdict for v in verdicts if v.claim.kind == kind)
        if kind != FINDING and not mine:
            continue
        counted = " · ".join(f"**{verdict}**: {mine.get(verdict, 0)}" for verdict in VERDICTS)
        phase = "exploratory verdicts of the " if confirms is not None else ""
        lines += [f"{sum(mine.values())} {phase}{KIND_WORDS[kind]}: {counted}", ""]
    return lines


#: the confirmatory verdict's level: a claim "holds" at 95 %, so of ``n`` calls about this many would differ
#: from their exploratory ones by chance alone if every claim sat at its interval's edge (an upper bound)
CONFIDENCE = 0.95


def confirm_lines(verdicts: list[Verdict], confirms: list[Verdict]) -> list[str]:
    """The findings with a confirmatory verdict counted by it, the rule for reading them, and how many
    calls chance alone could flip (issue 48, item 6)."""
    pairs = [(v, c) for v, c in zip(verdicts, confirms, strict=True)
             if v.claim.kind == FINDING and c.estimate is not None]
    counted = Counter(c.verdict for _, c in pairs)
    differ = sum(v.verdict != c.verdict for v, c in pairs)
    findings = sum(v.claim.kind == FINDING for v in verdicts)
    words = " · ".join(f"**{verdict}**: {counted.get(verdict, 0)}" for verdict in VERDICTS)
    return [f"**Confirmed** (judged once, as locked, on runs made after the lock on seeds never run before): "
            f"{len(pairs)} of {findings} findings have a confirmatory verdict: {words}. {differ} of them differ from "
            f"their exploratory verdict (the *confirmed* column). Each verdict rests on 95 % intervals: of "
            f"{len(pairs)} calls, about {round(len(pairs) * (1 - CONFIDENCE))} could land outside their region "
            "by chance alone, so a single flip is weak evidence; a claim holds where both phases agree.", ""]


#: the columns of a paper page's table of claims (:func:`_row`)
BOARD_HEADER = ["| claim | conditions | ours | the paper | verdict | confirmed | against today's solver "
                "| runs, seeds; commits | registered | output | figure |", "|---|---|---|---|---|---|---|---|---|---|---|"]


def _counted(verdicts: list[Verdict], confirms: list[Verdict | None]) -> list[str]:
    """The cells of a paper's row on the scoreboard: its claims, its findings per exploratory verdict, how many
    have a confirmatory verdict, and how many claims were amended."""
    findings = Counter(v.verdict for v in verdicts if v.claim.kind == FINDING)
    confirmed = sum(c is not None and c.estimate is not None for v, c in zip(verdicts, confirms, strict=True)
                    if v.claim.kind == FINDING)
    return [str(len(verdicts)), *(str(findings.get(verdict, 0)) for verdict in VERDICTS), str(confirmed),
            str(sum(bool(v.claim.amendments) for v in verdicts))]


def write_paper_board(paper: str, judged: list[tuple[Verdict, TodayVerdict | None, Verdict | None]],
                      locks: dict[str, dict[str, LockEntry]], results_dir: Path, mode: str) -> Path:
    """``<results_dir>/<paper>/claims.md``: the paper's findings counted, its forest plot, a row per claim and its
    amendments."""
    verdicts = [v for v, _, _ in judged]
    confirms = [c for _, _, c in judged]
    lines = [f"# {paper}: does each claim hold? ({mode} mode)", "",
             f"{len(verdicts)} claims of `{claims_file(paper)}`, each checked by code against the runs committed "
             f"beside its output; [the scoreboard](../{SCOREBOARD}) counts every paper's and says how a verdict is "
             "reached and what each column holds.", "",
             *kind_lines(verdicts, confirms if mode == "full" else None),
             *forest_lines(paper, verdicts, confirms, results_dir, mode),
             *BOARD_HEADER]
    lines += [_row(v, today, locks[paper].get(v.claim.id), results_dir, confirm) for v, today, confirm in judged]
    lines += amendment_lines(verdicts)
    path = results_dir / paper / PAPER_BOARD
    path.parent.mkdir(parents=True, exist_ok=True)
    write_file(path, "\n".join(lines) + "\n")
    return path


def write_scoreboard(papers: list[str], results_dir: Path, mode: str,
                     judged: Judged | None = None) -> tuple[Path, Counter]:
    """``<results_dir>/README.md``, each paper's ``<paper>/claims.md`` (:func:`write_paper_board`) and
    ``claims.csv``: every claim of ``papers`` with its verdict (``judged``: :func:`judge_papers` of them, when the
    caller has it already); the findings' counts per verdict."""
    judged = judge_papers(papers, results_dir) if judged is None else judged
    verdicts, todays = [v for v, _ in judged], [t for _, t in judged]
    confirms = judge_confirm(verdicts, results_dir) if mode == "full" else None
    shown = confirms if confirms is not None else [None] * len(verdicts)
    locks = _locks(verdicts)
    counts = Counter(v.verdict for v in verdicts if v.claim.kind == FINDING)
    by_paper = {paper: [(v, t, c) for v, t, c in zip(verdicts, todays, shown, strict=True) if v.claim.paper == paper]
                for paper in papers}
    lines = [f"# Does each claim hold? ({mode} mode)", "",
             f"{len(verdicts)} claims of {len(papers)} paper{'s' if len(papers) != 1 else ''}, each checked by code "
             "against the runs committed beside "
             "its output (`svmrepro-reproduce --mode " + mode + "` writes this page, each paper's `claims.md` and "
             "`claims.csv`, the same verdicts for machines; `--from-csv` rebuilds them).", "",
             *kind_lines(verdicts, confirms),
             "Each paper's claims are on a page of their own, its findings at a glance on top (each finding's "
             "estimate and interval against its regions), then a row per claim and the claim's amendments:", "",
             "| paper | claims | " + " | ".join(f"findings {verdict}" for verdict in VERDICTS)
             + " | findings confirmed | claims amended |",
             "|---|" + "---|" * (len(VERDICTS) + 3)]
    for paper, rows in by_paper.items():
        if rows:
            cells = _counted([v for v, _, _ in rows], [c for _, _, c in rows])
            lines.append(f"| [{paper}]({board_link(None, paper)}) | " + " | ".join(cells) + " |")
    lines += ["",
              "How a verdict is reached: the claim's statistic (a paired ratio or difference of two methods, a log-log "
              "slope or the difference of two, a mean, a trend across sizes) with its 95 % interval, against the "
              "regions the claim states (*registered* says, from git, whether they were committed before any run the "
              "claim reads: *blind*; a verdict on runs seen before its claim was written is exploratory): "
              "**supported** when the whole interval lies in "
              "`expect`, **partly supported** when it lies in the looser `partly`, **not supported** when it lies "
              "wholly outside `expect` and not inside `partly` (more runs cannot make it supported; where the interval "
              "straddles `partly`'s edge, the reason says partial support is undecided), **inconclusive** only where "
              "more or cleaner runs could change the verdict: the interval straddles `expect`'s edge, too few runs "
              "give an interval, or a timing was taken on a loaded machine. "
              "In the statistics, `a / b` is a ratio (geometric mean over pairs of runs with the same seed), "
              "p a paired t test, d Cohen's effect size. *Conditions* are where our verdict was reached under "
              "conditions other than the paper's (scale, data, cores, parallel timing, error counts). *Registered* "
              "is the commit that first stated the claim, then *blind* or the commit that last set its test, regions "
              "and output when that came after its data (`svmrepro.report.claims.blind`); an amended claim links its "
              "amendments, at the end of its paper's page. Each paper's "
              "claims and their lock: "
              + ", ".join(f"`{claims_file(p)}`, `{_relative(lock_path(p))}`" for p in papers) + ". "
              "*Against today's solver*: a claim about time judged again, in the same regions, against the faster "
              "of LIBSVM and oneDAL on each problem, on the cores the method uses (the rule in each claims file's "
              "legend), and, after *inside*, with the faster of them inside the method too; *unchanged* where the "
              f"claim compares no solver we could replace ([{TODAY_PAGE}]({TODAY_PAGE}) has the estimates and which "
              "solver each reading took).",
              "*Confirmed*: the same locked claim judged once on the confirmatory phase's runs alone "
              f"(`{CONFIRM_DIR}/`, `svmrepro-reproduce --mode confirm`: the full sweep on seeds no run had, made after "
              "the lock); blank where those runs are not made yet. The exploratory verdict beside it may be re-read "
              "as runs are added; the confirmatory one is read once, after its planned seeds ran. It judges the "
              "claim's test; its reading against today's solver is judged on the exploratory runs only."]
    for paper, rows in by_paper.items():
        if rows:
            write_paper_board(paper, rows, locks, results_dir, mode)
    path = results_dir / SCOREBOARD
    results_dir.mkdir(parents=True, exist_ok=True)
    write_file(path, "\n".join(lines) + "\n")
    write_claims_csv(verdicts, todays, locks, results_dir, confirms)
    return path, counts
