"""Each fit sends its data to a dask cluster once (issue 32, item 1), on a scheduler and two worker
processes started as a user starts them (tests/clusters.py), for every algorithm with parallel
sub-fits (EditedSVC and PotentialSVClassifier fit one SVM at a time: one task, X[rows] at most once).

What is counted: the bytes the driver hands the cluster, as the scheduler receives them. A
scheduler plugin (dask's public ``SchedulerPlugin.update_graph`` hook) sees every task the fit
submits: it adds the size of each task's payload (its ``run_spec`` pickled as dask pickles it:
function, arguments and whatever a closure drags along) and, once per key, the size of every
scattered input a task depends on (the scheduler's ``nbytes`` of data the driver scattered).
Copies the workers make of scattered data among themselves (the broadcast to every worker) are
not counted: they do not leave the driver. The fitted sub-models coming back are not counted
either: they travel from the workers. Before issue 32 the mixture put ``X`` in every scoring
task (a closure) and each call scattered its subsets anew; the bound below is what "once per
fit" means.
"""

from __future__ import annotations

import sys

import cloudpickle
import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.svm import SVC

from clusters import dask_processes
from svmrepro.algorithms.bagging import BaggedFirstStageSVC
from svmrepro.algorithms.cross_training import CrossTrainingSVC
from svmrepro.algorithms.graf_cascade import GrafCascadeSVC
from svmrepro.algorithms.mixture import GatedSVMMixture
from svmrepro.algorithms.parallel import backend_context
from svmrepro.algorithms.wen_lu_cascade import WenLuCascadeSVC

distributed = pytest.importorskip("distributed", reason='pip install -e ".[dask]"')

# Forest's 54 features; 2000 rows: each fit takes about a second
X, y = make_classification(n_samples=2000, n_features=54, n_informative=10, flip_y=0.05, random_state=0)
RBF = SVC(kernel="rbf", C=10.0, gamma=0.02)

ALGORITHMS = {
    "wen_lu_cascade": lambda n_jobs: WenLuCascadeSVC(RBF, n_jobs=n_jobs),
    "graf_cascade": lambda n_jobs: GrafCascadeSVC(RBF, n_subsets=4, max_passes=2, n_jobs=n_jobs),
    "cross_training": lambda n_jobs: CrossTrainingSVC(RBF, n_subsets=4, random_state=0, n_jobs=n_jobs),
    "mixture_gated": lambda n_jobs: GatedSVMMixture(
        RBF, n_experts=4, n_iter=2, gater_max_epochs=2, random_state=0, n_jobs=n_jobs),
    "mixture_uniform": lambda n_jobs: GatedSVMMixture(RBF, n_experts=4, gater="uniform", random_state=0, n_jobs=n_jobs),
    "bagged_first_stage": lambda n_jobs: BaggedFirstStageSVC(RBF, n_subsets=4, random_state=0, n_jobs=n_jobs),
}


class SentBytes(distributed.diagnostics.plugin.SchedulerPlugin):
    """Counts, on the scheduler, the task payloads and scattered inputs of the tasks it is sent."""

    name = "svmrepro-sent-bytes"

    def __init__(self):
        self.payload, self.scattered, self.tasks, self._seen = 0, 0, 0, set()

    def update_graph(self, scheduler, *, tasks, **kwargs):
        from distributed.protocol.pickle import dumps

        for key in tasks:
            ts = scheduler.tasks.get(key)
            if ts is None or key in self._seen or ts.run_spec is None:
                continue
            self._seen.add(key)
            self.tasks += 1
            self.payload += len(dumps(ts.run_spec))
            for dep in ts.dependencies:
                if dep.run_spec is None and dep.key not in self._seen:  # data scattered by the driver
                    self._seen.add(dep.key)
                    self.scattered += dep.nbytes


def _counts(dask_scheduler):
    plugin = dask_scheduler.plugins[SentBytes.name]
    return {"payload": plugin.payload, "scattered": plugin.scattered, "tasks": plugin.tasks}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    # the plugin and _counts travel by value: the scheduler process cannot import this test module
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    with dask_processes(tmp_path_factory.mktemp("dask"), n_workers=2) as processes:
        with distributed.Client(processes.address, set_as_default=False) as client:
            yield processes, client
    cloudpickle.unregister_pickle_by_value(sys.modules[__name__])


def sent_per_fit(client, address, make, n_jobs=2):
    """The model fitted on the cluster and what the driver sent for that one fit."""
    client.register_plugin(SentBytes(), name=SentBytes.name)
    with backend_context("dask", address=address):
        model = make(n_jobs).fit(X, y)
    return model, client.run_on_scheduler(_counts)


@pytest.mark.filterwarnings("ignore:the Cascade SVM's support vectors still changed")
@pytest.mark.parametrize("algorithm", sorted(ALGORITHMS))
def test_a_fit_sends_its_data_to_the_cluster_once_and_fits_the_serial_model(algorithm, cluster):
    processes, client = cluster
    model, sent = sent_per_fit(client, processes.address, ALGORITHMS[algorithm])
    assert sent["tasks"] > 0, "no task reached the dask scheduler"
    total = sent["payload"] + sent["scattered"]
    assert total <= 2 * X.nbytes, (
        f"{algorithm}: {total / X.nbytes:.2f} x X sent in one fit ({sent['payload']} B of task payloads, "
        f"{sent['scattered']} B scattered, {sent['tasks']} tasks; X is {X.nbytes} B)"
    )
    serial = ALGORITHMS[algorithm](1).fit(X, y)
    # both evaluated here, one model after the other: only the fits are compared
    model.set_params(n_jobs=1)
    np.testing.assert_array_equal(model.decision_function(X), serial.decision_function(X))


if __name__ == "__main__":  # the table of the closing note: python tests/test_cluster_data.py
    import tempfile
    from pathlib import Path

    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    with tempfile.TemporaryDirectory() as tmp, dask_processes(Path(tmp), n_workers=2) as processes, \
            distributed.Client(processes.address, set_as_default=False) as client:
        print(f"X: {X.shape[0]} x {X.shape[1]}, {X.nbytes} B; 2 worker processes, n_jobs=2")
        print(f"{'algorithm':<20} {'tasks':>5} {'payload B':>10} {'scattered B':>11} {'x X':>6}")
        for name, make in sorted(ALGORITHMS.items()):
            _, sent = sent_per_fit(client, processes.address, make)
            total = (sent["payload"] + sent["scattered"]) / X.nbytes
            print(f"{name:<20} {sent['tasks']:>5} {sent['payload']:>10} {sent['scattered']:>11} {total:>6.2f}")
