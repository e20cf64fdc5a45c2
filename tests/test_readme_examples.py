"""The README's "Run one experiment, a sweep, a parallel sweep" block runs as written: every
``svmrepro-run`` line composes (each job of a sweep, as the svmrepro sweeper expands it) and every
``svmrepro-reproduce`` line names a plan and experiments that compose, all without fitting; a
parallel example never names a timed experiment, whose jobs would run one at a time."""

import re
import shlex
from pathlib import Path

import pytest

from svmrepro.compose import compose_config, compose_run
from svmrepro.sweep.jobs import sweep_jobs
from svmrepro.exclusive import is_exclusive
from svmrepro.reproduce import load_plan, parse_args, selected_experiments

README = Path(__file__).resolve().parents[1] / "README.md"
SECTION = "## Run one experiment, a sweep, a parallel sweep"


def example_lines() -> list[list[str]]:
    """The block's commands, split as the shell splits them, without their comments."""
    block = re.search(r"```bash\n(.*?)```", README.read_text().split(SECTION, 1)[1], re.S).group(1)
    commands = [shlex.split(line, comments=True) for line in block.splitlines()]
    return [words for words in commands if words and words[0] in ("svmrepro-run", "svmrepro-reproduce")]


def run_jobs(words: list[str]) -> list[list[str]]:
    """The overrides of every job ``svmrepro-run`` makes of ``words`` (flags and Hydra's own settings aside)."""
    overrides, flags = [], iter(words[1:])
    for word in flags:
        if word == "--cfg":
            next(flags)  # its value: job, hydra or all
        elif not word.startswith("-"):
            overrides.append(word)
    own = [o for o in overrides if not o.startswith("hydra")]
    if "-m" not in words:
        return [own]
    primary = compose_config([o for o in own if "," not in o])
    return sweep_jobs(primary.sweep[primary.mode.value], dict(o.split("=", 1) for o in own))


def test_the_block_has_run_and_reproduce_examples_and_a_parallel_one():
    names = [words[0] for words in example_lines()]
    assert names.count("svmrepro-run") >= 4 and "svmrepro-reproduce" in names
    assert any("hydra/launcher=parallel" in words for words in example_lines())


@pytest.mark.parametrize("words", [w for w in example_lines() if w[0] == "svmrepro-run"], ids=shlex.join)
def test_every_run_example_composes_every_job(words):
    jobs = run_jobs(words)
    assert jobs
    for job in jobs:
        compose_run(job)
    if "-m" in words:  # Hydra's own settings of the line compose too
        compose_config([w for w in words[1:] if w.startswith("hydra") or w.startswith("experiment=")],
                       return_hydra_config=True)


@pytest.mark.parametrize("words", [w for w in example_lines() if w[0] == "svmrepro-reproduce"], ids=shlex.join)
def test_every_reproduce_example_names_a_plan_and_experiments_that_compose(words):
    args = parse_args(words[1:])
    load_plan(args.mode)
    chosen = selected_experiments(args)
    assert chosen
    for experiment in chosen:
        compose_config([f"experiment={experiment}", f"mode={args.mode}"])


@pytest.mark.parametrize("words", [shlex.split(line, comments=True) for line in README.read_text().splitlines()
                                   if line.startswith("svmrepro-run") and "hydra/launcher=parallel" in line],
                         ids=shlex.join)
def test_no_parallel_example_runs_a_timed_experiment(words):
    configs = [compose_run(job)[0] for job in run_jobs(words)]
    assert not any(map(is_exclusive, configs)), f"{shlex.join(words)}: a timed experiment's jobs run one at a time"
