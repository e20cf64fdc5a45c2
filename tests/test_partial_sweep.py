"""A key that only some jobs of a sweep have fails those jobs, each listed with its reason, and
the other jobs run (``svmrepro-run -m algorithm=svc_linear,cascade_svc algorithm.r=0.5``)."""

import subprocess
import sys

from mlflow.tracking import MlflowClient

import forked_cli

from svmrepro.sweep.jobs import per_job


def test_group_keys_become_one_value_sweeps_and_the_rest_stays():
    arguments = ["-m", "--cfg", "job", "algorithm=svc,cascade_svc", "algorithm.r=0.5", "dataset.n_train=",
                 "algorithm.C=${seed}", "+algorithm.x=1", "seed=0,1", "tracking.uri=sqlite:///a.db",
                 "algorithm.estimator.C=1,2", "mode=quick"]
    assert per_job(arguments, {"algorithm", "dataset"}) == [
        "-m", "--cfg", "job", "algorithm=svc,cascade_svc", "algorithm.r=choice(0.5)", "dataset.n_train=choice('')",
        "algorithm.C=${seed}", "+algorithm.x=1", "seed=0,1", "tracking.uri=sqlite:///a.db",
        "algorithm.estimator.C=1,2", "mode=quick",
    ]


def test_a_key_of_one_algorithm_fails_only_the_jobs_of_the_others(tmp_path, store_uri):
    command = [
        sys.executable, "-m", "svmrepro", "-m", "algorithm=svc_linear,cascade_svc", "algorithm.r=0.5",
        "seed=0,1", "dataset.n_train=60", "dataset.n_test=40", f"tracking.uri={store_uri}",
        f"hydra.sweep.dir={tmp_path / 'sweep'}",
    ]
    done = forked_cli.run(command, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 1, done.stderr[-3000:]
    assert "Traceback" not in done.stderr
    summary = done.stderr[done.stderr.index("svmrepro-run: 2 of 4 jobs failed"):].splitlines()
    assert len(summary) == 3
    for line, seed in zip(summary[1:], (0, 1)):
        assert f"algorithm=svc_linear algorithm.r=0.5 seed={seed}" in line
        assert line.endswith("ConfigCompositionException: Could not override 'algorithm.r'. Key 'r' is not in struct")
    assert "sweep ended: 4 jobs" in done.stdout and "2 done, 0 skipped, 2 failed" in done.stdout
    client = MlflowClient(store_uri)
    runs = client.search_runs([client.get_experiment_by_name("adhoc").experiment_id], "tags.`svmrepro.kind` = 'result'")
    assert sorted((run.data.tags["algorithm"], run.info.status, run.data.params["algorithm.r"]) for run in runs) == [
        ("cascade_svc", "FINISHED", "0.5")] * 2
