"""One run through the runner into a temporary MLflow store."""

import json
import os
import socket
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import mlflow
import pandas as pd
import pytest
from mlflow.entities import ViewType
from mlflow.tracking import MlflowClient
from omegaconf import OmegaConf

from svmrepro.environment import git_source
from svmrepro.identity import config_hash, identity_config
from svmrepro.report.runs import runs_from_mlflow
from svmrepro.runner import FINISHED, SKIPPED, run, run_name
from svmrepro.settings import Mode
from svmrepro.store import (
    ERROR_MESSAGE_TAG, ERROR_TYPE_TAG, KILLED_REASON_TAG, PrepareStore, Store, mlflow_names, svmrepro_names,
    sweep_run_id,
)
from svmrepro.store.sweep_run import sweep_params

CHOICES = {"experiment": "test/runner", "dataset": "gaussian_clouds", "algorithm": "svc_linear"}


def _runs(store_uri):
    mlflow.set_tracking_uri(store_uri)
    return mlflow.search_runs(experiment_names=["test/runner"])


def test_run_logs_metrics_params_tags_and_config(tiny_cfg, store_uri):
    result = run(tiny_cfg(), CHOICES)
    assert result.status == FINISHED
    row = _runs(store_uri).iloc[0]
    for metric in ("n_train", "n_test", "n_sv", "n_bounded_sv", "n_free_sv", "train_error", "test_error",
                   "fit_time_s", "predict_time_s"):
        assert f"metrics.{metric}" in row.index, metric
    # a data-set constant is a param, not a chart
    assert "metrics.data.bayes_risk" not in row.index and float(row["params.data.bayes_risk"]) > 0
    assert row["metrics.n_train"] == 120 and row["metrics.n_test"] == 200
    assert row["metrics.n_sv"] == row["metrics.n_bounded_sv"] + row["metrics.n_free_sv"]
    assert row["metrics.bounded_sv_fraction"] == row["metrics.n_bounded_sv"] / row["metrics.n_sv"]
    assert row["metrics.n_iter"] >= 1  # LIBSVM's solver iterations
    assert 0 <= row["metrics.test_error"] <= 1
    assert row["params.dataset.n_train"] == "120"
    for tag in ("paper", "experiment", "dataset", "algorithm", "seed", "git_dirty", "config_hash", "cpu_model"):
        assert row[f"tags.{tag}"], tag
    assert row["tags.paper"] == "test"
    artifacts = [a.path for a in MlflowClient(store_uri).list_artifacts(result.run_id)]
    assert "config.yaml" in artifacts


def test_identical_run_is_skipped_and_force_reruns(tiny_cfg, store_uri):
    first = run(tiny_cfg(), CHOICES)
    again = run(tiny_cfg(), CHOICES)
    assert again.status == SKIPPED and again.run_id == first.run_id
    forced = run(tiny_cfg("force=true"), CHOICES)
    assert forced.status == FINISHED and forced.run_id != first.run_id
    assert forced.run_key == first.run_key  # force does not change what the run is
    assert len(_runs(store_uri)) == 2


def test_same_config_and_seed_give_the_same_numbers(tiny_cfg):
    first = run(tiny_cfg(), CHOICES)
    second = run(tiny_cfg("force=true"), CHOICES)
    timing = {"fit_time_s", "fit_cpu_s", "predict_time_s", "predict_cpu_s", "predict_train_time_s", "run_overhead_s"}
    assert {k: v for k, v in first.metrics.items() if k not in timing} == {
        k: v for k, v in second.metrics.items() if k not in timing
    }


def test_selection_logs_the_chosen_values(tiny_cfg, store_uri):
    run(tiny_cfg("selection=grid_cv", "selection.param_grid.C=[0.01,1.0]", "selection.cv.n_splits=3"), CHOICES)
    row = _runs(store_uri).iloc[0]
    assert row["params.selected.C"] in {"0.01", "1.0"}
    assert row["metrics.search_time_s"] > 0


def test_a_run_that_raises_is_marked_failed_with_its_traceback(tiny_cfg, store_uri):
    # a precomputed kernel needs a square Gram matrix: fit raises on the raw 10-d features
    with pytest.raises(ValueError):
        run(tiny_cfg("algorithm.kernel=precomputed"), CHOICES)
    row = _runs(store_uri).iloc[0]
    assert row["status"] == "FAILED"
    client = MlflowClient(store_uri)
    assert "traceback.txt" in [a.path for a in client.list_artifacts(row["run_id"])]
    text = mlflow.artifacts.load_text(f"{row['artifact_uri']}/traceback.txt")
    assert "ValueError" in text
    # its reason in the runs table too: the exception's class and the first line of its message
    assert row[f"tags.{ERROR_TYPE_TAG}"] == "ValueError"
    assert row[f"tags.{ERROR_MESSAGE_TAG}"] and "\n" not in row[f"tags.{ERROR_MESSAGE_TAG}"]
    assert row[f"tags.{ERROR_MESSAGE_TAG}"] in text


def test_a_run_whose_artifacts_cannot_be_written_ends_failed_with_its_reason(tiny_cfg, store_uri, monkeypatch,
                                                                              caplog):
    """An artifact store that refuses files (the run's config.yaml, then its traceback.txt) leaves
    no run RUNNING: it ends FAILED with the reason as tags, and a warning says what was lost."""
    def refuse(self, run_id, text, artifact_file):
        raise PermissionError(13, "Permission denied", f"/srv/artifacts/{artifact_file}")

    monkeypatch.setattr(Store, "log_text", refuse)
    with pytest.raises(PermissionError):
        run(tiny_cfg(), CHOICES)
    row = _runs(store_uri).iloc[0]
    assert row["status"] == "FAILED" and row[f"tags.{ERROR_TYPE_TAG}"] == "PermissionError"
    assert "config.yaml" in row[f"tags.{ERROR_MESSAGE_TAG}"]
    assert any("could not be logged whole" in r.getMessage() for r in caplog.records)


# --- MLflow's conventions: standard tags, data set input, names, parent runs, models ----------

def _run_of(store_uri, run_id):
    return MlflowClient(store_uri).get_run(run_id)


def test_a_run_has_mlflows_source_user_and_git_tags_and_its_data_set_as_an_input(tiny_cfg, store_uri):
    result = run(tiny_cfg(), CHOICES)
    found = _run_of(store_uri, result.run_id)
    tags = found.data.tags
    assert tags["mlflow.source.type"] == "LOCAL" and tags["mlflow.source.name"] and tags["mlflow.user"]
    assert tags["svmrepro.kind"] == "result"
    if git_source().get("commit"):
        assert tags["mlflow.source.git.commit"] == git_source()["commit"]
    # the training and the test set: two inputs, each in its context, each with its own rows
    given = {i.tags[0].value: i.dataset for i in found.inputs.dataset_inputs}
    assert sorted(given) == ["testing", "training"]
    assert {d.name for d in given.values()} == {"gaussian_clouds"}
    assert given["training"].digest == tags["data_fingerprint"][:36] != given["testing"].digest
    assert json.loads(given["training"].profile)["features_shape"] == [120, 10]
    assert json.loads(given["testing"].profile)["features_shape"] == [200, 10]
    for dataset in given.values():
        assert dataset.source_type == "code" and "GaussianClouds" in dataset.source
        assert '"n_train": "120"' in dataset.source  # the generator's parameters


def test_a_run_logs_its_settings_without_hydras_keys_and_each_fact_in_one_tag(tiny_cfg, store_uri):
    """Hydra's instructions (``_target_``...) are no params, yet stay in the run's identity; MLflow's
    git tag and the ``dataset``/``algorithm``/``experiment`` tags are not repeated; the run says
    what it is in its description."""
    cfg = tiny_cfg("selection=grid_cv", "selection.param_grid.C=[1.0]", "selection.cv.n_splits=2")
    result = run(cfg, {**CHOICES, "selection": "grid_cv"})
    found = _run_of(store_uri, result.run_id)
    params, tags = found.data.params, found.data.tags
    private = [k for k in params if k.rsplit(".", 1)[-1] in ("_target_", "_partial_", "_convert_", "_recursive_",
                                                                "_args_")]
    assert not private and params["algorithm.C"] and params["dataset.n_train"] == "120"
    assert "_target_" in identity_config(cfg)["algorithm"] and tags["config_hash"] == config_hash(cfg)
    assert "git_commit" not in tags
    assert not {"choice.dataset", "choice.algorithm", "choice.experiment"} & set(tags)
    assert tags["choice.selection"] == "grid_cv" and tags["mode"] == "quick"
    assert tags["mlflow.note.content"] == (
        "svc_linear on gaussian_clouds: 120 training, 200 test examples of 10 features, seed 0.")


@pytest.mark.parametrize(("algorithm", "solver", "distribution"),
                         [("svc", "libsvm", "scikit-learn"), ("svc_onedal", "onedal", "scikit-learn-intelex"),
                          ("cascade_svc", "libsvm", "scikit-learn")])
def test_a_run_is_tagged_with_the_solver_its_estimator_fits_with_and_its_version(tiny_cfg, store_uri, algorithm,
                                                                                   solver, distribution):
    if solver == "onedal":
        pytest.importorskip("sklearnex", reason="scikit-learn-intelex installs on Linux x86-64 only")
    result = run(tiny_cfg(f"algorithm={algorithm}"), {**CHOICES, "algorithm": algorithm})
    tags = _run_of(store_uri, result.run_id).data.tags
    assert (tags["solver"], tags["solver.version"]) == (solver, version(distribution))
    assert result.metrics["n_sv"] > 0 and 0 <= result.metrics["test_error"] <= 1


def test_a_run_keeps_its_hydra_job_folder_and_log_as_artifacts(tiny_cfg, store_uri, tmp_path):
    job = tmp_path / "job0"
    (job / ".hydra").mkdir(parents=True)
    for name in ("config.yaml", "overrides.yaml", "hydra.yaml"):
        (job / ".hydra" / name).write_text(f"{name}: 1\n")
    (job / "app.log").write_text("[INFO] fitting\n")
    result = run(tiny_cfg(), CHOICES, job_files=[job / ".hydra", job / "app.log", job / "absent.log"])
    client = MlflowClient(store_uri)
    assert sorted(a.path for a in client.list_artifacts(result.run_id, "job")) == ["job/.hydra", "job/app.log"]
    assert sorted(a.path for a in client.list_artifacts(result.run_id, "job/.hydra")) == [
        "job/.hydra/config.yaml", "job/.hydra/hydra.yaml", "job/.hydra/overrides.yaml"]
    artifacts = _run_of(store_uri, result.run_id).info.artifact_uri
    assert mlflow.artifacts.load_text(f"{artifacts}/job/app.log") == "[INFO] fitting\n"


def test_a_run_name_holds_the_swept_values_and_repeats_only_for_the_same_computation(tiny_cfg, store_uri):
    overrides = ["experiment=test/runner", "mode=quick", f"tracking.uri={store_uri}", "dataset.n_train=120",
                 "algorithm.C=2", "selection.param_grid.C=[1.0]", "seed=3", "hydra.launcher.n_jobs=2"]
    assert run_name("svc", "gaussian_clouds", 3, overrides) == (
        "svc-gaussian_clouds-n_train=120-algorithm.C=2-selection.param_grid.C=[1.0]-seed=3")
    first = run(tiny_cfg(), CHOICES, overrides=["dataset.n_train=120"])
    forced = run(tiny_cfg("force=true"), CHOICES, overrides=["dataset.n_train=120"])
    other = run(tiny_cfg("dataset.n_test=150"), CHOICES, overrides=["dataset.n_train=120"])  # another identity
    names = [_run_of(store_uri, r.run_id).info.run_name for r in (first, forced, other)]
    assert names[0] == names[1] == "svc_linear-gaussian_clouds-n_train=120-seed=0"
    assert names[2] == f"{names[0]}-{other.run_key[:8]}"


def test_diagnostics_are_logged_with_slashes_constants_as_params_and_read_back_by_their_names(tiny_cfg, store_uri):
    metrics, params = mlflow_names({"n_sv": 3.0, "step1.T1.n_sv": 2.0, "data.bayes_risk": 0.1})
    assert metrics == {"n_sv": 3.0, "step1/T1/n_sv": 2.0} and params == {"data.bayes_risk": 0.1}
    frame = pd.DataFrame({"metrics.step1/T1/n_sv": [2.0], "params.data.bayes_risk": ["0.1"], "params.seed": ["0"]})
    assert svmrepro_names(frame).to_dict("list") == {
        "metrics.step1.T1.n_sv": [2.0], "metrics.data.bayes_risk": [0.1], "params.seed": ["0"]}
    run(tiny_cfg("mode=quick"), CHOICES)
    (row,) = runs_from_mlflow("test/runner", "quick", store_uri).to_dict("records")
    assert row["metrics.data.bayes_risk"] > 0  # what report specs name, from the param MLflow holds


def test_a_run_logs_its_model_and_system_metrics_when_asked(tiny_cfg, store_uri, monkeypatch):
    import mlflow.sklearn
    import numpy as np

    monkeypatch.setattr("svmrepro.store.client.SYSTEM_METRICS_INTERVAL_S", 0.01)  # a sample within the tiny fit
    # a fit of a second or so: long enough for a sample
    result = run(tiny_cfg("tracking.log_model=true", "tracking.system_metrics=true", "dataset.n_train=1500"), CHOICES)
    found = _run_of(store_uri, result.run_id)
    assert any(key.startswith("system/cpu_utilization") for key in found.data.metrics)
    (output,) = found.outputs.model_outputs
    logged = MlflowClient(store_uri).get_logged_model(output.model_id)
    assert logged.source_run_id == result.run_id and str(logged.status) == "READY"
    model = mlflow.sklearn.load_model(logged.artifact_location)
    assert model.predict(np.zeros((2, 10))).shape == (2,)
    plain = _run_of(store_uri, run(tiny_cfg("force=true"), CHOICES).run_id)
    assert not plain.outputs.model_outputs and not any(k.startswith("system/") for k in plain.data.metrics)


def test_finished_run_lookups_skip_sweep_and_report_runs(store_uri):
    store = Store(store_uri)
    experiment_id = store.experiment_id("test/runner")
    for kind in ("sweep", "report"):  # runs that are no results, even with a result's tags
        run_id = store.start_run(experiment_id, kind, {"svmrepro.kind": kind, "run_key": "k", "mode": "quick"})
        store.terminate(run_id, "FINISHED")
    assert store.finished_run_id(experiment_id, "k") is None
    assert store.finished_key_counts("test/runner", "quick") == {}
    result = store.start_run(experiment_id, "r", {"run_key": "k", "mode": "quick"})  # an older run: no kind tag
    store.terminate(result, "FINISHED")
    assert store.finished_run_id(experiment_id, "k") == result


@pytest.mark.parametrize(("children", "at_exit", "status"), [
    (["FINISHED", "FINISHED"], False, "FINISHED"),
    ([], True, "deleted"),  # stopped before a run was made (the checks before compute): no empty sweep run
    (["FINISHED", "FAILED"], False, "FAILED"),
    (["FINISHED"], True, "FAILED"),  # ended without on_multirun_end: a job failed before its run existed
    (["FINISHED", "KILLED"], True, "KILLED"),  # Ctrl-C
])
def test_a_sweeps_parent_run_ends_as_its_runs_did(store_uri, tmp_path, children, at_exit, status):
    store = Store(store_uri)
    experiment_id = store.experiment_id("test/runner")
    parent = store.start_run(experiment_id, "sweep", {"svmrepro.kind": "sweep"})
    for child in children:
        store.terminate(store.start_run(experiment_id, "job", {}, parent_run_id=parent), child)
    callback = PrepareStore()
    callback._sweep = (store, experiment_id, parent, tmp_path, {})  # a sweep folder without failures.jsonl
    callback._close(at_exit=at_exit)
    callback._close(at_exit=True)  # the exit hook after on_multirun_end: nothing left to do
    info = _run_of(store_uri, parent).info
    assert (info.lifecycle_stage if status == "deleted" else info.status) == status


def test_a_sweep_run_whose_process_was_killed_is_marked_killed_by_the_next_sweep(store_uri):
    gone = subprocess.Popen(["true"])
    gone.wait()  # reaped: its pid names no process
    store = Store(store_uri)
    experiment_id = store.experiment_id("test/runner")
    tags = {"svmrepro.kind": "sweep", "process.host": socket.gethostname(), "process.pid": str(gone.pid)}
    parent = store.start_run(experiment_id, "sweep", tags)
    assert store.mark_orphan_sweeps_killed(experiment_id) == [parent]
    assert _run_of(store_uri, parent).info.status == "KILLED"


def test_a_sweep_marks_its_runs_whose_process_was_killed_as_it_ends(store_uri):
    gone = subprocess.Popen(["true"])
    gone.wait()
    store = Store(store_uri)
    experiment_id = store.experiment_id("test/runner")
    parent = store.start_run(experiment_id, "sweep", {"svmrepro.kind": "sweep"})
    here = {"process.host": socket.gethostname()}
    orphan = store.start_run(experiment_id, "a", {**here, "process.pid": str(gone.pid)}, parent_run_id=parent)
    alive = store.start_run(experiment_id, "b", {**here, "process.pid": str(os.getpid())}, parent_run_id=parent)
    assert store.mark_orphan_children_killed(experiment_id, parent) == [orphan]
    assert _run_of(store_uri, orphan).info.status == "KILLED"
    assert "marked by the sweep's process" in _run_of(store_uri, orphan).data.tags[KILLED_REASON_TAG]
    assert _run_of(store_uri, alive).info.status == "RUNNING"


def test_a_sweep_nests_its_runs_under_a_parent_run_that_says_what_it_ran(tmp_path, store_uri):
    """svmrepro-run -m with joblib workers (other processes): the jobs find the parent run in the sweep
    folder; it holds the sweep's params, its jobs' counts and a summary. Run again, every job is
    skipped: no second parent is left (it is deleted as the sweep ends), the first is unchanged."""
    command = [str(Path(sys.executable).with_name("svmrepro-run")), "-m", "--quiet",
               "experiment=cross_training/fig3_baseline", "mode=quick", f"tracking.uri={store_uri}",
               "dataset.n_train=120,160", "dataset.n_test=200", "seed=0", "selection.cv.n_splits=2",
               "selection.param_grid.C=[1.0]", "hydra/launcher=joblib", "hydra.launcher.n_jobs=2"]
    for _ in range(2):
        done = subprocess.run(command, check=False, cwd=tmp_path, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr[-3000:]
    client = MlflowClient(store_uri)
    experiment_id = client.get_experiment_by_name("cross_training/fig3_baseline").experiment_id
    (parent,) = client.search_runs([experiment_id], "tags.`svmrepro.kind` = 'sweep'")
    assert parent.info.status == "FINISHED" and parent.info.run_name.startswith("sweep-cross_training/fig3_baseline-")
    first = parent.info.run_id
    children = client.search_runs([experiment_id], f"tags.`mlflow.parentRunId` = '{first}'")
    assert sorted(c.info.run_name for c in children) == [
        f"svc_linear-gaussian_clouds-n_train={n}-n_test=200-n_splits=2-C=[1.0]-seed=0" for n in (120, 160)]
    assert len(runs_from_mlflow("cross_training/fig3_baseline", "quick", store_uri)) == 2  # the parent is no result
    # what it ran: the experiment, its mode (a plain string), its axes and the command line's overrides
    params, tags = parent.data.params, parent.data.tags
    assert params["experiment"] == tags["experiment"] == "cross_training/fig3_baseline"
    assert params["mode"] == tags["mode"] == "quick" and params["sweeper"] == "svmrepro"
    assert params["sweep.dataset.n_train"] == "500,1000,2000" and "dataset.n_train=120,160" in params["overrides"]
    assert tags["mlflow.note.content"].startswith("Sweep of cross_training/fig3_baseline (quick mode): ")
    # how its jobs went, as they ended (one count per job ended) and at its end, and its summary
    done = client.get_metric_history(first, "jobs/done")
    assert max(m.value for m in done) == 2 and {m.step for m in done} >= {1, 2}
    assert parent.data.metrics["jobs/total"] == 2 and parent.data.metrics["jobs/failed"] == 0
    summary = mlflow.artifacts.load_dict(f"{parent.info.artifact_uri}/sweep_summary.json")
    assert summary["jobs"] == {"total": 2, "done": 2, "skipped": 0, "failed": 0} and summary["runs"] == {"FINISHED": 2}
    assert summary["status"] == "FINISHED" and summary["sweep"]["mode"] == "quick"
    # the experiment: a "Machine learning" one, described by its report's title
    experiment = client.get_experiment(experiment_id)
    assert experiment.tags["mlflow.experimentKind"] == "custom_model_development"
    assert experiment.tags["mlflow.note.content"].startswith("Fig. 3 (LIBSVM curve)")
    # the second invocation's parent: made, then deleted as its sweep ended with no run under it
    (deleted,) = client.search_runs([experiment_id], "tags.`svmrepro.kind` = 'sweep'", run_view_type=ViewType.DELETED_ONLY)
    assert not client.search_runs([experiment_id], f"tags.`mlflow.parentRunId` = '{deleted.info.run_id}'",
                                  run_view_type=ViewType.ALL)
    (sweep_dir,) = {Path(tags["sweep_dir"])}
    assert sweep_run_id(tmp_path / sweep_dir) == first


def test_a_run_stopped_while_mlflow_makes_it_is_marked_killed(tiny_cfg, store_uri, monkeypatch):
    """A signal between MLflow's commit of a new run and its id coming back (MLflow reads the run back,
    which waits on a busy store) leaves no RUNNING run behind."""
    made = Store.start_run

    def made_then_stopped(self, *args, **kwargs):
        made(self, *args, **kwargs)
        raise KeyboardInterrupt("SIGTERM")

    monkeypatch.setattr(Store, "start_run", made_then_stopped)
    with pytest.raises(KeyboardInterrupt):
        run(tiny_cfg(), CHOICES)
    client = MlflowClient(store_uri)
    (found,) = client.search_runs([client.get_experiment_by_name("test/runner").experiment_id])
    assert found.info.status == "KILLED"
    assert found.data.tags[KILLED_REASON_TAG].startswith("SIGTERM received by process")


def test_a_sweeps_params_mask_a_password_and_read_an_enum_by_its_value():
    config = OmegaConf.create({
        "mode": Mode.full, "sweep": {"full": [{"seed": "0,1"}, {"seed": "2"}]},
        "hydra": {"runtime": {"choices": {"experiment": "test/runner", "hydra/sweeper": "svmrepro"}},
                  "overrides": {"task": ["tracking.uri=postgresql://u:s3cret@db/x", "seed=0"]},
                  "sweeper": {"params": {"algorithm.C": "1,2"}}}})
    params = sweep_params(config)
    assert params["mode"] == "full" and params["experiment"] == "test/runner"
    assert "s3cret" not in params["overrides"] and "u:***@db" in params["overrides"]
    assert json.loads(params["sweep"]) == [{"seed": "0,1"}, {"seed": "2"}] and params["sweeper.algorithm.C"] == "1,2"


def test_a_confirm_sweeps_params_list_its_grids_on_the_confirm_seeds():
    """The confirm mode's sweep is the full one on ``confirm.seeds``, built as plain Python: its parent run
    still gets its params (Hydra reported the callback's error as a warning and the sweep had no parent)."""
    config = OmegaConf.create({
        "mode": "confirm", "confirm": {"seeds": "1000,1001"},
        "sweep": {"full": [{"seed": "0,1", "algorithm.C": "1"}, {"seed": "0"}]},
        "hydra": {"runtime": {"choices": {"experiment": "test/runner", "hydra/sweeper": "svmrepro"}},
                  "overrides": {"task": []}, "sweeper": {"params": None}}})
    params = sweep_params(config)
    assert params["mode"] == "confirm"
    assert json.loads(params["sweep"]) == [{"seed": "1000,1001", "algorithm.C": "1"}, {"seed": "1000"}]
