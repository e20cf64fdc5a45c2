"""The README's ray paths (section "Scaling out"), run as a user runs them: a ``ray start --head`` on
loopback, started once for the module, then ``svmrepro-run`` processes that join it, with the sub-SVMs
on ray (``parallel.backend=ray``) and with the jobs of a sweep as ray tasks
(``hydra/launcher=ray_cluster``)."""

import os
import subprocess
import sys

import forked_cli
import psutil
import pytest
from mlflow.tracking import MlflowClient

from clusters import ray_head, ray_launcher_path
from svmrepro.compose import compose_config
from svmrepro.runner import FINISHED, run

ROWS = ["dataset=gaussian_clouds", "dataset.n_train=400", "dataset.n_test=200"]
# the mixture: its experts fitted and evaluated on ray, two at a time (n_jobs=2), the gater here; the
# other algorithms' sub-SVMs go through the same calls (tests/test_engines.py fits the cascade on ray)
MIXTURE = ["algorithm=gated_svm_mixture", "algorithm.n_experts=4", "algorithm.n_iter=1", "algorithm.n_hidden=10",
           "algorithm.gater_max_epochs=5", "algorithm.estimator.gamma=0.05", "algorithm.n_jobs=2"]


@pytest.fixture(scope="module")
def launcher_path(tmp_path_factory):
    return ray_launcher_path(tmp_path_factory.mktemp("hydra-ray-launcher"))


@pytest.fixture(scope="module")
def head(launcher_path):
    """One ray head for the module; its workers (which run the launcher's jobs) import what
    ``svmrepro-run`` imports."""
    env = dict(os.environ)
    if launcher_path:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [launcher_path, env.get("PYTHONPATH")]))
    with ray_head(env=env) as running:
        yield running


def test_the_head_listens_on_loopback_only(head):
    """The README's advice for a head of this machine alone (RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0,
    which tests/clusters.py follows): without it ray's servers bind to every interface."""
    root = psutil.Process(head.process.pid)
    listening = set()
    for process in [root, *root.children(recursive=True)]:
        try:
            connections = process.net_connections(kind="inet")
            name = process.name()
        except psutil.NoSuchProcess:  # an idle worker that ended meanwhile
            continue
        listening |= {(name, c.laddr.ip) for c in connections if c.status == psutil.CONN_LISTEN}
    assert listening, "no listening socket found"
    assert {ip for _, ip in listening} <= {"127.0.0.1", "::ffff:127.0.0.1", "::1"}, sorted(listening)


def _svmrepro(head, tmp_path, store, *arguments):
    command = [sys.executable, "-m", "svmrepro", *arguments, f"tracking.uri={store}",
               f"hydra.run.dir={tmp_path / 'run'}", f"hydra.sweep.dir={tmp_path / 'sweep'}"]
    done = forked_cli.run(command, env=head.env, cwd=tmp_path, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-3000:]
    return done


def _runs(store):
    """The runs of the store that have a result (a sweep's parent run has none)."""
    client = MlflowClient(store)
    runs = client.search_runs([e.experiment_id for e in client.search_experiments()], max_results=100)
    return [r for r in runs if "test_error" in r.data.metrics]


def test_sub_svms_on_a_running_ray_head_give_the_loky_runs_model(head, tmp_path):
    # a store per backend: the parallel settings are not part of a run's identity
    loky = run(compose_config([*ROWS, *MIXTURE, f"tracking.uri=sqlite:///{tmp_path / 'loky.db'}"]))
    assert loky.status == FINISHED
    store = f"sqlite:///{tmp_path / 'ray.db'}"
    _svmrepro(head, tmp_path, store, *ROWS, *MIXTURE, "parallel.backend=ray",
              f"parallel.address={head.address}")
    (on_ray,) = _runs(store)
    assert on_ray.info.status == "FINISHED"
    assert on_ray.data.tags["parallel.backend"] == "ray" and on_ray.data.tags["parallel.workers"] == "1"
    for metric in ("n_sv", "train_error", "test_error"):
        assert on_ray.data.metrics[metric] == loky.metrics[metric], metric


def test_a_ray_cluster_sweep_joins_the_running_head(head, tmp_path, store_uri):
    done = _svmrepro(head, tmp_path, store_uri, "-m", "hydra/launcher=ray_cluster",
                     f"hydra.launcher.ray.init.address={head.address}", *ROWS, "algorithm=svc_linear", "seed=1,2")
    assert f"Connecting to existing Ray cluster at address: {head.address}" in done.stderr
    runs = _runs(store_uri)
    assert sorted(r.data.params["seed"] for r in runs) == ["1", "2"]
    assert {r.info.status for r in runs} == {"FINISHED"}
