"""What a page or a deviation says about its runs agrees with the runs: how many seeds or draws,
which seeds, the training sizes, whether the runs had the machine alone or shared it.

Every committed output page (the ``.md`` beside a ``.runs.csv`` under results/: its provenance lines
and its deviations) and every experiment's ``report.deviations`` is read clause by clause (split at
``;``) and each statement of one of those kinds is checked against the committed runs CSV. A clause
that names another output (``mixture/fig2_time``, ``table1_forest200000.md``) speaks of that output's
runs and is not checked here; one about quick mode neither (only full-mode runs are committed).
Sizes are checked only where the clause is not about the paper and the output's x is a training size.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import pandas as pd
import pytest

from svmrepro.compose import experiments
from svmrepro.exclusive import LOAD_MARGIN
from svmrepro.report.claims.estimate import SEED_COLUMN
from svmrepro.report.claims.verdict import loaded_runs
from svmrepro.report.facts import SEED_COLUMNS, facts_lines
from svmrepro.report.runs import read_runs
from svmrepro.report.spec import spec_from_config
from svmrepro.reproduce import spec_of

CHECKOUT = Path(__file__).resolve().parents[1]
RESULTS = CHECKOUT / "results"
WORDS = {"one": 1, "a single": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
         "nine": 9, "ten": 10}
COUNT = r"\d+|" + "|".join(WORDS)
#: "3 seeds", "one draw", "10 realisations" (not "one seed-dependent hyperplane")
SEED_COUNT = re.compile(rf"\b(?P<n>{COUNT})\s+(?:seeds?|draws?|realisations?|realizations?|repetitions?)\b(?!-)",
                        re.IGNORECASE)
#: "(seed 1)", "seeds 1..4", "seeds 0, 1, 2", "seeds 1-3"; "test seed 0" is the test set's own seed
SEED_LIST = re.compile(r"(?<!test )\bseeds?\s+(?P<seeds>\d+(?:\s*(?:\.\.|-|–|,|and)\s*\d+)*)", re.IGNORECASE)
TEST_SEED = re.compile(r"\btest seed (?P<seed>\d+)", re.IGNORECASE)
#: "every run alone on it", "each run alone", "Every run had the machine alone" (not "evidence only
#: from runs alone on it", a rule rather than a fact)
ALONE = re.compile(r"\b(?:every|each|all)(?:\s+of\s+(?:its|their|the|these))?\s+runs?\b[^.;]*?\balone\b",
                   re.IGNORECASE)
#: "these runs shared the 2-core machine", "machine shared with other jobs", "beside other jobs"
SHARED = re.compile(r"\bshared\b[^.;]*?\bmachine\b|\bmachine\s+shared\b|\bbeside other (?:jobs|work)\b",
                    re.IGNORECASE)
#: "N of M runs shared the machine" (the generated line): exactly N did
SHARED_COUNT = re.compile(r"\b(?P<n>\d+) of (?P<total>\d+) runs shared the machine\b")
NUMBER = r"\d+(?:\.\d+)?(?:\s*(?:x|·|×)\s*10\^\d+)?|10\^\d+"
SIZE_UNIT = r"(?:training\s+)?(?:rows|points|examples)"
SIZE_RANGE = re.compile(rf"\b(?P<low>{NUMBER})\s+to\s+(?P<high>{NUMBER})\s+{SIZE_UNIT}")
SIZE_MAX = re.compile(rf"\bstops at (?P<high>{NUMBER})\s+{SIZE_UNIT}")
SIZE_ONLY = re.compile(rf"\bn = (?P<n>{NUMBER})\s+{SIZE_UNIT}")
SIZE_COLUMNS = ("metrics.n_train", "params.dataset.n_train")


def number(text: str) -> float:
    """``25000``, ``10^6``, ``3 x 10^6``, ``3·10^4`` as a number."""
    parts = re.split(r"\s*(?:x|·|×)\s*", text.strip())
    value = 1.0
    for part in parts:
        base, _, power = part.partition("^")
        value *= float(base) ** float(power or 1)
    return value


def seed_set(text: str) -> set[int]:
    """``1..4`` / ``1-4`` as a range, ``0, 1, 2`` / ``0 and 1`` as listed."""
    found: set[int] = set()
    for piece in re.split(r"\s*(?:,|\band\b)\s*", text):
        bounds = re.split(r"\s*(?:\.\.|-|–)\s*", piece)
        found |= set(range(int(bounds[0]), int(bounds[-1]) + 1))
    return found


class Runs:
    """The facts of one output's runs a statement can be checked against."""

    def __init__(self, runs: pd.DataFrame, x: str | None):
        seeds = pd.to_numeric(runs.get(SEED_COLUMN), errors="coerce")
        self.seeds = set(seeds.dropna().astype(int))
        per_x = [] if x not in runs or x in SEED_COLUMNS else runs.assign(_seed=seeds).groupby(x)["_seed"]
        self.seed_sets = [self.seeds] + [set(s.dropna().astype(int)) for _, s in per_x]
        test_seed = runs.get("params.dataset.test_seed")
        self.test_seeds = None if test_seed is None else set(pd.to_numeric(test_seed).dropna().astype(int))
        reliable = runs.get("tags.timing_reliable")
        self.n = len(runs)
        self.all_reliable = reliable is not None and reliable.eq("true").all()
        self.loaded = loaded_runs(runs)[0] if reliable is None else int(reliable.ne("true").sum())
        size = next((c for c in SIZE_COLUMNS if c in runs), None)
        self.sizes = set(pd.to_numeric(runs[size], errors="coerce").dropna()) if size else set()
        self.x_is_size = x is not None and x.endswith("n_train")


def problems(statement: str, runs: Runs, others: list[str]) -> list[str]:
    """Each fact ``statement`` states that its runs contradict, as one line."""
    found = []
    for clause in statement.split(";"):
        about_other = any(re.search(rf"\b{re.escape(other)}\b", clause) for other in others)
        if about_other or re.search(r"\bquick\b", clause, re.IGNORECASE):
            continue
        for match in SEED_COUNT.finditer(clause):
            n = WORDS.get(match["n"].lower()) or int(match["n"])
            if n not in {len(s) for s in runs.seed_sets}:
                found.append(f"{match[0]!r}: the runs have {len(runs.seeds)} seeds "
                             f"({sorted({len(s) for s in runs.seed_sets[1:]})} per x)")
        for match in SEED_LIST.finditer(clause):
            if seed_set(match["seeds"]) not in runs.seed_sets:
                found.append(f"{match[0]!r}: the runs' seeds are {sorted(runs.seeds)}")
        for match in TEST_SEED.finditer(clause):
            if runs.test_seeds is not None and {int(match["seed"])} != runs.test_seeds:
                found.append(f"{match[0]!r}: the runs' test seeds are {sorted(runs.test_seeds)}")
        if ALONE.search(clause) and not runs.all_reliable:
            found.append(f"{ALONE.search(clause)[0]!r}: {runs.loaded} of {runs.n} runs are not timing_reliable")
        count = SHARED_COUNT.search(clause)
        if count and (int(count["n"]), int(count["total"])) != (runs.loaded, runs.n):
            found.append(f"{count[0]!r}: {runs.loaded} of {runs.n} runs were timed on a loaded machine")
        elif SHARED.search(clause) and not runs.loaded:
            found.append(f"{SHARED.search(clause)[0]!r}: no run was timed at a load above the cores + {LOAD_MARGIN}")
        if runs.x_is_size and runs.sizes and "paper" not in clause:
            for match in SIZE_RANGE.finditer(clause):
                if (number(match["low"]), number(match["high"])) != (min(runs.sizes), max(runs.sizes)):
                    found.append(f"{match[0]!r}: the runs span {min(runs.sizes):g} to {max(runs.sizes):g}")
            for match in SIZE_MAX.finditer(clause):
                if number(match["high"]) != max(runs.sizes):
                    found.append(f"{match[0]!r}: the largest run has {max(runs.sizes):g}")
        for match in SIZE_ONLY.finditer(clause):
            if runs.sizes and {number(match["n"])} != runs.sizes:
                found.append(f"{match[0]!r}: the runs have {sorted(runs.sizes)}")
    return found


# ---------------------------------------------------------------------------------------------
# The committed pages and the experiments' deviations

COMMITTED = [name for name in experiments() if (RESULTS / f"{name}.runs.csv").is_file()]


@cache
def full_spec(output: str):
    return spec_of(output, "full")


@cache
def runs_of(output: str) -> pd.DataFrame:
    return read_runs(RESULTS / f"{output}.runs.csv")


@cache
def facts_of(output: str) -> tuple[Runs, list[str]]:
    """The runs' facts and the names by which a clause points at another output: ``<paper>/<id>``,
    ``<id>.md``, or an id that is no common word (``fig2_time``, not ``example``)."""
    others = [o for o in COMMITTED if o != output]
    ids = [o.split("/")[-1] for o in others]
    return Runs(runs_of(output), full_spec(output).x), others + [f"{i}.md" for i in ids] + [i for i in ids if "_" in i]


def stated_lines(page: str) -> list[str]:
    """The page's provenance lines (above its table) and its deviations."""
    lines = page.splitlines()
    first_table = next((i for i, line in enumerate(lines) if line.startswith("|")), len(lines))
    stated = [line for line in lines[:first_table] if line.startswith("- ")]
    if "## Where our setup differs from the paper" in lines:
        start = lines.index("## Where our setup differs from the paper") + 1
        stated += [line for line in lines[start:] if line.startswith("- ")]
    return stated


@pytest.mark.parametrize("output", COMMITTED)
def test_a_committed_page_states_only_what_its_runs_show(output):
    runs, others = facts_of(output)
    page = (RESULTS / f"{output}.md").read_text()
    wrong = [f"{output}.md: {p}" for line in stated_lines(page) for p in problems(line, runs, others)]
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("output", COMMITTED)
def test_an_experiments_deviations_state_only_what_its_runs_show(output):
    runs, others = facts_of(output)
    wrong = [f"conf/experiment/{output}.yaml: {p}" for line in full_spec(output).deviations
             for p in problems(line, runs, others)]
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("output", COMMITTED)
def test_every_section_of_a_committed_page_is_computed(output):
    """A section comparing groups the output's full sweep does not run (a companion that inherits its
    twin's ``report.paired`` or ``report.ratios``) reads "no runs of ...: ... not computed" on the page."""
    page = (RESULTS / f"{output}.md").read_text()
    assert not [line for line in page.splitlines() if line.endswith(" not computed")], output


@pytest.mark.parametrize("output", COMMITTED)
def test_the_generated_fact_lines_pass_the_same_check(output):
    runs, others = facts_of(output)
    lines = facts_lines(runs_of(output), full_spec(output))
    assert lines and not [p for line in lines for p in problems(line, runs, others)]


# ---------------------------------------------------------------------------------------------
# The statements of each kind found in the repo, caught when wrong and let through when right

def toy_runs(seeds_per_x: dict[int, list[int]], reliable: list[str] | None = None, loads=None) -> Runs:
    rows = [(x, s) for x, seeds in seeds_per_x.items() for s in seeds]
    frame = pd.DataFrame({"metrics.n_train": [x for x, _ in rows], SEED_COLUMN: [str(s) for _, s in rows],
                          "params.dataset.test_seed": "0", "tags.cpu_count": "2"})
    if reliable is not None:
        frame["tags.timing_reliable"] = reliable
    if loads is not None:
        frame["tags.load_avg_1m"] = loads
    return Runs(frame, "metrics.n_train")


THREE_SEEDS = toy_runs({10000: [1, 2, 3], 1000000: [1, 2, 3]}, reliable=["true"] * 6)
SHARED_RUNS = toy_runs({100: [0, 1, 2], 30000: [0]}, loads=["3.1", "1.0", "1.0", "1.0"])


@pytest.mark.parametrize("statement, runs, wrong", [
    ("Table 1's settings at other training sizes, one draw (seed 1) per size", THREE_SEEDS, 2),
    ("full-mode runs one at a time under the timing protocol (timing: exclusive), 3 seeds", THREE_SEEDS, 0),
    ("5 seeds (label noise, validation split and subsets drawn by seed)", THREE_SEEDS, 1),
    ("uniform on [0, 200]^2, seeds 1..3, test seed 0", THREE_SEEDS, 0),
    ("uniform on [0, 200]^2, seeds 1..4, test seed 1", THREE_SEEDS, 2),
    ("one seed-dependent random hyperplane per run", THREE_SEEDS, 0),
    ("test size 10000 per seed (not stated in the paper)", THREE_SEEDS, 0),
    ("2-core machine shared with other jobs instead of a 2.4 GHz Pentium 4", THREE_SEEDS, 1),
    ("times on our 2-core machine, every run alone on it (timing: exclusive)", THREE_SEEDS, 0),
    ("times on our 2-core machine, every run alone on it (timing: exclusive)", SHARED_RUNS, 1),
    ("these runs shared the 2-core machine with other work, and timings are evidence only from runs alone on it",
     SHARED_RUNS, 0),
    ("these runs shared the 2-core machine with other work", THREE_SEEDS, 1),
    ("full mode stops at 10^6 points; 3 x 10^6 would add about an hour", THREE_SEEDS, 0),
    ("full mode stops at 3 x 10^6 points", THREE_SEEDS, 1),
    ("full mode: 100 to 30000 rows, 3 seeds up to 10000 and one above", SHARED_RUNS, 0),
    ("full mode: 25000 to 400000 rows; the paper's figure spans 100000 to 400000", SHARED_RUNS, 1),
    ("n = 1000 training points and C = 1: the paper states neither", THREE_SEEDS, 1),
    ("quick mode: 3000 training and 3000 test points drawn from the halves, one seed", THREE_SEEDS, 0),
    ("Fig. 2's time statements are measured by mixture/fig2_time (every run alone on the machine)", SHARED_RUNS, 0),
    ("- training set size: 100 with seeds 0..2; 30000 with seed 0", SHARED_RUNS, 0),
    ("- timings: 1 of 4 runs shared the machine, a 1-minute load above the cores + 0.5", SHARED_RUNS, 0),
    ("- timings: 2 of 4 runs shared the machine, a 1-minute load above the cores + 0.5", SHARED_RUNS, 1),
])
def test_each_kind_of_statement_is_checked_against_the_runs(statement, runs, wrong):
    found = problems(statement, runs, ["mixture/fig2_time"])
    assert len(found) == wrong, found


def test_the_generated_lines_state_seeds_per_size_and_who_shared_the_machine():
    spec = spec_from_config("paper_x/fig9", {"title": "t", "x": "metrics.n_train", "x_label": "training points",
                                              "metrics": ["n_sv"]})
    runs = pd.DataFrame({"metrics.n_train": [100.0, 100.0, 100.0, 1e6], SEED_COLUMN: ["0", "1", "2", "0"],
                         "tags.cpu_count": "2", "tags.load_avg_1m": ["3.10", "1.00", "1.00", "1.00"],
                         "tags.load_avg_1m_end": ["1.00", "1.00", "1.00", None]})
    seeds, timings = facts_lines(runs, spec)
    assert seeds == "- training points: 100 with seeds 0..2; 1000000 with seed 0"
    assert timings.startswith("- timings: 1 of 4 runs shared the machine") and "highest 3.10, 2 cores" in timings
    assert timings.endswith("1 of 4 runs recorded no load at their end")
    alone = facts_lines(runs.assign(**{"tags.load_avg_1m": "1.00", "tags.load_avg_1m_end": "1.20"}), spec)[1]
    assert alone == "- timings: every run had the machine alone, no 1-minute load above the cores + 0.5 at its " \
                    "start or end (highest 1.20, 2 cores)"
    beside = facts_lines(runs.assign(**{"tags.load_avg_1m": "1.00", "tags.load_avg_1m_end": "1.20",
                                        "tags.timing": ["shared", "exclusive", "exclusive", "exclusive"]}), spec)[1]
    assert beside == "- timings: 1 of 4 runs were timed beside other runs (timing: shared): their times are not evidence"
