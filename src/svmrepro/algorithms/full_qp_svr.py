"""Laskov's "no decomposition" baseline: the whole 2l-variable SVR dual to an off-the-shelf QP solver.

Problem (1) of Laskov (1999) in the variables (alpha, alpha*), as the paper's baseline handed
it to a general-purpose solver: here CVXOPT's interior-point ``solvers.qp``, on the dense
2l x 2l Hessian [[K, -K], [-K, K]] (its cost grows like (2l)^3 per iteration, and its memory
like (2l)^2). An interior point never lands exactly on a bound: a variable is put on its bound
when its slack there is smaller than the bound's multiplier (strict complementarity, as CVXOPT
returns both), what that moves is taken back from the free points so that sum(beta) = 0 still
holds (:func:`restore_equality`), and the intercept then comes from the mu-sets as in
:class:`~svmrepro.algorithms.svr_decomposition.DecompositionSVR`. CVXOPT's default accuracy
(relative gap 1e-6) leaves a mu-set gap G of about 1e-3, the decomposition's ``tol``.
"""

from __future__ import annotations

import warnings
from numbers import Integral

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import validate_data

from svmrepro.algorithms.kernel_cache import resolve_gamma
from svmrepro.algorithms.kernel_expansion import kernel_block
from svmrepro.algorithms.svr_decomposition import EpsilonSVRBase


def restore_equality(beta, C):
    """Spread sum(beta) evenly over the free points (0 < |beta_i| < C_i), in place, so that the
    equality of problem (1) holds again; a point pushed past its box stays on it and the rest is
    spread again."""
    free = (beta != 0) & (np.abs(beta) < C)
    while free.any():
        beta[free] -= beta.sum() / np.count_nonzero(free)
        over = free & (np.abs(beta) > C)
        if not over.any():
            break
        beta[over] = np.clip(beta[over], -C[over], C[over])
        free &= ~over
    return beta


def solve_full_dual(K, y, C, epsilon, max_iter=100):
    """(beta = alpha - alpha*, CVXOPT's solution dict) of problem (1) by CVXOPT's interior-point QP.

    ``C`` holds each point's box C_i. Rows of the inequality G z <= h: first z <= C, then
    -z <= 0; each alpha goes to the bound whose slack is below its multiplier, and
    :func:`restore_equality` makes sum(beta) = 0 again.
    """
    try:  # needed only here
        from cvxopt import matrix, solvers, spmatrix
    except ImportError as exc:
        raise ImportError("FullQPSVR needs CVXOPT: pip install 'cvxopt>=1.3'") from exc

    n = y.size
    hessian = np.block([[K, -K], [-K, K]])
    linear = np.concatenate([epsilon - y, epsilon + y])
    box = spmatrix([1.0] * (2 * n) + [-1.0] * (2 * n), range(4 * n), [*range(2 * n)] * 2)
    limits = np.concatenate([C, C, np.zeros(2 * n)])
    equality = matrix(np.concatenate([np.ones(n), -np.ones(n)]), (1, 2 * n))
    solution = solvers.qp(
        matrix(hessian), matrix(linear), box, matrix(limits), equality, matrix(0.0),
        options={"show_progress": False, "maxiters": int(max_iter)},
    )
    z, slack, multiplier = (np.asarray(solution[key]).ravel() for key in ("x", "s", "z"))
    at_bound = slack < multiplier
    z = np.where(at_bound[2 * n :], 0.0, np.where(at_bound[: 2 * n], np.concatenate([C, C]), z))
    return restore_equality(z[:n] - z[n:], C), solution


class FullQPSVR(EpsilonSVRBase):
    """Epsilon-SVR with its whole dual solved at once by CVXOPT (Laskov's "no dcmp" column).

    Parameters
    ----------
    kernel, gamma, C, epsilon :
        As :class:`~svmrepro.algorithms.svr_decomposition.DecompositionSVR`.
    max_iter : int, default=100
        Interior-point iterations (CVXOPT's ``maxiters``); stopping on it warns.

    Attributes
    ----------
    support_ : ndarray
        Indices of the support vectors; this and the next five as
        :class:`~svmrepro.algorithms.svr_decomposition.DecompositionSVR`'s.
    support_vectors_ : ndarray of shape (n_sv, n_features)
    n_support_ : ndarray of shape (1,), dtype int32
    dual_coef_ : ndarray of shape (1, n_sv)
    intercept_ : ndarray of shape (1,)
    support_counts_ : dict
    n_iter_ : int
        Interior-point iterations.
    diagnostics_ : dict
        ``ipm_iterations``, ``ipm_relative_gap`` (CVXOPT's), ``final_gap`` (the mu-set gap G of
        the solution on its bounds, comparable with DecompositionSVR's ``tol``), ``dual_objective``.

    Examples
    --------
    >>> from sklearn.datasets import make_regression
    >>> from svmrepro.algorithms import FullQPSVR
    >>> X, y = make_regression(n_samples=200, n_features=4, noise=5.0, random_state=0)
    >>> model = FullQPSVR(C=100.0).fit(X, y)
    >>> round(model.score(X, y), 3)
    0.987
    """

    _parameter_constraints: dict = {
        **EpsilonSVRBase._parameter_constraints,
        "max_iter": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(self, *, kernel="rbf", gamma="scale", C=1.0, epsilon=0.1, max_iter=100):
        self.kernel = kernel
        self.gamma = gamma
        self.C = C
        self.epsilon = epsilon
        self.max_iter = max_iter

    def fit(self, X, y, sample_weight=None):
        """Fit on (X, y); ``sample_weight`` scales C per sample, as :class:`sklearn.svm.SVR`."""
        self._validate_params()
        X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=True)
        C = self._box(X, sample_weight)
        self._gamma = resolve_gamma(self.gamma, X)
        K = kernel_block(X, X, kernel=self.kernel, gamma=self._gamma, degree=3, coef0=0.0)
        beta, solution = solve_full_dual(K, y, C, self.epsilon, self.max_iter)
        if solution["status"] != "optimal":
            warnings.warn(f"CVXOPT stopped with status {solution['status']!r}", ConvergenceWarning, stacklevel=2)
        self.n_iter_ = int(solution["iterations"])
        phi = y - K @ beta
        return self._set_solution(X, y, beta, phi, C, {
            "ipm_iterations": self.n_iter_,
            "ipm_relative_gap": float(solution["relative gap"] or np.nan),
        })
