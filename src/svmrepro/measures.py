"""What a run measures: fit the estimator on the training split, then every number the runner logs
besides the estimator's own ``diagnostics_``.

A measure is a callable ``measure(estimator, data) -> {metric: value}``. A run's config chooses it
(``measure:``, an option of ``conf/measure/``: ``+measure=regression``); when the config leaves it
null, :func:`measure_for` picks the one the estimator and the data set imply, so the configs of
every earlier run (which have no ``measure``) keep their identity:

- :func:`classification` and :func:`regression`: fit, predict every split, and score error rates
  or mean squared errors;
- :func:`benchmark`, for the self-benchmarks (:class:`BenchmarkMixin`: ``svmrepro.bench``,
  ``svmrepro.bench_expansion``): fit and nothing else. What a benchmark measures (timings, ratios)
  is in its ``diagnostics_``, which the runner logs as it logs every estimator's; it predicts
  nothing, so it has no error rate;
- :func:`scored_benchmark`, for a benchmark that times fits of a model (``estimator_``, e.g.
  :class:`svmrepro.bench.ParallelSpeedup`'s): :func:`benchmark`, and that model's test error, so
  a comparison of speed shows what each fit bought.

A measure returns metrics only: the data set's constants (``data.info``, e.g. ``bayes_risk``) are
not measured, the runner logs them as params.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np
from sklearn.svm import SVC, SVR, NuSVC, NuSVR

from svmrepro.algorithms import kernel_expansion as expansion
from svmrepro.build import _instantiate
from svmrepro.data.base import REGRESSION, Dataset
from svmrepro.errors import ConfigError
from svmrepro.metrics import error_rate, final_estimator, mean_squared_error, support_counts
from svmrepro.timing import timed

#: what a measure is called with and returns
Measure = Callable[..., dict]


class BenchmarkMixin:
    """Mixin of the self-benchmarks: ``fit(X, y)`` measures something and leaves it in
    ``diagnostics_``; there is nothing to predict, so a run measures them by :func:`benchmark`."""


def _fit(estimator, data: Dataset) -> dict[str, float]:
    _, fit_wall, fit_cpu = timed(lambda: estimator.fit(data.X_train, data.y_train))
    return {"n_train": data.n_train, "fit_time_s": fit_wall, "fit_cpu_s": fit_cpu}


def _support(estimator) -> dict[str, float]:
    """Support counts of the fitted ``estimator`` and, when it has SVs, the share of them bounded
    (``bounded_sv_fraction``: which regime a run is in, e.g. Laskov's Table 1 against Table 2);
    for a LIBSVM model, its solver's iterations (``n_iter``, summed over its binary problems)."""
    counts = support_counts(estimator)
    if counts.get("n_sv"):
        counts["bounded_sv_fraction"] = counts["n_bounded_sv"] / counts["n_sv"]
    model = final_estimator(estimator)
    if isinstance(model, (SVC, NuSVC, SVR, NuSVR)):
        counts["n_iter"] = int(np.sum(model.n_iter_))
    return counts


def _predictive(estimator, data: Dataset, score: Callable, prefix: str) -> dict[str, float]:
    """Fit, then predict every split and score it by ``score`` as ``<split>_<prefix>``.

    Predictions go through :func:`svmrepro.algorithms.kernel_expansion.predict`, so a plain LIBSVM
    model and svmrepro's estimators are evaluated by the same blocked kernel expansions and their
    predict times compare kernel evaluations, not LIBSVM's one-row-at-a-time loop with BLAS.
    """
    fitted = _fit(estimator, data)
    train_pred, train_wall, _ = timed(lambda: expansion.predict(estimator, data.X_train))
    test_pred, test_wall, test_cpu = timed(lambda: expansion.predict(estimator, data.X_test))
    metrics = {
        **fitted,
        "n_test": data.n_test,
        "predict_time_s": test_wall,
        "predict_cpu_s": test_cpu,
        "predict_train_time_s": train_wall,
        **_support(estimator),
        f"train_{prefix}": score(data.y_train, train_pred),
        f"test_{prefix}": score(data.y_test, test_pred),
    }
    if data.y_test_clean is not None:
        metrics[f"clean_test_{prefix}"] = score(data.y_test_clean, test_pred)
    if data.X_val is not None and data.y_val is not None:
        metrics[f"val_{prefix}"] = score(data.y_val, expansion.predict(estimator, data.X_val))
    if hasattr(estimator, "refit_time_"):  # a model search: the final refit apart from the search
        metrics["refit_time_s"] = estimator.refit_time_
        metrics["search_time_s"] = fitted["fit_time_s"] - estimator.refit_time_
    return metrics


def classification(estimator, data: Dataset) -> dict[str, float]:
    """Sizes, fit and predict times, support counts and the error rate of every split
    (``train_error``, ``test_error``, ``clean_test_error`` on noise-free labels, ``val_error``)."""
    return _predictive(estimator, data, error_rate, "error")


def regression(estimator, data: Dataset) -> dict[str, float]:
    """As :func:`classification`, with mean squared errors (``train_mse``, ``test_mse``, ...)."""
    return _predictive(estimator, data, mean_squared_error, "mse")


def benchmark(estimator, data: Dataset) -> dict[str, float]:
    """A self-benchmark's fit: the training size, the fit's wall and CPU seconds and the support
    counts of the model it fitted, if any. Its timings and ratios are its ``diagnostics_``."""
    return {**_fit(estimator, data), **_support(estimator)}


def scored_benchmark(estimator, data: Dataset) -> dict[str, float]:
    """:func:`benchmark`, then the error rate on the test split (``test_error``) of the model the
    benchmark fitted (its ``estimator_``), predicted by the kernel expansions every run uses. A
    configuration error, before any fit, for an estimator that is not such a benchmark."""
    bench = final_estimator(estimator)
    if not (isinstance(bench, BenchmarkMixin) and "estimator" in bench.get_params()):
        raise ConfigError(f"measure: scored_benchmark scores the model a benchmark fits (its estimator=); "
                          f"{type(bench).__name__} is no such benchmark")
    metrics = benchmark(estimator, data)
    test_pred = expansion.predict(bench.estimator_, data.X_test)
    return {**metrics, "n_test": data.n_test, "test_error": error_rate(data.y_test, test_pred)}


def measure_for(node: Mapping | None, estimator, data: Dataset) -> Measure:
    """The measure ``node`` configures (``_target_`` + arguments), or when it is None the one
    ``estimator`` and ``data`` imply: :func:`benchmark` for a :class:`BenchmarkMixin`, else
    :func:`regression` or :func:`classification` by the data set's task."""
    if node is not None:
        chosen = _instantiate(node, "measure")
        if not callable(chosen):
            raise ConfigError(f"measure: {type(chosen).__name__} is not callable as (estimator, data)")
        return chosen
    if isinstance(final_estimator(estimator), BenchmarkMixin):
        return benchmark
    return regression if data.task == REGRESSION else classification


def measure(estimator, data: Dataset, node: Mapping | None = None) -> dict[str, float]:
    """Fit ``estimator`` on ``data``'s training split and measure it (:func:`measure_for`)."""
    return measure_for(node, estimator, data)(estimator, data)
