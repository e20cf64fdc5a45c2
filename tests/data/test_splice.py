"""Splice loader: Rätsch's two-class splice from the 3175 UCI sequences (file handling is tested with banana)."""

import numpy as np
import pytest
import scipy.io

from svmrepro.data.files import shared_data_dir
from svmrepro.data.splice import FILE_CODES, Splice
from svmrepro.errors import ConfigError

SHARED = shared_data_dir()
MAT = SHARED / "raetsch" / "splice_uci3175.mat" if SHARED else None
needs_file = pytest.mark.skipif(
    MAT is None or not MAT.is_file(), reason="shared/data/raetsch/splice_uci3175.mat not present"
)
A, C, G, T = (FILE_CODES[n] for n in "ACGT")


@pytest.fixture(autouse=True)
def empty_data_home(tmp_path, monkeypatch):
    monkeypatch.setenv("SVMREPRO_DATA", str(tmp_path / "home"))


@needs_file
def test_sizes_and_stratified_class_balance():
    data = Splice().load(0)
    assert data.X_train.shape == (1000, 60) and data.X_test.shape == (2175, 60)
    # 1527 junctions (EI or IE, +1) and 1648 neither (-1) in the pool
    assert (data.y_train == 1).sum() == round(1000 * 1527 / 3175)
    assert (data.y_test == 1).sum() == 1527 - round(1000 * 1527 / 3175)
    assert set(np.unique(data.y_train)) == {-1, 1}


@needs_file
def test_positions_are_standardised_numeric_codes():
    data = Splice().load(0)
    pool = np.vstack([data.X_train, data.X_test])
    np.testing.assert_allclose(pool.mean(axis=0), 0, atol=1e-9)
    np.testing.assert_allclose(pool.std(axis=0), 1)
    assert max(np.unique(column).size for column in pool.T) == 4


@needs_file
def test_the_file_codes_put_the_splice_motifs_where_biology_says():
    mat = scipy.io.loadmat(MAT)
    codes, classes = mat["X"], mat["Y"].ravel()
    donors, acceptors = codes[classes == 1], codes[classes == 2]
    # an exon/intron boundary is followed by GT (positions 31-32), an intron/exon one preceded by AG (29-30)
    assert np.mean(donors[:, 30] == G) > 0.99 and np.mean(donors[:, 31] == T) > 0.99
    assert np.mean(acceptors[:, 28] == A) > 0.99 and np.mean(acceptors[:, 29] == G) > 0.99
    assert set(np.unique(codes)) == {A, C, G, T}


@needs_file
@pytest.mark.parametrize(("encoding", "n_features"), [("alphabetical", 60), ("onehot", 240)])
def test_other_encodings_keep_the_points_and_standardise(encoding, n_features):
    file, other = Splice().load(3), Splice(encoding=encoding).load(3)
    assert other.X_train.shape == (1000, n_features)
    np.testing.assert_array_equal(file.y_train, other.y_train)  # the same realisation
    pool = np.vstack([other.X_train, other.X_test])
    np.testing.assert_allclose(pool.mean(axis=0), 0, atol=1e-9)
    if encoding == "onehot":  # each position: exactly one of its four indicators is above its mean
        above = (pool > 0).reshape(len(pool), 60, 4)
        assert (above.sum(axis=2) == 1).all()
    else:  # alphabetical only relabels the file's codes: a one-to-one map in every column
        for ours, theirs in zip(file.X_train.T, other.X_train.T):
            pairs = np.unique(np.column_stack([ours, theirs]), axis=0)
            assert len(pairs) == len(np.unique(ours)) == len(np.unique(theirs))
        assert not np.allclose(file.X_train, other.X_train)


@needs_file
def test_seed_draws_the_realisation():
    a, b, other = Splice().load(4), Splice().load(4), Splice().load(5)
    for name in ("X_train", "y_train", "X_test", "y_test"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    assert not np.array_equal(a.X_train, other.X_train)


@pytest.mark.parametrize("params, key", [({"n_train": 3175}, "n_train"), ({"n_train": 1000, "n_test": 2176}, "n_test"),
                                         ({"encoding": "binary"}, "encoding")])
def test_bad_parameter_names_its_key(params, key):
    with pytest.raises(ConfigError, match=rf"dataset\.{key}="):
        Splice(**params)
