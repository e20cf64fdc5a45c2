r"""Potential support vectors of separable two-class data (Del Favero et al., CDC 2011).

A datum is a *potential SV* of a data set if some plausible future data could make it a support
vector of the hard-margin linear SVM; otherwise it is *discardable* and no retraining will ever
need it. Our notation meets the slides' as follows.

**Proposition (slides, "Full characterization").** :math:`(x_i, y_i)` is a potential SV iff some
:math:`(w, b) \ne (0, 0)` (1) passes through :math:`x_i`, (2) quasi-separates the data,
:math:`y_j (w^T x_j + b) \ge 0` for all j, (3) may pass through points of :math:`x_i`'s class and
(4) may not pass through points of the other class.

**The** :math:`\Delta_j` **(slides, "Alternative characterization").** Rule 1 gives
:math:`b = -w^T x_i`, hence :math:`w \ne 0`, and rule 2 becomes :math:`y_j w^T (x_j - x_i) \ge 0`.
With

.. math:: \Delta_j = y_j (x_i - x_j), \qquad j \ne i,

rules 2-4 read :math:`\Delta_j^T w \le 0` for :math:`y_j = y_i` and :math:`\Delta_j^T w < 0` for
:math:`y_j \ne y_i` (:func:`deltas`). The **"<=" test** relaxes the strict inequalities: some
:math:`w \ne 0` has :math:`\Delta_j^T w \le 0` for all j, i.e. the :math:`\Delta_j` do not
positively span :math:`R^d` (the slides' "span = R^d", read as the conic span). It differs from the
exact test only when an opposite-class point lies on every candidate hyperplane, a null set for
data in general position. ``lp_decide(..., opposite=...)`` runs the exact test for comparison.

**Geometry.** For :math:`x_i` in class P (other class N), the "<=" test holds iff :math:`x_i` lies
on the boundary of the shadow :math:`S_P = \mathrm{conv}(P) + \mathrm{cone}(P - N)`. A point
inside the convex hull of its own class is therefore discardable (the slides' corollary).

**The LP (slides, "The algorithm", step 3):** :math:`\max \sum_j \omega_j` s.t.
:math:`\Delta_j^T w + \omega_j \le 0,\ \omega_j \ge 0`. For a fixed w the best
:math:`\omega_j` is :math:`-\Delta_j^T w`, so it is :math:`\max c^T w` s.t. :math:`\Delta w \le 0`
with :math:`c = -\sum_j \Delta_j`: a cone with apex at the origin, so the optimum is 0 (the origin)
or unbounded. Unbounded iff the "<=" test holds, provided the :math:`\Delta_j` span
:math:`R^d`; if they do not, any w orthogonal to all of them passes (checked first). Deciders:

- ``"lp"`` (:func:`lp_decide`): HiGHS on the LP with the box :math:`|w_k| \le 1`; a potential SV
  iff the optimum is positive.
- ``"simplex"`` (:func:`simplex_decide`, step 4, "just one simplex step from the origin"): the
  simplex method in inequality form (free w, one slack per constraint), started at the origin. On a cone every
  pivot at the apex is degenerate (the iterate does not move) until the reduced costs prove the
  origin optimal (:math:`c = \Delta_B^T \lambda`, :math:`\lambda \ge 0`: discardable) or an
  improving edge is unblocked: the single step, along a ray to infinity, whose direction is the
  normal w of a quasi-separating hyperplane through :math:`x_i`. ``iterations`` counts the
  degenerate pivots, the work the slides' "one step" hides.

**Streaming.** For separable :math:`D \cup E`, :math:`PSV(D \cup E) = PSV(PSV(D) \cup E)`. Sketch:
the extreme points of :math:`S_P` are potential SVs, and every extreme ray of the pointed cone
:math:`\mathrm{cone}(P - N)` is some :math:`p - n` whose supporting hyperplane passes through p and
n and weakly separates, so p and n are potential SVs; hence
:math:`S_P(D) = \mathrm{conv}(P') + \mathrm{cone}(P' - N')` with primes for potential SVs, dropping
discardable points changes neither shadow, and adding data only enlarges them (a discarded point
stays discardable). A hyperplane that strictly separates :math:`PSV(D) \cup E` also separates
:math:`D \cup E`, so separability is checked on the kept points plus the new chunk.
:meth:`PotentialSVFilter.partial_fit` keeps only the potential SVs of what it has seen, and one pass
drops a point from the constraints as soon as it is found discardable (:func:`filter_pass`).
Each kept point carries its certificate, the normal w found by the decider; a kept point whose
hyperplane still quasi-separates once a chunk arrives stays kept without a new decision
(:func:`still_certified`).

**Non-separable input** is refused with :class:`NotSeparableError`; the slides leave that case to
future work and so do we.

References
----------
S. Del Favero, D. Varagnolo, F. Dinuzzo, L. Schenato, G. Pillonetto, "On the discardability of
data in Support Vector Classification problems", IEEE CDC 2011 (slides).
"""

from __future__ import annotations

import time
import warnings
from numbers import Integral, Real
from typing import NamedTuple

import numpy as np
from scipy.linalg import qr
from scipy.optimize import linprog
from scipy.spatial.distance import cdist
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import SVC
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, validate_data

from svmrepro.algorithms.final_model import FinalModelProbabilities, final_model_has, support_vectors
from svmrepro.algorithms.kernel_expansion import decision_values
from svmrepro.algorithms.parallel import data_on_cluster, fit_one
from svmrepro.metrics import support_counts


class NotSeparableError(ValueError):
    """The two classes cannot be separated by a hyperplane; potential SVs are undefined."""


class Decision(NamedTuple):
    is_psv: bool
    #: normal of a quasi-separating hyperplane through the datum (None when discardable)
    w: np.ndarray | None
    #: simplex pivots (degenerate ones for ``simplex_decide``, HiGHS's count for ``lp_decide``)
    iterations: int


# ---------------------------------------------------------------- numerical core: one datum


def deltas(X: np.ndarray, y: np.ndarray, i: int, among: np.ndarray | None = None) -> np.ndarray:
    """Rows ``Delta_j = y_j (x_i - x_j)`` for ``j`` in ``among`` (default: all), ``j != i``; y in {-1, +1}."""
    idx = np.arange(len(X)) if among is None else np.asarray(among)
    idx = idx[idx != i]
    return y[idx, None] * (X[i] - X[idx])


def _unit_rows(D: np.ndarray, *aligned: np.ndarray):
    """Rows scaled to unit length; zero rows (same-class duplicates: no constraint) dropped."""
    norms = np.linalg.norm(D, axis=1)
    keep = norms > 0
    return (D[keep] / norms[keep, None], *(a[keep] for a in aligned))


def _basis_or_null(D: np.ndarray, tol: float) -> tuple[np.ndarray | None, np.ndarray | None]:
    """``d`` linearly independent rows of unit-row ``D``, or a unit w orthogonal to every row.

    The rows most aligned with ``c = -sum(D)`` come first: if the datum is discardable, ``c`` lies
    in their cone more often than not, which saves pivots (12 instead of 33 in 20-d).
    """
    m, d = D.shape
    if m >= d:
        aligned = np.argpartition(D @ -D.sum(axis=0), m - d)[m - d:]
        if np.linalg.cond(D[aligned]) < 1 / tol:
            return np.sort(aligned), None
        _, R, perm = qr(D.T, mode="economic", pivoting=True)  # rare: rank-revealing, but slow
        diag = np.abs(np.diag(R))
        if np.all(diag > tol * max(1.0, diag[0])):
            return np.sort(perm[:d]), None
    return None, np.linalg.svd(D)[2][-1] if m else np.eye(d)[0]


def simplex_decide(D: np.ndarray, tol: float = 1e-9, max_iter: int | None = None) -> Decision:
    """The slides' test: the simplex method on ``max c^T w, D w <= 0`` started at the origin.

    ``D`` holds the ``Delta_j`` as rows. Returns whether the "<=" test holds; see the module
    docstring for why every pivot but the last is degenerate. Pivoting: the most negative reduced
    cost enters and the steepest blocking constraint leaves (Dantzig); after ``10 d`` pivots
    Bland's rule (smallest indices), which cannot cycle, takes over.
    """
    D = _unit_rows(np.asarray(D, dtype=float))[0]
    basis, null = _basis_or_null(D, tol)
    if basis is None:
        return Decision(True, null, 0)
    m, d = D.shape
    c = -D.sum(axis=0)
    cost_tol = tol * max(1.0, float(np.linalg.norm(c)))
    max_iter = max_iter or 50 * (m + d)
    for iteration in range(max_iter):
        bland = iteration >= 10 * d
        B = D[basis]
        lam = np.linalg.solve(B.T, c)  # c = B^T lam: the reduced costs of the active constraints
        improving = np.flatnonzero(lam < -cost_tol)
        if improving.size == 0:
            return Decision(False, None, iteration)
        k = improving[np.argmin(basis[improving] if bland else lam[improving])]
        u = np.linalg.solve(B, -np.eye(d)[k])  # leave constraint k, keep the other d-1 tight
        u /= np.linalg.norm(u)
        slope = D @ u
        slope[basis] = -np.inf
        blocking = np.flatnonzero(slope > tol)
        if blocking.size == 0:
            return Decision(True, u, iteration)  # the one step: an unblocked improving ray
        basis[k] = blocking[0] if bland else blocking[np.argmax(slope[blocking])]
    warnings.warn(
        f"simplex_decide: no decision after {max_iter} pivots; deciding with HiGHS", ConvergenceWarning
    )
    return lp_decide(D, tol=tol)


def lp_decide(D: np.ndarray, opposite: np.ndarray | None = None, tol: float = 1e-9) -> Decision:
    """The exact LP (HiGHS). ``opposite=None``: the "<=" test; a boolean mask of the rows of the
    other class: the proposition's test, strict ``<`` on those rows (rules 1-4)."""
    D, opp = _unit_rows(np.asarray(D, dtype=float), np.zeros(len(D), bool) if opposite is None else opposite)
    m, d = D.shape
    if opposite is None or not opp.any():
        basis, null = _basis_or_null(D, tol)
        if basis is None:
            return Decision(True, null, 0)
        # max -sum(D) w  s.t.  D w <= 0,  |w_k| <= 1
        res = linprog(D.sum(axis=0), A_ub=D, b_ub=np.zeros(m), bounds=[(-1, 1)] * d, method="highs")
        value = -res.fun
    else:
        # max t  s.t.  D_same w <= 0,  D_opp w + t <= 0,  |w_k| <= 1,  0 <= t <= 1
        A = np.hstack([D, opp[:, None].astype(float)])
        res = linprog(np.r_[np.zeros(d), -1.0], A_ub=A, b_ub=np.zeros(m),
                      bounds=[(-1, 1)] * d + [(0, 1)], method="highs")
        value = -res.fun
    if res.status != 0:
        raise RuntimeError(f"lp_decide: HiGHS failed ({res.message})")
    # a discardable datum's optimum is 0 up to HiGHS's tolerances (1e-7 per constraint)
    is_psv = bool(value > 1e-6 * max(1, m if opposite is None else 1))
    return Decision(is_psv, res.x[:d] / np.abs(res.x[:d]).max() if is_psv else None, int(res.nit))


DECIDERS = {"simplex": simplex_decide, "lp": lp_decide}


# ---------------------------------------------------------------- numerical core: a data set


def separating_hyperplane(X: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, float]:
    """Some ``(w, b)`` with ``y_i (w^T x_i + b) >= 1`` (y in {-1, +1}), or :class:`NotSeparableError`."""
    n, d = X.shape
    A = -y[:, None] * np.hstack([X, np.ones((n, 1))])
    res = linprog(np.zeros(d + 1), A_ub=A, b_ub=-np.ones(n), bounds=[(None, None)] * (d + 1), method="highs")
    if res.status == 2:
        raise NotSeparableError(
            f"the {n} points are not linearly separable: no hyperplane has both classes strictly on "
            "its two sides, so potential SVs are undefined (the slides treat separable data only)"
        )
    if res.status != 0:
        raise RuntimeError(f"separability LP failed: {res.message}")
    return res.x[:d], float(res.x[d])


def filter_pass(
    X: np.ndarray, y: np.ndarray, decider: str = "simplex", tol: float = 1e-9,
    certificates: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, int]:
    """The potential SVs of ``(X, y)``, y in {-1, +1}: mask, certificates and total iterations.

    A certificate is the normal w of a quasi-separating hyperplane through the point
    (``Delta_j^T w <= 0`` for all j), NaN for discarded points. Rows of ``certificates`` that are
    finite on entry are trusted and not decided again. Points far from a separating hyperplane are
    decided first: they are the likely discards, and a discarded point leaves the constraint set
    at once (module docstring, "Streaming").
    """
    w, b = separating_hyperplane(X, y)
    decide = DECIDERS[decider]
    found = np.full(X.shape, np.nan) if certificates is None else certificates.copy()
    alive = np.ones(len(X), dtype=bool)
    iterations = 0
    for i in np.argsort(-(y * (X @ w + b)), kind="stable"):
        if np.isfinite(found[i]).all():
            continue
        decision = decide(deltas(X, y, i, np.flatnonzero(alive)), tol=tol)
        iterations += decision.iterations
        alive[i] = decision.is_psv
        if decision.is_psv:
            found[i] = decision.w
    return alive, found, iterations


def still_certified(X_kept, y_kept, W, X_new, y_new, tol: float = 1e-9) -> np.ndarray:
    """Which kept points' certificates ``W`` (rows) also hold for the new points (y in {-1, +1}).

    ``Delta_j^T w_p = y_j (x_p - x_j)^T w_p`` for every kept p and new j at once, compared with
    ``tol |x_p - x_j|`` as the deciders compare unit rows.
    """
    slopes = y_new[None, :] * (np.einsum("ij,ij->i", X_kept, W)[:, None] - W @ X_new.T)
    return np.all(slopes <= tol * cdist(X_kept, X_new), axis=1)


def is_potential_sv(X: np.ndarray, y: np.ndarray, i: int, decider: str = "simplex", tol: float = 1e-9) -> bool:
    """The "<=" test for datum ``i`` against all the others (y in {-1, +1})."""
    return DECIDERS[decider](deltas(X, y, i), tol=tol).is_psv


def _signs(labels: np.ndarray, classes: np.ndarray) -> np.ndarray:
    return np.where(labels == classes[-1], 1.0, -1.0)


def _chunks(n: int, size: int | None):
    size = size or max(n, 1)
    return (slice(start, start + size) for start in range(0, n, size))


# ---------------------------------------------------------------- estimators


class PotentialSVFilter(BaseEstimator):
    """Keep the potential SVs of separable two-class data; streamable with ``partial_fit``.

    Parameters
    ----------
    decider : {"simplex", "lp"}, default="simplex"
        ``"simplex"``: the slides' one-step test (:func:`simplex_decide`); ``"lp"``: HiGHS
        (:func:`lp_decide`). Both decide the "<=" test.
    chunk_size : int or None, default=500
        ``fit`` feeds the data to ``partial_fit`` in chunks of this size (None: one pass over all
        of it). The result is the same; memory and time scale with kept + chunk points (one pass
        over n points costs O(n^2) per pivot, chunks O(n (kept + chunk))).
    tol : float, default=1e-9
        Tolerance of the deciders on unit-length :math:`\\Delta_j`.

    Attributes
    ----------
    X_ : ndarray of shape (n_kept, n_features)
        The potential SVs of everything seen since the last ``fit`` (the only data kept).
    y_ : ndarray of shape (n_kept,)
        Their labels.
    support_ : ndarray of int
        Their positions in the stream of samples seen.
    classes_ : ndarray
        Labels seen (at most two). The larger one is +1 in the :math:`\\Delta_j`.
    n_samples_seen_ : int
    history_ : dict of lists
        Per ``partial_fit`` step: ``n_seen``, ``n_decided`` (new points, and kept points whose
        certificate the new points broke), ``n_kept``, ``time_s``, ``iterations`` (summed).
    certificates_ : ndarray of shape (n_kept, n_features)
        Per kept point, the normal w of a quasi-separating hyperplane through it. A kept point
        whose hyperplane still quasi-separates after a new chunk is kept without a new decision.

    Notes
    -----
    A sample selector in the sense of imbalanced-learn (``fit_resample``), not a scikit-learn
    transformer: it changes the number of samples. Input that is not linearly separable raises
    :class:`NotSeparableError`.

    Examples
    --------
    >>> from sklearn.datasets import make_blobs
    >>> from svmrepro.algorithms import PotentialSVFilter
    >>> X, y = make_blobs(n_samples=100, centers=[[-2, -2], [2, 2]], random_state=0)
    >>> PotentialSVFilter().fit(X, y).support_
    array([ 1, 31, 35, 42, 45, 46, 93])
    """

    _parameter_constraints = {
        "decider": [StrOptions(set(DECIDERS))],
        "chunk_size": [Interval(Integral, 1, None, closed="left"), None],
        "tol": [Interval(Real, 0, None, closed="neither")],
    }

    def __init__(self, *, decider="simplex", chunk_size=500, tol=1e-9):
        self.decider = decider
        self.chunk_size = chunk_size
        self.tol = tol

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        X, y = validate_data(self, X, y)
        for attribute in ("X_", "n_samples_seen_"):
            self.__dict__.pop(attribute, None)
        for part in _chunks(len(X), self.chunk_size):
            self._step(X[part], y[part])
        return self

    @_fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X, y):
        first = not hasattr(self, "X_")
        X, y = validate_data(self, X, y, reset=first)
        return self._step(X, y)

    def _step(self, X, y):
        check_classification_targets(y)
        if not hasattr(self, "X_"):
            self.X_, self.y_ = X[:0], y[:0]
            self.support_ = np.zeros(0, dtype=np.intp)
            self.certificates_ = np.zeros((0, X.shape[1]))
            self.classes_ = np.unique(y[:0])
            self.n_samples_seen_ = 0
            self.history_ = {"n_seen": [], "n_decided": [], "n_kept": [], "time_s": [], "iterations": []}
        classes = np.union1d(self.classes_, y)
        if len(classes) > 2:
            raise ValueError(f"potential SVs are defined for two classes; got labels {classes.tolist()}")
        start = time.perf_counter()
        certificates = np.full((len(self.X_) + len(X), X.shape[1]), np.nan)
        if len(classes) == len(self.classes_):  # the +-1 coding of the kept points is unchanged
            valid = still_certified(self.X_, _signs(self.y_, classes), self.certificates_, X, _signs(y, classes), self.tol)
            certificates[: len(self.X_)][valid] = self.certificates_[valid]
        X_all, y_all = np.vstack([self.X_, X]), np.concatenate([self.y_, y])
        index = np.concatenate([self.support_, self.n_samples_seen_ + np.arange(len(X))])
        n_decided = int(np.isnan(certificates).any(axis=1).sum())
        keep, certificates, iterations = filter_pass(X_all, _signs(y_all, classes), self.decider, self.tol, certificates)
        self.X_, self.y_, self.support_ = X_all[keep], y_all[keep], index[keep]
        self.certificates_ = certificates[keep]
        self.classes_ = classes
        self.n_samples_seen_ += len(X)
        step = (self.n_samples_seen_, n_decided, int(keep.sum()), time.perf_counter() - start, iterations)
        for key, value in zip(self.history_, step):
            self.history_[key].append(value)
        return self

    def fit_resample(self, X, y):
        """Fit, then return the potential SVs ``(X_, y_)``."""
        self.fit(X, y)
        return self.X_.copy(), self.y_.copy()


class PotentialSVClassifier(FinalModelProbabilities, ClassifierMixin, BaseEstimator):
    """Fit ``estimator`` on the potential SVs of the training data only.

    Parameters
    ----------
    estimator : classifier, default=None
        Fitted (a clone) on the potential SVs; None means ``SVC(kernel="linear", C=1e6)``, a
        hard-margin linear SVM, the only model the slides' guarantee is about.
    selector : PotentialSVFilter, default=None
        Cloned and fitted first; None means ``PotentialSVFilter()``.

    Attributes
    ----------
    selector_ : the fitted filter
    estimator_ : the model, fitted on the potential SVs
    potential_sv_ : ndarray of int
        Training indices of the potential SVs, the rows ``estimator_`` was fitted on.
    support_ : ndarray of int
        Training indices of the model's support vectors (when it has ``support_``).
    support_vectors_ : ndarray of shape (n_sv, n_features)
        ``X[support_]`` (when the model has ``support_``, as SVC).
    n_support_ : ndarray of shape (2,), dtype int32
        Support vectors of each class, in the order of ``classes_``.
    support_counts_ : dict
    diagnostics_ : dict
        ``n_potential_sv``, ``n_discarded``, ``discard_fraction``, ``filter_time_s``,
        ``psv_fit_time_s`` (wall seconds), ``filter_cpu_s``, ``psv_fit_cpu_s`` (CPU seconds),
        ``filter_steps``, ``filter_iterations_per_point``, ``filter_kept_per_step``.

    Notes
    -----
    Two classes only, as potential SVs are defined. The checks of the slides' claims (retraining on
    the potential SVs only, data arriving later) are an analysis of the experiments, not part of
    the estimator: :class:`svmrepro.analyses.retraining.RetrainingAudit`. ``decision_function``,
    ``predict_proba`` and ``predict_log_proba`` are the model's, where it has them.

    Examples
    --------
    >>> from sklearn.datasets import make_blobs
    >>> from svmrepro.algorithms import PotentialSVClassifier
    >>> X, y = make_blobs(n_samples=100, centers=[[-2, -2], [2, 2]], random_state=0)
    >>> model = PotentialSVClassifier().fit(X, y)
    >>> model.diagnostics_["n_potential_sv"]  # the SVM is fitted on these 7 of the 100 points
    7
    >>> model.n_support_
    array([1, 1], dtype=int32)
    """

    _parameter_constraints = {
        "estimator": [HasMethods(["fit", "predict"]), None],
        "selector": [HasMethods(["fit"]), None],
    }

    _final_model = "estimator_"  # its predict_proba and predict_log_proba (FinalModelProbabilities)

    def __init__(self, estimator=None, *, selector=None):
        self.estimator = estimator
        self.selector = selector

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y, sample_weight=None):
        """Filter, then fit ``estimator`` on the potential SVs.

        ``sample_weight`` goes to ``estimator`` for the potential SVs' rows. Rows of weight 0 do
        not constrain the SVM, so they are left out before filtering; positive weights do not
        change which points a hard-margin SVM may need, so the filter does not see them.
        """
        X, y = validate_data(self, X, y)
        check_classification_targets(y)
        if len(np.unique(y)) > 2:
            raise ValueError(f"Only binary classification is supported: potential SVs are defined for two "
                             f"classes; got labels {np.unique(y).tolist()}")
        rows = np.arange(len(X))
        if sample_weight is not None:
            sample_weight = _check_sample_weight(sample_weight, X)
            rows = np.flatnonzero(sample_weight > 0)
        estimator = SVC(kernel="linear", C=1e6) if self.estimator is None else self.estimator
        selector = PotentialSVFilter() if self.selector is None else self.selector
        with data_on_cluster(X, y, sample_weight):  # both fits read the one copy
            self.selector_, filter_time, filter_cpu = fit_one(selector, X, y, rows)
            psv = self.potential_sv_ = rows[self.selector_.support_]
            self.estimator_, psv_time, psv_cpu = fit_one(estimator, X, y, psv, sample_weight)
        self.classes_ = self.estimator_.classes_
        if hasattr(self.estimator_, "support_"):
            self.support_ = psv[self.estimator_.support_]
            self.support_vectors_, self.n_support_ = support_vectors(X, y, self.support_, self.classes_)
        self.support_counts_ = support_counts(self.estimator_)
        history = self.selector_.history_
        self.diagnostics_ = {
            "n_potential_sv": len(psv),
            "n_discarded": len(X) - len(psv),
            "discard_fraction": 1 - len(psv) / len(X),
            "filter_time_s": filter_time,
            "psv_fit_time_s": psv_time,
            "filter_cpu_s": filter_cpu,
            "psv_fit_cpu_s": psv_cpu,
            "filter_steps": len(history["n_seen"]),
            "filter_iterations_per_point": sum(history["iterations"]) / max(1, sum(history["n_decided"])),
            "filter_kept_per_step": list(history["n_kept"]),
        }
        return self

    def predict(self, X):
        check_is_fitted(self)
        return self.estimator_.predict(validate_data(self, X, reset=False))

    @available_if(final_model_has("decision_function", "estimator_", "estimator"))
    def decision_function(self, X):
        """The model's decision values (a blocked kernel expansion for an SVC)."""
        check_is_fitted(self)
        return decision_values(self.estimator_, validate_data(self, X, reset=False))
