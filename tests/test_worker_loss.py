"""A dask worker lost in the middle of a fit costs time, not the fit; a cluster without workers fails
in one line within ``parallel.timeout`` (issue 32, item 2). On a scheduler and worker processes
started as a user starts them (tests/clusters.py), which a test can kill."""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
import time

import cloudpickle
import forked_cli
import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.svm import SVC

from clusters import dask_processes
from svmrepro.algorithms.cross_training import CrossTrainingSVC
from svmrepro.algorithms.parallel import backend_context
from svmrepro.errors import ConfigError

pytest.importorskip("distributed", reason='pip install -e ".[dask]"')

X, y = make_classification(n_samples=600, n_features=10, random_state=0)
RBF = {"kernel": "rbf", "C": 10.0, "gamma": 0.1}
FIT_SECONDS = 1.0


class SlowSVC(SVC):
    """An SVC whose fit takes a second longer: long enough to lose a worker in the middle of it."""

    def fit(self, X, y, sample_weight=None):
        time.sleep(FIT_SECONDS)
        return super().fit(X, y, sample_weight=sample_weight)


@pytest.fixture
def by_value():
    """SlowSVC travels by value: the worker processes cannot import this test module."""
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    yield
    cloudpickle.unregister_pickle_by_value(sys.modules[__name__])


def test_a_worker_killed_mid_fit_leaves_the_fit_to_the_other_and_the_same_model(tmp_path, by_value):
    serial = CrossTrainingSVC(SVC(**RBF), n_subsets=6, random_state=0).fit(X, y)
    with dask_processes(tmp_path, n_workers=2) as cluster:
        # 6 first-stage fits of a second each on 2 one-thread workers: worker 0 dies in the middle
        killer = threading.Timer(1.5 * FIT_SECONDS, cluster.kill_worker, args=(0,))
        with backend_context("dask", address=cluster.address, timeout=10):
            killer.start()
            started = time.monotonic()
            lost = CrossTrainingSVC(SlowSVC(**RBF), n_subsets=6, random_state=0, n_jobs=2).fit(X, y)
        killer.join()
        assert cluster.workers[0].poll() is not None, "the worker was not killed"
        assert cluster.workers[1].poll() is None
    assert time.monotonic() - started > 1.5 * FIT_SECONDS  # the kill came during the fit
    np.testing.assert_array_equal(lost.support_, serial.support_)
    np.testing.assert_array_equal(lost.final_estimator_.dual_coef_, serial.final_estimator_.dual_coef_)
    np.testing.assert_array_equal(lost.margin_mean_, serial.margin_mean_)


def test_a_call_whose_data_went_with_a_worker_runs_again_with_the_data_sent_again(tmp_path, monkeypatch, caplog):
    """dask's active memory manager drops copies of the data that no queued task needs yet, so a
    killed worker may hold the last one, and the call's tasks are cancelled ("already forgotten",
    seen in 4 of 27 runs of the test above before the call ran again). Made certain
    here: the first run of the first-stage call is cancelled so; the fit still gives the model."""
    from distributed.client import FutureCancelledError

    from svmrepro.algorithms import parallel

    runs, scattered = [], []

    class LosesTheFirstRun(parallel.Parallel):
        def __call__(self, iterable):
            runs.append(len(runs))
            if len(runs) == 1:
                raise FutureCancelledError("batch_of__call_limited_1_calls", "already forgotten")
            return super().__call__(iterable)

    real_config = parallel.parallel_config

    def recording(*args, **kwargs):
        scattered.append(len(kwargs.get("scatter") or []))
        return real_config(*args, **kwargs)

    serial = CrossTrainingSVC(SVC(**RBF), n_subsets=6, random_state=0).fit(X, y)
    monkeypatch.setattr(parallel, "Parallel", LosesTheFirstRun)
    monkeypatch.setattr(parallel, "parallel_config", recording)
    with dask_processes(tmp_path, n_workers=2) as cluster, backend_context("dask", address=cluster.address, timeout=10):
        again = CrossTrainingSVC(SVC(**RBF), n_subsets=6, random_state=0, n_jobs=2).fit(X, y)
    assert scattered[-2:] == [2, 2]  # X and y: the fit's copy, then the call's second
    assert any("the call runs again on the 2 workers left (attempt 2 of 3)" in r.message for r in caplog.records)
    np.testing.assert_array_equal(again.support_, serial.support_)
    np.testing.assert_array_equal(again.final_estimator_.dual_coef_, serial.final_estimator_.dual_coef_)


def test_a_cluster_whose_workers_are_gone_fails_within_the_timeout_in_one_line(tmp_path):
    with dask_processes(tmp_path, n_workers=1) as cluster:
        cluster.kill_all_workers()
        started = time.monotonic()
        with pytest.raises(ConfigError) as failed, backend_context("dask", address=cluster.address, timeout=2):
            CrossTrainingSVC(SVC(**RBF), n_jobs=2).fit(X, y)
        seconds = time.monotonic() - started
    assert str(failed.value) == (
        f"parallel.address={cluster.address}: no dask worker after 2 s (parallel.timeout); start workers "
        f"(dask worker {cluster.address}) or point parallel.address at a cluster that has some"
    )
    assert 2 <= seconds < 10


def test_a_fit_whose_last_worker_dies_fails_within_the_timeout_in_one_line(tmp_path, by_value):
    with dask_processes(tmp_path, n_workers=1) as cluster:
        killer = threading.Timer(1.5 * FIT_SECONDS, cluster.kill_all_workers)
        with pytest.raises(ConfigError, match=f"^parallel.address={cluster.address}: no dask worker after 2 s"):
            with backend_context("dask", address=cluster.address, timeout=2):
                killer.start()
                started = time.monotonic()
                CrossTrainingSVC(SlowSVC(**RBF), n_subsets=6, random_state=0, n_jobs=2).fit(X, y)
        killer.join()
    assert time.monotonic() - started < 1.5 * FIT_SECONDS + 2 + 5  # the kill, the timeout, the client's polling


def test_a_call_cancelled_because_every_worker_went_fails_within_the_timeout_in_one_line(tmp_path, monkeypatch):
    """With every worker gone mid-fit, dask cancels the call's tasks at once ("already forgotten")
    rather than waiting for a worker: the same one line as a cluster that had none (issue 46, item 8),
    not the cancellation's traceback. Made certain here: the first-stage call kills the last worker,
    then is cancelled."""
    from distributed.client import FutureCancelledError

    from svmrepro.algorithms import parallel

    class LosesEveryWorker(parallel.Parallel):
        def __call__(self, iterable):
            cluster.kill_all_workers()
            cluster.workers[0].wait(timeout=10)
            raise FutureCancelledError("batch_of__call_limited_1_calls", "already forgotten")

    monkeypatch.setattr(parallel, "Parallel", LosesEveryWorker)
    with dask_processes(tmp_path, n_workers=1) as cluster:
        started = time.monotonic()
        with pytest.raises(ConfigError) as failed, backend_context("dask", address=cluster.address, timeout=2):
            CrossTrainingSVC(SVC(**RBF), n_subsets=6, random_state=0, n_jobs=2).fit(X, y)
        seconds = time.monotonic() - started
    assert str(failed.value) == (
        f"parallel.address={cluster.address}: no dask worker after 2 s (parallel.timeout); start workers "
        f"(dask worker {cluster.address}) or point parallel.address at a cluster that has some"
    )
    assert seconds < 15  # the timeout, the client's polling; not a wait for ever


@pytest.fixture
def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]  # nothing listens there once the socket is closed


def test_an_unreachable_scheduler_fails_within_the_timeout_in_one_line(closed_port):
    address = f"tcp://127.0.0.1:{closed_port}"
    started = time.monotonic()
    with pytest.raises(ConfigError, match=rf"^parallel.address={address}: no dask scheduler answered in 2 s "
                                          r"\(parallel.timeout\): .*; start one there \(dask scheduler\) or fix "
                                          r"parallel.address$"):
        with backend_context("dask", address=address, timeout=2):
            pass
    assert time.monotonic() - started < 10


def test_the_command_line_names_a_cluster_without_workers_in_one_line(tmp_path):
    with dask_processes(tmp_path, n_workers=1) as cluster:
        cluster.kill_all_workers()
        started = time.monotonic()
        done = forked_cli.run(
            [sys.executable, "-m", "svmrepro", "algorithm=cross_training", "dataset.n_train=50", "seed=0",
             "parallel.backend=dask", f"parallel.address={cluster.address}", "parallel.timeout=2",
             f"tracking.uri=sqlite:///{tmp_path / 'mlflow.db'}", f"hydra.run.dir={tmp_path / 'out'}"],
            capture_output=True, text=True, timeout=120,
        )
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.returncode == 2, done.stderr
    assert lines[-1] == (
        f"svmrepro-run: error: parallel.address={cluster.address}: no dask worker after 2 s (parallel.timeout); "
        f"start workers (dask worker {cluster.address}) or point parallel.address at a cluster that has some"
    )
    assert "Traceback" not in done.stderr
    assert time.monotonic() - started < 60  # start-up included
