import numpy as np
import pytest

from svmrepro.data.base import REGRESSION
from svmrepro.data.friedman1 import Friedman1
from svmrepro.errors import ConfigError


def test_noise_free_targets_follow_friedmans_formula():
    data = Friedman1(n_train=50, n_test=20, n_features=7, noise=0.0).load(3)
    X, y = data.X_train, data.y_train
    expected = 10 * np.sin(np.pi * X[:, 0] * X[:, 1]) + 20 * (X[:, 2] - 0.5) ** 2 + 10 * X[:, 3] + 5 * X[:, 4]
    np.testing.assert_allclose(y, expected)
    assert data.task == REGRESSION and X.shape == (50, 7) and data.X_test.shape == (20, 7)
    assert X.min() >= 0 and X.max() <= 1


def test_a_seed_gives_the_same_rows_and_another_seed_other_rows():
    source = Friedman1(n_train=30, n_test=10)
    np.testing.assert_array_equal(source.load(1).X_train, source.load(1).X_train)
    assert not np.array_equal(source.load(1).X_train, source.load(2).X_train)


@pytest.mark.parametrize("bad", [{"n_train": 1}, {"n_features": 4}, {"noise": -1.0}])
def test_bad_values_name_the_key(bad):
    with pytest.raises(ConfigError, match=f"dataset.{next(iter(bad))}"):
        Friedman1(**bad)
