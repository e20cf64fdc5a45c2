"""Wen & Lu's cascade (ISNN 2004, sec. 2, Fig. 1): an SVC trained by three steps of smaller SVCs.

Each class is cut by the ratio ``r`` (eq. 1) and the four pairings of a positive and a negative
part are trained (step 1, eq. 2); the support vectors of T1 and T2 form T12, those of T3 and T4
form T34 (step 2, eq. 3); the final SVM is trained on SV12 u SV34 (step 3, eq. 4). A step-1
problem larger than ``max_subproblem_size`` is itself solved by this cascade ("recursively divide
it into four subproblems"); with ``k`` > 2 parts per class (the extension the paper announces but
does not describe) step 1 trains all k*k pairings, grouped into k perfect matchings, and step 2
trains one problem per matching, each a union of disjoint SV sets covering every point once.

The numerical core is plain functions (:func:`split_classes`, :func:`cascade_subproblems`,
:func:`wen_lu_cascade`); :class:`WenLuCascadeSVC` wraps them.
"""

from __future__ import annotations

from math import ceil
from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Interval

from svmrepro.algorithms.cascade import (
    CascadeClassifier,
    Subproblem,
    class_indices,
    critical_path,
    describe_steps,
    fit_step,
    total_fit_time,
    union,
)

# ---------------------------------------------------------------------------------------------
# Plain functions


def split_classes(y: np.ndarray, r: float = 0.5, k: int = 2) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Eq. (1): positions of P_1..P_k and N_1..N_k, consecutive blocks in input order.

    k = 2: ``P_1`` is the first ``ceil(r * L_p)`` positive examples, ``P_2`` the rest (the same
    for N). k > 2: k blocks of near-equal size per class (``r`` is not used).
    """
    P, N = class_indices(y, k, f"a split into k={k} parts per class")
    if k == 2:
        return [P[: ceil(r * len(P))], P[ceil(r * len(P)):]], [N[: ceil(r * len(N))], N[ceil(r * len(N)):]]
    return np.array_split(P, k), np.array_split(N, k)


def cascade_subproblems(y: np.ndarray, r: float = 0.5, k: int = 2) -> list[list[np.ndarray]]:
    """Eq. (2): step-1 training sets (positions in ``y``), grouped by their step-2 problem.

    Group m holds ``P_i u N_((i + m) mod k)`` for i = 1..k; for k = 2 that is
    ``[[T1, T2], [T3, T4]]`` with T1 = P1 u N1, T2 = P2 u N2, T3 = P1 u N2, T4 = P2 u N1. The sets
    of a group are disjoint and cover every example once, so every example is in k sets.
    """
    P, N = split_classes(y, r, k)
    return [[np.sort(np.concatenate([P[i], N[(i + m) % k]])) for i in range(k)] for m in range(k)]


def _step_names(k: int) -> tuple[list[list[str]], list[str]]:
    """The paper's names: T1..T4 in step 1, T12 and T34 in step 2 (numbered on for k > 2)."""
    sep = "" if k * k < 10 else "_"
    first = [[f"T{m * k + i + 1}" for i in range(k)] for m in range(k)]
    return first, ["T" + sep.join(name[1:] for name in group) for group in first]


def _too_large(y: np.ndarray, max_size: int | None, k: int) -> bool:
    """Split again when over the limit and both classes can still be cut in k parts."""
    return max_size is not None and len(y) > max_size and min(np.sum(y > 0), np.sum(y < 0)) >= k


def wen_lu_cascade(
    svm, X, y, idx: np.ndarray, r: float = 0.5, k: int = 2, max_size: int | None = None, n_jobs=None,
    sample_weight: np.ndarray | None = None,
) -> tuple[object, list[list[Subproblem]]]:
    """Sec. 2, steps 1-3, on the examples ``idx`` of ``(X, y)`` (``y`` in {-1, +1}).

    Returns the final SVM (trained on the union of the step-2 SVs) and the three steps'
    sub-problems. Step-1 problems larger than ``max_size`` are solved by this cascade, one after
    the other; the others of a step are fitted together (in parallel with ``n_jobs``). Every
    sub-SVM gets ``sample_weight`` (over all of X, or None) on its rows.
    """
    groups = cascade_subproblems(y[idx], r, k)
    names1, names2 = _step_names(k)
    sets1 = [idx[s] for group in groups for s in group]
    flat_names = [name for group in names1 for name in group]
    large = [_too_large(y[s], max_size, k) for s in sets1]
    small = [i for i, big in enumerate(large) if not big]
    _, fitted = fit_step(
        svm, X, y, "1", [flat_names[i] for i in small], [sets1[i] for i in small], n_jobs, sample_weight
    )
    solved = dict(zip(small, fitted))
    for i in (i for i, big in enumerate(large) if big):
        _, inner = wen_lu_cascade(svm, X, y, sets1[i], r, k, max_size, n_jobs, sample_weight)
        solved[i] = Subproblem(
            "1", flat_names[i], sets1[i], inner[-1][0].support, total_fit_time(inner), critical_path(inner),
            total_fit_time(inner, cpu=True), critical_path(inner, cpu=True), inner,
        )
    step1 = [solved[i] for i in range(len(sets1))]
    sets2 = [union(step1[m * k: (m + 1) * k]) for m in range(k)]
    _, step2 = fit_step(svm, X, y, "2", names2, sets2, n_jobs, sample_weight)
    (final,), step3 = fit_step(svm, X, y, "3", ["Tfinal"], [union(step2)], n_jobs, sample_weight)
    return final, [step1, step2, step3]


# ---------------------------------------------------------------------------------------------
# Estimator


class WenLuCascadeSVC(CascadeClassifier):
    """An SVC trained by Wen & Lu's cascade of smaller SVCs (binary classification).

    1. Cut the positive examples P and the negative examples N by the ratio ``r`` (eq. 1) and
       train T1 = P1 u N1, T2 = P2 u N2, T3 = P1 u N2, T4 = P2 u N1 in parallel (eq. 2).
    2. Train T12 = SV1 u SV2 and T34 = SV3 u SV4 in parallel (eq. 3).
    3. Train the final SVM on SV12 u SV34 (eq. 4); it is the model kept.

    Parameters
    ----------
    estimator : estimator, default=None
        The SVM every step clones (None: ``SVC()``): an :class:`sklearn.svm.SVC`, or any
        estimator whose fit exposes ``support_``, ``dual_coef_`` and ``intercept_``. Its
        ``class_weight`` ("balanced" or keyed by the labels of ``y``) and ``gamma`` ("scale",
        "auto") are resolved once on the whole training set, as SVC resolves them. The paper's
        sigma reads best as ``gamma = 1 / (2 sigma**2)`` (``experiments/cascade/README.md``).
    r : float in (0, 0.5], default=0.5
        P1 is the first ``ceil(r * |P|)`` positive examples in input order (N1 the same). Only
        k = 2 uses it; k > 2 cuts each class into k near-equal blocks.
    k : int >= 2, default=2
        Parts per class; step 1 has k*k problems, step 2 has k.
    max_subproblem_size : int or None, default=None
        A step-1 problem with more examples is solved by a cascade of its own.
    n_jobs : int or None, default=None
        Sub-SVMs of a step fitted in parallel (joblib; results do not depend on it).

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
    final_estimator_ : fitted clone of ``estimator``
        The step-3 SVM (trained on labels -1/+1); ``predict`` and ``decision_function`` use it.
    support_ : indices into X of its support vectors (sorted)
    support_vectors_ : ndarray of shape (n_sv, n_features)
    n_support_ : ndarray of shape (2,), dtype int32
        Support vectors of each class, in the order of ``classes_`` (as :class:`sklearn.svm.SVC`).
    support_counts_ : dict with ``n_sv``, ``n_bounded_sv``, ``n_free_sv`` of the final SVM
    n_iter_ : the final SVM's ``n_iter_``
    steps_ : list of the three steps, each a list of :class:`~svmrepro.algorithms.cascade.Subproblem`
        (indices into X)
    diagnostics_ : dict
        ``critical_path_time_s`` (sum over steps of the slowest sub-SVM: the training time on
        enough cores, which is what the paper reports: Table 6's 131.61 + 91.67 + 44.92 s is
        Table 4's 268.20 s) and ``critical_path_cpu_s`` (the same in CPU seconds),
        ``total_subfit_time_s`` and ``total_subfit_cpu_s``, ``n_steps``; per step the series
        ``step_n_train``, ``step_n_sv`` (summed over its sub-problems), ``step_max_time_s``,
        ``step_max_cpu_s``;
        ``step<s>.<name>.{n_train, n_sv, fit_time_s, fit_cpu_s}`` per sub-problem (Table 6);
        ``subproblems``: all of it, nested (JSON only).

    Notes
    -----
    Rows with ``sample_weight <= 0`` take no part in any step (LIBSVM drops them); they are not
    counted in ``r``'s split. ``predict_proba`` and ``predict_log_proba`` are the final SVM's, where
    ``estimator`` has them (``SVC(probability=True)``: every sub-SVM then fits its Platt scaling too).

    References
    ----------
    Y.-M. Wen, B.-L. Lu. A cascade method for reducing training time and the number of support
    vectors. ISNN 2004, LNCS 3173, 480-486.

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> from sklearn.svm import SVC
    >>> from svmrepro.algorithms import WenLuCascadeSVC
    >>> X, y = make_classification(n_samples=300, random_state=0)
    >>> model = WenLuCascadeSVC(SVC(C=10.0)).fit(X, y)
    >>> model.diagnostics_["step_n_sv"]  # support vectors after steps 1, 2 and 3
    [376, 273, 143]
    >>> model.n_support_
    array([73, 70], dtype=int32)
    >>> model.predict(X[:5])
    array([1, 1, 0, 1, 1])
    """

    _parameter_constraints: dict = {
        **CascadeClassifier._parameter_constraints,
        "r": [Interval(Real, 0, 0.5, closed="right")],
        "k": [Interval(Integral, 2, None, closed="left")],
        "max_subproblem_size": [Interval(Integral, 2, None, closed="left"), None],
    }

    def __init__(self, estimator=None, *, r=0.5, k=2, max_subproblem_size=None, n_jobs=None):
        self.estimator = estimator
        self.r = r
        self.k = k
        self.max_subproblem_size = max_subproblem_size
        self.n_jobs = n_jobs

    def _cascade(self, svm, X, y, rows, sample_weight):
        if self.k > 2 and self.r != 0.5:
            raise ValueError(f"r={self.r} is only used with k=2; with k={self.k} leave r at 0.5")
        final, steps = wen_lu_cascade(
            svm, X, y, rows, self.r, self.k, self.max_subproblem_size, self.n_jobs, sample_weight
        )
        per_subproblem = {
            f"{key}.{metric}": value[metric] for key, value in describe_steps(steps).items()
            for metric in ("n_train", "n_sv", "fit_time_s", "fit_cpu_s")
        }
        return final, steps, per_subproblem
