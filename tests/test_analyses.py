"""Analyses of a fitted run (svmrepro.analyses): the potential-SV audit and points, and the runner's hook."""

import numpy as np
import pytest
from mlflow.tracking import MlflowClient
from omegaconf import open_dict
from sklearn.svm import SVC

from svmrepro.algorithms.potential_sv import PotentialSVClassifier, PotentialSVFilter
from svmrepro.analyses import build_analyses, run_analyses
from svmrepro.analyses.potential_sv import PotentialSVPoints, RetrainingAudit
from svmrepro.compose import compose_config
from svmrepro.data.separable import Separable
from svmrepro.errors import ConfigError
from svmrepro.store import artifact_dict
from svmrepro.runner import FINISHED, run

DATA = Separable(n_train=300, n_test=10, n_features=3).load(7)
HARD_MARGIN = SVC(kernel="linear", C=1e6, tol=1e-10)
AUDIT = "svmrepro.analyses.potential_sv.RetrainingAudit"
POINTS = "svmrepro.analyses.potential_sv.PotentialSVPoints"


@pytest.fixture(scope="module")
def fitted():
    return PotentialSVClassifier(HARD_MARGIN, selector=PotentialSVFilter(chunk_size=64)).fit(DATA.X_train, DATA.y_train)


def test_retraining_audit_confirms_the_slides_claims(fitted):
    audit = RetrainingAudit()(fitted, DATA.X_train, DATA.y_train)
    assert audit["coef_max_abs_diff"] < 1e-6 and audit["future_coef_max_abs_diff"] < 1e-6
    assert audit["sv_outside_psv"] == audit["future_sv_violations"] == 0
    assert audit["n_sv_full"] == fitted.support_counts_["n_sv"]
    assert len(audit["future_n_psv_old"]) == 3 and audit["full_fit_time_s"] > 0
    assert audit["psv_total_time_ratio"] > audit["psv_fit_time_ratio"] > 0
    assert audit["full_fit_cpu_s"] > 0 and audit["psv_total_cpu_ratio"] > audit["psv_fit_cpu_ratio"] > 0


def test_retraining_audit_counts_svs_missing_from_the_kept_points():
    """A filter that keeps too little is caught: of the "old" half only one point is kept."""
    model = PotentialSVClassifier(HARD_MARGIN).fit(DATA.X_train, DATA.y_train)
    model.selector_ = _KeepFirst()
    audit = RetrainingAudit(old_fractions=(0.5,))(model, DATA.X_train, DATA.y_train)
    assert audit["future_sv_violations"] > 0 and audit["future_coef_max_abs_diff"] > 1e-3


class _KeepFirst(PotentialSVFilter):
    """A wrong filter for the test above: it keeps only the first point."""

    def fit(self, X, y):
        self.support_ = np.array([0])
        return self


def test_points_are_the_training_set_and_its_index_sets(fitted):
    points = PotentialSVPoints()(fitted, DATA.X_train, DATA.y_train)["points"]
    assert np.array_equal(points["X"], DATA.X_train) and np.array_equal(points["y"], DATA.y_train)
    assert set(points["sv"]) <= set(points["potential_sv"]) and set(points["sv_full"]) <= set(points["potential_sv"])
    assert sorted(points["sv"]) == sorted(points["sv_full"])  # the slides' claim, in index sets


def test_analyses_are_merged_in_order_and_may_not_overwrite_each_other(fitted):
    first = lambda estimator, X, y: {"a": 1}
    assert run_analyses({"one": first, "two": lambda e, X, y: {"b": len(X)}}, fitted, DATA.X_train, DATA.y_train) == {
        "a": 1, "b": 300}
    with pytest.raises(ValueError, match="'two' reports \\['a'\\]"):
        run_analyses({"one": first, "two": first}, fitted, DATA.X_train, DATA.y_train)


def test_analyses_are_built_from_named_constructor_configs():
    cfg = compose_config([f"+analysis.audit._target_={AUDIT}", "+analysis.audit.old_fractions=[0.5]"])
    built = build_analyses(cfg.analysis)
    assert list(built) == ["audit"] and built["audit"].old_fractions == [0.5]
    assert build_analyses(None) == {}
    with pytest.raises(ConfigError, match="analysis must map names"):
        build_analyses(compose_config([f"+analysis._target_={AUDIT}"]).analysis)
    with pytest.raises(ConfigError, match="analysis.n: int is not callable"):
        build_analyses(compose_config(["+analysis.n._target_=builtins.int"]).analysis)


def test_runner_logs_what_the_analyses_report(store_uri):
    cfg = compose_config(["dataset=separable", "dataset.n_train=60", "dataset.n_test=20", "algorithm=psv_svc",
                          f"tracking.uri={store_uri}"])
    with open_dict(cfg):
        cfg.analysis = {"audit": {"_target_": AUDIT}, "points": {"_target_": POINTS}}
    result = run(cfg, {"experiment": "test/analyses", "dataset": "separable", "algorithm": "psv_svc"})
    assert result.status == FINISHED
    assert result.metrics["sv_outside_psv"] == 0 and result.metrics["n_sv_full"] == result.metrics["n_sv"]
    assert "n_potential_sv" in result.metrics  # the estimator's own diagnostics are still there
    history = MlflowClient(store_uri).get_metric_history(result.run_id, "future_n_psv_old")
    assert len(history) == 3
    run_uri = MlflowClient(store_uri).get_run(result.run_id).info.artifact_uri
    diagnostics = artifact_dict(run_uri, "diagnostics.json")
    assert len(diagnostics["points"]["X"]) == 60 and "coef_max_abs_diff" in diagnostics
