"""``tracking.log_model=true`` for every estimator: each shipped classifier and regressor, fitted on
a tiny data set, is logged as an MLflow model that loads back (from the store's artifact location,
no process-wide tracking URI) and predicts the same values; a model that cannot be logged is
warned about and its run stays FINISHED.

Before: MLflow's default format (skops) refused svmrepro's types, so cascade_svc, cross_training
and any ``selection=grid_cv`` run failed after fitting.
"""

import logging

import mlflow.sklearn
import numpy as np
import pytest
from algorithm_configs import ALGORITHMS, needs_extra
from mlflow.tracking import MlflowClient

from svmrepro.build import build
from svmrepro.compose import compose_config
from svmrepro.runner import FINISHED, run
from svmrepro.store import Store

#: every shipped algorithm but the self-benchmarks, which predict nothing
ALGORITHMS = [a for a in ALGORITHMS if not a.startswith("bench_")]
REGRESSION = ["dataset=friedman1", "dataset.n_train=100", "dataset.n_test=50"]
#: a hard margin and potential SVs are defined on separable data only
SEPARABLE = ["dataset=separable", "dataset.n_train=60", "dataset.n_test=50"]
CLASSIFICATION = ["dataset=gaussian_clouds", "dataset.n_train=120", "dataset.n_test=50"]
DATA = {"svr": REGRESSION, "svr_onedal": REGRESSION, "decomposition_svr": REGRESSION, "full_qp_svr": REGRESSION,
        "psv_svc": SEPARABLE, "psv_svc_onedal": SEPARABLE, "svc_hard_linear": SEPARABLE}
CASES = [pytest.param([f"algorithm={a}", *DATA.get(a, CLASSIFICATION)], marks=needs_extra(a)) for a in ALGORITHMS] + [
    ["algorithm=svc", *CLASSIFICATION, "selection=grid_cv", "selection.param_grid.C=[0.1,1.0]",
     "selection.cv.n_splits=2"]]


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    return Store(f"sqlite:///{tmp_path_factory.mktemp('models') / 'mlflow.db'}")


@pytest.mark.parametrize("overrides", CASES, ids=lambda o: "-".join(x.split("=")[1] for x in o[:1] + o[4:5]))
def test_a_logged_model_loads_back_and_predicts_the_same(store, overrides):
    parts = build(compose_config(overrides))
    data = parts.source.load(0)
    estimator = parts.estimator.fit(data.X_train, data.y_train)
    experiment_id = store.experiment_id("test/models")
    run_id = store.start_run(experiment_id, overrides[0], {})
    model_id = store.log_model(experiment_id, run_id, estimator, input_example=data.X_train[:5])
    loaded = mlflow.sklearn.load_model(store.client.get_logged_model(model_id).artifact_location)
    np.testing.assert_array_equal(loaded.predict(data.X_test), estimator.predict(data.X_test))


def test_a_cascade_run_logs_its_model(tiny_cfg, store_uri):
    result = run(tiny_cfg("algorithm=cascade_svc", "tracking.log_model=true"), {"experiment": "test/models"})
    assert result.status == FINISHED
    assert MlflowClient(store_uri).get_run(result.run_id).outputs.model_outputs


def test_a_model_that_cannot_be_logged_warns_and_the_run_stays_finished(tiny_cfg, store_uri, monkeypatch, caplog):
    def refuse(*args, **kwargs):
        raise TypeError("cannot pickle '_thread.lock' object")

    monkeypatch.setattr(Store, "log_model", refuse)
    with caplog.at_level(logging.WARNING, logger="svmrepro.runner"):
        result = run(tiny_cfg("tracking.log_model=true"), {"experiment": "test/models"})
    assert result.status == FINISHED
    assert MlflowClient(store_uri).get_run(result.run_id).info.status == FINISHED
    assert any("model was not logged (TypeError: cannot pickle" in r.getMessage() for r in caplog.records)
