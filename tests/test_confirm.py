"""The confirmatory phase (issue 48, item 5): runs made after the claims were locked, on seeds no run had,
judged by the locked claims. Proven from git and the committed runs CSVs, with code of its own:

- every confirm runs CSV (``results/confirm/<paper>/<id>.runs.csv``) was first committed after the commit
  that locked each claim judging it, and after its experiment declared its confirm seeds;
- its runs are all of phase ``confirm``, on seeds disjoint from every seed of the output's explore runs;
- ``results/claims.csv`` carries the confirmatory verdict of each claim whose output has confirm runs.
"""

import subprocess
from functools import cache
from pathlib import Path

import pandas as pd
import pytest
import yaml

from svmrepro.compose import compose_config
from svmrepro.sweep.jobs import mode_sweep, sweep_jobs

CHECKOUT = Path(__file__).resolve().parents[1]
RESULTS = CHECKOUT / "results"
CONFIRM = RESULTS / "confirm"
PAPERS = sorted(p.parent.name for p in (CHECKOUT / "experiments").glob("*/claims.yaml"))
CONFIRM_CSVS = sorted(CONFIRM.glob("*/*.runs.csv"))


def git(*args: str) -> str:
    return subprocess.run(["git", "-C", str(CHECKOUT), *args], capture_output=True, text=True, check=True).stdout


def full_history() -> bool:
    try:
        return git("rev-parse", "--is-shallow-repository").strip() == "false"
    except (OSError, subprocess.CalledProcessError):
        return False


def first_commit(path: Path, text: str | None = None) -> str | None:
    """The first commit adding ``path`` (or, with ``text``, the first making ``text`` appear in it)."""
    args = ["log", "--reverse", "--format=%H"] + (["-S", text] if text else ["--diff-filter=A"])
    found = git(*args, "--", str(path.relative_to(CHECKOUT))).split()
    return found[0] if found else None


def is_before(earlier: str, later: str) -> bool:
    """``earlier`` is an ancestor of ``later`` and not the same commit."""
    if earlier == later:
        return False
    done = subprocess.run(["git", "-C", str(CHECKOUT), "merge-base", "--is-ancestor", earlier, later], check=False)
    return done.returncode == 0


def output_name(csv: Path) -> str:
    return f"{csv.parent.name}/{csv.name.removesuffix('.runs.csv')}"


@cache
def read_yaml(path: Path) -> dict:
    """A committed YAML file, read once per test process (libyaml's parser where PyYAML has it)."""
    return yaml.load(path.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def claims_reading(output: str) -> list[tuple[str, str]]:
    """(paper, claim id) of each claim whose own output is ``output``."""
    found = []
    for paper in PAPERS:
        for claim in read_yaml(CHECKOUT / "experiments" / paper / "claims.yaml")["claims"]:
            if claim.get("output") == output and not claim.get("not_run"):
                found.append((paper, claim["id"]))
    return found


needs_history = pytest.mark.skipif(not full_history(), reason="needs the full git history (not a shallow clone)")


@needs_history
@pytest.mark.parametrize("csv", CONFIRM_CSVS, ids=output_name)
def test_a_confirm_runs_csv_was_first_committed_after_the_lock_of_every_claim_judging_it(csv):
    added = first_commit(csv)
    assert added is not None, f"{csv} is not committed"
    for paper, claim_id in claims_reading(output_name(csv)):
        lock = CHECKOUT / "experiments" / paper / "claims.lock.yaml"
        entry = read_yaml(lock)["claims"][claim_id]
        locked = first_commit(lock, entry["hash"])
        assert locked and is_before(locked, added), f"{paper}/{claim_id}: locked at {locked}, {csv.name} at {added}"
    experiment = CHECKOUT / "conf" / "experiment" / f"{output_name(csv)}.yaml"
    declared = first_commit(experiment, "confirm:")
    if declared is not None:  # an experiment taking its seeds from another's (defaults) has no block of its own
        assert is_before(declared, added), f"{experiment.name}: confirm seeds declared at {declared}, runs at {added}"


@pytest.mark.parametrize("csv", CONFIRM_CSVS, ids=output_name)
def test_confirm_runs_are_of_the_confirm_phase_on_seeds_the_explore_runs_never_had(csv):
    confirm = pd.read_csv(csv, dtype=str)
    assert set(confirm["tags.phase"]) == {"confirm"} and set(confirm["tags.mode"]) == {"confirm"}
    explore_csv = RESULTS / csv.parent.name / csv.name
    explore = pd.read_csv(explore_csv, dtype=str) if explore_csv.is_file() else pd.DataFrame({"params.seed": []})
    assert not set(confirm["params.seed"]) & set(explore["params.seed"])
    assert "confirm" not in set(explore.get("tags.phase", pd.Series(dtype=str)))


def test_the_confirm_sweep_is_the_full_sweep_on_the_declared_seeds_each_grid_as_many_as_it_had():
    cfg = compose_config(["experiment=cascade/table4", "mode=confirm"])
    full, confirm = mode_sweep(cfg, "full"), mode_sweep(cfg, "confirm")
    assert [{k: v for k, v in grid.items() if k != "seed"} for grid in confirm] == \
        [{k: v for k, v in dict(grid).items() if k != "seed"} for grid in full]
    assert {grid["seed"] for grid in confirm} == {"1000,1001,1002"}  # its grids ran three seeds
    assert len(sweep_jobs(confirm)) == len(sweep_jobs(full))
    one = compose_config(["experiment=cross_training/table1_forest200000", "mode=confirm"])
    assert {grid["seed"] for grid in mode_sweep(one, "confirm")} == {"1000"}
    assert mode_sweep(compose_config([]), "confirm") is None  # no experiment, no confirm seeds


def test_every_experiment_s_confirm_seeds_are_disjoint_from_its_full_sweep_s():
    for path in sorted((CHECKOUT / "conf" / "experiment").glob("*/*.yaml")):
        name = f"{path.parent.name}/{path.stem}"
        cfg = compose_config([f"experiment={name}", "mode=confirm"])
        confirm = mode_sweep(cfg, "confirm")
        if confirm is None:
            continue
        seeds = lambda sweep: {dict(job)["seed"] for job in (dict(o.split("=", 1) for o in j) for j in sweep_jobs(sweep))}
        assert not seeds(confirm) & seeds(mode_sweep(cfg, "full")), name


def test_claims_csv_has_the_confirmatory_verdict_of_each_claim_with_confirm_runs():
    table = pd.read_csv(RESULTS / "claims.csv", dtype=str, keep_default_na=False)
    assert {"verdict_confirm", "estimate_confirm", "low_confirm", "high_confirm", "runs_confirm",
            "seeds_confirm"} <= set(table.columns)
    with_runs = {output_name(csv) for csv in CONFIRM_CSVS}
    for paper, claim_id in [pc for output in with_runs for pc in claims_reading(output)]:
        row = table[(table["paper"] == paper) & (table["id"] == claim_id)].iloc[0]
        assert row["verdict_confirm"] not in ("", "not run") and int(row["runs_confirm"]) > 0, (paper, claim_id)
