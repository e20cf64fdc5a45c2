import numpy as np
import pytest

from svmrepro.data.waveform import Waveform, population_moments
from svmrepro.errors import ConfigError

POSITIONS = np.arange(1, 22)


def wave(peak):
    return np.maximum(6 - np.abs(POSITIONS - peak), 0)


#: the two peaks mixed by each class of the three-class generator
PEAKS = {0: (7, 15), 1: (7, 11), 2: (15, 11)}


def test_paper_sizes_and_labels():
    data = Waveform().load(seed=0)
    assert data.X_train.shape == (400, 21) and data.X_test.shape == (4600, 21)
    assert set(np.unique(data.y_test)) == {-1, 1}
    assert abs(np.mean(data.y_test == 1) - 1 / 3) < 4 * np.sqrt(2 / 9 / 4600)


@pytest.mark.parametrize("positive", [0, 1, 2])
def test_positive_class_mean_is_the_average_of_its_two_waves(positive):
    data = Waveform(positive_class=positive, standardize=False, n_train=2, n_test=30_000).load(seed=1)
    a, b = PEAKS[positive]
    mean = data.X_test[data.y_test == 1].mean(axis=0)
    # about 10_000 positives, feature std <= 2.1: the standard error is <= 0.02
    np.testing.assert_allclose(mean, (wave(a) + wave(b)) / 2, atol=0.1)


def test_population_moments_match_a_large_sample():
    X = Waveform(standardize=False, n_train=2, n_test=100_000).load(seed=2).X_test
    mean, std = population_moments()
    np.testing.assert_allclose(mean, (wave(7) + wave(15) + wave(11)) / 3)
    np.testing.assert_allclose(X.mean(axis=0), mean, atol=0.04)
    np.testing.assert_allclose(X.std(axis=0), std, rtol=0.02)
    assert std[0] == pytest.approx(1.0)  # position 1 carries noise only


def test_standardized_features_have_zero_mean_unit_variance():
    X = Waveform(n_train=2, n_test=100_000).load(seed=3).X_test
    np.testing.assert_allclose(X.mean(axis=0), 0, atol=0.02)
    np.testing.assert_allclose(X.std(axis=0), 1, atol=0.02)


def test_same_seed_same_arrays_other_seed_others():
    source = Waveform()
    first, again, other = source.load(9), source.load(9), source.load(10)
    np.testing.assert_array_equal(first.X_train, again.X_train)
    np.testing.assert_array_equal(first.y_train, again.y_train)
    assert not np.array_equal(first.X_train, other.X_train)


@pytest.mark.parametrize(
    "kwargs, key",
    [({"positive_class": 3}, "positive_class"), ({"standardize": "yes"}, "standardize"),
     ({"n_train": 1}, "n_train"), ({"n_test": 0}, "n_test")],
)
def test_bad_parameter_is_a_config_error(kwargs, key):
    with pytest.raises(ConfigError, match=rf"dataset\.{key}="):
        Waveform(**kwargs)
