"""Banana loader, and the Rätsch file handling it shares with splice."""

import numpy as np
import pytest
import scipy.io

from svmrepro.data.banana import Banana
from svmrepro.data.files import shared_data_dir
from svmrepro.errors import ConfigError, DataError

SHARED = shared_data_dir()
MAT = SHARED / "raetsch" / "banana.mat" if SHARED else None
needs_file = pytest.mark.skipif(MAT is None or not MAT.is_file(), reason="shared/data/raetsch/banana.mat not present")


@pytest.fixture(autouse=True)
def empty_data_home(tmp_path, monkeypatch):
    monkeypatch.setenv("SVMREPRO_DATA", str(tmp_path / "home"))
    return tmp_path / "home"


def sorted_rows(X):
    return X[np.lexsort(X.T[::-1])]


@needs_file
def test_seed_0_is_the_shipped_realisation():
    mat = scipy.io.loadmat(MAT)
    data = Banana().load(0)
    np.testing.assert_array_equal(data.X_train, mat["xtrain"].T)
    np.testing.assert_array_equal(data.X_test, mat["xtest"].T)
    np.testing.assert_array_equal(data.y_train, np.where(mat["ytrain"].ravel() == 1, 1, -1))
    np.testing.assert_array_equal(data.y_test, np.where(mat["ytest"].ravel() == 1, 1, -1))


@needs_file
@pytest.mark.parametrize("seed", [1, 7])
def test_other_seeds_draw_a_stratified_partition_of_the_pool(seed):
    data, shipped = Banana().load(seed), Banana().load(0)
    assert (data.n_train, data.n_test) == (400, 4900)
    # the pool holds 2376 of class +1 among 5300 points
    assert (data.y_train == 1).sum() == round(400 * 2376 / 5300)
    assert (data.y_test == 1).sum() == 2376 - round(400 * 2376 / 5300)
    pool = np.vstack([shipped.X_train, shipped.X_test])
    np.testing.assert_array_equal(sorted_rows(np.vstack([data.X_train, data.X_test])), sorted_rows(pool))
    assert not np.array_equal(data.X_train, shipped.X_train)


@needs_file
def test_pool_is_standardised():
    data = Banana().load(0)
    pool = np.vstack([data.X_train, data.X_test])
    np.testing.assert_allclose(pool.mean(axis=0), 0, atol=1e-6)
    np.testing.assert_allclose(pool.std(axis=0), 1, atol=1e-3)


@needs_file
def test_same_seed_same_arrays_and_smaller_sizes():
    a, b = Banana(n_train=100, n_test=300).load(3), Banana(n_train=100, n_test=300).load(3)
    assert (a.n_train, a.n_test) == (100, 300)
    for name in ("X_train", "y_train", "X_test", "y_test"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    assert a.fingerprint == b.fingerprint != Banana().fingerprint()


@pytest.mark.parametrize(
    "params, key",
    [({"n_train": 1}, "n_train"), ({"n_train": 5300}, "n_train"), ({"n_train": 400.0}, "n_train"),
     ({"n_test": 0}, "n_test"), ({"n_test": 4901}, "n_test")],
)
def test_bad_parameter_names_its_key(params, key):
    with pytest.raises(ConfigError, match=rf"dataset\.{key}="):
        Banana(**params)


@needs_file
def test_corrupt_copy_is_refused(empty_data_home):
    copy = empty_data_home / "raetsch" / "banana.mat"
    copy.parent.mkdir(parents=True)
    data = bytearray(MAT.read_bytes())
    data[-1] ^= 0xFF
    copy.write_bytes(bytes(data))
    with pytest.raises(DataError, match="checksum mismatch"):
        Banana().load(0)


def test_missing_file_names_file_source_and_directory(tmp_path, monkeypatch, empty_data_home):
    monkeypatch.setenv("SVMREPRO_SHARED_DATA", str(tmp_path / "no_shared"))
    with pytest.raises(DataError) as error:
        Banana().load(0)
    message = str(error.value)
    assert "banana.mat" in message and Banana.file.url in message and str(empty_data_home / "raetsch") in message
