"""Adult loader: a9a's 123-feature encoding of the UCI files."""


import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from svmrepro.data import adult
from svmrepro.data.adult import Adult, encode, quintile_edges, read_adult
from svmrepro.data.files import shared_data_dir
from svmrepro.errors import ConfigError, DataError

SHARED = shared_data_dir()
FOLDER = SHARED / "adult" if SHARED else None
needs_files = pytest.mark.skipif(
    FOLDER is None or not (FOLDER / "adult.test").is_file(), reason="shared/data/adult not present"
)

# Lines of LIBSVM's a9a (Platt's encoding, 1-based feature indices), by 0-based row of adult.data.
A9A_ROWS = {
    0: "-1 3:1 11:1 14:1 19:1 39:1 42:1 55:1 64:1 67:1 73:1 75:1 76:1 80:1 83:1",
    1: "-1 5:1 7:1 14:1 19:1 39:1 40:1 51:1 63:1 67:1 73:1 74:1 76:1 78:1 83:1",
    2: "-1 3:1 6:1 17:1 22:1 36:1 41:1 53:1 64:1 67:1 73:1 74:1 76:1 80:1 83:1",
    8: "+1 2:1 6:1 14:1 29:1 39:1 42:1 52:1 64:1 67:1 72:1 75:1 76:1 82:1 83:1",
    27: "+1 5:1 16:1 20:1 37:1 40:1 63:1 68:1 73:1 74:1 76:1 82:1 93:1",
}


pytestmark = pytest.mark.usefixtures("offline")


@pytest.fixture(scope="module")
def a9a_encoding():
    train, y = read_adult(FOLDER / "adult.data")
    edges = {column: quintile_edges(train[column].to_numpy()) for column in adult.QUINTILE_BINNED}
    edges.update({column: np.array([1]) for column in adult.ZERO_OR_POSITIVE})
    return train, y, encode(train, edges)


@needs_files
def test_encoding_matches_a9a_lines(a9a_encoding):
    _, y, X = a9a_encoding
    for row, line in A9A_ROWS.items():
        label, *features = line.split()
        assert y[row] == int(label)
        assert list(np.flatnonzero(X[row]) + 1) == [int(f.split(":")[0]) for f in features]


@needs_files
def test_one_feature_per_attribute_unless_unknown(a9a_encoding):
    train, _, X = a9a_encoding
    assert X.shape == (32561, 123) and set(np.unique(X)) == {0.0, 1.0}
    np.testing.assert_array_equal(X.sum(axis=1), 14 - (train == "?").sum(axis=1))
    assert X.sum(axis=0).min() >= 1  # every feature occurs


@needs_files
def test_default_sizes_labels_and_test_prefix():
    data = Adult().load(0)
    assert data.X_train.shape == (32560, 123) and data.X_test.shape == (16280, 123)
    assert set(np.unique(data.y_train)) == {-1, 1}
    # the training file has 7841 incomes >50K; dropping one row keeps at least 7840
    assert (data.y_train == 1).sum() in (7840, 7841)
    full_test = Adult(n_test=16281).load(0)
    np.testing.assert_array_equal(full_test.X_test[:16280], data.X_test)
    assert (full_test.y_test == 1).sum() == 3846  # adult.test's count of ">50K."


@needs_files
def test_a3a_size_is_a_stratified_seeded_draw():
    a, b, other = Adult(n_train=3185).load(1), Adult(n_train=3185).load(1), Adult(n_train=3185).load(2)
    assert a.X_train.shape == (3185, 123)
    assert (a.y_train == 1).sum() == round(3185 * 7841 / 32561)
    np.testing.assert_array_equal(a.X_train, b.X_train)
    np.testing.assert_array_equal(a.X_test, b.X_test)
    assert not np.array_equal(a.X_train, other.X_train)
    np.testing.assert_array_equal(a.X_test, other.X_test)  # the test set does not depend on the seed


def test_repeated_quintiles_get_their_own_bin():
    values = np.repeat([1, 2, 3], [50, 30, 20])
    np.testing.assert_array_equal(quintile_edges(values), [1, 2, 3, 4])
    np.testing.assert_array_equal(np.searchsorted(quintile_edges(values), [1, 2, 3], side="right"), [1, 2, 3])


@given(st.lists(st.integers(0, 100), min_size=1, max_size=200))
def test_edges_strictly_increase_and_never_undercut_the_quintiles(values):
    edges = quintile_edges(np.array(values))
    assert np.all(np.diff(edges) > 0)
    assert np.all(edges >= np.quantile(values, [0.2, 0.4, 0.6, 0.8]))


@pytest.mark.parametrize(
    "params, key",
    [({"n_train": 1}, "n_train"), ({"n_train": 32562}, "n_train"), ({"n_test": 0}, "n_test"),
     ({"n_test": 16282}, "n_test"), ({"n_test": "16280"}, "n_test")],
)
def test_bad_parameter_names_its_key(params, key):
    with pytest.raises(ConfigError, match=rf"dataset\.{key}="):
        Adult(**params)


@needs_files
def test_corrupt_copy_is_refused(offline):
    copy = offline / "adult" / "adult.test"
    copy.parent.mkdir(parents=True)
    copy.write_bytes((FOLDER / "adult.test").read_bytes().replace(b">50K.", b"<=50K.", 1))
    with pytest.raises(DataError, match="checksum mismatch .*adult.test"):
        Adult().load(0)


def test_missing_file_names_file_url_and_directory(tmp_path, monkeypatch, offline):
    monkeypatch.setenv("SVMREPRO_SHARED_DATA", str(tmp_path / "no_shared"))
    with pytest.raises(DataError) as error:
        Adult().load(0)
    message = str(error.value)
    assert "adult.data" in message and adult.TRAIN.url in message and str(offline / "adult") in message
