"""DecompositionSVR (Laskov 1999) and its full-QP baseline against LIBSVM, the KKT conditions and rules (10)."""

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.base import clone
from sklearn.datasets import make_friedman1
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import SVR
from sklearn.utils._param_validation import InvalidParameterError
from sklearn.utils.estimator_checks import parametrize_with_checks

from svmrepro.algorithms.full_qp_svr import FullQPSVR
from svmrepro.algorithms.kernel_cache import KernelCache
from svmrepro.algorithms.kernel_expansion import kernel_block
from svmrepro.algorithms.svr_decomposition import DecompositionSVR, dual_objective
from svmrepro.algorithms.svr_decomposition_jit import mu_sets, solve_subproblem, working_set
from svmrepro.build import build
from svmrepro.compose import compose_config
from svmrepro.errors import ConfigError
from svmrepro.metrics import support_counts

RNG = np.random.default_rng(0)
X_SMALL = RNG.normal(size=(150, 4))
Y_SMALL = np.sin(2 * X_SMALL[:, 0]) + 0.5 * X_SMALL[:, 1] + 0.2 * RNG.normal(size=150)
GAMMA = 0.5


def gram(X, kernel, gamma=GAMMA):
    return kernel_block(X, X, kernel=kernel, gamma=gamma, degree=3, coef0=0.0)


def full_beta(est, n):
    beta = np.zeros(n)
    beta[est.support_] = est.dual_coef_[0]
    return beta


def objective_of(est, X, y, kernel, epsilon):
    beta = full_beta(est, len(y))
    return dual_objective(beta, y - gram(X, kernel) @ beta, y, epsilon)


def expected_failed_checks(estimator):
    reason = (
        "gamma='scale' is 1 / (n_features X.var()) of the unweighted rows, as in sklearn.svm.SVR (which fails "
        "this check too): repeating rows changes gamma; test_integer_weights_equal_repeated_rows checks a fixed gamma"
    )
    return {"check_sample_weight_equivalence_on_dense_data": reason}


@parametrize_with_checks([DecompositionSVR(), FullQPSVR()], expected_failed_checks=expected_failed_checks)
def test_sklearn_estimator_contract(estimator, check):
    check(estimator)


def test_mu_sets_follow_rules_10():
    beta = np.array([0.0, 0.5, 1.0, -0.5, -1.0])  # alpha = alpha* = 0 | 0<alpha<C | alpha=C | 0<alpha*<C | alpha*=C
    left, right = mu_sets(beta, np.full(5, 0.3), np.ones(5), 0.1)
    assert_allclose(left, [0.2, 0.2, -np.inf, 0.4, 0.4])
    assert_allclose(right, [0.4, 0.2, 0.2, 0.4, np.inf])


# 0: beta=0, mu-set [0.8, 1.0]   1: beta=0, [0.0, 0.2]   2: 0<alpha<C, {0.3}
# 3: alpha=C, (-inf, 1.9]        4: alpha*=C, [-0.9, inf) 5: 0<alpha*<C, {0.25}
HAND_BETA = np.array([0.0, 0.0, 0.5, 1.0, -1.0, -0.5])
HAND_PHI = np.array([0.9, 0.1, 0.4, 2.0, -1.0, 0.15])


@pytest.mark.parametrize(
    ("q", "expected"),
    [
        (2, [0, 1]),  # L = 0.8 (point 0), R = 0.2 (point 1): the maximally inconsistent pair
        (4, [0, 2, 1, 5]),  # two largest left ends (0.8, 0.3), two smallest right ends of the rest (0.2, 0.25)
    ],
)
def test_working_set_takes_largest_left_and_smallest_right_ends(q, expected):
    left, right = mu_sets(HAND_BETA, HAND_PHI, np.ones(6), 0.1)
    assert left.max() - right.min() == pytest.approx(0.6)
    assert_array_equal(working_set(left, right, q), expected)


def test_working_set_takes_a_point_once_when_it_ends_both_lists():
    left = np.array([5.0, 4.0, 0.0, 1.0, 0.5])
    right = np.array([-1.0, 10.0, -2.0, 3.0, 0.0])
    assert_array_equal(working_set(left, right, 4), [0, 1, 2, 4])  # point 0 tops both lists


@pytest.mark.parametrize(("kernel", "epsilon"), [("rbf", 0.1), ("linear", 0.1), ("rbf", 0.0)])
def test_subproblem_is_solved_exactly(kernel, epsilon):
    """The active-set solver on a whole 12-point problem: the mu-sets end up intersecting."""
    X, y = X_SMALL[:12], Y_SMALL[:12]
    K = gram(X, kernel)  # the linear kernel is singular here (rank 4)
    beta, _ = solve_subproblem(K, y.copy(), np.zeros(12), np.ones(12), epsilon)
    left, right = mu_sets(beta, y - K @ beta, np.ones(12), epsilon)
    assert left.max() - right.min() <= 1e-9
    assert abs(beta.sum()) <= 1e-12 and np.abs(beta).max() <= 1.0


@pytest.mark.parametrize(
    ("kernel", "C", "epsilon"), [("rbf", 1.0, 0.1), ("rbf", 10.0, 0.05), ("linear", 0.1, 0.1), ("rbf", 0.1, 0.0)]
)
def test_matches_libsvm_objective_and_predictions(kernel, C, epsilon):
    params = dict(kernel=kernel, gamma=GAMMA, C=C, epsilon=epsilon, tol=1e-3)
    ours = DecompositionSVR(q=10, **params).fit(X_SMALL, Y_SMALL)
    ref = SVR(**params).fit(X_SMALL, Y_SMALL)
    w_ours = objective_of(ours, X_SMALL, Y_SMALL, kernel, epsilon)
    assert w_ours == pytest.approx(objective_of(ref, X_SMALL, Y_SMALL, kernel, epsilon), rel=1e-3)
    assert w_ours == pytest.approx(ours.diagnostics_["dual_objective"], rel=1e-9)
    assert_allclose(ours.predict(X_SMALL), ref.predict(X_SMALL), atol=5e-3)


@pytest.mark.parametrize(("kernel", "C"), [("rbf", 1.0), ("linear", 10.0)])
def test_kkt_conditions_hold_at_exit(kernel, C):
    tol, epsilon = 1e-3, 0.1
    est = DecompositionSVR(kernel=kernel, gamma=GAMMA, C=C, epsilon=epsilon, tol=tol, q=6).fit(X_SMALL, Y_SMALL)
    beta = full_beta(est, len(Y_SMALL))
    phi = Y_SMALL - gram(X_SMALL, kernel) @ beta
    assert abs(beta.sum()) <= 1e-10 and np.abs(beta).max() <= C  # the constraints of (1)
    left, right = mu_sets(beta, phi, np.full(beta.size, C), epsilon)
    assert left.max() - right.min() <= tol
    mu = est.intercept_[0]  # the bias lies in every point's mu-set, up to tol
    assert np.all(left - tol <= mu) and np.all(mu <= right + tol)
    gaps = est.diagnostics_["gap"]
    assert len(gaps) == est.n_iter_ + 1 and gaps[-1] <= tol < gaps[0]


def test_full_qp_baseline_matches_libsvm():
    pytest.importorskip("cvxopt")
    params = dict(kernel="rbf", gamma=GAMMA, C=1.0, epsilon=0.1)
    full = FullQPSVR(**params).fit(X_SMALL, Y_SMALL)
    ref = SVR(tol=1e-3, **params).fit(X_SMALL, Y_SMALL)
    assert objective_of(full, X_SMALL, Y_SMALL, "rbf", 0.1) == pytest.approx(
        objective_of(ref, X_SMALL, Y_SMALL, "rbf", 0.1), rel=1e-3
    )
    assert full.diagnostics_["final_gap"] <= 1e-2
    assert abs(full.support_counts_["n_sv"] - ref.support_.size) <= 2
    assert_allclose(full.predict(X_SMALL), ref.predict(X_SMALL), atol=5e-3)


def test_support_counts_count_bounded_as_beta_at_C():
    est = DecompositionSVR(gamma=GAMMA, C=0.1, epsilon=0.1).fit(X_SMALL, Y_SMALL)
    at_c = int(np.sum(np.abs(est.dual_coef_) >= 0.1 * (1 - 1e-12)))
    assert support_counts(est) == {"n_sv": est.support_.size, "n_bounded_sv": at_c, "n_free_sv": est.support_.size - at_c}
    assert 0 < at_c < est.support_.size


def test_kernel_cache_keeps_the_least_recently_used_rows_out():
    X = X_SMALL[:5]
    full = gram(X, "rbf")
    cache = KernelCache(X, "rbf", GAMMA, capacity=2)

    def rows(index):
        return cache.table[cache.slots(np.array(index))]

    assert_allclose(rows([0, 1]), full[[0, 1]])
    assert_allclose(rows([0]), full[[0]])  # hit; row 1 is now the oldest
    rows([2])  # evicts row 1
    assert (cache.hits, cache.misses) == (1, 3)
    assert_allclose(rows([0, 1]), full[[0, 1]])  # 0 hit, 1 miss (evicts 2)
    assert (cache.hits, cache.misses, cache.kernel_evaluations) == (2, 4, 4 * 5)
    assert cache.hit_rate == pytest.approx(2 / 6)
    with pytest.raises(ValueError, match="3 rows requested at once from a cache of 2"):
        cache.slots(np.array([4, 3, 0]))


def test_decomposition_reports_its_cache_and_kernel_work():
    est = DecompositionSVR(gamma=GAMMA, q=4, cache_size=30).fit(X_SMALL, Y_SMALL)
    diagnostics = est.diagnostics_
    assert 0 < diagnostics["cache_hit_rate"] < 1
    assert diagnostics["kernel_evaluations"] % len(Y_SMALL) == 0
    assert diagnostics["kernel_evaluations"] < 4 * est.n_iter_ * len(Y_SMALL)


def test_max_iter_stops_with_a_convergence_warning():
    with pytest.warns(ConvergenceWarning, match="max_iter=3"):
        est = DecompositionSVR(gamma=GAMMA, max_iter=3).fit(X_SMALL, Y_SMALL)
    assert est.n_iter_ == 3


@pytest.mark.parametrize(
    ("params", "name"),
    [({"q": 3}, "q"), ({"q": 0}, "q"), ({"C": 0.0}, "C"), ({"C": -1.0}, "C"), ({"epsilon": -0.1}, "epsilon")],
)
def test_bad_parameters_are_clear_errors(params, name):
    with pytest.raises(InvalidParameterError, match=f"'{name}' parameter of DecompositionSVR"):
        DecompositionSVR(**params).fit(X_SMALL, Y_SMALL)


def test_odd_q_is_refused_at_build_time_naming_the_key():
    with pytest.raises(ConfigError, match=r"algorithm\.q=3 .*even"):
        build(compose_config(["algorithm=decomposition_svr", "algorithm.q=3"]))


def test_no_phantom_support_vector_and_libsvm_intercept_when_all_are_bounded():
    """Issue 17: a beta of 1e-18 left by rounding counted as a free SV and pinned the bias to it."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 3))
    y = X[:, 0] + 0.1 * rng.normal(size=50)
    params = dict(gamma=0.3, C=1e-4, epsilon=0.1)
    ours = DecompositionSVR(**params).fit(X, y)
    ref = SVR(**params).fit(X, y)
    assert_array_equal(ours.support_, ref.support_)
    assert ours.support_counts_["n_free_sv"] == 0
    assert_array_equal(np.abs(ours.dual_coef_), 1e-4)  # exactly on the bound
    assert ours.intercept_[0] == pytest.approx(ref.intercept_[0], abs=1e-9)  # the middle of [L, R]
    assert_allclose(ours.predict(X), ref.predict(X), atol=1e-9)


def test_full_qp_keeps_the_equality_after_snapping_to_bounds():
    """Issue 17: snapping CVXOPT's alphas onto their bounds broke sum(beta) = 0 (1.1e-3 here), and
    the objective then exceeded the optimum."""
    pytest.importorskip("cvxopt")
    X, y = make_friedman1(n_samples=100, random_state=0)
    params = dict(kernel="rbf", gamma=0.1, C=10.0, epsilon=0.1)
    full = FullQPSVR(**params).fit(X, y)
    optimum = SVR(tol=1e-10, **params).fit(X, y)
    K = kernel_block(X, X, kernel="rbf", gamma=0.1, degree=3, coef0=0.0)
    beta = full_beta(full, len(y))
    assert abs(beta.sum()) < 1e-10
    w_full = dual_objective(beta, y - K @ beta, y, 0.1)
    w_opt = dual_objective(full_beta(optimum, len(y)), y - K @ full_beta(optimum, len(y)), y, 0.1)
    assert w_opt - 1e-2 <= w_full <= w_opt + 1e-9


WEIGHTS = np.random.default_rng(1).choice([0.0, 0.5, 1.0, 2.0, 3.0], size=Y_SMALL.size)


@pytest.mark.parametrize(("estimator", "atol"), [(DecompositionSVR(tol=1e-8), 1e-6), (FullQPSVR(), 1e-3)])
def test_sample_weight_scales_C_per_sample_as_libsvm(estimator, atol):
    if isinstance(estimator, FullQPSVR):
        pytest.importorskip("cvxopt")
    X, y, params = X_SMALL[:80], Y_SMALL[:80], dict(kernel="rbf", gamma=GAMMA, C=1.0, epsilon=0.1)
    ours = estimator.set_params(**params).fit(X, y, sample_weight=WEIGHTS[:80])
    ref = SVR(tol=1e-8, **params).fit(X, y, sample_weight=WEIGHTS[:80])
    assert not np.isin(np.flatnonzero(WEIGHTS[:80] == 0), ours.support_).any()  # weight 0: not a point
    assert np.all(np.abs(ours.dual_coef_[0]) <= WEIGHTS[:80][ours.support_] + 1e-12)
    assert_allclose(ours.predict(X), ref.predict(X), atol=atol)  # FullQPSVR: to CVXOPT's accuracy
    unweighted = clone(ours).fit(X, y)
    assert np.abs(unweighted.predict(X) - ours.predict(X)).max() > 1e-2  # the weights mattered


def test_integer_weights_equal_repeated_rows():
    X, y = X_SMALL[:60], Y_SMALL[:60]
    counts = WEIGHTS[:60].astype(int)
    params = dict(gamma=GAMMA, C=1.0, epsilon=0.1, tol=1e-8)
    weighted = DecompositionSVR(**params).fit(X, y, sample_weight=counts)
    repeated = DecompositionSVR(**params).fit(np.repeat(X, counts, axis=0), np.repeat(y, counts))
    assert_allclose(weighted.predict(X), repeated.predict(X), atol=1e-7)
