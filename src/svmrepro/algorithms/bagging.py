"""Bagging the first-stage SVMs of cross-training (Bakir, Bottou, Weston 2004, Fig. 4, dashed line).

The same ``s`` SVMs as :class:`~svmrepro.algorithms.cross_training.CrossTrainingSVC` steps 1-2
(same subsets for the same ``random_state``), combined by averaging their decision values or
their votes instead of editing the training set.
"""

from __future__ import annotations

import numpy as np
from sklearn.utils._param_validation import StrOptions

from svmrepro.algorithms.cross_training import FirstStageSVC, best_threshold_shift
from svmrepro.algorithms.final_model import support_vectors
from svmrepro.algorithms.sub_svms import subset_weights
from svmrepro.metrics import bounded_mask, final_estimator


def _support_flags(model, subset: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """Indices into the training X of a LIBSVM model's SVs, and which of them are bounded."""
    model = final_estimator(model)
    if not hasattr(model, "dual_coef_"):
        return None
    return subset[model.support_], bounded_mask(model)


class BaggedFirstStageSVC(FirstStageSVC):
    """Average (or vote) of the s first-stage SVMs of cross-training.

    Parameters
    ----------
    estimator, n_subsets, subset_size, validation_size, n_jobs, random_state :
        As :class:`~svmrepro.algorithms.cross_training.CrossTrainingSVC`'s first stage
        (``estimator``'s ``class_weight`` is resolved on the whole training set).
    aggregation : {"mean", "vote"}, default="mean"
        The decision value is the mean of the s decision values, or the mean of their signs
        (a tie among an even number of votes predicts ``classes_[0]``).
    threshold : {"svm", "final", "all"}, default="svm"
        "final" shifts the aggregated decision to its best validation error, "all" also each
        first-stage SVM's threshold before aggregating (cf. sec. 4.3).

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
    estimators_ : list of the s fitted first-stage estimators (trained on labels -1/+1)
    subsets_ : list of s ndarrays
        The rows each first-stage SVM was fitted on, as in CrossTrainingSVC.
    validation_indices_ : indices into X held out for validation (empty without)
    first_stage_shifts_ : ndarray of shape (s,)
    threshold_shift_ : float
        Added to the aggregated decision.
    support_ : indices into X of the distinct support vectors of all first-stage SVMs: the
        kernel expansions a prediction evaluates.
    support_vectors_ : ndarray of shape (n_sv, n_features)
        ``X[support_]``.
    n_support_ : ndarray of shape (2,), dtype int32
        Distinct support vectors of each class, in the order of ``classes_``.
    support_counts_ : dict
        ``n_sv`` = distinct SVs (``len(support_)``); ``n_bounded_sv`` = distinct SVs at their
        bound in at least one SVM; ``n_free_sv`` = the rest; ``n_sv_sum`` = SVs summed over the
        s SVMs (an example in two subsets counts twice). Empty if the SVMs are not LIBSVM models.
    diagnostics_ : dict
        First-stage sizes, #SV and fit times (per SVM, sum, max, wall).

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> from sklearn.svm import SVC
    >>> from svmrepro.algorithms import BaggedFirstStageSVC
    >>> X, y = make_classification(n_samples=300, random_state=0)
    >>> model = BaggedFirstStageSVC(SVC(C=10.0), n_subsets=3, random_state=0).fit(X, y)
    >>> model.n_support_  # the distinct support vectors of the 3 SVMs
    array([109, 102], dtype=int32)
    """

    _parameter_constraints: dict = {
        **FirstStageSVC._parameter_constraints,
        "aggregation": [StrOptions({"mean", "vote"})],
    }

    def __init__(
        self,
        estimator=None,
        *,
        n_subsets=5,
        subset_size=None,
        aggregation="mean",
        validation_size=None,
        threshold="svm",
        n_jobs=None,
        random_state=None,
    ):
        self.estimator = estimator
        self.n_subsets = n_subsets
        self.subset_size = subset_size
        self.aggregation = aggregation
        self.validation_size = validation_size
        self.threshold = threshold
        self.n_jobs = n_jobs
        self.random_state = random_state

    def fit(self, X, y, sample_weight=None):
        """Steps 1-2 of cross-training's Algorithm 3 on ``(X, y)``, then the aggregate's threshold.

        ``sample_weight`` (non-negative) goes to each SVM for the rows of its subset (rows of zero
        weight left out, as SVC leaves them out) and weighs the validation errors of ``threshold``.
        The subsets are drawn from the rows, so an integer weight is not the same as repeating a row.
        """
        return self._fit_with(self._combine, X, y, sample_weight)

    def _combine(self, X, y, sample_weight, fit_idx, diagnostics, fits):
        """The aggregate's threshold, support and diagnostics, after the first stage (``_fit_with``)."""
        val = self.validation_indices_
        self.threshold_shift_ = 0.0
        if self.threshold != "svm":
            (val_weight,) = subset_weights(sample_weight, [val])
            self.threshold_shift_ = best_threshold_shift(self._decision(X, val), y[val], val_weight)
        self.support_counts_ = {}
        flags = [_support_flags(m, s) for m, s in zip(self.estimators_, self.subsets_)]
        if all(f is not None for f in flags):
            sv = np.concatenate([index for index, _ in flags])
            bounded = np.concatenate([b for _, b in flags])
            self.support_ = np.unique(sv)
            self.support_vectors_, self.n_support_ = support_vectors(X, y, self.support_, (-1, 1))
            n_bounded = len(np.unique(sv[bounded]))
            self.support_counts_ = {
                "n_sv": len(self.support_),
                "n_bounded_sv": n_bounded,
                "n_free_sv": len(self.support_) - n_bounded,
                "n_sv_sum": len(sv),
            }
        self.diagnostics_ = {**diagnostics, "threshold_shift": self.threshold_shift_}

    def _decision(self, X, rows=None):
        decisions = self.first_stage_decisions(X, rows)
        return np.mean(decisions if self.aggregation == "mean" else np.sign(decisions), axis=0)
