"""Every failed job of a sweep keeps its reason: its exception class and first line in
``<sweep dir>/failures.jsonl`` and in the summary the sweep prints, whatever failed and whichever
launcher ran it (issue 33).

The sweep folder is named by ``${now:...}`` as Hydra's default is: a job resolves it anew in its
own copy of the Hydra config, so the folder must be the one the sweep resolved, not the job's
clock's (``%f``: a later microsecond names another folder).
"""

import json
import os
import subprocess
import sys

import forked_cli
import pytest
from mlflow.tracking import MlflowClient

from svmrepro.store import ERROR_MESSAGE_TAG, SWEEP_KIND, KIND_TAG

#: the quick sweep of cascade/table4 (four grids) with its data file out of reach: every job passes the checks
#: before compute (svmrepro.preflight) and fails as it loads its data
TABLE4 = ["experiment=cascade/table4", "seed=0"]
#: a bad value, on every grid (a key no grid sets): found before any job starts, so no job fails
TABLE1_BAD_VALUE = ["experiment=cascade/table1", "algorithm.cache_size=-1", "dataset.n_train_per_class=100", "seed=0"]


def _sweep(tmp_path, *arguments, env=None):
    command = [sys.executable, "-m", "svmrepro", "-m", *arguments,
               f"tracking.uri=sqlite:///{tmp_path / 'mlflow.db'}", "hydra.sweep.dir=sweeps/${now:%H-%M-%S-%f}"]
    done = forked_cli.run(command, capture_output=True, text=True, timeout=300, cwd=tmp_path,
                          env={**os.environ, **(env or {})})
    [sweep_dir] = (tmp_path / "sweeps").iterdir()
    return done, sweep_dir


def _summary(stderr):
    """The failed jobs' lines the sweep printed last."""
    return stderr[stderr.index("jobs failed (the same command retries only them):"):].splitlines()[1:]


@pytest.mark.parametrize("launcher", ["basic", "parallel"])
@pytest.mark.usefixtures("store_uri")  # the store at tmp_path / mlflow.db, made: not what is tested
def test_each_failed_job_keeps_its_reason_recorded_and_printed(tmp_path, launcher):
    empty = tmp_path / "no_data"
    empty.mkdir()
    offline = {"SVMREPRO_OFFLINE": "1", "SVMREPRO_DATA": str(empty), "SVMREPRO_SHARED_DATA": str(empty)}
    done, sweep_dir = _sweep(tmp_path, f"hydra/launcher={launcher}", *TABLE4, env=offline)
    assert done.returncode == 1, done.stderr[-3000:]
    assert "Traceback" not in done.stderr and "no error recorded" not in done.stderr
    recorded = {event["job"]: event["line"]
                for event in map(json.loads, (sweep_dir / "failures.jsonl").read_text().splitlines())}
    assert sorted(recorded) == [0, 1, 2, 3]  # the quick sweep's grids: svc, two cascades, the cascade on 2 cores
    for job, line in recorded.items():
        assert line.startswith(f"#{job} algorithm=")
        assert ": DataError: data file covtype.data.gz is not available" in line
    assert [line.strip() for line in _summary(done.stderr)] == [recorded[job] for job in range(4)]
    client = MlflowClient(f"sqlite:///{tmp_path / 'mlflow.db'}")
    [sweep] = client.search_runs([client.get_experiment_by_name("cascade/table4").experiment_id],
                                 f"tags.`{KIND_TAG}` = '{SWEEP_KIND}'")
    assert sweep.info.status == "FAILED" and sweep.data.tags["jobs.failed"] == "4"
    assert sweep.data.tags[ERROR_MESSAGE_TAG] == recorded[0]
    kept = client.download_artifacts(sweep.info.run_id, "failures.txt", str(tmp_path))
    assert open(kept).read().splitlines() == [recorded[job] for job in range(4)]


@pytest.mark.usefixtures("store_uri")
def test_a_bad_value_stops_the_sweep_before_any_job_in_one_line(tmp_path):
    done, sweep_dir = _sweep(tmp_path, *TABLE1_BAD_VALUE)
    assert done.returncode == 2, done.stderr[-3000:]
    errors = [line for line in done.stderr.splitlines() if line.startswith("svmrepro-run: error:")]
    assert errors and all("algorithm.cache_size" in line for line in errors) and "Traceback" not in done.stderr
    assert not (sweep_dir / "failures.jsonl").exists()
    client = MlflowClient(f"sqlite:///{tmp_path / 'mlflow.db'}")
    experiment = client.get_experiment_by_name("cascade/table1")
    assert not client.search_runs([experiment.experiment_id])  # no job ran, and no empty sweep run is left
