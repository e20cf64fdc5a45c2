import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from svmrepro.data.checkerboard import Checkerboard
from svmrepro.errors import ConfigError


def parity_label(X, side):
    """+1 in the lower-left and upper-right quadrants, -1 in the other two."""
    return np.where((X[:, 0] < side / 2) == (X[:, 1] < side / 2), 1, -1)


@settings(max_examples=20, deadline=None)
@given(side=st.floats(1e-3, 1e4), per_class=st.integers(1, 300), seed=st.integers(0, 2**31))
def test_labels_are_quadrant_parity_and_classes_balanced(side, per_class, seed):
    data = Checkerboard(n_train_per_class=per_class, n_test_per_class=3, side=side).load(seed)
    np.testing.assert_array_equal(data.y_train, parity_label(data.X_train, side))
    assert np.all((data.X_train >= 0) & (data.X_train <= side))
    assert np.sum(data.y_train == 1) == np.sum(data.y_train == -1) == per_class


def test_paper_sizes_and_uniform_points():
    data = Checkerboard().load(seed=1)
    assert data.X_train.shape == (10_000, 2) and data.X_test.shape == (20_000, 2)
    quadrant = 2 * (data.X_test[:, 0] >= 100) + (data.X_test[:, 1] >= 100)
    counts = np.bincount(quadrant, minlength=4)
    # each quadrant holds half of one class: 5000 +- binomial noise
    assert np.all(np.abs(counts - 5000) < 4 * np.sqrt(20_000 * 0.25 * 0.5))
    within = np.mod(data.X_test, 100)
    assert np.allclose(within.mean(axis=0), 50, atol=1.0)
    assert np.allclose(within.var(axis=0), 100**2 / 12, atol=25)


def test_problems_share_one_test_set():
    source = Checkerboard(n_train_per_class=50, n_test_per_class=50)
    a1, a2 = source.load(1), source.load(2)
    np.testing.assert_array_equal(a1.X_test, a2.X_test)
    np.testing.assert_array_equal(a1.y_test, a2.y_test)
    assert not np.array_equal(a1.X_train, a2.X_train)
    np.testing.assert_array_equal(a1.X_train, source.load(1).X_train)
    moved = Checkerboard(n_train_per_class=50, n_test_per_class=50, test_seed=7).load(1)
    assert not np.array_equal(moved.X_test, a1.X_test)
    np.testing.assert_array_equal(moved.X_train, a1.X_train)


@pytest.mark.parametrize(
    "kwargs, key",
    [({"n_train_per_class": 0}, "n_train_per_class"), ({"n_test_per_class": -1}, "n_test_per_class"),
     ({"side": 0.0}, "side"), ({"test_seed": -1}, "test_seed")],
)
def test_bad_parameter_is_a_config_error(kwargs, key):
    with pytest.raises(ConfigError, match=rf"dataset\.{key}="):
        Checkerboard(**kwargs)
