"""Blocked kernel expansions give LIBSVM's decision values (svmrepro.algorithms.kernel_expansion)."""

import numpy as np
import pytest
from scipy import sparse
from sklearn.datasets import make_classification, make_friedman1
from sklearn.svm import SVC, SVR, NuSVC

from svmrepro.algorithms.kernel_expansion import (
    block_rows,
    decision_values,
    kernel_expansion,
    predict,
    supports_expansion,
)

X, y = make_classification(n_samples=400, n_features=8, random_state=0)
X_NEW = np.random.default_rng(1).normal(size=(257, 8))


def relative_gap(ours, theirs):
    return np.max(np.abs(ours - theirs)) / np.max(np.abs(theirs))


@pytest.mark.parametrize("kernel", ["rbf", "linear", "poly", "sigmoid"])
@pytest.mark.parametrize("gamma", ["scale", "auto", 0.05])
def test_equals_libsvm_decision_function_for_every_kernel(kernel, gamma):
    model = SVC(kernel=kernel, gamma=gamma, coef0=0.5, degree=2, C=0.5).fit(X, y)
    assert relative_gap(decision_values(model, X_NEW), model.decision_function(X_NEW)) < 1e-9


def test_equals_libsvm_for_nu_svc_svr_and_sparse_input():
    nu = NuSVC(nu=0.3).fit(X, y)
    assert relative_gap(decision_values(nu, X_NEW), nu.decision_function(X_NEW)) < 1e-9
    Xr, yr = make_friedman1(n_samples=300, random_state=0)
    svr = SVR(C=3.0).fit(Xr, yr)
    assert relative_gap(decision_values(svr, Xr), svr.predict(Xr)) < 1e-9
    sparse_model = SVC().fit(sparse.csr_matrix(X), y)
    rows = sparse.csr_matrix(X_NEW)
    assert relative_gap(decision_values(sparse_model, rows), sparse_model.decision_function(rows)) < 1e-9


def test_block_size_bounds_memory_but_not_the_values():
    model = SVC().fit(X, y)
    n_sv = len(model.support_)
    assert block_rows(n_sv, block_bytes=8 * n_sv * 3) == 3
    assert block_rows(n_sv, block_bytes=1) == 1
    whole = decision_values(model, X_NEW)
    np.testing.assert_allclose(decision_values(model, X_NEW, block_bytes=8 * n_sv * 10), whole, rtol=1e-12)


def test_several_outputs_and_the_intercept():
    sv = X[:5]
    coef = np.arange(10.0).reshape(2, 5)
    out = kernel_expansion(X_NEW, sv, coef, np.array([1.0, -1.0]), kernel="linear")
    assert out.shape == (len(X_NEW), 2)
    np.testing.assert_allclose(out, X_NEW @ sv.T @ coef.T + [1.0, -1.0])


def test_other_models_fall_back_to_their_own_decision_function():
    precomputed = SVC(kernel="precomputed").fit(X @ X.T, y)
    assert not supports_expansion(precomputed)
    np.testing.assert_array_equal(decision_values(precomputed, X_NEW @ X.T), precomputed.decision_function(X_NEW @ X.T))
    three = SVC().fit(X, np.arange(len(y)) % 3)
    assert not supports_expansion(three)
    np.testing.assert_array_equal(decision_values(three, X_NEW), three.decision_function(X_NEW))


def test_unknown_kernel_is_refused():
    with pytest.raises(ValueError, match="kernel='cosine'"):
        kernel_expansion(X_NEW, X[:3], np.ones(3), kernel="cosine")


def test_a_fitted_search_is_expanded_through_its_best_estimator():
    from sklearn.model_selection import GridSearchCV

    search = GridSearchCV(SVC(), {"C": [0.5, 2.0]}, cv=2).fit(X, y)
    assert relative_gap(decision_values(search, X_NEW), search.decision_function(X_NEW)) < 1e-9


def test_predict_equals_the_models_own_for_classifiers_regressors_and_others():
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    labels = np.where(y > 0, "pos", "neg")
    svc = SVC(C=0.7).fit(X, labels)
    np.testing.assert_array_equal(predict(svc, X_NEW), svc.predict(X_NEW))
    Xr, yr = make_friedman1(n_samples=200, random_state=1)
    svr = SVR().fit(Xr, yr)
    np.testing.assert_allclose(predict(svr, Xr), svr.predict(Xr), rtol=1e-9)
    pipe = make_pipeline(StandardScaler(), SVC()).fit(X, y)
    np.testing.assert_array_equal(predict(pipe, X_NEW), pipe.predict(X_NEW))


def test_threads_share_the_blocks_without_changing_a_value():
    model = SVC().fit(X, y)
    n_sv = len(model.support_)
    rows = np.random.default_rng(2).normal(size=(1000, 8))
    values = [
        kernel_expansion(rows, model.support_vectors_, model.dual_coef_[0], model.intercept_[0], gamma=model._gamma,
                         block_bytes=8 * n_sv * 7, n_threads=threads)
        for threads in (1, 3)
    ]
    np.testing.assert_array_equal(values[0], values[1])
