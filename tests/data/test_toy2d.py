import numpy as np
import pytest
from sklearn.svm import LinearSVC

from svmrepro.data.toy2d import Toy2d
from svmrepro.errors import ConfigError


def test_sizes_range_and_balance():
    data = Toy2d().load(seed=0)
    assert data.X_train.shape == (10_000, 2) and data.X_test.shape == (10_000, 2)
    assert np.all(np.abs(data.X_train) <= 1)
    assert set(np.unique(data.y_train)) == {-1, 1}
    y = np.concatenate([data.y_train, data.y_test])
    assert abs(y.mean()) < 4 / np.sqrt(y.size)


def test_two_linear_pieces_solve_it_one_line_does_not():
    data = Toy2d().load(seed=1)
    X, y = data.X_train, data.y_train
    # gater: sign of x_1; expert on each side: one half-line of the chevron
    left, right = X[:, 1] + X[:, 0] + 0.5, X[:, 1] - X[:, 0] + 0.5
    mixture = np.where(X[:, 0] < 0, left, right)
    np.testing.assert_array_equal(np.where(mixture > 0, 1, -1), y)
    # the best line errs on 1/8 of the square
    linear = LinearSVC(C=1.0).fit(X, y)
    assert 1 - linear.score(data.X_test, data.y_test) > 0.1


def test_same_seed_same_arrays_other_seed_others():
    source = Toy2d(n_train=100, n_test=100)
    first, again, other = source.load(4), source.load(4), source.load(5)
    np.testing.assert_array_equal(first.X_test, again.X_test)
    assert not np.array_equal(first.X_train, other.X_train)


@pytest.mark.parametrize("kwargs, key", [({"n_train": 1}, "n_train"), ({"n_test": 0}, "n_test")])
def test_bad_parameter_is_a_config_error(kwargs, key):
    with pytest.raises(ConfigError, match=rf"dataset\.{key}="):
        Toy2d(**kwargs)
