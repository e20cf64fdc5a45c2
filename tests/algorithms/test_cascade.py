import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import SVC
from sklearn.utils._param_validation import InvalidParameterError
from sklearn.utils.estimator_checks import parametrize_with_checks

from svmrepro.algorithms.cascade import CascadeSVC, cascade_subproblems, deal, split_classes
from svmrepro.metrics import support_counts

# a 2x2 checkerboard of 600 points (the paper's Fig. 2, small), in random order
_rng = np.random.default_rng(0)
X = _rng.uniform(0, 200, size=(600, 2))
y = np.where((X[:, 0] < 100) == (X[:, 1] < 100), 1, -1)
SVM = dict(kernel="rbf", C=1000.0, gamma=1e-3)
# an odd class count, so ceil(r * L) matters
Y_ODD = np.array([1] * 7 + [-1] * 10)


@pytest.mark.parametrize("r", [0.1, 0.3, 0.5])
def test_split_is_eq_1_first_ceil_r_of_each_class_in_input_order(r):
    (P1, P2), (N1, N2) = split_classes(Y_ODD, r)
    assert len(P1) == np.ceil(r * 7) and len(N1) == np.ceil(r * 10)
    np.testing.assert_array_equal(np.concatenate([P1, P2]), np.flatnonzero(Y_ODD > 0))
    np.testing.assert_array_equal(np.concatenate([N1, N2]), np.flatnonzero(Y_ODD < 0))


@pytest.mark.parametrize("r", [0.1, 0.5])
def test_subproblems_are_eq_2_and_partition_as_the_paper_says(r):
    (P1, P2), (N1, N2) = split_classes(Y_ODD, r)
    [[T1, T2], [T3, T4]] = cascade_subproblems(Y_ODD, r)
    for T, (P, N) in zip((T1, T2, T3, T4), ((P1, N1), (P2, N2), (P1, N2), (P2, N1))):
        np.testing.assert_array_equal(T, np.sort(np.concatenate([P, N])))
    assert not set(T1) & set(T2) and not set(T3) & set(T4)
    counts = np.bincount(np.concatenate([T1, T2, T3, T4]), minlength=len(Y_ODD))
    np.testing.assert_array_equal(counts, 2)  # every point in exactly two subproblems


def test_k_parts_per_class_give_k_matchings_that_each_cover_the_data_once():
    groups = cascade_subproblems(Y_ODD, k=3)
    assert [len(g) for g in groups] == [3, 3, 3]
    for group in groups:
        np.testing.assert_array_equal(np.sort(np.concatenate(group)), np.arange(len(Y_ODD)))
    pairs = {(tuple(np.intersect1d(T, np.flatnonzero(Y_ODD > 0))), tuple(np.intersect1d(T, np.flatnonzero(Y_ODD < 0))))
             for group in groups for T in group}
    assert len(pairs) == 9  # every (P_i, N_j) pairing once


def test_graf_parts_are_stratified_and_partition_the_data():
    parts = deal(Y_ODD, 3)
    np.testing.assert_array_equal(np.sort(np.concatenate(parts)), np.arange(len(Y_ODD)))
    assert all(set(Y_ODD[p]) == {-1, 1} for p in parts)


def test_final_svm_is_trained_on_sv12_u_sv34_and_its_svs_come_from_there():
    model = CascadeSVC(**SVM).fit(X, y)
    step1, step2, (final,) = model.steps_
    assert [s.name for s in step1] == ["T1", "T2", "T3", "T4"] and [s.name for s in step2] == ["T12", "T34"]
    np.testing.assert_array_equal(step2[0].indices, np.union1d(step1[0].support, step1[1].support))
    np.testing.assert_array_equal(step2[1].indices, np.union1d(step1[2].support, step1[3].support))
    sv12_u_sv34 = np.union1d(step2[0].support, step2[1].support)
    np.testing.assert_array_equal(final.indices, sv12_u_sv34)
    assert set(model.support_) <= set(sv12_u_sv34)
    np.testing.assert_array_equal(model.support_vectors_, X[model.support_])
    assert model.support_counts_ == support_counts(model.final_estimator_)
    assert model.support_counts_["n_sv"] == len(model.support_)


def test_cascade_matches_the_standard_svm_on_an_easy_problem():
    standard = SVC(**SVM).fit(X, y)
    for strategy in ("wen_lu", "graf"):
        cascade = CascadeSVC(**SVM, strategy=strategy, n_subsets=4).fit(X, y)
        assert np.mean(cascade.predict(X) == standard.predict(X)) > 0.98
        assert len(cascade.support_) <= 1.2 * len(standard.support_)


@pytest.mark.parametrize("params", [{}, {"strategy": "graf", "n_subsets": 4}])
def test_parallel_and_serial_runs_give_identical_models(params):
    serial = CascadeSVC(**SVM, **params, n_jobs=1).fit(X, y)
    parallel = CascadeSVC(**SVM, **params, n_jobs=2).fit(X, y)
    np.testing.assert_array_equal(serial.support_, parallel.support_)
    np.testing.assert_array_equal(serial.final_estimator_.dual_coef_, parallel.final_estimator_.dual_coef_)
    np.testing.assert_array_equal(serial.decision_function(X), parallel.decision_function(X))


@pytest.mark.parametrize("r", [0.0, -0.1, 0.51, 1.0])
def test_r_outside_0_to_half_is_refused_naming_r(r):
    message = r"'r' parameter of CascadeSVC must be a float in the range \(0.0, 0.5\]"
    with pytest.raises(InvalidParameterError, match=message):
        CascadeSVC(r=r).fit(X, y)


def test_too_small_classes_and_multiclass_are_clear_errors():
    with pytest.raises(ValueError, match="class \\+1 has 1"):
        CascadeSVC().fit(X[:4], [1, -1, -1, -1])
    with pytest.raises(ValueError, match="Only binary classification"):
        CascadeSVC().fit(X[:6], [0, 1, 2, 0, 1, 2])
    with pytest.raises(ValueError, match="r=0.3 is only used with k=2"):
        CascadeSVC(k=3, r=0.3).fit(X, y)


def test_large_step1_problems_are_split_again():
    model = CascadeSVC(**SVM, max_subproblem_size=200).fit(X, y)
    step1 = model.steps_[0]
    assert all(sub.inner is not None for sub in step1)  # 300 > 200: each solved by a cascade
    inner = step1[0].inner
    assert [len(s) for s in inner] == [4, 2, 1] and max(len(s.indices) for s in inner[0]) <= 200
    np.testing.assert_array_equal(step1[0].support, inner[-1][0].support)
    assert model.diagnostics_["subproblems"]["step1.T1"]["inner"]["step1.T1"]["n_train"] == len(inner[0][0].indices)
    assert np.mean(model.predict(X) == y) > 0.97


def test_diagnostics_have_table_6_layout_and_the_critical_path():
    d = CascadeSVC(**SVM).fit(X, y).diagnostics_
    assert d["step1.T1.n_train"] + d["step1.T2.n_train"] == len(y)
    per_step = [max(d[f"step1.T{i}.fit_time_s"] for i in range(1, 5)),
                max(d["step2.T12.fit_time_s"], d["step2.T34.fit_time_s"]), d["step3.Tfinal.fit_time_s"]]
    assert d["critical_path_time_s"] == pytest.approx(sum(per_step))
    assert d["step_max_time_s"] == pytest.approx(per_step)
    assert d["step_n_sv"][2] == d["step3.Tfinal.n_sv"]
    assert d["total_subfit_time_s"] >= d["critical_path_time_s"]


def test_graf_feedback_stops_when_the_svs_are_stable_or_warns():
    model = CascadeSVC(**SVM, strategy="graf", n_subsets=4).fit(X, y)
    assert model.converged_ and model.diagnostics_["n_passes"] >= 2
    assert len(model.steps_) == 3 * model.diagnostics_["n_passes"]  # layers of 4, 2, 1 SVMs per pass
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        CascadeSVC(**SVM, strategy="graf", n_subsets=4, max_passes=1).fit(X, y)  # one pass: no warning
    with pytest.warns(ConvergenceWarning, match="max_passes=2"):
        CascadeSVC(**SVM, strategy="graf", n_subsets=4, max_passes=2, tol=1.0).fit(X, y)


@parametrize_with_checks([CascadeSVC(), CascadeSVC(strategy="graf", n_subsets=2)])
def test_sklearn_estimator_contract(estimator, check):
    check(estimator)
