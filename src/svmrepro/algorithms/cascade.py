"""What the two cascade SVMs share: sub-problem bookkeeping, one parallel step, the estimator shell.

Wen & Lu (ISNN 2004, :mod:`svmrepro.algorithms.wen_lu_cascade`) and Graf et al. (NIPS 2004,
:mod:`svmrepro.algorithms.graf_cascade`) both filter non-support vectors out in stages of
independent sub-SVMs, fitted in parallel by :func:`svmrepro.algorithms.parallel.fit_each` (each
sub-SVM is an index set into the one X, sent to a cluster once per fit); the last stage is one SVM, the model kept. A stage is a list of :class:`Subproblem`; their costs add
up to the critical path (:func:`critical_path`), the training time on enough cores.

:class:`CascadeClassifier` is the estimator both cascades subclass: it checks the input, resolves
the sub-SVM's ``class_weight`` and ``gamma`` once on the whole training set, drops the rows LIBSVM
would drop (``sample_weight <= 0``), runs the cascade and keeps its final SVM.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, MetaEstimatorMixin
from sklearn.utils._param_validation import HasMethods
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, validate_data

from svmrepro.algorithms.final_model import FinalModelProbabilities, support_vectors
from svmrepro.algorithms.kernel_expansion import decision_values
from svmrepro.algorithms.parallel import N_JOBS, data_on_cluster, fit_each
from svmrepro.algorithms.sub_svms import sub_svm
from svmrepro.metrics import support_counts

log = logging.getLogger(__name__)  # progress of long fits, one line per step

# ---------------------------------------------------------------------------------------------
# Plain functions


@dataclass
class Subproblem:
    """One sub-SVM of a cascade: what it trained on, its SVs (indices into X) and its cost.

    ``fit_time_s`` is its own fit time, or, when it was solved by an inner cascade (``inner``,
    its steps), the sum of that cascade's fit times; ``critical_path_s`` is the time it would
    take with every sub-problem of each step on its own core. ``fit_cpu_s`` and
    ``critical_path_cpu_s`` are the same in CPU seconds (measured where the sub-SVM was fitted).
    """

    step: str
    name: str
    indices: np.ndarray
    support: np.ndarray
    fit_time_s: float
    critical_path_s: float
    fit_cpu_s: float
    critical_path_cpu_s: float
    inner: list[list[Subproblem]] | None = field(default=None, repr=False)

    def describe(self) -> dict:
        out = {"n_train": len(self.indices), "n_sv": len(self.support), "fit_time_s": self.fit_time_s,
               "critical_path_s": self.critical_path_s, "fit_cpu_s": self.fit_cpu_s,
               "critical_path_cpu_s": self.critical_path_cpu_s}
        if self.inner is not None:
            out["inner"] = describe_steps(self.inner)
        return out


def describe_steps(steps: list[list[Subproblem]]) -> dict[str, dict]:
    """``{"step<s>.<name>": {n_train, n_sv, fit_time_s, ...}}`` without the index arrays."""
    return {f"step{sub.step}.{sub.name}": sub.describe() for step in steps for sub in step}


def critical_path(steps: list[list[Subproblem]], cpu: bool = False) -> float:
    """Sum over steps of the slowest sub-problem of the step (all of a step in parallel): the
    time on one core per sub-problem, in wall or (``cpu``) CPU seconds."""
    return float(sum(max(sub.critical_path_cpu_s if cpu else sub.critical_path_s for sub in step) for step in steps))


def total_fit_time(steps: list[list[Subproblem]], cpu: bool = False) -> float:
    """Sum of every sub-problem's fit time (one core for all), in wall or (``cpu``) CPU seconds."""
    return float(sum(sub.fit_cpu_s if cpu else sub.fit_time_s for step in steps for sub in step))


def fit_step(svm, X, y, step: str, names, subsets, n_jobs, sample_weight=None) -> tuple[list, list[Subproblem]]:
    """Fit a clone of ``svm`` on each index set of ``subsets``; SVs come back as indices into X.

    ``sample_weight`` (over all of X, or None) is cut to each subset's rows. The subsets hold
    rows of positive weight only: scikit-learn's ``support_`` counts only the rows LIBSVM kept.
    """
    models, times, cpus, *_ = fit_each(svm, X, y, subsets, n_jobs=n_jobs, sample_weight=sample_weight)
    subs = [
        Subproblem(step, name, s, np.sort(s[m.support_]), t, t, c, c)
        for name, s, m, t, c in zip(names, subsets, models, times, cpus)
    ]
    if subs:
        log.info("cascade step %s: %d sub-SVMs on %d examples -> %d SVs, slowest %.1f s", step, len(subs),
                 sum(len(s) for s in subsets), sum(len(sub.support) for sub in subs), max(times))
    return models, subs


def union(subs: list[Subproblem]) -> np.ndarray:
    """Indices of the union of the sub-problems' SV sets (sorted)."""
    return np.unique(np.concatenate([sub.support for sub in subs]))


def class_indices(y: np.ndarray, parts: int, what: str) -> tuple[np.ndarray, np.ndarray]:
    """Positions of the positive (+1) and negative (-1) examples, each class split-able in ``parts``."""
    P, N = np.flatnonzero(y > 0), np.flatnonzero(y < 0)
    for name, idx in (("+1", P), ("-1", N)):
        if len(idx) < parts:
            raise ValueError(f"{what} needs at least {parts} examples of each class; class {name} has {len(idx)}")
    return P, N


# ---------------------------------------------------------------------------------------------
# Estimator shell


class CascadeClassifier(FinalModelProbabilities, MetaEstimatorMixin, ClassifierMixin, BaseEstimator):
    """A binary classifier whose model is the last SVM of a cascade of sub-SVMs.

    Subclasses declare their own parameters and implement :meth:`_cascade`. ``fit`` relabels
    ``y`` to -1/+1 (``classes_[1]`` is +1), resolves ``estimator``'s ``class_weight`` and ``gamma``
    on the whole training set (:func:`sub_svm`), and hands the rows of positive ``sample_weight``
    to the cascade: LIBSVM drops the others, so they can be no support vector here either. The
    final SVM's ``predict_proba`` and ``predict_log_proba`` are the estimator's where it has them
    (:class:`~svmrepro.algorithms.final_model.FinalModelProbabilities`).
    """

    _parameter_constraints: dict = {
        "estimator": [HasMethods(["fit"]), None],
        "n_jobs": N_JOBS,
    }

    def _cascade(self, svm, X, y, rows, sample_weight) -> tuple[object, list[list[Subproblem]], dict]:
        """Run the cascade on ``rows`` of ``(X, y)``: the final SVM, the steps, extra diagnostics."""
        raise NotImplementedError

    def fit(self, X, y, sample_weight=None):
        """Fit the cascade; ``sample_weight`` reaches every sub-SVM for the rows it trains on."""
        self._validate_params()
        X, y = validate_data(self, X, y)
        check_classification_targets(y)
        self.classes_ = np.unique(y)
        if len(self.classes_) > 2:
            y_type = type_of_target(y, input_name="y")
            raise ValueError(f"Only binary classification is supported. The type of the target is {y_type}.")
        if len(self.classes_) != 2:
            raise ValueError(f"{type(self).__name__} needs examples of 2 classes; got 1 class ({self.classes_[0]!r})")
        if sample_weight is not None:
            sample_weight = _check_sample_weight(sample_weight, X, dtype=np.float64)
        rows = np.arange(len(y)) if sample_weight is None else np.flatnonzero(sample_weight > 0)
        svm = sub_svm(self.estimator, X, self.classes_, y)
        signed = np.where(y == self.classes_[1], 1, -1)
        with data_on_cluster(X, signed, sample_weight):  # every step's sub-SVMs read the one copy
            final, steps, diagnostics = self._cascade(svm, X, signed, rows, sample_weight)
        self.final_estimator_, self.steps_ = final, steps
        self.support_ = steps[-1][0].support
        self.support_vectors_, self.n_support_ = support_vectors(X, signed, self.support_, (-1, 1))
        self.support_counts_ = support_counts(final)
        self.n_iter_ = final.n_iter_
        self.diagnostics_ = {
            "critical_path_time_s": critical_path(steps),
            "critical_path_cpu_s": critical_path(steps, cpu=True),
            "total_subfit_time_s": total_fit_time(steps),
            "total_subfit_cpu_s": total_fit_time(steps, cpu=True),
            "n_steps": len(steps),
            "step_n_train": [sum(len(sub.indices) for sub in step) for step in steps],
            "step_n_sv": [sum(len(sub.support) for sub in step) for step in steps],
            "step_max_time_s": [max(sub.critical_path_s for sub in step) for step in steps],
            "step_max_cpu_s": [max(sub.critical_path_cpu_s for sub in step) for step in steps],
            **diagnostics,
            "subproblems": describe_steps(steps),
        }
        return self

    def decision_function(self, X) -> np.ndarray:
        """The final SVM's decision values; positive values predict ``classes_[1]``."""
        check_is_fitted(self)
        X = validate_data(self, X, reset=False)
        return decision_values(self.final_estimator_, X)

    def predict(self, X) -> np.ndarray:
        decision = self.decision_function(X)  # checks the fit before classes_ is read
        return self.classes_[(decision > 0).astype(int)]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags
