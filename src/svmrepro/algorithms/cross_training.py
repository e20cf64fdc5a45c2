"""Cross-training (Bakir, Bottou, Weston, NIPS 2004, Algorithm 3) and its first stage.

Cross-training edits the training set with ``s`` first-stage SVMs before training the final
SVM: an example whose margin ``y_i f_r(x_i)`` is negative for (nearly) every first-stage SVM is
discarded as misclassified (as MULTIEDIT would), one whose margin exceeds 1 for (nearly) every
SVM is discarded as confidently recognized (as CONDENSE would). Removing both makes the edited
set closer to separable, so the final SVM has far fewer support vectors.

The numerical rules are plain functions (:func:`draw_subsets`, :func:`cross_training_keep`,
:func:`rebalance`, :func:`best_threshold_shift`); :class:`FirstStageSVC` holds the parameters
and the first-stage fit shared by :class:`CrossTrainingSVC` and
:class:`svmrepro.algorithms.bagging.BaggedFirstStageSVC`.
"""

from __future__ import annotations

import logging
import time
from numbers import Integral
from functools import partial
from typing import NamedTuple

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.model_selection import ParameterGrid
from sklearn.svm import SVC
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import HasMethods, Interval, InvalidParameterError, RealNotInt, StrOptions
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, validate_data

from svmrepro.algorithms.final_model import FinalModelProbabilities, support_vectors
from svmrepro.algorithms.kernel_expansion import decision_values
from svmrepro.algorithms.parallel import N_JOBS, data_on_cluster, fit_each, fit_one, map_each, task_cpu_time
from svmrepro.algorithms.sub_svms import positive_rows, sub_svm, subset_weights
from svmrepro.metrics import final_estimator, support_counts

log = logging.getLogger(__name__)  # progress of long fits, one line per stage

# ---------------------------------------------------------------------------------------------
# Plain functions: Algorithm 3's steps and the sec. 4.3 options


def draw_subsets(y: np.ndarray, n_subsets: int, subset_size: int | None, rng, names=(-1, 1)) -> list[np.ndarray]:
    """Algorithm 3, step 1: indices of the ``s`` first-stage training sets (``y`` in {-1, +1}).

    ``subset_size=r``: each subset draws ``r // 2`` examples of class -1 and ``r - r // 2`` of
    class +1 without replacement; subsets are drawn independently, so they overlap when
    ``s * r`` exceeds the training set (Table 1: Banana 5x200 out of 400).
    ``subset_size=None``: a stratified partition of the training set into ``s`` parts (Fig. 3
    and Fig. 4, "splitting the 11982 training examples into 5 subsets").
    ``names`` are the original labels of classes -1 and +1, for the error messages.
    """
    by_class = [(np.flatnonzero(y < 0), names[0]), (np.flatnonzero(y > 0), names[1])]
    if subset_size is None:
        for idx, name in by_class:
            if len(idx) < n_subsets:
                raise ValueError(
                    f"n_subsets={n_subsets}: a partition into {n_subsets} parts needs at least {n_subsets} "
                    f"examples of each class, but class {name!r} has {len(idx)}"
                )
        parts = [np.array_split(rng.permutation(idx), n_subsets) for idx, _ in by_class]
        return [np.sort(np.concatenate(pair)) for pair in zip(*parts)]
    per_class = (subset_size // 2, subset_size - subset_size // 2)
    for (idx, name), k in zip(by_class, per_class):
        if k > len(idx):
            raise ValueError(
                f"subset_size={subset_size} draws {k} examples of class {name!r} per subset (r/2), "
                f"but the training set has only {len(idx)} of them"
            )
    return [
        np.sort(np.concatenate([rng.choice(idx, k, replace=False) for (idx, _), k in zip(by_class, per_class)]))
        for _ in range(n_subsets)
    ]


class CrossTrainingEdit(NamedTuple):
    """Outcome of Algorithm 3, steps 3-5, per training example."""

    kept: np.ndarray  #: neither discarded at step 4 nor at step 5
    misclassified: np.ndarray  #: step 4: m_i + v_i < 0
    confident: np.ndarray  #: step 5: m_i - v_i > 1
    mean: np.ndarray  #: m_i
    spread: np.ndarray  #: v_i


def cross_training_keep(margins: np.ndarray, spread: str = "variance") -> CrossTrainingEdit:
    """Algorithm 3, steps 3-5, on the ``s x n`` matrix of margins ``y_i f_r(x_i)``.

    ``m_i`` is the mean over the ``s`` SVMs. ``v_i`` is, as the paper writes it, the variance
    ``1/s sum_r (m_i - y_i f_r(x_i))^2`` (``spread="variance"``), or its square root
    (``spread="std"``): the paper names and defines a variance but compares ``m_i +- v_i`` with
    margins, which only the standard deviation matches in units.
    """
    margins = np.asarray(margins, dtype=float)
    mean = margins.mean(axis=0)
    var = ((margins - mean) ** 2).mean(axis=0)
    v = var if spread == "variance" else np.sqrt(var)
    misclassified = mean + v < 0
    confident = mean - v > 1
    return CrossTrainingEdit(~(misclassified | confident), misclassified, confident, mean, v)


def rebalance(kept: np.ndarray, confident: np.ndarray, lower: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Sec. 4.3: indices of step-5 discards to re-insert so the kept classes balance.

    Only the class with fewer kept examples gets examples back, those with the smallest
    ``lower = m_i - v_i`` (the least confidently recognized) first, until both classes have as
    many kept examples or that class has no step-5 discards left.
    """
    n_neg, n_pos = int(np.sum(kept & (y < 0))), int(np.sum(kept & (y > 0)))
    minority = -1 if n_neg < n_pos else 1
    pool = np.flatnonzero(confident & (y == minority))
    return pool[np.argsort(lower[pool], kind="stable")][: abs(n_pos - n_neg)]


def _weight_at_or_below(values: np.ndarray, weights: np.ndarray, t: np.ndarray) -> np.ndarray:
    """For each threshold in ``t``, the total weight of the ``values`` <= it."""
    order = np.argsort(values, kind="stable")
    cumulative = np.concatenate([[0.0], np.cumsum(weights[order])])
    return cumulative[np.searchsorted(values[order], t, side="right")]


def best_threshold_shift(decision: np.ndarray, y: np.ndarray, sample_weight: np.ndarray | None = None) -> float:
    """Sec. 4.3: the shift ``delta`` of the SVM threshold ``b`` that minimizes the errors of
    ``sign(decision + delta)`` on validation labels ``y`` in {-1, +1} (each error counted with its
    ``sample_weight``, 1 without); among equally good shifts, the one closest to 0 (the SVM's own ``b``).

    Prediction is +1 where ``decision + delta > 0``, as in :meth:`FirstStageSVC.predict`.
    """
    decision, y = np.asarray(decision, dtype=float), np.asarray(y)
    w = np.ones(len(y)) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    d = np.sort(decision)
    # predict +1 iff decision > t; every distinct error count is reached at some midpoint or end
    t = np.concatenate([[0.0], (d[1:] + d[:-1]) / 2, [d[0] - 1.0, d[-1] + 1.0]])
    pos, neg = y > 0, y < 0
    errors = _weight_at_or_below(decision[pos], w[pos], t) + (
        w[neg].sum() - _weight_at_or_below(decision[neg], w[neg], t)
    )
    return float(-t[np.lexsort((np.abs(t), errors))[0]])


def validation_error(decision: np.ndarray, y: np.ndarray, sample_weight: np.ndarray | None = None) -> float:
    """Share (weighted by ``sample_weight``) of ``y`` in {-1, +1} that ``sign(decision)`` gets wrong."""
    return float(np.average((decision > 0) != (y > 0), weights=sample_weight))


def _validation_split(y: np.ndarray, n_val: int, rng, names, size) -> tuple[np.ndarray, np.ndarray]:
    """Stratified draw of ``n_val`` validation examples (at least one per class)."""
    val = []
    for idx, name in ((np.flatnonzero(y < 0), names[0]), (np.flatnonzero(y > 0), names[1])):
        k = max(1, round(n_val * len(idx) / len(y)))
        if k >= len(idx):
            raise ValueError(
                f"validation_size={size!r} takes {k} of the {len(idx)} examples of class {name!r}, "
                "leaving none to train on"
            )
        val.append(rng.choice(idx, k, replace=False))
    val = np.sort(np.concatenate(val))
    return np.setdiff1d(np.arange(len(y)), val), val


def _decision_values_on(model, X, rows: np.ndarray | None = None) -> np.ndarray:
    """A model's decision values on ``rows`` of ``X`` (all for None), sliced where the task runs."""
    return decision_values(model, X if rows is None else X[rows])


def _needs_validation(owner, param: str, value) -> InvalidParameterError:
    return InvalidParameterError(
        f"The {param!r} parameter of {type(owner).__name__} is chosen on a validation split and must be "
        f"{repr('svm') if param == 'threshold' else None} when validation_size=None (the paper's sec. 4.3 uses "
        f"validation_size='auto', r/3 examples). Got {value!r} instead."
    )


# ---------------------------------------------------------------------------------------------
# Estimators


class FirstStageSVC(ClassifierMixin, BaseEstimator):
    """Parameters and fit of the ``s`` first-stage SVMs (Algorithm 3, steps 1-2).

    Not used on its own: :class:`CrossTrainingSVC` edits the training set with these SVMs,
    ``BaggedFirstStageSVC`` averages them. Binary classification only.
    """

    _parameter_constraints: dict = {
        "estimator": [HasMethods(["fit", "decision_function"]), None],
        "n_subsets": [Interval(Integral, 2, None, closed="left")],
        "subset_size": [Interval(Integral, 2, None, closed="left"), Interval(RealNotInt, 0, 1, closed="right"), None],
        "validation_size": [
            Interval(Integral, 2, None, closed="left"),
            Interval(RealNotInt, 0, 1, closed="neither"),
            StrOptions({"auto"}),
            None,
        ],
        "threshold": [StrOptions({"svm", "final", "all"})],
        "n_jobs": N_JOBS,
        "random_state": ["random_state"],
    }

    #: evaluate each first-stage SVM on the training rows in the task that fits it (cross-training's
    #: margins), so that no fitted SVM goes back to a cluster for it
    _evaluates_fit_rows = False

    def _fit_with(self, rest, X, y, sample_weight):
        """Validate, fit the first stage, then ``rest(X, y, sample_weight, fit_idx, diagnostics, fits)``.

        Both stages read one copy of the data on a cluster
        (:func:`~svmrepro.algorithms.parallel.data_on_cluster`). ``rest`` gets the validated data
        (:meth:`_check_data`) and what :meth:`_fit_first_stage` returns; returns ``self``.
        """
        self._validate_params()
        X, y, sample_weight = self._check_data(X, y, sample_weight)
        with data_on_cluster(X, y, sample_weight):
            rest(X, y, sample_weight, *self._fit_first_stage(X, y, sample_weight))
        return self

    def _check_data(self, X, y, sample_weight):
        """Sets ``classes_``; returns ``(X, y, sample_weight)`` with ``y`` in {-1, +1} and
        ``sample_weight`` validated (None if not given)."""
        X, y = validate_data(self, X, y, accept_sparse="csr")
        if sample_weight is not None:
            sample_weight = _check_sample_weight(sample_weight, X, ensure_non_negative=True)
        check_classification_targets(y)
        y_type = type_of_target(y, input_name="y")
        if y_type != "binary":
            raise ValueError(f"Only binary classification is supported. The type of the target is {y_type}.")
        self.classes_ = np.unique(y)
        if len(self.classes_) != 2:
            raise ValueError(f"{type(self).__name__} needs examples of 2 classes; got 1 class ({self.classes_[0]})")
        return X, np.where(y == self.classes_[1], 1, -1), sample_weight

    def _fit_first_stage(self, X, y, sample_weight):
        """Split off the validation set, fit the first-stage SVMs.

        Sets ``estimators_``, ``subsets_``, ``validation_indices_`` and ``first_stage_shifts_``;
        returns the indices of the training (non-validation) examples, the first-stage diagnostics
        and the :class:`~svmrepro.algorithms.parallel.SubFits` (with each SVM's decision values on
        the training rows if ``_evaluates_fit_rows``).
        """
        rng = check_random_state(self.random_state)
        fit_idx, val_idx = np.arange(len(y)), np.array([], dtype=int)
        if self.validation_size is not None:
            n_val = self._n_validation(len(y))
            fit_idx, val_idx = _validation_split(y, n_val, rng, self.classes_.tolist(), self.validation_size)
        self.validation_indices_ = val_idx
        local = draw_subsets(y[fit_idx], self.n_subsets, self._subset_size(len(y)), rng, names=self.classes_.tolist())
        self.subsets_ = [positive_rows(fit_idx[s], sample_weight) for s in local]

        start = time.perf_counter()
        fits = fit_each(
            self._sub_svm(self.estimator, X, y), X, y, self.subsets_, n_jobs=self.n_jobs, sample_weight=sample_weight,
            evaluate=partial(_decision_values_on, rows=fit_idx) if self._evaluates_fit_rows else None,
        )
        self.estimators_, times, cpus = fits.models, fits.wall_s, fits.cpu_s
        wall = time.perf_counter() - start
        log.info("cross-training first stage: %d SVMs on %d examples each in %.1f s", len(self.subsets_),
                 max(len(s) for s in self.subsets_), wall)
        self.first_stage_shifts_ = np.zeros(self.n_subsets)
        if self.threshold == "all":
            (val_weight,) = subset_weights(sample_weight, [val_idx])
            self.first_stage_shifts_ = np.array(
                [best_threshold_shift(decision_values(m, X[val_idx]), y[val_idx], val_weight) for m in self.estimators_]
            )
        diagnostics = {
            "n_fit": len(fit_idx),
            "n_validation": len(val_idx),
            "first_stage_sizes": [len(s) for s in self.subsets_],
            "first_stage_n_sv": [support_counts(m).get("n_sv", np.nan) for m in self.estimators_],
            "first_stage_fit_times_s": times,
            "first_stage_fit_time_sum_s": float(np.sum(times)),
            "first_stage_fit_time_max_s": float(np.max(times)),
            "first_stage_fit_cpus_s": cpus,
            "first_stage_fit_cpu_sum_s": float(np.sum(cpus)),
            "first_stage_fit_cpu_max_s": float(np.max(cpus)),
            "first_stage_wall_s": wall,
        }
        if self.threshold == "all":
            diagnostics["first_stage_threshold_shifts"] = self.first_stage_shifts_.tolist()
        return fit_idx, diagnostics, fits

    def _sub_svm(self, estimator, X, y: np.ndarray):
        """A clone of ``estimator`` (None: ``SVC()``) to fit on labels -1/+1 (``y``, all rows of ``X``).

        What SVC derives from its training set, ``class_weight`` ("balanced" or a dict keyed by the
        user's labels) and ``gamma="scale"``, is fixed on the whole training set
        (:func:`~svmrepro.algorithms.sub_svms.sub_svm`), so every SVM of both stages uses the kernel
        and class weights of one SVC on all the rows.
        """
        return sub_svm(estimator, X, self.classes_, self.classes_[(y > 0).astype(int)])

    def _validate_params(self):
        """The constraints table, and the options that need a validation split (so a config fails early)."""
        super()._validate_params()
        if self.validation_size is None and self.threshold != "svm":
            raise _needs_validation(self, "threshold", self.threshold)

    def _subset_size(self, n: int) -> int | None:
        """r as a count: ``subset_size`` itself, or that fraction of the ``n`` training examples."""
        if isinstance(self.subset_size, float):
            return max(2, round(self.subset_size * n))
        return self.subset_size

    def _n_validation(self, n: int) -> int:
        size = self.validation_size
        if size == "auto":  # sec. 4.3: "a validation set by taking r/3 examples from the training set"
            r = self._subset_size(n) or n // self.n_subsets
            return max(2, round(r / 3))
        n_val = round(size * n) if isinstance(size, float) else size
        if n_val >= n:
            raise ValueError(f"validation_size={size!r} asks for {n_val} of the {n} training examples")
        return n_val

    def first_stage_decisions(self, X, rows: np.ndarray | None = None) -> np.ndarray:
        """``s x n`` matrix of first-stage decision values ``f_r(x)`` (thresholds as fitted) on
        ``rows`` of ``X`` (all for None), each row one kernel expansion by blocked matrix products
        (:func:`~svmrepro.algorithms.kernel_expansion.decision_values`)."""
        decisions = map_each(partial(_decision_values_on, rows=rows), self.estimators_, X, self.n_jobs)
        return np.vstack(decisions) + self.first_stage_shifts_[:, None]

    def decision_function(self, X) -> np.ndarray:
        """Positive values predict ``classes_[1]``."""
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse="csr", reset=False)
        return self._decision(X) + self.threshold_shift_

    def predict(self, X) -> np.ndarray:
        decision = self.decision_function(X)
        return self.classes_[(decision > 0).astype(int)]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        tags.input_tags.sparse = True
        return tags


class CrossTrainingSVC(FinalModelProbabilities, FirstStageSVC):
    """Cross-training (Bakir, Bottou, Weston 2004, Algorithm 3), with the options of sec. 4.3.

    1. Draw ``n_subsets`` (s) subsets of ``subset_size`` (r) examples, r/2 per class, or
       partition the training set into s stratified parts (``subset_size=None``).
    2. Fit a clone of ``estimator`` on each (in parallel, ``n_jobs``).
    3. For every training example, mean ``m_i`` and spread ``v_i`` of ``y_i f_r(x_i)`` over
       the s SVMs (each evaluated on every training example, its own subset included).
    4. Discard ``m_i + v_i < 0`` (misclassified).
    5. Discard ``m_i - v_i > 1`` (confident).
    6. Fit ``final_estimator`` on the rest.

    Parameters
    ----------
    estimator : classifier with ``decision_function``, default=None
        First-stage SVM (any kernel, C-SVC or nu-SVC; cloned). None means ``SVC()``. The paper
        uses "the C which yields the best performance on training sets of size r": set it here.
        Its ``class_weight`` ("balanced", or a dict keyed by the labels of ``y``) is resolved once
        on the whole training set and passed to every sub-SVM as ``{-1: w, +1: w}``.
    final_estimator : classifier, default=None
        Final SVM (cloned); None means the same as ``estimator``. ``class_weight`` as for ``estimator``.
    n_subsets : int, default=5
        s, the number of first-stage SVMs.
    subset_size : int, float in (0, 1] or None, default=None
        r; a float is r as a fraction of the training set (Table 1's 5x200 of 400 is 0.5), so a
        config keeps the paper's proportions at any size; None partitions the training set into s parts.
    spread : {"variance", "std"}, default="variance"
        ``v_i`` of steps 4-5: the variance as the paper writes it, or the standard deviation.
    balance : bool, default=False
        Sec. 4.3: re-insert step-5 discards of the class with fewer kept examples, least
        confident first, to balance the final training set (:func:`rebalance`).
    validation_size : int, float, "auto" or None, default=None
        Examples held out of both stages (stratified) to choose thresholds and the final
        parameters; "auto" is the paper's r/3 (r = n / s for a partition). Needed by
        ``threshold != "svm"`` and ``final_param_grid``.
    threshold : {"svm", "final", "all"}, default="svm"
        Sec. 4.3, "after training each SVM, we choose the value of the threshold b which
        achieves the best validation performance": "final" re-chooses b of the final SVM, "all"
        also of every first-stage SVM before its margins are computed; "svm" keeps LIBSVM's b.
    final_param_grid : dict or list of dicts, default=None
        Sec. 3, "for the second stage SVMs, we choose the C parameter which yields the best
        overall performance measured on a separate validation set": every point of this grid
        (e.g. ``{"C": [0.1, 1, 10]}``) is fitted on the edited set and the one with the lowest
        validation error (after its threshold, if re-chosen) is kept; ties go to the first.
    n_jobs : int, default=None
        Parallel first-stage fits (:func:`svmrepro.algorithms.parallel.fit_each`).
    random_state : int, RandomState or None, default=None
        Draws the validation split and the subsets.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
    estimators_ : list of the s fitted first-stage estimators (trained on labels -1/+1)
    subsets_ : list of s ndarrays
        Indices into the training X of the rows each first-stage SVM was fitted on (the subset
        drawn, less its rows of zero ``sample_weight``).
    validation_indices_ : indices into X held out for validation (empty without)
    margin_mean_ : ndarray of shape (n_samples,)
        ``m_i``; NaN for validation examples.
    margin_spread_ : ndarray of shape (n_samples,)
        ``v_i``; NaN for validation examples.
    edit_ : CrossTrainingEdit
        Steps 3-5 over the non-validation examples (in the order of ``np.setdiff1d`` of X's
        indices and ``validation_indices_``).
    sample_indices_ : ndarray
        Indices into X of the final training set (after re-balancing; rows of zero
        ``sample_weight`` left out).
    final_estimator_ : the fitted final SVM
    support_ : indices into X of the final SVM's support vectors (if it has ``support_``)
    support_vectors_ : ndarray of shape (n_sv, n_features)
        ``X[support_]`` (if the final SVM has ``support_``).
    n_support_ : ndarray of shape (2,), dtype int32
        Support vectors of each class, in the order of ``classes_`` (as :class:`sklearn.svm.SVC`).
    support_counts_ : dict
        ``n_sv``, ``n_bounded_sv``, ``n_free_sv`` of the final SVM.
    threshold_shift_ : float
        Added to the final SVM's decision values (0 unless ``threshold != "svm"``).
    first_stage_shifts_ : ndarray of shape (s,)
    best_params_ : dict
        The ``final_param_grid`` point chosen (empty without a grid).
    diagnostics_ : dict
        Counts kept / discarded at step 4 / discarded at step 5 / re-inserted, the final class
        balance, first-stage sizes, #SV and fit times (per SVM, sum, max, wall), margin and
        final fit times, each beside its CPU time (``*_cpu_s``), and the critical path
        ``critical_path_time_s`` / ``critical_path_cpu_s``: the slowest first-stage SVM (one machine
        each), then the margins and the final SVM. The margins' time is the slowest first-stage SVM's
        decision values on the training rows (computed in the task that fitted it) plus the rules.

    Notes
    -----
    ``predict_proba`` and ``predict_log_proba`` are the final SVM's, where it has them
    (``final_estimator``, else ``estimator``, ``SVC(probability=True)``); they do not include
    ``threshold_shift_``, which ``decision_function`` and ``predict`` add.

    References
    ----------
    G. Bakir, L. Bottou, J. Weston. Breaking SVM complexity with cross-training. NIPS 17, 2004.

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> from sklearn.svm import SVC
    >>> from svmrepro.algorithms import CrossTrainingSVC
    >>> X, y = make_classification(n_samples=300, random_state=0)
    >>> model = CrossTrainingSVC(SVC(C=10.0), n_subsets=3, random_state=0).fit(X, y)
    >>> model.diagnostics_["n_kept"]  # of the 300 examples, the final SVM's training set
    216
    >>> model.n_support_
    array([72, 69], dtype=int32)
    """

    _parameter_constraints: dict = {
        **FirstStageSVC._parameter_constraints,
        "final_estimator": [HasMethods(["fit", "decision_function"]), None],
        "spread": [StrOptions({"variance", "std"})],
        "balance": ["boolean"],
        "final_param_grid": [dict, list, None],
    }
    #: the final SVM is ``final_estimator``, else ``estimator`` (:class:`FinalModelProbabilities`)
    _final_model_params = ("final_estimator", "estimator")

    def __init__(
        self,
        estimator=None,
        *,
        final_estimator=None,
        n_subsets=5,
        subset_size=None,
        spread="variance",
        balance=False,
        validation_size=None,
        threshold="svm",
        final_param_grid=None,
        n_jobs=None,
        random_state=None,
    ):
        self.estimator = estimator
        self.final_estimator = final_estimator
        self.n_subsets = n_subsets
        self.subset_size = subset_size
        self.spread = spread
        self.balance = balance
        self.validation_size = validation_size
        self.threshold = threshold
        self.final_param_grid = final_param_grid
        self.n_jobs = n_jobs
        self.random_state = random_state

    def _validate_params(self):
        super()._validate_params()
        if self.validation_size is None and self.final_param_grid is not None:
            raise _needs_validation(self, "final_param_grid", self.final_param_grid)

    def __getstate__(self):
        """``edit_`` as a dict of its fields: skops saves a named tuple as a constructor call, which it
        trusts only when told at each load (:mod:`svmrepro.algorithms.persistence`)."""
        state = dict(super().__getstate__())
        if isinstance(state.get("edit_"), CrossTrainingEdit):
            state["edit_"] = state["edit_"]._asdict()
        return state

    def __setstate__(self, state):
        if isinstance(state.get("edit_"), dict):
            state = {**state, "edit_": CrossTrainingEdit(**state["edit_"])}
        super().__setstate__(state)

    def fit(self, X, y, sample_weight=None):
        """Algorithm 3 on ``(X, y)``.

        ``sample_weight`` (non-negative) goes to each first-stage SVM for the rows of its subset,
        to the final SVM (every ``final_param_grid`` point) for the rows it keeps, and weighs the
        validation errors that choose thresholds and final parameters. Rows of zero weight are
        left out of every fit, as SVC leaves them out. The subsets are drawn from the rows, not
        from the weights: an integer weight is not the same as repeating the row.
        """
        return self._fit_with(self._edit_and_fit_final, X, y, sample_weight)

    _evaluates_fit_rows = True

    def _edit_and_fit_final(self, X, y, sample_weight, fit_idx, diagnostics, fits):
        """Steps 3-6, after the first stage (:meth:`_fit_with`), whose tasks computed each SVM's
        decision values on the training rows (``fits.values``)."""
        val_idx = self.validation_indices_
        start, start_cpu = time.perf_counter(), task_cpu_time()
        margins = y[fit_idx] * (np.vstack(fits.values) + self.first_stage_shifts_[:, None])
        self.edit_ = edit = cross_training_keep(margins, self.spread)
        # on one machine per first-stage SVM: the slowest one's decision values, then the rules
        margin_time = max(fits.value_wall_s) + time.perf_counter() - start
        margin_cpu = max(fits.value_cpu_s) + task_cpu_time() - start_cpu
        self.margin_mean_ = np.full(len(y), np.nan)
        self.margin_spread_ = np.full(len(y), np.nan)
        self.margin_mean_[fit_idx], self.margin_spread_[fit_idx] = edit.mean, edit.spread

        keep = edit.kept.copy()
        reinserted = np.array([], dtype=int)
        if self.balance:
            reinserted = rebalance(edit.kept, edit.confident, edit.mean - edit.spread, y[fit_idx])
            keep[reinserted] = True
        self.sample_indices_ = idx = positive_rows(fit_idx[keep], sample_weight)
        n_neg, n_pos = int(np.sum(y[idx] < 0)), int(np.sum(y[idx] > 0))
        if min(n_neg, n_pos) == 0:
            neg, pos = self.classes_.tolist()
            raise ValueError(
                f"after editing the final training set has {n_neg} examples of class {neg!r} and {n_pos} of "
                f"class {pos!r} ({int(edit.misclassified.sum())} discarded as misclassified, "
                f"{int(edit.confident.sum())} as confident); try "
                f"{'' if self.balance else 'balance=True, '}spread='std', a larger subset_size or another "
                "C of the first-stage estimator"
            )

        log.info("cross-training editing: %d of %d examples kept (%d misclassified, %d confident discarded, "
                 "%d reinserted)", len(idx), len(fit_idx), edit.misclassified.sum(), edit.confident.sum(),
                 len(reinserted))
        final_diagnostics = self._fit_final(X, y, sample_weight, idx, val_idx)
        log.info("cross-training final SVM: %d examples in %.1f s", len(idx), final_diagnostics["final_search_time_s"])
        final = final_estimator(self.final_estimator_)
        if hasattr(final, "support_"):
            self.support_ = idx[final.support_]
            self.support_vectors_, self.n_support_ = support_vectors(X, y, self.support_, (-1, 1))
        self.support_counts_ = support_counts(self.final_estimator_)
        self.diagnostics_ = {
            **diagnostics,
            "margin_time_s": margin_time,
            "margin_cpu_s": margin_cpu,
            "n_kept": int(edit.kept.sum()),
            "n_discarded_misclassified": int(edit.misclassified.sum()),
            "n_discarded_confident": int(edit.confident.sum()),
            "n_reinserted": len(reinserted),
            "n_final_train": len(idx),
            "final_n_neg": n_neg,
            "final_n_pos": n_pos,
            "final_pos_fraction": n_pos / len(idx),
            **final_diagnostics,
            # on one machine per first-stage SVM: its slowest fit, then margins and the final SVM
            "critical_path_time_s": diagnostics["first_stage_fit_time_max_s"] + margin_time
            + final_diagnostics["final_search_time_s"],
            "critical_path_cpu_s": diagnostics["first_stage_fit_cpu_max_s"] + margin_cpu
            + final_diagnostics["final_search_cpu_s"],
        }

    def _fit_final(self, X, y, sample_weight, idx, val_idx) -> dict:
        """Step 6 on rows ``idx``, with the sec. 4.3 threshold and the final parameters chosen on
        rows ``val_idx``.

        Sets ``final_estimator_``, ``threshold_shift_``, ``best_params_``; returns diagnostics.
        """
        base = self.estimator if self.final_estimator is None else self.final_estimator
        base = SVC() if base is None else base
        grid = ParameterGrid(self.final_param_grid) if self.final_param_grid is not None else [{}]
        (val_weight,) = subset_weights(sample_weight, [val_idx])
        X_val, y_val = X[val_idx], y[val_idx]
        best, times, cpus, val_errors = None, [], [], []
        for params in grid:
            model = self._sub_svm(clone(base).set_params(**params), X, y)
            model, seconds, cpu = fit_one(model, X, y, idx, sample_weight)
            decision = decision_values(model, X_val) if len(y_val) else np.zeros(0)
            shift = best_threshold_shift(decision, y_val, val_weight) if self.threshold != "svm" else 0.0
            error = validation_error(decision + shift, y_val, val_weight) if len(y_val) else np.nan
            times.append(seconds)
            cpus.append(cpu)
            val_errors.append(float(error))
            if best is None or error < best[0]:
                best = (error, model, shift, params, seconds, cpu)
        error, self.final_estimator_, self.threshold_shift_, self.best_params_, seconds, cpu = best
        diagnostics = {
            "final_fit_time_s": seconds,
            "final_fit_cpu_s": cpu,
            "final_search_time_s": float(np.sum(times)),
            "final_search_cpu_s": float(np.sum(cpus)),
            "threshold_shift": self.threshold_shift_,
            "final_params": dict(self.best_params_),
            **{f"final_{k}": v for k, v in self.best_params_.items() if isinstance(v, (int, float))},
        }
        if len(y_val):
            diagnostics.update(final_validation_error=float(error), final_grid_validation_errors=val_errors)
        return diagnostics

    def _decision(self, X):
        return decision_values(self.final_estimator_, X)
