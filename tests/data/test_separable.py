import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import norm
from sklearn.svm import SVC

from svmrepro.data.separable import Separable
from svmrepro.errors import ConfigError


@settings(max_examples=30, deadline=None)
@given(
    n_features=st.integers(1, 8), margin=st.floats(0.0, 10.0), n=st.integers(2, 200),
    seed=st.integers(0, 2**31),
)
def test_true_hyperplane_separates_with_the_margin(n_features, margin, n, seed):
    source = Separable(n_train=n, n_test=n, n_features=n_features, margin=margin)
    data = source.load(seed)
    w, b = source.hyperplane(seed)
    assert w.shape == (n_features,) and np.linalg.norm(w) == pytest.approx(1.0)
    for X, y in ((data.X_train, data.y_train), (data.X_test, data.y_test)):
        assert np.min(y * (X @ w + b)) >= margin
        assert np.sum(y == 1) - np.sum(y == -1) == n % 2


def test_distance_along_w_is_a_truncated_gaussian():
    source = Separable(n_train=2, n_test=50_000, n_features=3, margin=0.5)
    data = source.load(seed=2)
    w, b = source.hyperplane(2)
    along = data.y_test * (data.X_test @ w + b)
    # E[z | z >= m] = pdf(m) / sf(m) for a standard normal
    assert along.mean() == pytest.approx(norm.pdf(0.5) / norm.sf(0.5), abs=0.02)
    across = data.X_test - np.outer(data.X_test @ w, w)
    assert np.trace(np.cov(across.T)) == pytest.approx(2.0, abs=0.05)


def test_max_margin_svm_finds_at_least_the_true_margin():
    source = Separable(n_train=100, n_features=4, margin=0.3)
    data = source.load(seed=8)
    svm = SVC(kernel="linear", C=1e8).fit(data.X_train, data.y_train)
    assert svm.score(data.X_train, data.y_train) == 1.0
    assert 1 / np.linalg.norm(svm.coef_) >= 0.3 * (1 - 1e-3)


def test_same_seed_same_arrays_other_seed_others():
    source = Separable()
    first, again, other = source.load(1), source.load(1), source.load(2)
    np.testing.assert_array_equal(first.X_train, again.X_train)
    np.testing.assert_array_equal(source.hyperplane(1)[0], source.hyperplane(1)[0])
    assert not np.array_equal(first.X_train, other.X_train)
    assert not np.allclose(source.hyperplane(1)[0], source.hyperplane(2)[0])


@pytest.mark.parametrize(
    "kwargs, key",
    [({"margin": -0.1}, "margin"), ({"margin": 11.0}, "margin"), ({"n_features": 0}, "n_features"),
     ({"n_train": 1}, "n_train"), ({"n_test": 1}, "n_test")],
)
def test_bad_parameter_is_a_config_error(kwargs, key):
    with pytest.raises(ConfigError, match=rf"dataset\.{key}="):
        Separable(**kwargs)
