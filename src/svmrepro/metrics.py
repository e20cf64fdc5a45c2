"""Metrics every run logs: support-vector counts and errors.

A support vector is *bounded* when its dual coefficient sits at the box constraint
(alpha_i = C for C-SVC and epsilon-SVR) and *free* otherwise. Estimators that are not a plain
LIBSVM model expose ``support_counts_`` (a dict with the three counts) instead.
"""

from __future__ import annotations

import numpy as np
from scipy.sparse import issparse
from sklearn.pipeline import Pipeline
from sklearn.svm import SVC, SVR, NuSVC, NuSVR

#: relative tolerance for "alpha_i is at its bound"; LIBSVM clips alphas to the bound exactly
BOUND_RTOL = 1e-6


def final_estimator(estimator):
    """The fitted model behind model selection and pipelines."""
    if hasattr(estimator, "best_estimator_"):
        return final_estimator(estimator.best_estimator_)
    if isinstance(estimator, Pipeline):
        return final_estimator(estimator[-1])
    return estimator


def _alpha_bounds(model) -> np.ndarray:
    """Upper bound of |dual coefficient| for each support vector of a fitted LIBSVM model."""
    n_sv = model.support_.shape[0]
    if isinstance(model, (SVR, NuSVR)):
        return np.full(n_sv, model.C)
    if isinstance(model, NuSVC):
        # LIBSVM rescales nu-SVC's alphas by 1/rho; bounded ones share the largest value.
        return np.full(n_sv, np.abs(model.dual_coef_).max())
    # C-SVC: class i's bound is C * class_weight_[i]; support_ is grouped by class (n_support_).
    return np.repeat(model.C * model.class_weight_, model.n_support_)


def bounded_mask(model) -> np.ndarray:
    """For each support vector of a fitted LIBSVM model, whether its alpha is at the box bound.

    A multi-class SV is bounded when any of its one-vs-one coefficients is.
    """
    dual = model.dual_coef_.toarray() if issparse(model.dual_coef_) else model.dual_coef_
    return np.abs(dual).max(axis=0) >= _alpha_bounds(model) * (1 - BOUND_RTOL)


def support_counts(estimator) -> dict[str, int]:
    """``n_sv``, ``n_bounded_sv`` and ``n_free_sv`` of a fitted estimator (empty if it has none)."""
    model = final_estimator(estimator)
    if hasattr(model, "support_counts_"):
        return dict(model.support_counts_)
    if not isinstance(model, (SVC, NuSVC, SVR, NuSVR)):
        return {}
    bounded = int(bounded_mask(model).sum())
    n_sv = int(model.support_.shape[0])
    return {"n_sv": n_sv, "n_bounded_sv": bounded, "n_free_sv": n_sv - bounded}


def error_rate(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    return float(np.mean(np.asarray(y_true) != np.asarray(y_pred)))


def mean_squared_error(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    return float(np.mean((np.asarray(y_true, dtype=float) - np.asarray(y_pred, dtype=float)) ** 2))
