"""What a run measures is chosen by config, or implied by the estimator and the data set's task;
the metric names are those the committed runs CSVs and report specs read."""

from functools import partial

import pytest
from sklearn.dummy import DummyClassifier
from sklearn.model_selection import GridSearchCV
from sklearn.svm import SVC, SVR

from svmrepro import measures
from svmrepro.compose import compose_config
from svmrepro.data.friedman1 import Friedman1
from svmrepro.data.gaussian_clouds import GaussianClouds
from svmrepro.errors import ConfigError
from svmrepro.identity import config_hash
from svmrepro.measures import measure, measure_for
from svmrepro.metrics import error_rate

CLOUDS = GaussianClouds(n_train=60, n_test=40).load(0)  # has a data-set constant: bayes_risk
FRIEDMAN = Friedman1(n_train=60, n_test=40).load(0)
TIMES = {"fit_time_s", "fit_cpu_s", "predict_time_s", "predict_cpu_s", "predict_train_time_s"}
# support counts, the bounded share and, for these LIBSVM models, the solver's iterations
SUPPORT = {"n_sv", "n_bounded_sv", "n_free_sv", "bounded_sv_fraction", "n_iter"}


def test_classification_logs_the_names_runs_always_had_and_no_data_constant():
    metrics = measure(SVC(kernel="linear"), CLOUDS)
    assert set(metrics) == {"n_train", "n_test", *TIMES, *SUPPORT, "train_error", "test_error"}
    assert 0 <= metrics["test_error"] <= 1 and metrics["n_train"] == 60


def test_regression_scores_mean_squared_errors():
    metrics = measure(SVR(), FRIEDMAN)
    assert set(metrics) == {"n_train", "n_test", *TIMES, *SUPPORT, "train_mse", "test_mse"}
    assert metrics["test_mse"] > 0


def test_a_model_search_reports_its_refit_apart():
    search = GridSearchCV(SVC(kernel="linear"), {"C": [0.1, 1.0]}, cv=2)
    metrics = measure(search, CLOUDS)
    assert metrics["search_time_s"] == pytest.approx(metrics["fit_time_s"] - metrics["refit_time_s"])


@pytest.mark.parametrize(
    ("estimator", "data", "expected"),
    [(DummyClassifier(), CLOUDS, measures.classification), (SVR(), FRIEDMAN, measures.regression),
     (GridSearchCV(SVR(), {"C": [1.0]}), FRIEDMAN, measures.regression)],
)
def test_the_default_follows_the_data_set_s_task(estimator, data, expected):
    assert measure_for(None, estimator, data) is expected


@pytest.mark.parametrize("option", ["classification", "regression", "benchmark", "scored_benchmark"])
def test_every_measure_option_composes_to_its_function(option):
    chosen = measure_for(compose_config([f"+measure={option}"]).measure, SVC(), CLOUDS)
    assert isinstance(chosen, partial) and chosen.func is getattr(measures, option)


def test_a_chosen_measure_wins_over_the_default():
    node = compose_config(["+measure=benchmark"]).measure
    metrics = measure(SVC(kernel="linear"), CLOUDS, node)
    assert set(metrics) == {"n_train", "fit_time_s", "fit_cpu_s", *SUPPORT}


def test_a_measure_that_is_not_callable_is_refused():
    with pytest.raises(ConfigError, match="measure: int is not callable"):
        measure_for({"_target_": "builtins.int"}, SVC(), CLOUDS)


def test_choosing_a_measure_is_another_run_but_not_choosing_keeps_the_identity():
    plain, chosen = compose_config([]), compose_config(["+measure=classification"])
    assert plain.measure is None
    assert config_hash(plain) != config_hash(chosen)


def test_a_scored_benchmark_scores_the_model_it_timed_and_refuses_anything_else():
    from svmrepro.bench import ParallelSpeedup

    timed = ParallelSpeedup(SVC(kernel="linear"), n_jobs=[1], repeats=1)
    metrics = measures.scored_benchmark(timed, CLOUDS)
    assert metrics["test_error"] == error_rate(CLOUDS.y_test, timed.estimator_.predict(CLOUDS.X_test))
    assert {"fit_s_serial", "fit_s_parallel"}.isdisjoint(metrics) and metrics["n_sv"] > 0  # those are diagnostics
    with pytest.raises(ConfigError, match="scored_benchmark scores the model a benchmark fits .*SVC is no such"):
        measures.scored_benchmark(SVC(), CLOUDS)
