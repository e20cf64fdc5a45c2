"""Analyses of the potential-SV experiments (Del Favero et al. 2011): the slides' claims, checked.

Both take a fitted :class:`svmrepro.algorithms.potential_sv.PotentialSVClassifier` and its
training data, and refit clones of its parts (never the estimator itself).
"""

from __future__ import annotations

import numpy as np
from sklearn.base import clone

from svmrepro.algorithms.parallel import fit_one


def _hyperplane_gap(a, b) -> float:
    """max |difference| over the coefficients and intercepts of two fitted linear models."""
    if not (hasattr(a, "coef_") and hasattr(b, "coef_")):
        raise ValueError("the retraining audit compares (w, b): the estimator must be linear (have coef_)")
    return float(np.abs(np.r_[a.coef_.ravel(), a.intercept_] - np.r_[b.coef_.ravel(), b.intercept_]).max())


class RetrainingAudit:
    """The slides' claim that discardable data bring no information.

    1. The model fitted on the potential SVs equals the one fitted on everything
       (``coef_max_abs_diff``) and every SV of the latter is a potential SV (``sv_outside_psv``).
    2. Future data: for each ``fraction`` f, the first ``f n`` rows play "old" and the rest "new";
       the SVs of the model fitted on everything lie in ``PSV(old) + new``
       (``future_sv_violations``, summed) and the model fitted on ``PSV(old) + new`` equals it
       (``future_coef_max_abs_diff``, the largest gap).

    Returns those counts (expected 0) and gaps, ``n_sv_full``, ``future_n_psv_old``, the full
    fit's wall and CPU seconds ``full_fit_time_s``, ``full_fit_cpu_s``, and the ratios
    ``psv_fit_time_ratio`` (fit on the potential SVs / fit on everything) and
    ``psv_total_time_ratio`` (filter + that fit / fit on everything) of wall seconds, and
    ``psv_fit_cpu_ratio``, ``psv_total_cpu_ratio`` of CPU seconds.
    """

    def __init__(self, old_fractions=(0.25, 0.5, 0.75)):
        self.old_fractions = old_fractions

    def __call__(self, estimator, X, y) -> dict:
        X, y = np.asarray(X), np.asarray(y)
        template, psv = estimator.estimator_, estimator.potential_sv_
        full, full_time, full_cpu = fit_one(template, X, y)
        n, violations, future_gap, n_psv_old = len(X), 0, 0.0, []
        for fraction in self.old_fractions:
            k = int(fraction * n)
            old_psv = clone(estimator.selector_).fit(X[:k], y[:k]).support_
            kept = np.concatenate([old_psv, np.arange(k, n)])
            violations += int(np.isin(full.support_, kept, invert=True).sum())
            future_gap = max(future_gap, _hyperplane_gap(fit_one(template, X[kept], y[kept])[0], full))
            n_psv_old.append(len(old_psv))
        times = estimator.diagnostics_
        return {
            "full_fit_time_s": full_time,
            "full_fit_cpu_s": full_cpu,
            "psv_fit_time_ratio": times["psv_fit_time_s"] / full_time,
            "psv_total_time_ratio": (times["filter_time_s"] + times["psv_fit_time_s"]) / full_time,
            "psv_fit_cpu_ratio": times["psv_fit_cpu_s"] / full_cpu,
            "psv_total_cpu_ratio": (times["filter_cpu_s"] + times["psv_fit_cpu_s"]) / full_cpu,
            "coef_max_abs_diff": _hyperplane_gap(estimator.estimator_, full),
            "n_sv_full": len(full.support_),
            "sv_outside_psv": int(np.isin(full.support_, psv, invert=True).sum()),
            "future_sv_violations": violations,
            "future_coef_max_abs_diff": future_gap,
            "future_n_psv_old": n_psv_old,
        }


class PotentialSVPoints:
    """The slides' numerical example as data for a scatter plot (small 2-d sets only).

    Returns ``{key: {X, y, potential_sv, sv, sv_full}}``: the training points, and the row indices
    of the potential SVs, of the SVs of the model fitted on them, and of the SVs of the same model
    fitted on everything (``report.scatter`` of the experiment draws them).
    """

    def __init__(self, key="points"):
        self.key = key

    def __call__(self, estimator, X, y) -> dict:
        X, y = np.asarray(X), np.asarray(y)
        full = fit_one(estimator.estimator_, X, y)[0]
        return {
            self.key: {
                "X": X.tolist(), "y": y.tolist(), "potential_sv": estimator.potential_sv_.tolist(),
                "sv": getattr(estimator, "support_", np.zeros(0, int)).tolist(),
                "sv_full": full.support_.tolist(),
            }
        }
