"""Every failed job of a sweep keeps its reason: its exception class and first line in
``<sweep dir>/failures.jsonl`` and in the summary the sweep prints, whatever failed and whichever
launcher ran it (issue 33).

The sweep folder is named by ``${now:...}`` as Hydra's default is: a job resolves it anew in its
own copy of the Hydra config, so the folder must be the one the sweep resolved, not the job's
clock's (``%f``: a later microsecond names another folder).
"""

import json
import subprocess
import sys

import pytest
from mlflow.tracking import MlflowClient

from svmrepro.store import ERROR_MESSAGE_TAG, SWEEP_KIND, KIND_TAG

#: a bad value of a key no grid sets, so on every grid (issue 34's narrowing): it fails the svc job at
#: validation, the cascades' at composition (their algorithm has no cache_size)
TABLE1_BAD_C = ["experiment=cascade/table1", "algorithm.cache_size=-1", "dataset.n_train_per_class=100", "seed=0"]


def _sweep(tmp_path, *arguments):
    command = [sys.executable, "-m", "svmrepro", "-m", *arguments,
               f"tracking.uri=sqlite:///{tmp_path / 'mlflow.db'}", "hydra.sweep.dir=sweeps/${now:%H-%M-%S-%f}"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    [sweep_dir] = (tmp_path / "sweeps").iterdir()
    return done, sweep_dir


def _summary(stderr):
    """The failed jobs' lines the sweep printed last."""
    return stderr[stderr.index("jobs failed (the same command retries only them):"):].splitlines()[1:]


@pytest.mark.parametrize("launcher", ["basic", "parallel"])
def test_a_bad_value_fails_each_job_with_its_reason_recorded_and_printed(tmp_path, launcher):
    done, sweep_dir = _sweep(tmp_path, f"hydra/launcher={launcher}", *TABLE1_BAD_C)
    assert done.returncode == 1, done.stderr[-3000:]
    assert "Traceback" not in done.stderr and "no error recorded" not in done.stderr
    recorded = {event["job"]: event["line"]
                for event in map(json.loads, (sweep_dir / "failures.jsonl").read_text().splitlines())}
    assert sorted(recorded) == [0, 1, 2]  # the quick sweep's rows: svc, the cascade, the cascade on 2 cores
    assert "algorithm.cache_size=-1" in recorded[0] and recorded[0].endswith(
        ": ConfigError: algorithm.cache_size=-1 is invalid: The 'cache_size' parameter of SVC must be a float in the "
        "range (0.0, inf). Got -1 instead.")
    for job in (1, 2):
        assert recorded[job].endswith(": ConfigCompositionException: Could not override 'algorithm.cache_size'. "
                                      "Key 'cache_size' is not in struct")
    assert [line.strip() for line in _summary(done.stderr)] == [recorded[0], recorded[1], recorded[2]]
    # no run exists for a job that failed before fitting: the sweep's run keeps the reasons
    client = MlflowClient(f"sqlite:///{tmp_path / 'mlflow.db'}")
    [sweep] = client.search_runs([client.get_experiment_by_name("cascade/table1").experiment_id],
                                 f"tags.`{KIND_TAG}` = '{SWEEP_KIND}'")
    assert sweep.info.status == "FAILED" and sweep.data.tags["jobs.failed"] == "3"
    assert sweep.data.tags[ERROR_MESSAGE_TAG] == recorded[0]
    kept = client.download_artifacts(sweep.info.run_id, "failures.txt", str(tmp_path))
    assert open(kept).read().splitlines() == [recorded[0], recorded[1], recorded[2]]
