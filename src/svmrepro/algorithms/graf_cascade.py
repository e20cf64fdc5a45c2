"""Graf et al.'s Cascade SVM (NIPS 2004): a binary tree of SV filtering with feedback passes.

Layer 1 trains on ``n_subsets`` stratified parts of the training set; each next layer trains on
the unions of the SV sets of pairs of SVMs of the layer below, until one SVM is left. Its SVs are
fed back into every first-layer part and the tree is trained again, until they no longer change
(Graf et al. prove the passes reach the global optimum; at most ``max_passes``).

The numerical core is plain functions (:func:`deal`, :func:`graf_cascade`);
:class:`GrafCascadeSVC` wraps them.
"""

from __future__ import annotations

import warnings
from numbers import Integral

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import Interval

from svmrepro.algorithms.cascade import CascadeClassifier, Subproblem, class_indices, fit_step, union

# ---------------------------------------------------------------------------------------------
# Plain functions


def deal(y: np.ndarray, n_subsets: int) -> list[np.ndarray]:
    """Stratified parts for the first layer: each class dealt round-robin in input order."""
    P, N = class_indices(y, n_subsets, f"n_subsets={n_subsets}")
    return [np.sort(np.concatenate([P[i::n_subsets], N[i::n_subsets]])) for i in range(n_subsets)]


def graf_cascade(
    svm, X, y, idx: np.ndarray, n_subsets: int = 8, max_passes: int = 10, n_jobs=None,
    sample_weight: np.ndarray | None = None,
) -> tuple[object, list[list[Subproblem]], int, bool]:
    """The Cascade SVM on the examples ``idx`` of ``(X, y)`` (``y`` in {-1, +1}).

    Layer 1 trains on each part (plus, from the second pass on, the SVs of the previous pass's
    top SVM); each next layer trains on the union of the SV sets of two neighbours (an odd one
    out moves up unchanged), until one SVM is left. Passes stop when the top SVM's SV set equals
    that of the pass before. Every sub-SVM gets ``sample_weight`` (over all of X, or None) on its
    rows. Returns the top SVM, every layer's sub-problems (step ``"<pass>.<layer>"``), the number
    of passes and whether the SV set became stable.
    """
    parts, feedback, steps = [idx[part] for part in deal(y[idx], n_subsets)], np.array([], dtype=int), []
    for n_pass in range(1, max_passes + 1):
        sets, layer = [np.union1d(part, feedback) for part in parts], 1
        while True:
            names = [f"S{i + 1}" for i in range(len(sets))]
            models, subs = fit_step(svm, X, y, f"{n_pass}.{layer}", names, sets, n_jobs, sample_weight)
            steps.append(subs)
            if len(subs) == 1:
                break
            sets = [union(subs[i: i + 2]) for i in range(0, len(subs), 2)]
            layer += 1
        top = subs[0].support
        if n_pass > 1 and np.array_equal(top, feedback):
            return models[0], steps, n_pass, True
        feedback = top
    return models[0], steps, max_passes, False


# ---------------------------------------------------------------------------------------------
# Estimator


class GrafCascadeSVC(CascadeClassifier):
    """An SVC trained by Graf et al.'s Cascade SVM (binary classification).

    A binary tree over ``n_subsets`` stratified parts filters support vectors layer by layer;
    the top SVM's SVs are fed back into every first-layer part until they are stable
    (:func:`graf_cascade`). Graf et al. prove that the passes reach the global optimum: once
    stable, the top SVM solves the problem of the SVC on the whole set.

    Parameters
    ----------
    estimator : estimator, default=None
        The SVM every layer clones (None: ``SVC()``): an :class:`sklearn.svm.SVC`, or any
        estimator whose fit exposes ``support_``, ``dual_coef_`` and ``intercept_``. Its
        ``class_weight`` ("balanced" or keyed by the labels of ``y``) and ``gamma`` ("scale",
        "auto") are resolved once on the whole training set, as SVC resolves them.
    n_subsets : int >= 2, default=8
        First-layer parts (stratified, dealt round-robin in input order).
    max_passes : int >= 1, default=10
        Feedback passes at most; 1 is the single-pass cascade. Stopping here before the SV set
        is stable warns (ConvergenceWarning).
    n_jobs : int or None, default=None
        Sub-SVMs of a layer fitted in parallel (joblib; results do not depend on it).

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
    final_estimator_ : fitted clone of ``estimator``
        The top SVM of the last pass (trained on labels -1/+1); ``predict`` and
        ``decision_function`` use it.
    support_ : indices into X of its support vectors (sorted)
    support_vectors_ : ndarray of shape (n_sv, n_features)
    n_support_ : ndarray of shape (2,), dtype int32
        Support vectors of each class, in the order of ``classes_`` (as :class:`sklearn.svm.SVC`).
    support_counts_ : dict with ``n_sv``, ``n_bounded_sv``, ``n_free_sv`` of the final SVM
    n_iter_ : the final SVM's ``n_iter_``
    steps_ : list of layers (``"<pass>.<layer>"``), each a list of
        :class:`~svmrepro.algorithms.cascade.Subproblem` (indices into X)
    converged_ : bool
        The SV set became stable.
    diagnostics_ : dict
        ``critical_path_time_s`` (sum over layers of the slowest sub-SVM: the training time on
        enough cores) and ``critical_path_cpu_s`` (in CPU seconds), ``total_subfit_time_s`` and
        ``total_subfit_cpu_s``, ``n_steps``; per layer the series ``step_n_train``, ``step_n_sv``,
        ``step_max_time_s``, ``step_max_cpu_s``; ``n_passes``, ``converged``;
        ``subproblems``: all of it, nested (JSON only).

    Notes
    -----
    Rows with ``sample_weight <= 0`` take no part in any layer (LIBSVM drops them).
    ``predict_proba`` and ``predict_log_proba`` are the final SVM's, where ``estimator`` has them
    (``SVC(probability=True)``: every sub-SVM then fits its Platt scaling too).

    References
    ----------
    H. P. Graf, E. Cosatto, L. Bottou, I. Durdanovic, V. Vapnik. Parallel support vector
    machines: the Cascade SVM. NIPS 17, 2004.

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> from sklearn.svm import SVC
    >>> from svmrepro.algorithms import GrafCascadeSVC
    >>> X, y = make_classification(n_samples=300, random_state=0)
    >>> model = GrafCascadeSVC(SVC(C=10.0), n_subsets=4).fit(X, y)
    >>> model.converged_, model.diagnostics_["n_passes"]
    (True, 3)
    >>> model.n_support_
    array([73, 70], dtype=int32)
    """

    _parameter_constraints: dict = {
        **CascadeClassifier._parameter_constraints,
        "n_subsets": [Interval(Integral, 2, None, closed="left")],
        "max_passes": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(self, estimator=None, *, n_subsets=8, max_passes=10, n_jobs=None):
        self.estimator = estimator
        self.n_subsets = n_subsets
        self.max_passes = max_passes
        self.n_jobs = n_jobs

    def _cascade(self, svm, X, y, rows, sample_weight):
        final, steps, n_passes, self.converged_ = graf_cascade(
            svm, X, y, rows, self.n_subsets, self.max_passes, self.n_jobs, sample_weight
        )
        if not self.converged_ and self.max_passes > 1:
            warnings.warn(
                f"the Cascade SVM's support vectors still changed after max_passes={self.max_passes}",
                ConvergenceWarning, stacklevel=3,
            )
        return final, steps, {"n_passes": n_passes, "converged": float(self.converged_)}
