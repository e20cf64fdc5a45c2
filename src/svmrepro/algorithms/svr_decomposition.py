"""Laskov's maximal-inconsistency decomposition for epsilon-SVR (NIPS 1999).

Notation as in the paper, with beta_i = alpha_i - alpha*_i (alpha_i alpha*_i = 0 at every
iterate, so the pair is one number per point) and phi_i = y_i - sum_j beta_j K_ij (eq. 9):

- ``mu_sets``: the interval each point allows for mu (the bias), rules (10);
- the gap G = L - R, L the largest left end, R the smallest right end (sec. 4); the working set
  is optimal iff its mu-sets intersect, and the whole problem is solved to ``tol`` iff G <= tol
  (the same quantity LIBSVM stops on);
- ``working_set``: q/2 points with the largest left ends and q/2 with the smallest right ends,
  alpha_i and alpha*_i of a point together (sec. 2, "Maximal inconsistency algorithm");
- ``solve_subproblem``: sub-problem (2) solved exactly by a primal active-set method;
- ``decompose``: the loop, with kernel rows from :class:`~svmrepro.algorithms.kernel_cache.KernelCache`.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import Interval, InvalidParameterError, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data
from threadpoolctl import threadpool_limits

from svmrepro.algorithms.kernel_cache import KERNELS, KernelCache, KernelColumns, resolve_gamma
from svmrepro.metrics import BOUND_RTOL


def mu_sets(beta: np.ndarray, phi: np.ndarray, C: float, epsilon: float) -> tuple[np.ndarray, np.ndarray]:
    """Left and right ends of every point's mu-set, rules (10).

    alpha = alpha* = 0: [phi - eps, phi + eps]; 0 < alpha < C: {phi - eps}; alpha = C:
    (-inf, phi - eps]; 0 < alpha* < C: {phi + eps}; alpha* = C: [phi + eps, +inf).
    """
    below, above = phi - epsilon, phi + epsilon
    left = np.where(beta < 0, above, below)
    right = np.where(beta > 0, below, above)
    left[beta >= C] = -np.inf
    right[beta <= -C] = np.inf
    return left, right


def working_set(left: np.ndarray, right: np.ndarray, q: int) -> np.ndarray:
    """q/2 points with the largest left ends, then q/2 others with the smallest right ends."""
    n, half = left.size, q // 2
    if q >= n:
        return np.arange(n)
    top = np.argpartition(-left, q - 1)[:q]
    top = top[np.argsort(-left[top], kind="stable")][:half]
    low = np.argpartition(right, q - 1)[:q]  # q candidates: at most half of them are in top
    low = low[np.argsort(right[low], kind="stable")]
    return np.concatenate([top, low[~np.isin(low, top)][:half]])


def _eqp_step(Q: np.ndarray, g: np.ndarray) -> tuple[np.ndarray, bool]:
    """Minimise 1/2 p'Qp + g'p subject to sum(p) = 0: (Newton step, True), or, when the
    objective is unbounded along a zero-curvature direction, (that descent direction, False)."""
    w = np.full(g.size, 1.0 / np.sqrt(g.size))
    w[0] -= 1.0  # Householder reflection taking e_1 to the unit 1-vector: its other columns
    Z = np.eye(g.size)[:, 1:] - np.outer(w, w[1:]) * (2.0 / (w @ w))  # span {p: sum p = 0}
    curvature, V = np.linalg.eigh(Z.T @ Q @ Z)
    reduced = V.T @ (Z.T @ g)
    flat = curvature <= 1e-10 * max(curvature[-1], 0.0) + 1e-300
    if np.abs(reduced[flat]).max(initial=0.0) > 1e-12 * (1.0 + np.abs(reduced).max()):
        return -Z @ (V[:, flat] @ reduced[flat]), False
    return -Z @ (V[:, ~flat] @ (reduced[~flat] / curvature[~flat])), True


def solve_subproblem(Q, phi, beta, C, epsilon, max_steps=None) -> tuple[np.ndarray, int]:
    """Exact solution of sub-problem (2) on a working set; returns (beta, active-set steps).

    Minimises 1/2 b'Qb - r'b + eps |b|_1 over -C <= b <= C with sum(b) fixed, r = phi + Q beta:
    the dual (1) restricted to the working set, one variable per point. Each point is *free*
    inside (0, C) or (-C, 0), the side of the kink at 0 given by ``sign``, or *held* at -C, 0
    or C. A step minimises over the free points (:func:`_eqp_step`) and stops at the first
    bound it meets; at a minimum, a held point whose mu-set misses mu is released, or, with no
    free point, the most inconsistent pair, as in the outer loop. Convex, so the active-set
    iteration ends at the exact minimiser (Nocedal & Wright, *Numerical Optimization*, 2nd ed.,
    Algorithm 16.3); ``max_steps`` only guards against cycling in floating point.
    """
    m = beta.size
    beta, max_steps = beta.astype(float), max_steps or 50 + 10 * m
    r = phi + Q @ beta
    atol = 1e-11 * (1.0 + np.abs(r).max() + epsilon)
    sign = np.sign(beta)
    free = (beta != 0) & (np.abs(beta) < C)
    for step in range(1, max_steps + 1):
        phi_now = r - Q @ beta
        F = np.flatnonzero(free)
        g = epsilon * sign[F] - phi_now[F]  # gradient on the free points
        if F.size >= 2 and np.ptp(g) > atol:
            p, newton = _eqp_step(Q[np.ix_(F, F)], g)
            low, high = np.where(sign[F] > 0, 0.0, -C), np.where(sign[F] > 0, C, 0.0)
            with np.errstate(divide="ignore", invalid="ignore"):
                room = np.where(p > 0, (high - beta[F]) / p, np.where(p < 0, (low - beta[F]) / p, np.inf))
            room = np.maximum(room, 0.0)  # a point a rounding error past its bound cannot step back
            block = int(np.argmin(room))
            t = min(room[block], 1.0 if newton else np.inf)
            beta[F] += t * p
            if room[block] <= t:
                k = F[block]
                beta[k] = high[block] if p[block] > 0 else low[block]
                free[k], sign[k] = False, np.sign(beta[k])
            continue
        left, right = mu_sets(beta, phi_now, C, epsilon)
        if F.size:  # release the held point whose mu-set misses mu by most
            mu = np.mean(phi_now[F] - epsilon * sign[F])
            miss = np.where(free, -np.inf, np.maximum(left - mu, mu - right))
            release = [int(np.argmax(miss))]
            if miss[release[0]] <= atol:
                break
        else:  # all held: the most inconsistent pair, if any
            release = [int(np.argmax(left)), int(np.argmin(right))]
            if left[release[0]] - right[release[1]] <= atol:
                break
            mu = 0.5 * (left[release[0]] + right[release[1]])
        for k in release:
            up = left[k] > mu  # beta_k has to grow
            sign[k] = (1.0 if up else -1.0) if beta[k] == 0 else np.sign(beta[k])
            free[k] = True
    return beta, step


def intercept(beta, phi, C, epsilon) -> float:
    """mu of the solution: the mean over free SVs of phi -/+ eps, else the middle of [L, R]."""
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
    """The maximal-inconsistency algorithm (sec. 4) from beta = 0 until G <= tol."""
    state = Decomposition(beta=np.zeros(y.size), phi=np.asarray(y, dtype=float).copy())
    beta, phi = state.beta, state.phi
    while max_iter is None or len(state.gaps) < max_iter:
        left, right = mu_sets(beta, phi, C, epsilon)
        state.gaps.append(float(left.max() - right.min()))
        if state.gaps[-1] <= tol:
            state.converged = True
            break
        B = working_set(left, right, q)
        rows = cache.rows(B)
        new, steps = solve_subproblem(rows[:, B], phi[B], beta[B], C, epsilon)
        state.subproblem_steps += steps
        moved = new != beta[B]
        phi -= (new - beta[B])[moved] @ rows[moved]
        beta[B] = new
    return state


class EpsilonSVRBase(RegressorMixin, BaseEstimator):
    """Parameters, fitted attributes and ``predict`` shared by this paper's epsilon-SVR solvers.

    Fitted attributes as :class:`sklearn.svm.SVR`: ``support_``, ``support_vectors_``,
    ``dual_coef_`` (beta of the SVs, shape (1, n_SV)), ``intercept_`` (shape (1,)), ``n_iter_``;
    plus ``support_counts_`` (bounded: |alpha - alpha*| = C) and ``diagnostics_``.
    """

    _parameter_constraints: dict = {
        "kernel": [StrOptions(set(KERNELS))],
        "gamma": [StrOptions({"scale", "auto"}), Interval(Real, 0, None, closed="neither")],
        "C": [Interval(Real, 0, None, closed="neither")],
        "epsilon": [Interval(Real, 0, None, closed="left")],
    }

    def _set_solution(self, X, y, beta, phi, diagnostics: dict):
        self.support_ = np.flatnonzero(beta)
        self.support_vectors_ = X[self.support_]
        self._kernel_sv = KernelColumns(self.support_vectors_, self.kernel, self._gamma)
        self.dual_coef_ = beta[self.support_][None, :]
        self.intercept_ = np.array([intercept(beta, phi, self.C, self.epsilon)])
        bounded = int(np.sum(np.abs(beta) >= self.C * (1 - BOUND_RTOL)))
        n_sv = int(self.support_.size)
        self.support_counts_ = {"n_sv": n_sv, "n_bounded_sv": bounded, "n_free_sv": n_sv - bounded}
        left, right = mu_sets(beta, phi, self.C, self.epsilon)
        self.diagnostics_ = {
            **diagnostics,
            "final_gap": float(left.max() - right.min()),
            "dual_objective": dual_objective(beta, phi, y, self.epsilon),
        }
        return self

    def predict(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return self._kernel_sv(X) @ self.dual_coef_[0] + self.intercept_[0]


class DecompositionSVR(EpsilonSVRBase):
    """Epsilon-SVR trained by Laskov's maximal-inconsistency decomposition.

    Parameters
    ----------
    kernel : {"linear", "rbf"}, default="rbf"
    gamma : {"scale", "auto"} or float, default="scale"
        RBF width, k(x, z) = exp(-gamma |x - z|^2); as in :class:`sklearn.svm.SVR`.
    C : float, default=1.0
    epsilon : float, default=0.1
        Half width of the insensitive tube.
    tol : float, default=1e-3
        Stop when the gap G = L - R of the mu-sets is at most ``tol``.
    q : int, default=20
        Working-set size in points (2q variables); even, >= 2.
    cache_size : int, default=5000
        Kernel rows kept in the LRU cache, in samples.
    max_iter : int or None, default=None
        Limit on working sets; None for none. Stopping on it warns (ConvergenceWarning).

    Attributes
    ----------
    diagnostics_ : dict
        ``gap`` (G before each iteration), ``n_iter``, ``cache_hit_rate``, ``kernel_evaluations``,
        ``subproblem_steps`` (active-set steps in all), ``final_gap``, ``dual_objective``.

    References
    ----------
    P. Laskov, "An Improved Decomposition Algorithm for Regression Support Vector Machines",
    NIPS 12, 1999.
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

    def fit(self, X, y):
        self._validate_params()
        X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=True)
        self._gamma = resolve_gamma(self.gamma, X)
        cache = KernelCache(X, self.kernel, self._gamma, self.cache_size)
        with threadpool_limits(1, user_api="blas"):  # q x l products: threads cost more than they give
            state = decompose(cache, y, self.C, self.epsilon, self.q, self.tol, self.max_iter)
        if not state.converged:
            warnings.warn(
                f"DecompositionSVR stopped at max_iter={self.max_iter} with gap {state.gaps[-1]:.3g} > "
                f"tol={self.tol}", ConvergenceWarning, stacklevel=2,
            )
        self.n_iter_ = len(state.gaps) - int(state.converged)
        return self._set_solution(X, y, state.beta, state.phi, {
            "gap": state.gaps,
            "n_iter": self.n_iter_,
            "cache_hit_rate": cache.hit_rate,
            "kernel_evaluations": cache.kernel_evaluations,
            "subproblem_steps": state.subproblem_steps,
        })
