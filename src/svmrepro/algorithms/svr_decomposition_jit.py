"""The compiled inner loop of Laskov's decomposition (NIPS 1999): mu-sets, working set, sub-problem.

Notation as in the paper, with beta_i = alpha_i - alpha*_i (alpha_i alpha*_i = 0 at every
iterate, so the pair is one number per point), phi_i = y_i - sum_j beta_j K_ij (eq. 9) and
C_i = C * sample_weight_i the box of point i (LIBSVM's per-sample C):

- :func:`mu_sets`: the interval each point allows for mu (the bias), rules (10);
- :func:`working_set`: q/2 points with the largest left ends and q/2 with the smallest right
  ends, alpha_i and alpha*_i of a point together (sec. 4, "Maximal inconsistency algorithm");
- :func:`solve_subproblem`: sub-problem (2) solved exactly by a primal active-set method;
- :func:`reoptimise`: one iteration's "re-optimize the working set" on cached kernel rows, with
  phi updated by the changed variables only.

A decomposition runs thousands of iterations on working sets of 20 points, so the per-call
overhead of numpy on such small arrays, not arithmetic, is what costs: these functions are
compiled by numba when this module is imported (explicit signatures; ``cache=True``: compiled
once per installation, then loaded from disk), so a first ``fit`` does not pay for it.
"""

from __future__ import annotations

import numpy as np
from numba import njit

#: a coefficient within SNAP_RTOL * C_i of 0 or of +-C_i is rounding left by a step: it is put
#: on that bound (a value of 1e-18 would otherwise count as a support vector and fix the bias)
SNAP_RTOL = 1e-12


@njit("UniTuple(float64[::1], 2)(float64[::1], float64[::1], float64[::1], float64)", cache=True)
def mu_sets(beta, phi, C, epsilon):
    """Left and right ends of every point's mu-set, rules (10); ``C`` holds each point's C_i.

    alpha = alpha* = 0: [phi - eps, phi + eps]; 0 < alpha < C: {phi - eps}; alpha = C:
    (-inf, phi - eps]; 0 < alpha* < C: {phi + eps}; alpha* = C: [phi + eps, +inf).
    """
    left, right = np.empty_like(phi), np.empty_like(phi)
    for i in range(phi.size):
        below, above = phi[i] - epsilon, phi[i] + epsilon
        left[i] = -np.inf if beta[i] >= C[i] else above if beta[i] < 0 else below
        right[i] = np.inf if beta[i] <= -C[i] else below if beta[i] > 0 else above
    return left, right


@njit(cache=True)
def _insert(order, values, count, size, i, key):
    """Put point i with ``key`` into ``order[:count]`` kept sorted by ``values`` ascending (ties:
    earlier first), at most ``size`` long; returns the new count."""
    if count == size and key >= values[size - 1]:
        return count
    k = min(count, size - 1)
    while k > 0 and values[k - 1] > key:
        order[k], values[k] = order[k - 1], values[k - 1]
        k -= 1
    order[k], values[k] = i, key
    return min(count + 1, size)


@njit("intp[::1](float64[::1], float64[::1], intp)", cache=True)
def working_set(left, right, q):
    """q/2 points with the largest left ends (largest first), then q/2 others with the smallest
    right ends (smallest first); ties go to the lower index. All points when q >= n."""
    n, half = left.size, q // 2
    if q >= n:
        return np.arange(n)
    top, top_key = np.empty(half, np.intp), np.empty(half)
    count = 0
    for i in range(n):
        count = _insert(top, top_key, count, half, i, -left[i])
    taken = np.zeros(n, np.bool_)
    taken[top] = True
    low, low_key = np.empty(half, np.intp), np.empty(half)
    count = 0
    for i in range(n):
        if not taken[i]:
            count = _insert(low, low_key, count, half, i, right[i])
    return np.concatenate((top, low))


@njit(cache=True)
def _cholesky_solve(H, b):
    """(x, True) with H x = b for a symmetric H whose Cholesky pivots are all safely positive
    (relative to its diagonal), else (b, False)."""
    m = b.size
    L = np.zeros_like(H)
    floor = 1e-10 * np.abs(np.diag(H)).max()
    for j in range(m):
        for i in range(j, m):
            total = H[i, j]
            for k in range(j):
                total -= L[i, k] * L[j, k]
            if i == j:
                if not total > floor:
                    return b, False
                L[j, j] = np.sqrt(total)
            else:
                L[i, j] = total / L[j, j]
    x = b.copy()
    for i in range(m):  # L z = b, then L' x = z
        for k in range(i):
            x[i] -= L[i, k] * x[k]
        x[i] /= L[i, i]
    for i in range(m - 1, -1, -1):
        for k in range(i + 1, m):
            x[i] -= L[k, i] * x[k]
        x[i] /= L[i, i]
    return x, True


@njit(cache=True)
def _eqp_step(Q, g):
    """Minimise 1/2 p'Qp + g'p subject to sum(p) = 0: (Newton step, True), or, when the
    objective is unbounded along a zero-curvature direction, (that descent direction, False).

    On Z, an orthonormal basis of {p: sum p = 0}, the reduced Hessian Z'QZ is positive definite
    for an RBF kernel: a Cholesky solve gives the Newton step; an eigendecomposition handles the
    (near-)singular case of a linear kernel.
    """
    m = g.size
    w = np.full(m, 1.0 / np.sqrt(m))
    w[0] -= 1.0  # Householder reflection taking e_1 to the unit 1-vector: its other columns
    Z = np.ascontiguousarray(np.eye(m)[:, 1:] - np.outer(w, w[1:]) * (2.0 / (w @ w)))  # span {p: sum p = 0}
    ZT = np.ascontiguousarray(Z.T)
    H, reduced = ZT @ Q @ Z, ZT @ g
    x, definite = _cholesky_solve(H, reduced)
    if definite:
        return -(Z @ x), True
    curvature, V = np.linalg.eigh(H)
    reduced = V.T @ reduced
    flat = curvature <= 1e-10 * max(curvature[-1], 0.0) + 1e-300
    if flat.any() and np.abs(reduced[flat]).max() > 1e-12 * (1.0 + np.abs(reduced).max()):
        return -(Z @ (np.ascontiguousarray(V[:, flat]) @ reduced[flat])), False
    steep = ~flat
    return -(Z @ (np.ascontiguousarray(V[:, steep]) @ (reduced[steep] / curvature[steep]))), True


@njit("Tuple((float64[::1], intp))(float64[:, ::1], float64[::1], float64[::1], float64[::1], float64)", cache=True)
def solve_subproblem(Q, phi, beta, C, epsilon):
    """Exact solution of sub-problem (2) on a working set; returns (beta, active-set steps).

    Minimises 1/2 b'Qb - r'b + eps |b|_1 over -C_i <= b_i <= C_i with sum(b) fixed,
    r = phi + Q beta: the dual (1) restricted to the working set, one variable per point. Each
    point is *free* inside (0, C_i) or (-C_i, 0), the side of the kink at 0 given by ``sign``, or
    *held* at -C_i, 0 or C_i. A step minimises over the free points (:func:`_eqp_step`) and stops
    at the first bound it meets (points within ``SNAP_RTOL`` of a bound land on it too); at a
    minimum, a held point whose mu-set misses mu is released, or, with no free point, the most
    inconsistent pair, as in the outer loop. Convex, so the active-set iteration ends at the
    exact minimiser (Nocedal & Wright, *Numerical Optimization*, 2nd ed., Algorithm 16.3); a
    limit of 50 + 10 m steps only guards against cycling in floating point.
    """
    m = beta.size
    beta, max_steps = beta.copy(), 50 + 10 * m
    r = phi + Q @ beta
    atol = 1e-11 * (1.0 + np.abs(r).max() + epsilon)
    snap = SNAP_RTOL * C
    sign = np.sign(beta)
    free = (beta != 0) & (np.abs(beta) < C)
    step = 0
    while step < max_steps:
        step += 1
        phi_now = r - Q @ beta
        F = np.flatnonzero(free)
        g = epsilon * sign[F] - phi_now[F]  # gradient on the free points
        if F.size >= 2 and g.max() - g.min() > atol:
            p, newton = _eqp_step(np.ascontiguousarray(Q[F][:, F]), g)
            t, block = 1.0 if newton else np.inf, -1
            for a in range(F.size):
                k = F[a]
                high = C[k] if sign[k] > 0 else 0.0
                low = 0.0 if sign[k] > 0 else -C[k]
                room = (high - beta[k]) / p[a] if p[a] > 0 else (low - beta[k]) / p[a] if p[a] < 0 else np.inf
                room = max(room, 0.0)  # a point a rounding error past its bound cannot step back
                if room < t or (block < 0 and room <= t):  # the first point to meet its bound
                    t, block = room, a
            for a in range(F.size):
                k = F[a]
                beta[k] += t * p[a]
                if a == block:  # lands exactly on the bound it met
                    beta[k] = (C[k] if sign[k] > 0 else 0.0) if p[a] > 0 else (0.0 if sign[k] > 0 else -C[k])
                elif abs(beta[k]) <= snap[k]:
                    beta[k] = 0.0
                elif abs(beta[k]) >= C[k] - snap[k]:
                    beta[k] = C[k] if beta[k] > 0 else -C[k]
                else:
                    continue
                free[k], sign[k] = False, np.sign(beta[k])
            continue
        left, right = mu_sets(beta, phi_now, C, epsilon)
        if F.size:  # release the held point whose mu-set misses mu by most
            mu = np.mean(phi_now[F] - epsilon * sign[F])
            miss = np.where(free, -np.inf, np.maximum(left - mu, mu - right))
            first = int(np.argmax(miss))
            if miss[first] <= atol:
                break
            release = np.array([first])
        else:  # all held: the most inconsistent pair, if any
            release = np.array([int(np.argmax(left)), int(np.argmin(right))])
            if left[release[0]] - right[release[1]] <= atol:
                break
            mu = 0.5 * (left[release[0]] + right[release[1]])
        for k in release:
            if beta[k] == 0:
                sign[k] = 1.0 if left[k] > mu else -1.0  # the side beta_k has to move to
            free[k] = True
    return beta, step


@njit("intp(float64[:, ::1], intp[::1], intp[::1], float64[::1], float64[::1], float64[::1], float64)", cache=True)
def reoptimise(rows, slots, B, beta, phi, C, epsilon):
    """Solve sub-problem (2) on the working set ``B``, whose kernel rows are ``rows[slots]``, and
    update ``beta`` and ``phi`` in place (phi by the rows of the changed variables only); returns
    the sub-problem's active-set steps."""
    m, n = B.size, phi.size
    Q = np.empty((m, m))
    for a in range(m):
        for b in range(m):
            Q[a, b] = rows[slots[a], B[b]]
    new, steps = solve_subproblem(Q, phi[B], beta[B], C[B], epsilon)
    for a in range(m):
        change = new[a] - beta[B[a]]
        if change != 0.0:
            row = rows[slots[a]]
            for j in range(n):
                phi[j] -= change * row[j]
            beta[B[a]] = new[a]
    return steps
