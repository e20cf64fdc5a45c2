"""Where the store is, checked before anything is written: an in-memory SQLite store is refused
(it would keep nothing), and an artifact folder that cannot be made or written is refused before
an experiment or a run exists, so one bad value never poisons an experiment."""

import subprocess
import sys

import forked_cli
import pytest
from mlflow.tracking import MlflowClient

from svmrepro.store import Store, TrackingError, probe

UNUSABLE = "/proc/forbidden"  # no process may make a folder in /proc, root included


def _svmrepro_run(*overrides: str) -> subprocess.CompletedProcess:
    return forked_cli.run([sys.executable, "-m", "svmrepro", "dataset=gaussian_clouds", "dataset.n_train=60",
                           "dataset.n_test=50", "algorithm=svc_linear", *overrides],
                          capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("uri", ["sqlite:///:memory:", "sqlite://", "sqlite:///file::memory:?cache=shared",
                                 "sqlite:///x.db?mode=memory"])
def test_an_in_memory_sqlite_store_is_refused(uri):
    with pytest.raises(TrackingError, match=r"keeps nothing"):
        probe(uri)


def test_svmrepro_run_refuses_an_in_memory_store_in_one_line(tmp_path):
    done = _svmrepro_run("tracking.uri=sqlite:///:memory:", f"hydra.run.dir={tmp_path}")
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("svmrepro-run: error: tracking.uri=sqlite:///:memory: keeps nothing")


def test_an_unusable_artifact_root_makes_no_experiment(store_uri):
    Store(store_uri).experiment_id("test/existing")
    for name in ("test/location", "test/existing"):  # refused also where it would change nothing
        with pytest.raises(TrackingError, match=rf"^tracking.artifact_root={UNUSABLE}: cannot create {UNUSABLE}:"):
            Store(store_uri, UNUSABLE).experiment_id(name)
    assert MlflowClient(store_uri).get_experiment_by_name("test/location") is None
    assert Store(store_uri).experiment_id("test/location")  # the same experiment, without the bad value


def test_an_experiment_made_with_an_unusable_location_is_refused_with_its_way_out(store_uri):
    """An experiment made before the check (or whose folder became unusable) fails in one line
    before a run of it is made, naming its location and how to move on."""
    MlflowClient(store_uri).create_experiment("test/poisoned", artifact_location=f"file://{UNUSABLE}/x")
    with pytest.raises(TrackingError) as caught:
        Store(store_uri).experiment_id("test/poisoned")
    message = str(caught.value)
    assert message.startswith(f"experiment test/poisoned keeps its artifacts in file://{UNUSABLE}/x: cannot create")
    assert "mlflow experiments rename" in message and "\n" not in message
    assert MlflowClient(store_uri).search_runs([MlflowClient(store_uri).get_experiment_by_name("test/poisoned")
                                                .experiment_id]) == []


def test_a_bad_artifact_root_fails_in_one_line_and_the_next_run_works(tmp_path):
    """``svmrepro-run tracking.artifact_root=/proc/forbidden`` used to make the experiment with that
    location and leave its run RUNNING after a traceback; every later run of it crashed alike."""
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    Store(uri)  # made beforehand: MLflow logs its creation on stderr
    bad = _svmrepro_run(f"tracking.uri={uri}", f"tracking.artifact_root={UNUSABLE}", f"hydra.run.dir={tmp_path / 'a'}")
    assert bad.returncode == 2, bad.stderr
    lines = bad.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"svmrepro-run: error: tracking.artifact_root={UNUSABLE}: "), lines
    good = _svmrepro_run(f"tracking.uri={uri}", f"hydra.run.dir={tmp_path / 'b'}")
    assert good.returncode == 0, good.stderr
    client = MlflowClient(uri)
    (experiment,) = [e for e in client.search_experiments() if e.name != "Default"]
    assert [r.info.status for r in client.search_runs([experiment.experiment_id])] == ["FINISHED"]
