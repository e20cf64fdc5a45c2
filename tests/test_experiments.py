"""Every experiment, shrunk by its ``smoke:`` overrides, runs its whole sweep and builds its output."""

from pathlib import Path
from unittest import mock

import pytest
from omegaconf import OmegaConf

from svmrepro.compose import compose_config, experiments
from svmrepro.data import covtype
from svmrepro.report import build_output
from svmrepro.report.runs import runs_from_mlflow
from svmrepro.report.spec import spec_from_config
from svmrepro.runner import run
from svmrepro.sweep.jobs import JobComposer, sweep_jobs

CHECKOUT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module", autouse=True)
def covtype_cache_read_once():
    """covtype's cache file, read and hashed once for this module's jobs (about 0.5 s a job, 70 jobs) rather than
    for each: the same file (its path, size and time) gives the table it gave, read-only, so no job can change it
    for the next. Every run outside this module reads and verifies it, and tests/data/test_covtype.py tests that
    verification."""
    read, kept = covtype.cached_table, {}

    def once(cache: Path):
        stat = cache.stat()
        key = (cache, stat.st_size, stat.st_mtime_ns)
        if key not in kept:
            table = read(cache)
            if table is None:  # not the verified table: the loader rebuilds it, as without this fixture
                return None
            table.flags.writeable = False
            kept[key] = table
        return kept[key]

    with mock.patch.object(covtype, "cached_table", once):
        yield


@pytest.mark.parametrize("experiment", experiments())
def test_experiment_smoke_runs_its_sweep_and_builds_its_output(experiment, store_uri, tmp_path):
    base = [f"experiment={experiment}", "mode=quick", f"tracking.uri={store_uri}"]
    cfg = compose_config(base)
    assert cfg.smoke, f"{experiment} needs a smoke: node that makes it run in seconds"
    jobs = sweep_jobs(cfg.sweep.quick, OmegaConf.to_container(cfg.smoke))
    composer = JobComposer(base)  # each job's config as compose_run gives it (tests/test_preflight.py)
    for job in jobs:
        run(*composer.compose(job))
    runs = runs_from_mlflow(experiment, "quick", store_uri)
    assert len(runs) == len(jobs)
    spec = spec_from_config(experiment, cfg.report)
    paths = build_output(spec, runs, tmp_path, "quick")
    assert paths.table_md.is_file() and paths.figure.is_file()


def test_a_sweep_is_a_grid_or_the_union_of_grids_with_overrides_on_each():
    grid = {"seed": "0,1", "dataset.n_train": "100"}
    assert sorted(map(tuple, sweep_jobs(grid))) == [("seed=0", "dataset.n_train=100"), ("seed=1", "dataset.n_train=100")]
    union = [{"algorithm": "svc", "algorithm.C": "1,10"}, {"algorithm": "cross_training", "seed": "range(3)"}]
    jobs = sweep_jobs(union, {"dataset.n_train": 50})  # a key no grid sets: on each
    assert len(jobs) == 2 + 3 and all("dataset.n_train=50" in job for job in jobs)
    # a key one grid sets narrows that grid (seed=7, a seed it lacks, replaces range(3)); the other is left out
    assert sweep_jobs(union, {"seed": 7}) == [["algorithm=cross_training", "seed=7"]]
