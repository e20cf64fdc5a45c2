import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from svmrepro.data.uniform_squares import UniformSquares
from svmrepro.errors import ConfigError


@pytest.mark.parametrize("risk, distance", [(0.0, 1.0), (0.5, 0.0), (0.25, 0.5), (0.1, 0.8)])
def test_distance_closed_form(risk, distance):
    assert UniformSquares(bayes_risk=risk).distance == pytest.approx(distance)


@pytest.mark.parametrize("risk", [0.02, 0.15, 0.4])
def test_bayes_classifier_error_matches_the_formula(risk):
    n = 200_000
    data = UniformSquares(bayes_risk=risk, n_train=2, n_test=n).load(seed=3)
    # the Bayes boundary is x_1 = 0; inside the overlap strip any rule errs half the time
    error = np.mean(np.where(data.X_test[:, 0] > 0, 1, -1) != data.y_test)
    assert abs(error - risk) < 4 * np.sqrt(risk * (1 - risk) / n)


@settings(max_examples=25, deadline=None)
@given(risk=st.floats(0.0, 0.5), seed=st.integers(0, 2**31))
def test_each_class_is_on_its_own_unit_square(risk, seed):
    source = UniformSquares(bayes_risk=risk, n_train=301, n_test=2)
    data = source.load(seed)
    centre = data.y_train * source.distance / 2
    assert np.all(np.abs(data.X_train[:, 0] - centre) <= 0.5)
    assert np.all(np.abs(data.X_train[:, 1]) <= 0.5)
    assert np.sum(data.y_train == 1) == 151 and np.sum(data.y_train == -1) == 150


def test_points_fill_the_squares():
    data = UniformSquares(bayes_risk=0.2, n_train=2, n_test=40_000).load(seed=0)
    offsets = data.X_test - np.column_stack([data.y_test * 0.6 / 2, np.zeros(data.n_test)])
    # uniform on [-1/2, 1/2]: mean 0, variance 1/12
    assert np.allclose(offsets.mean(axis=0), 0, atol=0.01)
    assert np.allclose(offsets.var(axis=0), 1 / 12, atol=0.003)


def test_same_seed_same_arrays_other_seed_others():
    source = UniformSquares()
    first, again, other = source.load(5), source.load(5), source.load(6)
    np.testing.assert_array_equal(first.X_train, again.X_train)
    np.testing.assert_array_equal(first.y_test, again.y_test)
    assert not np.array_equal(first.X_train, other.X_train)
    assert not np.array_equal(first.X_train[:10], first.X_test[:10])


@pytest.mark.parametrize(
    "kwargs, key",
    [({"bayes_risk": -0.01}, "bayes_risk"), ({"bayes_risk": 0.51}, "bayes_risk"),
     ({"bayes_risk": "high"}, "bayes_risk"), ({"n_train": 1}, "n_train"), ({"n_test": 0}, "n_test")],
)
def test_bad_parameter_is_a_config_error(kwargs, key):
    with pytest.raises(ConfigError, match=rf"dataset\.{key}="):
        UniformSquares(**kwargs)
