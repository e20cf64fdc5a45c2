"""Laskov's maximal-inconsistency decomposition for epsilon-SVR (NIPS 1999).

Notation as in the paper, with beta_i = alpha_i - alpha*_i and phi_i = y_i - sum_j beta_j K_ij
(eq. 9); the mu-sets (rules (10)), the working-set rule and the sub-problem solver are the
compiled :mod:`~svmrepro.algorithms.svr_decomposition_jit`. Here:

- the gap G = L - R, L the largest left end, R the smallest right end (sec. 4); the working set
  is optimal iff its mu-sets intersect, and the whole problem is solved to ``tol`` iff G <= tol
  (the same quantity LIBSVM stops on);
- ``decompose``: the loop, with kernel rows from :class:`~svmrepro.algorithms.kernel_cache.KernelCache`;
- ``intercept`` and ``dual_objective`` of a solution, and the estimators' shared base.

``sample_weight`` scales each point's box as LIBSVM does: 0 <= alpha_i, alpha*_i <= C_i =
C * sample_weight_i.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import Interval, InvalidParameterError, StrOptions
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, validate_data
from threadpoolctl import threadpool_limits

from svmrepro.algorithms.kernel_cache import KERNELS, KernelCache, resolve_gamma
from svmrepro.algorithms.kernel_expansion import kernel_expansion
from svmrepro.algorithms.svr_decomposition_jit import mu_sets, reoptimise, working_set
from svmrepro.metrics import BOUND_RTOL


def intercept(beta, phi, C, epsilon) -> float:
    """mu of the solution as LIBSVM takes it: the mean of phi -/+ eps over the free SVs, else the
    middle of [L, R] (the ends of the interval every mu-set allows). ``C``: one box per point."""
    free = (beta != 0) & (np.abs(beta) < C * (1 - BOUND_RTOL))
    if free.any():
        return float(np.mean(phi[free] - epsilon * np.sign(beta[free])))
    left, right = mu_sets(beta, phi, C, epsilon)
    ends = [e for e in (left.max(), right.min()) if np.isfinite(e)]
    return float(np.mean(ends)) if ends else 0.0


def dual_objective(beta, phi, y, epsilon) -> float:
    """W of problem (1): y'beta - eps |beta|_1 - 1/2 beta'K beta, with K beta = y - phi."""
    return float(y @ beta - epsilon * np.abs(beta).sum() - 0.5 * beta @ (y - phi))


@dataclass
class Decomposition:
    beta: np.ndarray
    phi: np.ndarray
    gaps: list[float] = field(default_factory=list)
    subproblem_steps: int = 0
    converged: bool = False


def decompose(cache: KernelCache, y, C, epsilon, q, tol, max_iter=None) -> Decomposition:
    """The maximal-inconsistency algorithm (sec. 4) from beta = 0 until G <= tol; ``C`` holds
    each point's box C_i."""
    state = Decomposition(beta=np.zeros(y.size), phi=np.asarray(y, dtype=float).copy())
    while max_iter is None or len(state.gaps) < max_iter:
        left, right = mu_sets(state.beta, state.phi, C, epsilon)
        state.gaps.append(float(left.max() - right.min()))
        if state.gaps[-1] <= tol:
            state.converged = True
            break
        B = working_set(left, right, q)
        state.subproblem_steps += reoptimise(cache.table, cache.slots(B), B, state.beta, state.phi, C, epsilon)
    return state


class EpsilonSVRBase(RegressorMixin, BaseEstimator):
    """Parameters, fitted attributes and ``predict`` shared by this paper's epsilon-SVR solvers.

    Fitted attributes as :class:`sklearn.svm.SVR`: ``support_``, ``support_vectors_``, ``n_support_``,
    ``dual_coef_`` (beta of the SVs, shape (1, n_SV)), ``intercept_`` (shape (1,)), ``n_iter_``;
    plus ``support_counts_`` (bounded: |alpha_i - alpha*_i| = C_i) and ``diagnostics_``.
    """

    _parameter_constraints: dict = {
        "kernel": [StrOptions(set(KERNELS))],
        "gamma": [StrOptions({"scale", "auto"}), Interval(Real, 0, None, closed="neither")],
        "C": [Interval(Real, 0, None, closed="neither")],
        "epsilon": [Interval(Real, 0, None, closed="left")],
    }

    def _box(self, X, sample_weight) -> np.ndarray:
        """C_i = C * sample_weight_i, LIBSVM's per-sample C (a weight of 0 removes the point)."""
        return self.C * _check_sample_weight(sample_weight, X, dtype=np.float64, ensure_non_negative=True)

    def _set_solution(self, X, y, beta, phi, C, diagnostics: dict):
        self.support_ = np.flatnonzero(beta)
        self.support_vectors_ = X[self.support_]
        self.n_support_ = np.array([self.support_.size], dtype=np.int32)  # as sklearn.svm.SVR's
        self.dual_coef_ = beta[self.support_][None, :]
        self.intercept_ = np.array([intercept(beta, phi, C, self.epsilon)])
        bounded = int(np.sum(np.abs(self.dual_coef_[0]) >= C[self.support_] * (1 - BOUND_RTOL)))
        n_sv = int(self.support_.size)
        self.support_counts_ = {"n_sv": n_sv, "n_bounded_sv": bounded, "n_free_sv": n_sv - bounded}
        left, right = mu_sets(beta, phi, C, self.epsilon)
        self.diagnostics_ = {
            **diagnostics,
            "final_gap": float(left.max() - right.min()),
            "dual_objective": dual_objective(beta, phi, y, self.epsilon),
        }
        return self

    def predict(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return kernel_expansion(
            X, self.support_vectors_, self.dual_coef_[0], self.intercept_[0], kernel=self.kernel, gamma=self._gamma
        )


class DecompositionSVR(EpsilonSVRBase):
    """Epsilon-SVR trained by Laskov's maximal-inconsistency decomposition.

    Parameters
    ----------
    kernel : {"linear", "rbf"}, default="rbf"
    gamma : {"scale", "auto"} or float, default="scale"
        RBF width, ``k(x, z) = exp(-gamma |x - z|^2)``; as in :class:`sklearn.svm.SVR`.
    C : float, default=1.0
    epsilon : float, default=0.1
        Half width of the insensitive tube.
    tol : float, default=1e-3
        Stop when the gap G = L - R of the mu-sets is at most ``tol``.
    q : int, default=20
        Working-set size in points (2q variables); even, >= 2.
    cache_size : int, default=5000
        Kernel rows kept in the LRU cache, in samples; at least ``q`` (a working set's rows are
        used together).
    max_iter : int or None, default=None
        Limit on working sets; None for none. Stopping on it warns (ConvergenceWarning).

    Attributes
    ----------
    support_ : ndarray
        Indices of the support vectors; this and the next four as :class:`sklearn.svm.SVR`'s.
    support_vectors_ : ndarray of shape (n_sv, n_features)
    n_support_ : ndarray of shape (1,), dtype int32
    dual_coef_ : ndarray of shape (1, n_sv)
        beta of the support vectors.
    intercept_ : ndarray of shape (1,)
    n_iter_ : int
        Working sets.
    support_counts_ : dict
        ``n_sv``, ``n_bounded_sv`` (``|alpha_i - alpha*_i| = C_i``), ``n_free_sv``.
    diagnostics_ : dict
        ``gap`` (G before each iteration), ``n_iter``, ``cache_hit_rate``, ``kernel_evaluations``,
        ``subproblem_steps`` (active-set steps in all), ``final_gap``, ``dual_objective``.

    Notes
    -----
    The inner loop is compiled by numba the first time
    :mod:`~svmrepro.algorithms.svr_decomposition_jit` is imported on a machine (about 20 s of
    CPU), then loaded from numba's on-disk cache (about 1 s per process, at import, not in ``fit``).

    References
    ----------
    P. Laskov, "An Improved Decomposition Algorithm for Regression Support Vector Machines",
    NIPS 12, 1999.

    Examples
    --------
    >>> from sklearn.datasets import make_regression
    >>> from svmrepro.algorithms import DecompositionSVR
    >>> X, y = make_regression(n_samples=200, n_features=4, noise=5.0, random_state=0)
    >>> model = DecompositionSVR(C=100.0).fit(X, y)
    >>> round(model.score(X, y), 3)
    0.987
    """

    _parameter_constraints: dict = {
        **EpsilonSVRBase._parameter_constraints,
        "tol": [Interval(Real, 0, None, closed="neither")],
        "q": [Interval(Integral, 2, None, closed="left")],
        "cache_size": [Interval(Integral, 1, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left"), None],
    }

    def __init__(self, *, kernel="rbf", gamma="scale", C=1.0, epsilon=0.1, tol=1e-3, q=20,
                 cache_size=5000, max_iter=None):
        self.kernel = kernel
        self.gamma = gamma
        self.C = C
        self.epsilon = epsilon
        self.tol = tol
        self.q = q
        self.cache_size = cache_size
        self.max_iter = max_iter

    def _validate_params(self):
        super()._validate_params()
        if self.q % 2:
            raise InvalidParameterError(
                f"The 'q' parameter of {type(self).__name__} must be an even int >= 2 (q/2 points "
                f"from each end of the mu-sets). Got {self.q!r} instead."
            )

    def fit(self, X, y, sample_weight=None):
        """Fit on (X, y); ``sample_weight`` scales C per sample, as :class:`sklearn.svm.SVR`."""
        self._validate_params()
        X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=True)
        C = self._box(X, sample_weight)
        self._gamma = resolve_gamma(self.gamma, X)
        cache = KernelCache(X, self.kernel, self._gamma, max(self.cache_size, self.q))
        with threadpool_limits(1, user_api="blas"):  # q x l products: threads cost more than they give
            state = decompose(cache, y, C, self.epsilon, self.q, self.tol, self.max_iter)
        if not state.converged:
            warnings.warn(
                f"DecompositionSVR stopped at max_iter={self.max_iter} with gap {state.gaps[-1]:.3g} > "
                f"tol={self.tol}", ConvergenceWarning, stacklevel=2,
            )
        self.n_iter_ = len(state.gaps) - int(state.converged)
        return self._set_solution(X, y, state.beta, state.phi, C, {
            "gap": state.gaps,
            "n_iter": self.n_iter_,
            "cache_hit_rate": cache.hit_rate,
            "kernel_evaluations": cache.kernel_evaluations,
            "subproblem_steps": state.subproblem_steps,
        })
