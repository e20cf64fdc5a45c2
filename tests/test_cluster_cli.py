"""The README's dask recipe ("Scaling out") run as a user runs it: ``svmrepro-run`` in a subprocess,
its sub-SVMs on a dask cluster of separate scheduler and worker processes (tests/clusters.py).

Every algorithm with parallel sub-SVM fits runs once on the cluster with ``algorithm.n_jobs=2``,
all in one ``svmrepro-run -m`` of a small experiment (one process start for all of them, so the
file takes seconds, not minutes). Each run must finish, say where it ran (the cluster's address, its
two workers on 127.0.0.1) and give the model the same configuration gives on loky. The editing
algorithms (multiedit, wilson_edit, condense) fit their one SVM serially, so they have no place here.
"""

import re
import shlex
import subprocess
import sys
from pathlib import Path

import forked_cli
import pytest
import yaml

from clusters import dask_processes
from stores import copy_store
from svmrepro.compose import compose_config
from svmrepro.sweep.jobs import sweep_jobs
from svmrepro.identity import config_hash
from svmrepro.reproduce import sweep_hashes
from svmrepro.runner import FINISHED, run
from svmrepro.store import KIND_TAG, RESULT_KIND, Store

#: each algorithm with sub-SVMs fitted through svmrepro.algorithms.parallel, shrunk to seconds
ALGORITHMS = {
    "cascade_svc": {},
    "graf_cascade_svc": {"algorithm.n_subsets": 4},
    "cross_training": {"algorithm.n_subsets": 4},
    "gated_svm_mixture": {"algorithm.n_experts": 3, "algorithm.n_hidden": 8, "algorithm.n_iter": 2,
                          "algorithm.gater_max_epochs": 5},
    "uniform_svm_mixture": {"algorithm.n_experts": 3},
    "bagged_first_stage": {"algorithm.n_subsets": 4},
}
DATA = {"dataset.n_train": 300, "dataset.n_test": 300}
EXPERIMENT = "cluster/sub_svms"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with dask_processes(tmp_path_factory.mktemp("dask"), n_workers=2) as running:
        yield running


@pytest.fixture(scope="module")
def dask_runs(cluster, tmp_path_factory, empty_store):
    """The experiment's runs, made by ``svmrepro-run -m ... parallel.backend=dask parallel.address=...``."""
    root = tmp_path_factory.mktemp("cli")
    experiment = root / "conf" / "experiment" / f"{EXPERIMENT}.yaml"
    experiment.parent.mkdir(parents=True)
    sweep = [{"algorithm": name, **shrink} for name, shrink in ALGORITHMS.items()]
    experiment.write_text("# @package _global_\n" + yaml.safe_dump({**_nested(DATA), "sweep": {"quick": sweep}}))
    store = copy_store(empty_store, root / "mlflow.db")
    command = [sys.executable, "-m", "svmrepro", "-m", "--config-dir", str(root / "conf"), f"experiment={EXPERIMENT}",
               "algorithm.n_jobs=2", "parallel.backend=dask", f"parallel.address={cluster.address}",
               f"tracking.uri={store}", f"hydra.sweep.dir={root / 'multirun'}"]
    done = forked_cli.run(command, cwd=root, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr[-3000:]
    runs = Store(store).runs_frame(EXPERIMENT, f"tags.`{KIND_TAG}` = '{RESULT_KIND}'")
    return runs.set_index("tags.algorithm", drop=False)


@pytest.fixture(scope="module")
def loky_store(tmp_path_factory):
    """One store for the loky runs of every algorithm (their configurations differ)."""
    return f"sqlite:///{tmp_path_factory.mktemp('loky') / 'mlflow.db'}"


def _nested(flat: dict) -> dict:
    tree: dict = {}
    for dotted, value in flat.items():
        *parents, leaf = dotted.split(".")
        node = tree
        for key in parents:
            node = node.setdefault(key, {})
        node[leaf] = value
    return tree


def test_every_algorithm_ran_on_the_cluster_and_says_where(dask_runs, cluster):
    from distributed import Client

    with Client(cluster.address) as client:  # the sub-fits were split over both worker processes
        executed = client.run(lambda dask_worker: dask_worker.state.executed_count)
    assert len(executed) == 2 and min(executed.values()) > 0, executed
    assert sorted(dask_runs.index) == sorted(ALGORITHMS)
    assert (dask_runs["status"] == FINISHED).all()
    assert (dask_runs["tags.parallel.backend"] == "dask").all()
    assert (dask_runs["tags.parallel.address"] == cluster.address).all()
    assert (dask_runs["tags.parallel.workers"] == "2").all()
    assert (dask_runs["tags.parallel.hosts"] == "127.0.0.1: 2 workers x 1 thread").all()
    assert (dask_runs["tags.parallel.n_jobs"] == "2").all()
    assert (dask_runs["params.algorithm.n_jobs"] == "2").all()


@pytest.mark.parametrize("algorithm", sorted(ALGORITHMS))
def test_the_cluster_fits_the_model_loky_fits(dask_runs, algorithm, loky_store):
    overrides = [f"{k}={v}" for k, v in {**DATA, **ALGORITHMS[algorithm]}.items()]
    cfg = compose_config([f"algorithm={algorithm}", *overrides, "algorithm.n_jobs=2", "parallel.backend=loky",
                          f"tracking.uri={loky_store}"])
    local = run(cfg, {"experiment": EXPERIMENT, "algorithm": algorithm, "dataset": "gaussian_clouds"})
    on_dask = dask_runs.loc[algorithm]
    assert local.status == FINISHED and local.run_key == on_dask["tags.run_key"]
    for metric in ("n_sv", "test_error", "train_error"):
        assert local.metrics[metric] == on_dask[f"metrics.{metric}"], metric


README = Path(__file__).resolve().parents[1] / "README.md"


def recipe_commands(sweeps: bool) -> list[list[str]]:
    """The README's ``svmrepro-run`` lines of the sub-SVMs on a cluster ("Scaling out"), as
    arguments, a placeholder (``<scheduler>``) replaced by an address: the sweeps (``-m``), or the
    single runs of the full-scale recipe."""
    lines = [line.split("#")[0] for line in README.read_text().splitlines()
             if line.startswith("svmrepro-run") and "algorithm.n_jobs" in line]
    commands = [shlex.split(re.sub(r"<[^>]+>", "127.0.0.1", line))[1:] for line in lines]
    return [command for command in commands if (command[0] == "-m") == sweeps]


#: the full-scale recipe's runs that are configurations of a shipped sweep (the others go beyond it)
SHIPPED_FULL_SCALE = {"mixture/fig3", "mixture/table1"}


@pytest.mark.parametrize("arguments", recipe_commands(sweeps=False), ids=" ".join)
def test_the_readme_full_scale_runs_compose_with_data_set_sizes_that_fit(arguments):
    """Each full-scale command composes as written, its data set accepts its sizes (checked when the
    source is made, before any row is read), and the papers' ones are runs of the shipped full sweep."""
    from hydra.utils import instantiate

    (experiment,) = [a.split("=", 1)[1] for a in arguments if a.startswith("experiment=")]
    assert "mode=full" in arguments
    cfg = compose_config([a for a in arguments if not a.startswith(("parallel.", "tracking."))])
    instantiate(cfg.dataset)
    assert cfg.algorithm.n_jobs == -1
    if experiment in SHIPPED_FULL_SCALE:
        assert config_hash(cfg) in sweep_hashes(experiment, "full")


@pytest.mark.parametrize("arguments", recipe_commands(sweeps=True), ids=" ".join)
def test_the_readme_recipe_runs_the_shipped_configurations(arguments):
    """Each job of the recipe composes (it runs as written), changes only where and on how many
    workers it runs, and so is a configuration of the experiment's shipped sweep: a FINISHED run
    of it is found and skipped."""
    assert arguments[0] == "-m"
    (experiment,) = [a.split("=", 1)[1] for a in arguments if a.startswith("experiment=")]
    extra = dict(a.split("=", 1) for a in arguments[1:] if not a.startswith("experiment="))
    base = [f"experiment={experiment}", "mode=quick"]
    jobs = sweep_jobs(compose_config(base).sweep.quick, extra)
    assert jobs
    for job in jobs:
        cfg = compose_config([*base, *job])
        assert cfg.algorithm.n_jobs == int(extra["algorithm.n_jobs"])
        assert config_hash(cfg) in sweep_hashes(experiment, "quick")
