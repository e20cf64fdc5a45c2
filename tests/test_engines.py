"""Engines: every sweep launcher config composes for an experiment, and every joblib backend of
the sub-SVM fits gives the serial run's model (a dask.distributed LocalCluster of 2 workers in CI)."""

import importlib.util
import logging
import os
import threading
import time

import numpy as np
import pytest
from hydra.utils import get_class
from omegaconf import OmegaConf
from sklearn.datasets import make_classification
from sklearn.svm import SVC
from threadpoolctl import ThreadpoolController, threadpool_info

from svmrepro.algorithms.wen_lu_cascade import WenLuCascadeSVC
from svmrepro.algorithms.cross_training import CrossTrainingSVC
from svmrepro.algorithms.parallel import backend_context, fit_each, map_each, timed_task
from svmrepro.compose import compose_config

# launcher config -> (plugin module, _target_, how to install the plugin)
LAUNCHERS = {
    "parallel": (
        "hydra_plugins.hydra_joblib_launcher",
        "hydra_plugins.hydra_joblib_launcher.joblib_launcher.JoblibLauncher",
        "pip install -e .",
    ),
    "slurm": (
        "hydra_plugins.hydra_submitit_launcher",
        "hydra_plugins.hydra_submitit_launcher.submitit_launcher.SlurmLauncher",
        'pip install -e ".[slurm]"',
    ),
    "ray_cluster": (
        "hydra_plugins.hydra_ray_launcher",
        "hydra_plugins.hydra_ray_launcher.ray_launcher.RayLauncher",
        'pip install -e ".[ray]"',
    ),
}


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        return False


@pytest.mark.parametrize("launcher", sorted(LAUNCHERS))
def test_launcher_config_composes_for_a_multirun_and_names_its_plugin(launcher):
    module, target, install = LAUNCHERS[launcher]
    if not _installed(module):
        pytest.skip(f"{module} is not installed: {install}")
    cfg = compose_config(
        ["experiment=cascade/table1", f"hydra/launcher={launcher}", "hydra.mode=MULTIRUN"], return_hydra_config=True
    )
    node = OmegaConf.to_container(cfg.hydra.launcher, resolve=True)
    assert node["_target_"] == target
    get_class(target)  # the plugin's launcher class is importable
    if launcher == "slurm":  # the venv of this checkout, by absolute path
        assert node["setup"][0] == f"source {cfg.hydra.runtime.cwd}/.venv/bin/activate"


# A few hundred points: the cascade's and cross-training's sub-SVMs take milliseconds each.
X, y = make_classification(n_samples=300, n_features=5, n_informative=3, random_state=0)
RBF = {"kernel": "rbf", "C": 10.0, "gamma": 0.2}


def _cascade(n_jobs):
    return WenLuCascadeSVC(SVC(**RBF), n_jobs=n_jobs)


def _cross_training(n_jobs):
    return CrossTrainingSVC(SVC(**RBF), n_subsets=4, random_state=0, n_jobs=n_jobs)


MODELS = {"cascade": _cascade, "cross_training": _cross_training}


@pytest.fixture(scope="module")
def dask_cluster():
    """2 worker processes, 1 thread each; the scheduler's HTTP server on a free loopback port
    (dashboard_address=None still binds :8787)."""
    distributed = pytest.importorskip("distributed", reason='pip install -e ".[dask]"')
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address="127.0.0.1:0", silence_logs=logging.ERROR
    ) as cluster:
        yield cluster


def _assert_same_model(serial, other):
    np.testing.assert_array_equal(serial.support_, other.support_)
    np.testing.assert_array_equal(serial.final_estimator_.dual_coef_, other.final_estimator_.dual_coef_)
    np.testing.assert_array_equal(serial.predict(X), other.predict(X))


@pytest.mark.parametrize("model", sorted(MODELS))
def test_dask_cluster_fits_the_serial_model(model, dask_cluster):
    serial = MODELS[model](1).fit(X, y)
    before = dask_cluster.scheduler.transition_counter
    with backend_context("dask", address=dask_cluster.scheduler_address):
        distributed = MODELS[model](2).fit(X, y)
    assert dask_cluster.scheduler.transition_counter > before, "no task reached the dask scheduler"
    _assert_same_model(serial, distributed)


@pytest.fixture(scope="module")
def ray_session():
    """One local ray for the module (~10 s to start); backend_context joins it. Its authentication mode
    is set: otherwise ray (2.60) writes ~/.ray/auth_token, which turns token authentication on for every
    later ``ray start`` of the user. Not a token: this process's ray read the mode when it was imported."""
    ray = pytest.importorskip("ray", reason='pip install -e ".[ray]"')
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("RAY_AUTH_MODE", "disabled")
        ray.init(num_cpus=2, include_dashboard=False)
        yield
        ray.shutdown()


def test_ray_fits_the_serial_model(ray_session):  # cross-training on ray: the next test
    serial = _cascade(1).fit(X, y)
    with backend_context("ray"):
        remote = _cascade(2).fit(X, y)
    _assert_same_model(serial, remote)


def test_ray_puts_the_data_in_its_object_store_once_and_tasks_carry_references(ray_session, monkeypatch):
    """ray's joblib backend pickles every task's arguments (with joblib 1.6 it puts none in ray's
    store): a fit's X must travel as one ``ray.put`` and a reference per task, not once per task.
    Measured as the pickled size of what each task hands ray's Pool, against X's bytes."""
    import ray
    from ray.util.multiprocessing import Pool

    payloads, puts, submit, put = [], [], Pool.apply_async, ray.put

    def measured(self, func, args=None, kwargs=None, *rest, **options):
        payloads.append(len(ray.cloudpickle.dumps((func, args, kwargs))))
        return submit(self, func, args, kwargs, *rest, **options)

    monkeypatch.setattr(Pool, "apply_async", measured)
    monkeypatch.setattr(ray, "put", lambda value, **kw: puts.append(getattr(value, "nbytes", 0)) or put(value, **kw))
    big, labels = make_classification(n_samples=3000, n_features=50, random_state=0)  # 1.2 MB
    serial = _cross_training(1).fit(big, labels)
    with backend_context("ray"):
        remote = _cross_training(2).fit(big, labels)
    np.testing.assert_array_equal(serial.support_, remote.support_)
    assert len(payloads) >= 4, "the sub-fits did not go to ray"
    assert sum(payloads) < 0.5 * big.nbytes, f"{sum(payloads)} bytes in {len(payloads)} task payloads, X is {big.nbytes}"
    assert sum(puts) <= 2 * big.nbytes  # X and y, once per fit


def _blas_pool() -> int:
    """The process's BLAS pool (OpenBLAS's is one for the process, OpenMP's one per thread)."""
    return max(pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas")


def _set_blas_pool(threads: int) -> None:
    """Size the process's BLAS pool from a thread that then ends: threadpoolctl makes the thread that limits
    OpenBLAS its owner while it lives, and a limit held by the test's own thread would leave the tasks' limits
    without effect."""
    setter = threading.Thread(target=lambda: ThreadpoolController().select(user_api="blas").limit(limits=threads))
    setter.start()
    setter.join()


def _blas_threads(_=None, X=None):
    """The largest pool the calling thread's BLAS or OpenMP calls may use."""
    time.sleep(0.02)  # tasks of the threading backend overlap
    return max(pool["num_threads"] for pool in threadpool_info())


@pytest.mark.skipif(not threadpool_info(), reason="no BLAS/OpenMP pool found by threadpoolctl")
def test_parallel_tasks_get_a_bounded_blas_pool_and_the_process_gets_its_own_back():
    """The process's BLAS pool is read alone after the tasks: this thread's OpenMP pool, which no task limits,
    would hide a BLAS pool left at the tasks' size."""
    original = _blas_pool()
    _set_blas_pool(2)  # a pool of two to see restored, whatever the suite's worker has (tests/conftest.py)
    try:
        assert _blas_pool() == 2
        with backend_context("threading", blas_threads=1):
            assert map_each(_blas_threads, range(8), None, n_jobs=2) == [1] * 8
        assert _blas_pool() == 2  # overlapping tasks share one limit; the last one restores it
        with backend_context("threading"):  # default: the cores shared among the workers
            assert max(map_each(_blas_threads, range(4), None, n_jobs=2)) <= max(1, os.cpu_count() // 2)
        assert _blas_pool() == 2
        assert map_each(_blas_threads, [0], None, n_jobs=2) == [_blas_threads()]  # a serial call is left alone
    finally:
        _set_blas_pool(original)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"backend": "spark"}, "not one of loky, threading, dask, ray"),
    ({"blas_threads": 0}, "blas_threads=0"),
])
def test_bad_backend_settings_name_the_value_and_what_is_allowed(kwargs, message):
    with pytest.raises(ValueError, match=message), backend_context(**kwargs):
        pass



def _busy_or_asleep(spin: bool, seconds: float = 0.3) -> None:
    """Spend ``seconds`` of this thread's CPU time, or sleep them."""
    end = time.thread_time() + seconds
    while spin and time.thread_time() < end:
        pass
    if not spin:
        time.sleep(seconds)


@pytest.mark.parametrize("backend", ["threading", "loky"])
def test_each_task_reports_its_own_cpu_time_beside_its_wall_time(backend):
    """A sleeping task beside a spinning one, in one process (threading) or two (loky): each gets
    its own CPU time, not its process's."""
    with backend_context(backend):
        (_, asleep_wall, asleep_cpu), (_, _, busy_cpu) = map_each(
            lambda spin, _: timed_task(_busy_or_asleep, spin), [False, True], None, n_jobs=2
        )
    assert asleep_wall >= 0.3
    assert asleep_cpu < 0.1
    assert busy_cpu >= 0.29


def test_fit_each_returns_wall_and_cpu_seconds_per_part():
    models, walls, cpus, *_ = fit_each(SVC(), X, y, [np.arange(len(y)), np.arange(50)])
    assert len(models) == len(walls) == len(cpus) == 2
    assert all(w > 0 for w in walls) and all(c >= 0 for c in cpus)


def test_loky_workers_given_a_short_idle_time_end_when_idle(monkeypatch):
    """A run inside a worker of a sweep's own loky pool (quick mode runs every sweep two jobs at once) gives
    the workers it starts a short idle life: loky restarts a worker whose memory grew, and that worker, as it
    exits, waits for its own workers to end, which the default (300 s idle) stalled the sweep for."""
    import psutil
    from joblib import Parallel, delayed

    from svmrepro import runner, signals

    monkeypatch.setenv(signals.MAIN_PID_ENV, str(os.getpid() + 1))  # another process started the sweep
    assert signals.in_sweep_worker() and runner.NESTED_IDLE_S <= 30
    with backend_context("loky", idle_worker_timeout=1.0):
        pids = set(Parallel(n_jobs=2)(delayed(os.getpid)() for _ in range(4)))
    assert pids and os.getpid() not in pids

    def running():
        found = []
        for pid in pids:
            try:
                found += [pid] if signals.alive(psutil.Process(pid)) else []
            except psutil.NoSuchProcess:
                continue
        return found

    deadline = time.monotonic() + 20
    while running() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not running()
    monkeypatch.setenv(signals.MAIN_PID_ENV, str(os.getpid()))
    assert not signals.in_sweep_worker()  # the process that started the sweep runs its jobs itself
