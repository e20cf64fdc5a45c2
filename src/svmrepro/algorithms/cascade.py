"""Cascade training of an SVC: Wen & Lu (ISNN 2004, sec. 2) and Graf et al. (NIPS 2004).

Both filter non-support vectors out in stages of independent sub-SVMs, fitted in parallel by
:func:`svmrepro.algorithms.parallel.fit_each`; the last stage is one SVM, the model kept.

- Wen & Lu (``strategy="wen_lu"``), Fig. 1: each class is cut by the ratio ``r`` (eq. 1) and
  the four pairings of a positive and a negative part are trained (step 1, eq. 2); the support
  vectors of T1 and T2 form T12, those of T3 and T4 form T34 (step 2, eq. 3); the final SVM is
  trained on SV12 u SV34 (step 3, eq. 4). A step-1 problem larger than
  ``max_subproblem_size`` is itself solved by this cascade ("recursively divide it into four
  subproblems"); with ``k`` > 2 parts per class (the extension the paper announces but does not
  describe) step 1 trains all k*k pairings, grouped into k perfect matchings, and step 2 trains
  one problem per matching, each a union of disjoint SV sets covering every point once.
- Graf et al. (``strategy="graf"``): a binary tree over ``n_subsets`` stratified parts; each
  layer trains on the unions of pairs of SV sets of the layer below, and the top layer's SVs are
  fed back into every first-layer part until they no longer change (at most ``max_passes``).

The numerical cores are plain functions (:func:`split_classes`, :func:`cascade_subproblems`,
:func:`wen_lu_cascade`, :func:`graf_cascade`); :class:`CascadeSVC` wraps them.
"""

from __future__ import annotations

import logging
import warnings
from dataclasses import dataclass, field
from math import ceil
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import SVC
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import check_is_fitted, validate_data

from svmrepro.algorithms.parallel import fit_each
from svmrepro.metrics import support_counts

log = logging.getLogger(__name__)  # progress of long fits, one line per step

#: sklearn.svm.SVC parameters every sub-SVM of the cascade shares (same names, same checks)
SVC_PARAMS = ("kernel", "degree", "gamma", "coef0", "C", "shrinking", "tol", "cache_size", "class_weight", "max_iter")

# ---------------------------------------------------------------------------------------------
# Plain functions


@dataclass
class Subproblem:
    """One sub-SVM of a cascade: what it trained on, its SVs (indices into X) and its cost.

    ``fit_time_s`` is its own fit time, or, when it was solved by an inner cascade (``inner``,
    its steps), the sum of that cascade's fit times; ``critical_path_s`` is the time it would
    take with every sub-problem of each step on its own core.
    """

    step: str
    name: str
    indices: np.ndarray
    support: np.ndarray
    fit_time_s: float
    critical_path_s: float
    inner: list[list[Subproblem]] | None = field(default=None, repr=False)

    def describe(self) -> dict:
        out = {"n_train": len(self.indices), "n_sv": len(self.support), "fit_time_s": self.fit_time_s,
               "critical_path_s": self.critical_path_s}
        if self.inner is not None:
            out["inner"] = describe_steps(self.inner)
        return out


def describe_steps(steps: list[list[Subproblem]]) -> dict[str, dict]:
    """``{"step<s>.<name>": {n_train, n_sv, fit_time_s, ...}}`` without the index arrays."""
    return {f"step{sub.step}.{sub.name}": sub.describe() for step in steps for sub in step}


def critical_path(steps: list[list[Subproblem]]) -> float:
    """Sum over steps of the slowest sub-problem of the step (all of a step in parallel)."""
    return float(sum(max(sub.critical_path_s for sub in step) for step in steps))


def total_fit_time(steps: list[list[Subproblem]]) -> float:
    return float(sum(sub.fit_time_s for step in steps for sub in step))


def fit_step(svm: SVC, X, y, step: str, names, subsets, n_jobs) -> tuple[list[SVC], list[Subproblem]]:
    """Fit a clone of ``svm`` on each index set of ``subsets``; SVs come back as indices into X."""
    models, times = fit_each(svm, [(X[s], y[s]) for s in subsets], n_jobs=n_jobs)
    subs = [
        Subproblem(step, name, s, np.sort(s[m.support_]), t, t) for name, s, m, t in zip(names, subsets, models, times)
    ]
    if subs:
        log.info("cascade step %s: %d sub-SVMs on %d examples -> %d SVs, slowest %.1f s", step, len(subs),
                 sum(len(s) for s in subsets), sum(len(sub.support) for sub in subs), max(times))
    return models, subs


def union(subs: list[Subproblem]) -> np.ndarray:
    """Indices of the union of the sub-problems' SV sets (sorted)."""
    return np.unique(np.concatenate([sub.support for sub in subs]))


def _class_indices(y: np.ndarray, parts: int, what: str) -> tuple[np.ndarray, np.ndarray]:
    """Positions of the positive (+1) and negative (-1) examples, each class split-able in ``parts``."""
    P, N = np.flatnonzero(y > 0), np.flatnonzero(y < 0)
    for name, idx in (("+1", P), ("-1", N)):
        if len(idx) < parts:
            raise ValueError(f"{what} needs at least {parts} examples of each class; class {name} has {len(idx)}")
    return P, N


def split_classes(y: np.ndarray, r: float = 0.5, k: int = 2) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Eq. (1): positions of P_1..P_k and N_1..N_k, consecutive blocks in input order.

    k = 2: ``P_1`` is the first ``ceil(r * L_p)`` positive examples, ``P_2`` the rest (the same
    for N). k > 2: k blocks of near-equal size per class (``r`` is not used).
    """
    P, N = _class_indices(y, k, f"a split into k={k} parts per class")
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
    svm: SVC, X, y, idx: np.ndarray, r: float = 0.5, k: int = 2, max_size: int | None = None, n_jobs=None
) -> tuple[SVC, list[list[Subproblem]]]:
    """Sec. 2, steps 1-3, on the examples ``idx`` of ``(X, y)`` (``y`` in {-1, +1}).

    Returns the final SVM (trained on the union of the step-2 SVs) and the three steps'
    sub-problems. Step-1 problems larger than ``max_size`` are solved by this cascade, one after
    the other; the others of a step are fitted together (in parallel with ``n_jobs``).
    """
    groups = cascade_subproblems(y[idx], r, k)
    names1, names2 = _step_names(k)
    sets1 = [idx[s] for group in groups for s in group]
    flat_names = [name for group in names1 for name in group]
    large = [_too_large(y[s], max_size, k) for s in sets1]
    small = [i for i, big in enumerate(large) if not big]
    _, fitted = fit_step(svm, X, y, "1", [flat_names[i] for i in small], [sets1[i] for i in small], n_jobs)
    solved = dict(zip(small, fitted))
    for i in (i for i, big in enumerate(large) if big):
        _, inner = wen_lu_cascade(svm, X, y, sets1[i], r, k, max_size, n_jobs)
        solved[i] = Subproblem(
            "1", flat_names[i], sets1[i], inner[-1][0].support, total_fit_time(inner), critical_path(inner), inner
        )
    step1 = [solved[i] for i in range(len(sets1))]
    sets2 = [union(step1[m * k: (m + 1) * k]) for m in range(k)]
    _, step2 = fit_step(svm, X, y, "2", names2, sets2, n_jobs)
    (final,), step3 = fit_step(svm, X, y, "3", ["Tfinal"], [union(step2)], n_jobs)
    return final, [step1, step2, step3]


def deal(y: np.ndarray, n_subsets: int) -> list[np.ndarray]:
    """Stratified parts for Graf's first layer: each class dealt round-robin in input order."""
    P, N = _class_indices(y, n_subsets, f"n_subsets={n_subsets}")
    return [np.sort(np.concatenate([P[i::n_subsets], N[i::n_subsets]])) for i in range(n_subsets)]


def graf_cascade(
    svm: SVC, X, y, n_subsets: int = 8, max_passes: int = 10, n_jobs=None
) -> tuple[SVC, list[list[Subproblem]], int, bool]:
    """Graf et al.'s Cascade SVM: a binary tree of SV filtering, with feedback passes.

    Layer 1 trains on each part (plus, from the second pass on, the SVs of the previous pass's
    top SVM); each next layer trains on the union of the SV sets of two neighbours (an odd one
    out moves up unchanged), until one SVM is left. Passes stop when the top SVM's SV set equals
    that of the pass before. Returns the top SVM, every layer's sub-problems (step
    ``"<pass>.<layer>"``), the number of passes and whether the SV set became stable.
    """
    parts, feedback, steps = deal(y, n_subsets), np.array([], dtype=int), []
    for n_pass in range(1, max_passes + 1):
        sets, layer = [np.union1d(part, feedback) for part in parts], 1
        while True:
            names = [f"S{i + 1}" for i in range(len(sets))]
            models, subs = fit_step(svm, X, y, f"{n_pass}.{layer}", names, sets, n_jobs)
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


class CascadeSVC(ClassifierMixin, BaseEstimator):
    """An SVC trained by a cascade of smaller SVCs (binary classification).

    Wen & Lu (2004), ``strategy="wen_lu"``:

    1. Cut the positive examples P and the negative examples N by the ratio ``r`` (eq. 1) and
       train T1 = P1 u N1, T2 = P2 u N2, T3 = P1 u N2, T4 = P2 u N1 in parallel (eq. 2).
    2. Train T12 = SV1 u SV2 and T34 = SV3 u SV4 in parallel (eq. 3).
    3. Train the final SVM on SV12 u SV34 (eq. 4); it is the model kept.

    Graf et al. (2004), ``strategy="graf"``: the Cascade SVM most users know (see
    :func:`graf_cascade`).

    Parameters
    ----------
    kernel, degree, gamma, coef0, C, shrinking, tol, cache_size, class_weight, max_iter
        Those of :class:`sklearn.svm.SVC`, shared by every sub-SVM (flat rather than an
        ``estimator``, so one experiment sets ``C`` and ``gamma`` of the standard SVC and of the
        cascade alike). The paper's sigma reads best as ``gamma = 1 / (2 sigma**2)``
        (``experiments/cascade/README.md``).
    strategy : {"wen_lu", "graf"}, default="wen_lu"
    r : float in (0, 0.5], default=0.5
        Wen & Lu: P1 is the first ``ceil(r * |P|)`` positive examples in input order (N1 the
        same). Only k = 2 uses it; k > 2 cuts each class into k near-equal blocks.
    k : int >= 2, default=2
        Wen & Lu: parts per class; step 1 has k*k problems, step 2 has k.
    max_subproblem_size : int or None, default=None
        Wen & Lu: a step-1 problem with more examples is solved by a cascade of its own.
    n_subsets : int >= 2, default=8
        Graf: first-layer parts (stratified, dealt round-robin in input order).
    max_passes : int >= 1, default=10
        Graf: feedback passes at most; 1 is the single-pass cascade. Stopping here before the
        SV set is stable warns (ConvergenceWarning).
    n_jobs : int or None, default=None
        Sub-SVMs of a step fitted in parallel (joblib; results do not depend on it).

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
    final_estimator_ : SVC
        The last SVM (trained on labels -1/+1); ``predict`` and ``decision_function`` use it.
    support_ : indices into X of its support vectors (sorted)
    support_vectors_ : ndarray of shape (n_sv, n_features)
    support_counts_ : dict with ``n_sv``, ``n_bounded_sv``, ``n_free_sv`` of the final SVM
    n_iter_ : the final SVM's ``n_iter_``
    steps_ : list of steps, each a list of :class:`Subproblem` (indices into X)
    converged_ : bool
        Graf: the SV set became stable; Wen & Lu: always True.
    diagnostics_ : dict
        ``critical_path_time_s`` (sum over steps of the slowest sub-SVM: the training time on
        enough cores, which is what the paper reports: Table 6's 131.61 + 91.67 + 44.92 s is
        Table 4's 268.20 s), ``total_subfit_time_s``, ``n_steps``; per step the series
        ``step_n_train``, ``step_n_sv`` (summed over its sub-problems), ``step_max_time_s``;
        Wen & Lu: ``step<s>.<name>.{n_train, n_sv, fit_time_s}`` per sub-problem (Table 6);
        Graf: ``n_passes``, ``converged``; ``subproblems``: all of it, nested (JSON only).

    References
    ----------
    Y.-M. Wen, B.-L. Lu. A cascade method for reducing training time and the number of support
    vectors. ISNN 2004, LNCS 3173, 480-486.
    H. P. Graf, E. Cosatto, L. Bottou, I. Durdanovic, V. Vapnik. Parallel support vector
    machines: the Cascade SVM. NIPS 17, 2004.
    """

    _parameter_constraints: dict = {
        **{name: SVC._parameter_constraints[name] for name in SVC_PARAMS},
        "strategy": [StrOptions({"wen_lu", "graf"})],
        "r": [Interval(Real, 0, 0.5, closed="right")],
        "k": [Interval(Integral, 2, None, closed="left")],
        "max_subproblem_size": [Interval(Integral, 2, None, closed="left"), None],
        "n_subsets": [Interval(Integral, 2, None, closed="left")],
        "max_passes": [Interval(Integral, 1, None, closed="left")],
        "n_jobs": [Integral, None],
    }

    def __init__(
        self,
        *,
        kernel="rbf",
        degree=3,
        gamma="scale",
        coef0=0.0,
        C=1.0,
        shrinking=True,
        tol=1e-3,
        cache_size=200,
        class_weight=None,
        max_iter=-1,
        strategy="wen_lu",
        r=0.5,
        k=2,
        max_subproblem_size=None,
        n_subsets=8,
        max_passes=10,
        n_jobs=None,
    ):
        self.kernel = kernel
        self.degree = degree
        self.gamma = gamma
        self.coef0 = coef0
        self.C = C
        self.shrinking = shrinking
        self.tol = tol
        self.cache_size = cache_size
        self.class_weight = class_weight
        self.max_iter = max_iter
        self.strategy = strategy
        self.r = r
        self.k = k
        self.max_subproblem_size = max_subproblem_size
        self.n_subsets = n_subsets
        self.max_passes = max_passes
        self.n_jobs = n_jobs

    def _sub_svm(self) -> SVC:
        """The SVC every step fits; it sees labels -1/+1, so a class_weight dict is renamed."""
        params = {name: getattr(self, name) for name in SVC_PARAMS}
        if isinstance(self.class_weight, dict):
            sign = {self.classes_[0]: -1, self.classes_[1]: 1}
            params["class_weight"] = {sign.get(label, label): w for label, w in self.class_weight.items()}
        return SVC(**params)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        X, y = validate_data(self, X, y)
        check_classification_targets(y)
        self.classes_ = np.unique(y)
        if len(self.classes_) > 2:
            y_type = type_of_target(y, input_name="y")
            raise ValueError(f"Only binary classification is supported. The type of the target is {y_type}.")
        if len(self.classes_) != 2:
            raise ValueError(f"{type(self).__name__} needs examples of 2 classes; got 1 class ({self.classes_[0]!r})")
        y = np.where(y == self.classes_[1], 1, -1)
        if self.strategy == "wen_lu" and self.k > 2 and self.r != 0.5:
            raise ValueError(f"r={self.r} is only used with k=2; with k={self.k} leave r at 0.5")
        svm, diagnostics = self._sub_svm(), {}
        if self.strategy == "wen_lu":
            final, steps = wen_lu_cascade(
                svm, X, y, np.arange(len(y)), self.r, self.k, self.max_subproblem_size, self.n_jobs
            )
            self.converged_ = True
            diagnostics.update(
                {f"{key}.{metric}": value[metric] for key, value in describe_steps(steps).items()
                 for metric in ("n_train", "n_sv", "fit_time_s")}
            )
        else:
            final, steps, n_passes, self.converged_ = graf_cascade(
                svm, X, y, self.n_subsets, self.max_passes, self.n_jobs
            )
            if not self.converged_ and self.max_passes > 1:
                warnings.warn(
                    f"the Cascade SVM's support vectors still changed after max_passes={self.max_passes}",
                    ConvergenceWarning, stacklevel=2,
                )
            diagnostics.update({"n_passes": n_passes, "converged": float(self.converged_)})
        self.final_estimator_, self.steps_ = final, steps
        self.support_ = steps[-1][0].support
        self.support_vectors_ = X[self.support_]
        self.support_counts_ = support_counts(final)
        self.n_iter_ = final.n_iter_
        self.diagnostics_ = {
            "critical_path_time_s": critical_path(steps),
            "total_subfit_time_s": total_fit_time(steps),
            "n_steps": len(steps),
            "step_n_train": [sum(len(sub.indices) for sub in step) for step in steps],
            "step_n_sv": [sum(len(sub.support) for sub in step) for step in steps],
            "step_max_time_s": [max(sub.critical_path_s for sub in step) for step in steps],
            **diagnostics,
            "subproblems": describe_steps(steps),
        }
        return self

    def decision_function(self, X) -> np.ndarray:
        """Positive values predict ``classes_[1]``."""
        check_is_fitted(self)
        X = validate_data(self, X, reset=False)
        return self.final_estimator_.decision_function(X)

    def predict(self, X) -> np.ndarray:
        decision = self.decision_function(X)  # checks the fit before classes_ is read
        return self.classes_[(decision > 0).astype(int)]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags
