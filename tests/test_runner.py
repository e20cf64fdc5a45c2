"""One run through the runner into a temporary MLflow store."""

import mlflow
import pytest
from mlflow.tracking import MlflowClient

from svmrepro.runner import FINISHED, SKIPPED, run

CHOICES = {"experiment": "test/runner", "dataset": "gaussian_clouds", "algorithm": "svc_linear"}


def _runs(store_uri):
    mlflow.set_tracking_uri(store_uri)
    return mlflow.search_runs(experiment_names=["test/runner"])


def test_run_logs_metrics_params_tags_and_config(tiny_cfg, store_uri):
    result = run(tiny_cfg(), CHOICES)
    assert result.status == FINISHED
    row = _runs(store_uri).iloc[0]
    for metric in ("n_train", "n_test", "n_sv", "n_bounded_sv", "n_free_sv", "train_error", "test_error",
                   "fit_time_s", "predict_time_s", "data.bayes_risk"):
        assert f"metrics.{metric}" in row.index, metric
    assert row["metrics.n_train"] == 120 and row["metrics.n_test"] == 200
    assert row["metrics.n_sv"] == row["metrics.n_bounded_sv"] + row["metrics.n_free_sv"]
    assert 0 <= row["metrics.test_error"] <= 1
    assert row["params.dataset.n_train"] == "120"
    for tag in ("paper", "experiment", "dataset", "algorithm", "seed", "git_commit", "config_hash", "cpu_model"):
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
