"""Fit independent sub-models in parallel: the one place meta-estimators go through joblib.

Cross-training's first-stage SVMs, the cascade's sub-problems and the mixture's experts are
fitted with :func:`fit_each`. The workers come from joblib, so a caller can route them to another
backend (``with joblib.parallel_config(backend="dask"): ...``) without touching the algorithms.
Results come back in input order, so parallel and serial fits give identical models.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import numpy as np
from joblib import Parallel, delayed
from sklearn.base import clone


def _fit_timed(estimator, X: np.ndarray, y: np.ndarray):
    start = time.perf_counter()
    fitted = estimator.fit(X, y)
    return fitted, time.perf_counter() - start


def fit_each(
    estimator,
    parts: Sequence[tuple[np.ndarray, np.ndarray]],
    n_jobs: int | None = None,
) -> tuple[list, list[float]]:
    """Fit a clone of ``estimator`` on each ``(X, y)`` of ``parts``.

    Returns the fitted clones and each one's wall-clock fit time in seconds, in input order.
    """
    done = Parallel(n_jobs=n_jobs)(delayed(_fit_timed)(clone(estimator), X, y) for X, y in parts)
    return [model for model, _ in done], [seconds for _, seconds in done]


def map_each(function: Callable, items: Sequence, n_jobs: int | None = None) -> list:
    """``[function(item) for item in items]``, in parallel, in input order (e.g. decision values
    of each sub-model on the whole training set)."""
    if n_jobs in (None, 1) or len(items) < 2:
        return [function(item) for item in items]
    return Parallel(n_jobs=n_jobs)(delayed(function)(item) for item in items)
